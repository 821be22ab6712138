//! What a replayed point reports about its replay (`points[].summary.replay`):
//! the trace, its settings, what was issued and skipped, and the lag of issue
//! time behind the recorded time. Pure data.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// The trace file, as given.
    pub file: String,
    /// lunmark, blkparse or msr.
    pub format: String,
    /// "1" (the recorded timing), a factor such as "2", or "max".
    pub speed: String,
    /// wrap or refuse.
    pub offsets: String,
    /// I/O records of the trace to replay (after mapping).
    pub records: u64,
    /// Records issued at this point (ramp included).
    pub issued: u64,
    /// Trace events not replayed: not reads or writes (blkparse discards and
    /// flushes), or of devices --replay-map leaves out.
    pub skipped: u64,
    /// Of `skipped`, events whose recorded time is not one (NaN, negative, absurd).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bad_times: u64,
    /// Records that came after a later-timed one in the file, replayed in
    /// recorded-time order (the records are sorted by time).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reordered: u64,
    /// Issued I/Os whose offset was wrapped into the region (--replay-offsets wrap).
    pub wrapped: u64,
    /// Recorded time from the first replayed record to the last, seconds.
    pub span_s: f64,
    /// "usr/0 -> target 0" for each device replayed.
    pub mapping: Vec<String>,
    /// Timed replay: mean and largest delay of an I/O's issue behind its
    /// recorded time (scaled by the speed), µs. None at max speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_mean_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_max_us: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
