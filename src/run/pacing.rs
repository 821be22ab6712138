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
//!
//! `Poisson`: as `Rate`, but the gaps between due times are exponential with
//! mean `mean` (a Poisson process of rate 1/mean per worker; the workers of a
//! group together are again a Poisson process, of the group's rate). Each gap
//! is drawn in nanoseconds and added to the schedule, so the mean rate is the
//! asked one however late the I/Os are issued (fio issue 333: its Poisson mode
//! gave twice the asked IOPS).
//!
//! Think time (`Think`, with any pacing): after `burst` I/Os the worker issues
//! nothing for `delay` (IOmeter's burst length and transfer delay; fio's
//! thinktime_blocks and thinktime). I/Os in flight complete meanwhile; latency
//! of an unpaced worker still counts from submission.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::workload::rng::Rng;
use crate::workload::timing::ThinkRule;

#[derive(Clone, Debug)]
pub enum Pacing {
    /// Closed loop: every completion is replaced at once.
    Unpaced,
    /// A fixed schedule of one I/O every `interval`.
    Rate { interval: Duration },
    /// Keep issued I/Os at or below `ratio` x the leader's completions (this
    /// worker's share of the group), plus `allowance` to fill the queue at start.
    Follow { leader: Arc<AtomicU64>, ratio: f64, allowance: u64 },
    /// Exponential gaps of mean `mean`, drawn from a generator seeded by (seed, stream).
    Poisson { mean: Duration, seed: u64, stream: u64 },
}

/// A worker's pacing state.
pub struct Pacer {
    pacing: Pacing,
    next_due: Instant,
    issued: u64,
    /// The gaps of Poisson pacing.
    gaps: Option<Rng>,
    think: Option<Think>,
}

/// Think-time state: each rule's count of I/Os since its last pause, and when
/// issuing may resume.
struct Think {
    rules: Vec<(ThinkRule, u32)>,
    resume_at: Instant,
}

/// How long to wait for the leader to move on when ahead of it.
const FOLLOW_POLL: Duration = Duration::from_millis(1);

impl Pacer {
    pub fn new(pacing: Pacing, start: Instant) -> Self {
        let gaps = match &pacing {
            Pacing::Poisson { seed, stream, .. } => Some(Rng::for_stream(*seed ^ 0xA771_7A15, *stream)),
            _ => None,
        };
        Pacer { pacing, next_due: start, issued: 0, gaps, think: None }
    }

    /// Adds think-time rules (none: no change).
    pub fn with_think(mut self, rules: Vec<ThinkRule>, start: Instant) -> Self {
        if !rules.is_empty() {
            self.think = Some(Think { rules: rules.into_iter().map(|r| (r, 0)).collect(), resume_at: start });
        }
        self
    }

    /// Whether the worker holds idle slots until the pacer lets them go.
    pub fn paced(&self) -> bool {
        !matches!(self.pacing, Pacing::Unpaced) || self.think.is_some()
    }

    /// Whether I/Os are due on a schedule (or a leader) rather than at once:
    /// then their service time is kept beside the latency.
    pub fn scheduled(&self) -> bool {
        !matches!(self.pacing, Pacing::Unpaced)
    }

    /// Counts an issued I/O of access line `line` against the think-time rules.
    #[inline]
    pub fn issued(&mut self, line: u16, now: Instant) {
        if let Some(t) = &mut self.think {
            for (rule, count) in &mut t.rules {
                if rule.line.is_none_or(|l| l == line) {
                    *count += 1;
                    if *count >= rule.burst {
                        *count = 0;
                        t.resume_at = t.resume_at.max(now + rule.delay);
                    }
                }
            }
        }
    }

    /// An exponential gap of mean `mean`, in whole nanoseconds.
    fn gap(rng: &mut Rng, mean: Duration) -> Duration {
        // 1 - unit() lies in (0, 1]: the log is finite.
        let e = -(1.0 - rng.unit()).ln();
        Duration::from_nanos((e * mean.as_nanos() as f64).round() as u64)
    }

    /// If an I/O is due now, its scheduled time (and the schedule moves on).
    #[inline]
    pub fn take_due(&mut self, now: Instant) -> Option<Instant> {
        if let Some(t) = &self.think {
            if t.resume_at > now {
                return None;
            }
        }
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
            Pacing::Poisson { mean, .. } => {
                if self.next_due > now {
                    return None;
                }
                let due = self.next_due;
                self.next_due += Self::gap(self.gaps.as_mut().expect("made with Poisson pacing"), *mean);
                Some(due)
            }
        }
    }

    /// How long until the next I/O may be due.
    pub fn wait(&self, now: Instant) -> Duration {
        let paced = match &self.pacing {
            Pacing::Unpaced => Duration::ZERO,
            Pacing::Rate { .. } | Pacing::Poisson { .. } => self.next_due.saturating_duration_since(now),
            Pacing::Follow { .. } => FOLLOW_POLL,
        };
        match &self.think {
            Some(t) => paced.max(t.resume_at.saturating_duration_since(now)),
            None => paced,
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
    fn poisson_gaps_have_the_asked_mean_and_a_cv_of_one() {
        let t0 = Instant::now();
        let mean = Duration::from_micros(500);
        let mut p = Pacer::new(Pacing::Poisson { mean, seed: 3, stream: 1 }, t0);
        let far = t0 + Duration::from_secs(3600);
        let due: Vec<Instant> = (0..200_000).map(|_| p.take_due(far).unwrap()).collect();
        let gaps: Vec<f64> = due.windows(2).map(|w| (w[1] - w[0]).as_nanos() as f64).collect();
        let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((m / 500_000.0 - 1.0).abs() < 0.01, "mean gap {m} ns for 500 us asked");
        assert!((sd / m - 1.0).abs() < 0.02, "cv {}", sd / m);
        // Same seed and stream, same schedule; another stream, another.
        let mut q = Pacer::new(Pacing::Poisson { mean, seed: 3, stream: 1 }, t0);
        assert!(due.iter().take(100).all(|d| q.take_due(far) == Some(*d)));
        let mut r = Pacer::new(Pacing::Poisson { mean, seed: 3, stream: 2 }, t0);
        assert!((0..3).map(|_| r.take_due(far)).collect::<Vec<_>>() != due[..3].iter().map(|d| Some(*d)).collect::<Vec<_>>());
    }

    #[test]
    fn think_time_pauses_after_each_burst_of_its_line() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let rules = vec![ThinkRule { line: Some(1), burst: 2, delay: ms(10) }, ThinkRule { line: None, burst: 5, delay: ms(3) }];
        let mut p = Pacer::new(Pacing::Unpaced, t0).with_think(rules, t0);
        assert!(p.paced() && !p.scheduled());
        // Line 0 I/Os do not count toward line 1's burst.
        for _ in 0..3 {
            assert_eq!(p.take_due(t0), Some(t0));
            p.issued(0, t0);
        }
        assert_eq!(p.take_due(t0), Some(t0));
        p.issued(1, t0);
        assert!(p.take_due(t0).is_some());
        p.issued(1, t0); // the 2nd of line 1 and the 5th of all: the longer pause wins
        assert_eq!(p.take_due(t0 + ms(9)), None);
        assert_eq!(p.wait(t0 + ms(4)), ms(6));
        assert_eq!(p.take_due(t0 + ms(10)), Some(t0 + ms(10)));
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
