//! One I/O of a trace, whatever format it was read from (lunmark's binary
//! trace or `blkparse` text): what the readers produce and the sizing reads.

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
