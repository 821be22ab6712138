//! Open-loop issue for rate-limited and ratio-locked groups.
//!
//! `Rate`: I/Os are due on a fixed schedule (t0, t0 + 1/rate, ...). An I/O that
//! could not be issued on time (every slot busy: the target stalled) is issued as
//! soon as a slot frees, and its latency is still counted from its scheduled time,
//! so a stall shows in the latency instead of being hidden by a slower issue rate
//! (coordinated omission). The time from actual submission is kept beside it as
//! service time.
//!
//! `Follow`: the group keeps its I/O count at `ratio` x a leader group's
//! completions (Exchange's log at a quarter of the database), holding back while
//! ahead. The leader's workers add their completions to a shared counter once per
//! reaped batch, not per I/O.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub enum Pacing {
    /// Closed loop: every completion is replaced at once.
    Unpaced,
    /// A fixed schedule of one I/O every `interval`.
    Rate { interval: Duration },
    /// Keep issued I/Os at or below `ratio` x the leader's completions (this
    /// worker's share of the group), plus `allowance` to fill the queue at start.
    Follow { leader: Arc<AtomicU64>, ratio: f64, allowance: u64 },
}

/// A worker's pacing state.
pub struct Pacer {
    pacing: Pacing,
    next_due: Instant,
    issued: u64,
}

/// How long to wait for the leader to move on when ahead of it.
const FOLLOW_POLL: Duration = Duration::from_millis(1);

impl Pacer {
    pub fn new(pacing: Pacing, start: Instant) -> Self {
        Pacer { pacing, next_due: start, issued: 0 }
    }

    pub fn paced(&self) -> bool {
        !matches!(self.pacing, Pacing::Unpaced)
    }

    /// If an I/O is due now, its scheduled time (and the schedule moves on).
    #[inline]
    pub fn take_due(&mut self, now: Instant) -> Option<Instant> {
        match &self.pacing {
            Pacing::Unpaced => Some(now),
            Pacing::Rate { interval } => {
                if self.next_due > now {
                    return None;
                }
                let due = self.next_due;
                self.next_due += *interval;
                Some(due)
            }
            Pacing::Follow { leader, ratio, allowance } => {
                let allowed = (leader.load(Ordering::Relaxed) as f64 * ratio) as u64 + allowance;
                if self.issued >= allowed {
                    return None;
                }
                self.issued += 1;
                Some(now)
            }
        }
    }

    /// How long until the next I/O may be due.
    pub fn wait(&self, now: Instant) -> Duration {
        match &self.pacing {
            Pacing::Unpaced => Duration::ZERO,
            Pacing::Rate { .. } => self.next_due.saturating_duration_since(now),
            Pacing::Follow { .. } => FOLLOW_POLL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_schedule_is_fixed_and_keeps_lateness() {
        let t0 = Instant::now();
        let mut p = Pacer::new(Pacing::Rate { interval: Duration::from_millis(10) }, t0);
        assert_eq!(p.take_due(t0), Some(t0));
        assert_eq!(p.take_due(t0), None);
        // Late by 35 ms: the missed I/Os come out at once, each with its own schedule time.
        let late = t0 + Duration::from_millis(35);
        let due: Vec<_> = std::iter::from_fn(|| p.take_due(late)).collect();
        assert_eq!(due, vec![t0 + Duration::from_millis(10), t0 + Duration::from_millis(20), t0 + Duration::from_millis(30)]);
        assert_eq!(p.wait(late), Duration::from_millis(5));
    }

    #[test]
    fn followers_hold_back_while_ahead() {
        let leader = Arc::new(AtomicU64::new(0));
        let t0 = Instant::now();
        let mut p = Pacer::new(Pacing::Follow { leader: leader.clone(), ratio: 0.25, allowance: 2 }, t0);
        assert!(p.take_due(t0).is_some() && p.take_due(t0).is_some());
        assert!(p.take_due(t0).is_none());
        leader.store(8, Ordering::Relaxed);
        assert!(p.take_due(t0).is_some() && p.take_due(t0).is_some());
        assert!(p.take_due(t0).is_none());
    }
}
