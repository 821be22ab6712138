//! Steady-state outcomes in the result: of a point that ran with `--steady`
//! (`points[].summary.steady`), and of a run made of rounds (`rounds`, the
//! `pts-iops` profile). Plain data; docs/result-schema.md describes each field.

use serde::{Deserialize, Serialize};

/// Whether and when a point became steady, and its last window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyOutcome {
    /// The watched figure: "iops", "bw" (MB/s) or "lat" (mean latency, us).
    pub metric: String,
    pub reached: bool,
    /// Seconds into the measured interval when the window became steady (null when not reached).
    #[serde(default)]
    pub reached_at_s: Option<f64>,
    /// Rounds measured, and the length of one.
    pub rounds: u32,
    pub round_s: f64,
    /// The last window's round figures, oldest first.
    pub window: Vec<f64>,
    /// The window's mean, range (max - min) and slope excursion (least-squares slope x (rounds - 1)).
    pub mean: f64,
    pub range: f64,
    pub slope: f64,
    /// The limits, percent of the mean.
    pub range_limit_pct: f64,
    pub slope_limit_pct: f64,
}

/// The outcome of a run made of rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundsOutcome {
    /// The watched point, by its sweep values ("read=0 bs=4k").
    pub watch: String,
    /// The watched point's IOPS in each round, first round first.
    pub watched_iops: Vec<f64>,
    pub reached: bool,
    /// The round (counted from 1) that completed the first steady window (null when not reached).
    #[serde(default)]
    pub reached_at_round: Option<u32>,
    /// Rounds in the window, and the most rounds allowed.
    pub window_rounds: u32,
    pub max_rounds: u32,
    /// The last window's mean, range and slope excursion of the watched IOPS
    /// (null while fewer rounds than the window ran: no window to judge).
    #[serde(default)]
    pub mean: Option<f64>,
    #[serde(default)]
    pub range: Option<f64>,
    #[serde(default)]
    pub slope: Option<f64>,
    pub range_limit_pct: f64,
    pub slope_limit_pct: f64,
    /// What the purge did per target (empty: no purge asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub purge: Vec<String>,
    /// Bytes written per target to precondition (0: none).
    #[serde(default)]
    pub precondition_bytes: u64,
}

impl RoundsOutcome {
    /// True when enough rounds ran to fill one window.
    pub fn window_complete(&self) -> bool {
        self.mean.is_some() && self.watched_iops.len() >= self.window_rounds as usize
    }
}
