//! What one point of a run yields: its summarized point, status and reason,
//! measured interval, and the raw figures behind the summary. Its own file so
//! that `point` (which produces it) and `cluster` (whose hooks reduce it) both
//! build on it without importing each other.

use crate::metrics::{cpu, IntervalSlice, Recorder};
use crate::results::model::{Point, Status};

/// One point's result, before it joins the run's result.
pub struct PointOutcome {
    pub point: Point,
    pub status: Status,
    pub reason: Option<String>,
    /// The measured interval in Unix seconds, for matching power readings.
    pub span: (f64, f64),
    /// What the summary was computed from, for a cluster to reduce exactly (issue 17).
    pub measured: Measured,
}

/// A point's raw figures, kept beside its summary: merged recorders, the
/// one-second slices and the CPU usage. Ranks of an MPI run send these to rank
/// 0, which merges them and summarizes again (never averaging percentiles).
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub total: Recorder,
    pub by_group: Vec<Recorder>,
    pub slices: Vec<IntervalSlice>,
    pub usage: cpu::CpuUsage,
}

/// A point interrupted before its measured interval began (Ctrl-C in the
/// ramp): it has no figures, only zeros, and is not kept.
pub fn measured_nothing(o: &PointOutcome) -> bool {
    o.status == Status::Interrupted && o.point.summary.duration_s <= 0.0
}

/// How a run of a point ended, for the rules of what a stop keeps (`stop::settle`).
pub fn repeat_end(o: &PointOutcome) -> super::stop::RepeatEnd {
    super::stop::RepeatEnd { status: o.status, reason: o.reason.clone(), measured_nothing: measured_nothing(o) }
}
