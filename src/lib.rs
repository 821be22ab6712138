//! lunmark: a storage I/O benchmark with IOmeter semantics and exact metrics.
//!
//! Data flows one way: flags or a profile become a validated `WorkloadSpec`; the
//! run plan turns it into points; workers drive engines against targets and
//! record into per-worker recorders; the merged recorders become a `Summary` in
//! the `RunResult`; exporters turn results into text.
//!
//! Imports point down the layers: cli, lab and mpi (both drive the run), run,
//! results, engine, target, transport, metrics, verify, sizing and trace,
//! workload, units (`layers.rs` tests it).

pub mod cli;
pub mod engine;
pub mod input_path;
pub mod lab;
#[cfg(test)]
mod layers;
pub mod metrics;
pub mod mpi;
pub mod output_path;
#[cfg(test)]
mod parsers_proptest;
pub mod report;
pub mod results;
pub mod run;
pub mod sizing;
pub mod targets;
pub mod trace;
pub mod transport;
pub mod units;
pub mod verify;
pub mod workload;
