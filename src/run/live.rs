//! What a point tells its observers about once a second (`RunObserver::tick`):
//! the figures of the live view. Data only: the view that draws them (a
//! progress line on a terminal, a plain line per second otherwise) is the
//! command line's (`cli/live_view.rs`). A measured second is told once every
//! worker has reported it, with the same figures the result stores for that second.

use std::time::Duration;

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
}

pub struct SecondFigures {
    pub iops: f64,
    pub mbps: f64,
    pub p99_us: f64,
}
