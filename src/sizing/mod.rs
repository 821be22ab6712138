//! Cache sizing from a trace: how much a read-write-through cache of a given
//! size (as a % of the LUN, as in METHODOLOGY.md's cache table) would hit, and
//! what that would do to latency and IOPS, without building the cache. A trace
//! (read by `crate::trace`: lunmark's binary format, `blkparse` text or MSR
//! Cambridge CSV) goes through an LRU stack distance pass that yields the hit
//! ratio for every cache size at once.
//!
//! - `stack`: exact LRU stack distances (Fenwick tree over access times);
//! - `mrc`: miss-ratio curves, exact or SHARDS-sampled;
//! - `predict`: latency and IOPS per cache size from measured hit and miss latencies.

pub mod mrc;
pub mod predict;
pub mod stack;

#[cfg(test)]
mod mrc_tests;

pub use mrc::{Method, MissRatioCurve, Mrc};
