//! Follows a point's complete seconds in rounds and says when the last window
//! of rounds is steady (`workload::steady::judge`). Fed by the main thread from
//! the per-second figures it already gathers for the live view: nothing on the
//! workers' path.

use crate::metrics::IntervalSlice;
use crate::results::steady::SteadyOutcome;
use crate::workload::steady::{judge, SteadyMetric, SteadySpec, WindowFigures};

pub struct SteadyTracker {
    spec: SteadySpec,
    round_secs: u32,
    /// The round being summed: seconds in it, I/Os, bytes, latency sum (ns).
    seconds: u32,
    ios: u64,
    bytes: u64,
    lat_ns: f64,
    /// Each finished round's figure.
    rounds: Vec<f64>,
    last: Option<WindowFigures>,
    reached_at_s: Option<f64>,
}

impl SteadyTracker {
    pub fn new(spec: &SteadySpec) -> Self {
        SteadyTracker {
            spec: spec.clone(),
            round_secs: spec.round_secs().max(1),
            seconds: 0,
            ios: 0,
            bytes: 0,
            lat_ns: 0.0,
            rounds: Vec::new(),
            last: None,
            reached_at_s: None,
        }
    }

    pub fn reached(&self) -> bool {
        self.reached_at_s.is_some()
    }

    /// Adds one complete second (in order); true once the window is steady.
    pub fn add(&mut self, slice: &IntervalSlice) -> bool {
        if self.reached() {
            return true;
        }
        let ios = slice.ios_read + slice.ios_written;
        self.seconds += 1;
        self.ios += ios;
        self.bytes += slice.bytes_read + slice.bytes_written;
        self.lat_ns += slice.latency().mean_ns() * ios as f64;
        if self.seconds < self.round_secs {
            return false;
        }
        let secs = self.seconds as f64;
        let figure = match self.spec.metric {
            SteadyMetric::Iops => self.ios as f64 / secs,
            SteadyMetric::Bw => self.bytes as f64 / secs / 1e6,
            SteadyMetric::Lat if self.ios > 0 => self.lat_ns / self.ios as f64 / 1e3,
            SteadyMetric::Lat => 0.0,
        };
        self.rounds.push(figure);
        (self.seconds, self.ios, self.bytes, self.lat_ns) = (0, 0, 0, 0.0);
        let w = self.spec.window as usize;
        if self.rounds.len() >= w {
            let figures = judge(&self.rounds[self.rounds.len() - w..], self.spec.range, self.spec.slope);
            self.last = Some(figures);
            if figures.steady {
                self.reached_at_s = Some((slice.index + 1) as f64);
            }
        }
        self.reached()
    }

    pub fn outcome(&self) -> SteadyOutcome {
        let w = (self.spec.window as usize).min(self.rounds.len());
        let window = self.rounds[self.rounds.len() - w..].to_vec();
        let figures = self.last.unwrap_or_else(|| judge(&window, self.spec.range, self.spec.slope));
        SteadyOutcome {
            metric: self.spec.metric.to_string(),
            reached: self.reached(),
            reached_at_s: self.reached_at_s,
            rounds: self.rounds.len() as u32,
            round_s: self.round_secs as f64,
            window,
            mean: if w > 0 { figures.mean } else { 0.0 },
            range: if w > 0 { figures.range } else { 0.0 },
            slope: if w > 0 { figures.slope } else { 0.0 },
            range_limit_pct: self.spec.range,
            slope_limit_pct: self.spec.slope,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    fn second(index: u32, ios: u64) -> IntervalSlice {
        let mut s = IntervalSlice::new(index);
        for _ in 0..ios {
            s.record(Op::Read, 4096, 10_000);
        }
        s
    }

    #[test]
    fn rounds_of_two_seconds_reach_steady_on_the_last_second_of_the_window() {
        let spec = SteadySpec { round: std::time::Duration::from_secs(2), window: 3, ..SteadySpec::new(SteadyMetric::Iops) };
        let mut t = SteadyTracker::new(&spec);
        // A ramp first (100, 200 per second), then flat at 1000.
        let per_second = [100, 200, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000];
        let mut at = None;
        for (i, &n) in per_second.iter().enumerate() {
            if t.add(&second(i as u32, n)) && at.is_none() {
                at = Some(i);
            }
        }
        // Rounds: 150, 1000, 1000, 1000: the window of rounds 2-4 ends at second 8.
        assert_eq!(at, Some(7));
        let o = t.outcome();
        assert!(o.reached && o.reached_at_s == Some(8.0) && o.rounds == 4, "{o:?}");
        assert_eq!(o.window, vec![1000.0, 1000.0, 1000.0]);
    }
}
