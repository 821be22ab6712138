//! What a point tells its observers about once a second (`RunObserver::tick`):
//! the figures of the live view. Data only: the view that draws them (a
//! progress line on a terminal, a plain line per second otherwise) is the
//! command line's (`cli/live_view.rs`). A measured second is told once every
//! worker has reported it, with the same figures the result stores for that second.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use crate::metrics::IntervalSlice;
use crate::results::model::Interval;

/// What one update shows.
pub struct LiveFigures<'a> {
    pub point: usize,
    pub points: usize,
    pub label: &'a str,
    pub phase: &'a str,
    /// Into the phase: for a measured second, the end of that second.
    pub elapsed: Duration,
    pub total: Option<Duration>,
    /// A measured second, complete (every worker reported it): the figures the
    /// result stores for it. None during the ramp.
    pub second: Option<SecondFigures>,
    /// Said when I/Os are outstanding far too long.
    pub stall: Option<String>,
    /// A measured second in full (with `second`): what telemetry observers
    /// (--live-json, --metrics-listen) pass on beyond the live line.
    pub measured: Option<&'a MeasuredSecond>,
}

impl<'a> LiveFigures<'a> {
    /// The same update told as point `point` of `points` (a part of a run
    /// numbered as the whole run's), every other figure as it was.
    pub fn renumbered(&self, point: usize, points: usize) -> LiveFigures<'a> {
        LiveFigures { point, points, stall: self.stall.clone(), ..*self }
    }
}

/// One complete measured second as the result stores it, with its raw counts
/// and latency histogram and each worker's share.
pub struct MeasuredSecond {
    /// The figures of the stored interval row.
    pub interval: Interval,
    /// The second's counts by operation and its latency histogram, all workers merged.
    pub slice: IntervalSlice,
    /// Each worker's figures for the same second (its index among all workers).
    pub workers: Vec<(u32, Interval)>,
    /// I/Os in flight over all workers at their last reports.
    pub in_flight: u64,
    /// The URIs of the point's targets.
    pub targets: Vec<String>,
    /// Each target's figures and counts for the same second (URI, figures,
    /// slice), one for each of `targets` and in their order (its position is
    /// the target's index, which tells apart a URI given twice), whether each
    /// worker serves one target or spans several.
    pub per_target: Vec<(String, Interval, IntervalSlice)>,
    /// Under MPI (rank 0's merged second): each rank's figures for it, and
    /// the ranks whose second had not come when it was told (their I/O is
    /// not in it). Empty for one process.
    pub ranks: Vec<(u32, Interval)>,
    pub ranks_missing: Vec<u32>,
}

/// What a live telemetry stream (--live-json) produced and dropped, shared
/// between its writer and the run, which stores the counts in the result.
#[derive(Default, Debug)]
pub struct StreamCounts {
    pub lines: AtomicU64,
    pub dropped: AtomicU64,
}

#[derive(Clone, Copy, Debug)]
pub struct SecondFigures {
    pub iops: f64,
    pub mbps: f64,
    pub p99_us: f64,
}
