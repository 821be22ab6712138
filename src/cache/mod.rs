//! Cache sizing from a trace: how much a read-write-through cache of a given
//! size (as a % of the LUN, as in METHODOLOGY.md's cache table) would hit, and
//! what that would do to latency and IOPS, without building the cache. A trace
//! (lunmark's binary format or `blkparse` text) goes through an LRU stack
//! distance pass that yields the hit ratio for every cache size at once.
//!
//! - `trace`: the binary trace format, its writer and reader, and format detection;
//! - `record`: one I/O of a trace, as every reader yields it;
//! - `blkparse`: the `blkparse` text reader;
//! - `msr`: the MSR Cambridge CSV reader (SNIA IOTTA block traces);
//! - `stack`: exact LRU stack distances (Fenwick tree over access times);
//! - `mrc`: miss-ratio curves, exact or SHARDS-sampled;
//! - `predict`: latency and IOPS per cache size from measured hit and miss latencies.

pub mod blkparse;
pub mod mrc;
pub mod msr;
pub mod predict;
pub mod record;
pub mod stack;
pub mod trace;

#[cfg(test)]
mod mrc_tests;

pub use blkparse::read_blkparse;
pub use mrc::{Method, MissRatioCurve, Mrc};
pub use trace::{load_trace, TraceReader, TraceRecord, TraceWriter};
