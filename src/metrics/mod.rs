//! Measurement: latency histograms, per-worker recorders that merge by addition,
//! and CPU accounting (the whole host's, lunmark's and other processes').

pub mod cpu;
pub mod errno;
pub mod histogram;
pub mod others;
pub mod per_worker;
pub mod power;
pub mod recorder;

pub use histogram::LatencyHistogram;
pub use recorder::{IntervalSlice, IoErrorRecord, Recorder};
