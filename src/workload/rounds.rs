//! Rounds: the structure of SNIA's PTS tests. The run's points (a sweep of
//! read/write mixes x transfer sizes) are one round; rounds repeat until the
//! watched point's IOPS over the last `window` rounds is steady (range and
//! slope excursion within their shares of the mean, as `steady::judge`), or
//! `max` rounds have run. Before the first round, optionally a purge (discard
//! the region) and a preconditioning pass of 128 KiB sequential writes.
//! Plain data here; the run is `run::rounds`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::units::{parse_size, Bytes};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rounds {
    /// The point whose IOPS decides, by its sweep values: "read=0 bs=4k".
    pub watch: String,
    /// Most rounds to run (SNIA: 25).
    #[serde(default = "default_max")]
    pub max: u32,
    /// Rounds in the steady-state window (SNIA: 5).
    #[serde(default = "default_window")]
    pub window: u32,
    /// Largest range of the window, percent of its mean (SNIA: 20).
    #[serde(default = "default_range")]
    pub range: f64,
    /// Largest slope excursion of the window, percent of its mean (SNIA: 10).
    #[serde(default = "default_slope")]
    pub slope: f64,
    /// Purge before anything: discard the region of a device (BLKDISCARD) or
    /// punch it out of a file (FALLOCATE_PUNCH_HOLE).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub purge: bool,
    /// Precondition with 128 KiB sequential writes of this many times the region (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub precondition: f64,
}

fn default_max() -> u32 {
    25
}
fn default_window() -> u32 {
    5
}
fn default_range() -> f64 {
    20.0
}
fn default_slope() -> f64 {
    10.0
}
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// The transfer size of the preconditioning writes.
pub const PRECONDITION_BS: Bytes = Bytes(128 * 1024);

impl Rounds {
    pub fn check(&self) -> Result<(), String> {
        if self.window < 2 || self.max < self.window {
            return Err(format!(
                "rounds: window {} and max {}: the window needs at least 2 rounds and max at least the window",
                self.window, self.max
            ));
        }
        if !(self.range > 0.0 && self.slope > 0.0) {
            return Err("rounds: range and slope are positive percentages of the window's mean".into());
        }
        if !(self.precondition.is_finite() && self.precondition >= 0.0) {
            return Err(format!("rounds: precondition {} is not a number of times the region (0 for none)", self.precondition));
        }
        self.watch_pairs().map(|_| ())
    }

    /// The watch as (key, value) pairs.
    fn watch_pairs(&self) -> Result<Vec<(String, String)>, String> {
        let pairs: Option<Vec<(String, String)>> = self
            .watch
            .split([' ', ','])
            .filter(|t| !t.is_empty())
            .map(|t| t.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string())))
            .collect();
        match pairs {
            Some(p) if !p.is_empty() => Ok(p),
            _ => Err(format!("rounds: watch '{}': name the point by its sweep values, for example \"read=0 bs=4k\"", self.watch)),
        }
    }

    /// True when a point with these sweep values is the watched one.
    pub fn watches(&self, params: &std::collections::BTreeMap<String, Value>) -> bool {
        let Ok(pairs) = self.watch_pairs() else { return false };
        pairs.iter().all(|(k, want)| {
            let Some(have) = params.get(k) else { return false };
            match (k.as_str(), have) {
                ("bs", Value::String(s)) => parse_size(s).ok().zip(parse_size(want).ok()).is_some_and(|(a, b)| a == b),
                (_, Value::Number(n)) => want.trim_end_matches('%').parse::<f64>().ok() == n.as_f64(),
                (_, Value::String(s)) => s == want,
                _ => false,
            }
        })
    }

    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.purge {
            parts.push("purge the region (discard a device's, punch a file's)".to_string());
        }
        if self.precondition > 0.0 {
            parts.push(format!("precondition with {PRECONDITION_BS} sequential writes of {}x the region", self.precondition));
        }
        parts.push(format!(
            "then every point above once per round, up to {} rounds, until the IOPS of point '{}' over the last {} rounds is steady (range within {}%, slope excursion within {}% of the mean)",
            self.max, self.watch, self.window, self.range, self.slope
        ));
        format!("rounds: {}", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_matches_sweep_values_by_meaning() {
        let r = Rounds { watch: "read=0 bs=4k".into(), max: 25, window: 5, range: 20.0, slope: 10.0, purge: true, precondition: 2.0 };
        assert!(r.check().is_ok());
        let mut p = std::collections::BTreeMap::new();
        p.insert("read".to_string(), serde_json::json!(0.0));
        p.insert("bs".to_string(), Value::from("4k"));
        assert!(r.watches(&p));
        p.insert("bs".to_string(), Value::from("8k"));
        assert!(!r.watches(&p));
        assert!(Rounds { watch: "bs".into(), ..r.clone() }.check().is_err());
        assert!(Rounds { window: 1, ..r }.check().is_err());
    }
}
