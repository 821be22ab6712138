//! Results: the model of a run's outcome and the summary computed from what
//! the workers recorded.

pub mod cluster;
pub mod filter;
pub mod host;
pub mod line_rate;
pub mod model;
pub mod pass;
pub mod per_worker;
pub mod registry;
pub mod repeats;
pub mod replay;
pub mod steady;
pub mod store;
pub mod summarize;
pub mod validate;

pub use model::{Point, RunResult, Status, Summary, SCHEMA_VERSION};
