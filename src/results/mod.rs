//! Results: the model of a run's outcome and the summary computed from what
//! the workers recorded.

pub mod cluster;
pub mod curve;
pub mod cut_short;
pub mod filter;
pub mod histograms;
pub mod host;
pub mod line_rate;
pub mod model;
pub mod paced_outcome;
pub mod pass;
pub mod per_worker;
pub mod point_summary;
pub mod registry;
pub mod repeats;
pub mod replay;
pub mod search;
pub mod stall;
pub mod steady;
pub mod store;
pub mod summarize;
pub mod tuning;
pub mod validate;

pub use model::{Point, RunResult, Status, Summary, SCHEMA_VERSION};
