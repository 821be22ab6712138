//! Steady state, as fio's `steadystate` and SNIA's Solid State Storage
//! Performance Test Specification (PTS) define it: a measured figure (IOPS,
//! MB/s or mean latency) taken once per round; the last `window` rounds are
//! steady when their range (max - min) is within `range`% of their mean and
//! the excursion of their least-squares line (slope x (window - 1), SNIA's
//! "slope excursion") is within `slope`% of their mean.
//!
//! Here: the setting, and the judgement of one window (pure). The run feeds it
//! (`run::steady`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::serde_text::duration_text;

/// Which figure is watched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    Iops,
    /// MB/s (10^6 bytes per second).
    Bw,
    /// Mean latency, microseconds.
    Lat,
}

impl std::str::FromStr for SteadyMetric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "iops" => Ok(Self::Iops),
            "bw" => Ok(Self::Bw),
            "lat" => Ok(Self::Lat),
            _ => Err(format!("'{s}' is not a steady-state metric: choose iops, bw or lat")),
        }
    }
}

impl std::fmt::Display for SteadyMetric {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            Self::Iops => "iops",
            Self::Bw => "bw",
            Self::Lat => "lat",
        })
    }
}

pub const DEFAULT_WINDOW: u32 = 5;
pub const DEFAULT_RANGE: f64 = 20.0;
pub const DEFAULT_SLOPE: f64 = 10.0;

/// When a point counts as steady (it then ends before its `--time`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadySpec {
    pub metric: SteadyMetric,
    /// Rounds in the window.
    #[serde(default = "default_window")]
    pub window: u32,
    /// Length of a round: whole seconds (the run's per-second figures are summed).
    #[serde(default = "one_second", with = "duration_text")]
    pub round: Duration,
    /// Largest allowed range of the window, percent of its mean.
    #[serde(default = "default_range")]
    pub range: f64,
    /// Largest allowed slope excursion over the window, percent of its mean.
    #[serde(default = "default_slope")]
    pub slope: f64,
}

fn default_window() -> u32 {
    DEFAULT_WINDOW
}
fn one_second() -> Duration {
    Duration::from_secs(1)
}
fn default_range() -> f64 {
    DEFAULT_RANGE
}
fn default_slope() -> f64 {
    DEFAULT_SLOPE
}

impl SteadySpec {
    pub fn new(metric: SteadyMetric) -> Self {
        SteadySpec { metric, window: DEFAULT_WINDOW, round: one_second(), range: DEFAULT_RANGE, slope: DEFAULT_SLOPE }
    }

    /// Seconds per round.
    pub fn round_secs(&self) -> u32 {
        self.round.as_secs() as u32
    }

    /// Checks the values against the point's maximum time (None: the point is
    /// an I/O count, which cannot end on steady state).
    pub fn check(&self, time: Option<Duration>) -> Result<(), String> {
        self.check_against(time, "--time")
    }

    /// As `check`, naming where the maximum time came from (`--time`, or "the
    /// profile's time per point") when it is too short.
    pub fn check_against(&self, time: Option<Duration>, time_from: &str) -> Result<(), String> {
        if self.window < 2 {
            return Err(format!("--steady-window {}: a window needs at least 2 rounds to have a range and a slope", self.window));
        }
        if self.round.is_zero() || self.round.subsec_nanos() != 0 {
            return Err(format!(
                "--steady-round {}: give whole seconds (1s, 5s): a round is made of the run's one-second figures",
                crate::units::format_duration(self.round)
            ));
        }
        for (flag, v) in [("--steady-range", self.range), ("--steady-slope", self.slope)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{flag} {v}: give a positive percentage of the window's mean, for example 20"));
            }
        }
        let Some(time) = time else {
            return Err("--steady ends a point once it is steady, with --time as the maximum: use --time instead of --ios".into());
        };
        let need = self.round * self.window;
        if time < need {
            return Err(format!(
                "--steady: a window of {} rounds of {} needs at least {} of --time (the maximum), but {time_from} is {}: give a longer --time or a shorter window",
                self.window,
                crate::units::format_duration(self.round),
                crate::units::format_duration(need),
                crate::units::format_duration(time)
            ));
        }
        Ok(())
    }

    /// One line for `--dry-run`.
    pub fn describe(&self) -> String {
        format!(
            "steady: the point ends when the last {} rounds of {} are steady in {} (range within {}% and slope excursion within {}% of their mean); --time is the maximum",
            self.window,
            crate::units::format_duration(self.round),
            self.metric,
            self.range,
            self.slope
        )
    }
}

/// The figures of one window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowFigures {
    pub mean: f64,
    /// max - min.
    pub range: f64,
    /// Least-squares slope per round times (rounds - 1), in absolute value.
    pub slope: f64,
    /// Range and slope both within their limits (and the mean above 0).
    pub steady: bool,
}

/// Judges a window of round figures against the limits (percent of the mean).
pub fn judge(window: &[f64], range_pct: f64, slope_pct: f64) -> WindowFigures {
    let n = window.len() as f64;
    let mean = window.iter().sum::<f64>() / n;
    let max = window.iter().cloned().fold(f64::MIN, f64::max);
    let min = window.iter().cloned().fold(f64::MAX, f64::min);
    let x_mean = (n - 1.0) / 2.0;
    let sxy: f64 = window.iter().enumerate().map(|(i, y)| (i as f64 - x_mean) * (y - mean)).sum();
    let sxx: f64 = (0..window.len()).map(|i| (i as f64 - x_mean).powi(2)).sum();
    let per_round = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let slope = (per_round * (n - 1.0)).abs();
    let range = max - min;
    let steady = window.len() >= 2 && mean > 0.0 && range <= range_pct / 100.0 * mean && slope <= slope_pct / 100.0 * mean;
    WindowFigures { mean, range, slope, steady }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_window_is_steady_and_a_ramp_is_not() {
        let flat = judge(&[100.0, 102.0, 98.0, 101.0, 99.0], 20.0, 10.0);
        assert!(flat.steady);
        assert!((flat.mean - 100.0).abs() < 1e-9 && (flat.range - 4.0).abs() < 1e-9);
        // 100..108: range 8% of the mean 104 passes 20%, but the line rises 8, above 10%? no: 7.7% passes.
        let ramp = judge(&[100.0, 102.0, 104.0, 106.0, 108.0], 20.0, 10.0);
        assert!((ramp.slope - 8.0).abs() < 1e-9);
        assert!(ramp.steady);
        let steep = judge(&[100.0, 104.0, 108.0, 112.0, 116.0], 20.0, 10.0);
        assert!((steep.slope - 16.0).abs() < 1e-9 && !steep.steady, "{steep:?}");
        let spread = judge(&[100.0, 130.0, 100.0, 130.0, 100.0], 20.0, 10.0);
        assert!(!spread.steady);
        assert!(!judge(&[0.0, 0.0], 20.0, 10.0).steady);
    }

    #[test]
    fn bad_settings_are_refused_with_the_flag() {
        let s = SteadySpec::new(SteadyMetric::Iops);
        assert!(s.check(Some(Duration::from_secs(10))).is_ok());
        assert!(s.check(Some(Duration::from_secs(3))).unwrap_err().contains("at least 5s of --time"));
        assert!(s.check(None).unwrap_err().contains("--ios"));
        // A profile's own time is named as such, not as a --time never given.
        let e = s.check_against(Some(Duration::from_secs(1)), "the profile's time per point").unwrap_err();
        assert!(e.contains("but the profile's time per point is 1s: give a longer --time"), "{e}");
        let s = SteadySpec { window: 1, ..SteadySpec::new(SteadyMetric::Bw) };
        assert!(s.check(Some(Duration::from_secs(10))).unwrap_err().contains("--steady-window 1"));
        let s = SteadySpec { round: Duration::from_millis(1500), ..SteadySpec::new(SteadyMetric::Lat) };
        assert!(s.check(Some(Duration::from_secs(10))).unwrap_err().contains("--steady-round 1500ms"));
    }
}
