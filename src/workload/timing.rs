//! When I/Os are issued, beside how many are in flight: the arrival process of
//! a rate-limited group (`fixed` intervals, or `poisson`: exponential
//! inter-arrival times with the asked mean) and think time (IOmeter's per-line
//! transfer delay and burst length; fio's thinktime and thinktime_blocks for a
//! whole group). The run turns these into pacing (src/run/pacing.rs); `spec`
//! derives a group's rules from its settings (`spec::think_rules`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How the I/Os of a rate-limited group arrive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// One I/O every 1/rate seconds.
    #[default]
    Fixed,
    /// Exponential inter-arrival times of mean 1/rate (a Poisson process).
    Poisson,
}

impl Arrivals {
    pub fn is_fixed(&self) -> bool {
        *self == Arrivals::Fixed
    }
}

impl std::str::FromStr for Arrivals {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "fixed" => Ok(Arrivals::Fixed),
            "poisson" => Ok(Arrivals::Poisson),
            other => Err(format!(
                "'{other}' is not an arrival process: choose fixed (one I/O every 1/rate) or poisson (exponential gaps of mean 1/rate)"
            )),
        }
    }
}

/// One think-time rule of a worker: after every `burst` I/Os (of access line
/// `line`, or of any line when None) the worker issues nothing for `delay`.
#[derive(Clone, Debug, PartialEq)]
pub struct ThinkRule {
    pub line: Option<u16>,
    pub burst: u32,
    pub delay: Duration,
}
