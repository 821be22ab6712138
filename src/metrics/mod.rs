//! Measurement: latency histograms, per-worker recorders that merge by addition,
//! and CPU accounting.

pub mod cpu;
pub mod histogram;
pub mod power;
pub mod recorder;

pub use histogram::LatencyHistogram;
pub use recorder::{IntervalSlice, IoErrorRecord, Recorder};
