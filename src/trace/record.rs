//! One I/O of a trace, whatever format it was read from (lunmark's binary
//! trace, `blkparse` text or MSR Cambridge CSV): what the readers produce, and
//! what the sizing and the replay read.

use crate::workload::Op;

/// One I/O of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// Nanoseconds since the start of the trace (µs resolution in binary traces).
    pub t_ns: u64,
    pub op: Op,
    pub target: u16,
    pub offset: u64,
    pub len: u32,
}
