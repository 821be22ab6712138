//! Power: watts during the measured interval, the idle baseline before the run,
//! and IOPS and MB/s per watt above idle (METHODOLOGY.md, paper 002).
//!
//! Every source becomes `EnergySamples`: cumulative energy (joules) at wall-clock
//! times. RAPL gives energy directly (its counters unwrapped); IPMI DCMI, a
//! command and a meter's CSV log give watts, integrated between readings. The
//! average power over any interval is then the energy difference over the time.
//! With no source the power figures are null with the reason, never zero.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub mod command;
pub mod ipmi;
pub mod log;
pub mod rapl;
pub mod sampler;

/// Seconds since the Unix epoch.
pub fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64()
}

/// The step of a watt reading as printed: 1 for 230, 0.1 for 230.5, 0.01 for
/// 230.25 (at most 6 decimals are looked at).
pub fn resolution_of(watts: f64) -> f64 {
    (0..=6)
        .map(|d| 10f64.powi(-d))
        .find(|step| ((watts / step).round() * step - watts).abs() <= 1e-9 * watts.abs().max(1.0))
        .unwrap_or(1e-6)
}

/// Cumulative energy over time: (unix seconds, joules since the first sample), increasing in time.
#[derive(Clone, Debug, Default)]
pub struct EnergySamples {
    pub samples: Vec<(f64, f64)>,
    /// The finest step of the watt readings (1 W for a meter that prints whole
    /// watts); None for energy counters, whose step is far below a watt.
    pub resolution_w: Option<f64>,
}

impl EnergySamples {
    /// Samples from watt readings: energy integrated with the trapezoid rule.
    pub fn from_watts(readings: &[(f64, f64)]) -> EnergySamples {
        let mut samples = Vec::with_capacity(readings.len());
        let mut energy = 0.0;
        for (i, &(t, w)) in readings.iter().enumerate() {
            if i > 0 {
                let (t0, w0) = readings[i - 1];
                energy += (t - t0) * (w + w0) / 2.0;
            }
            samples.push((t, energy));
        }
        let resolution_w = readings.iter().map(|r| resolution_of(r.1)).min_by(f64::total_cmp);
        EnergySamples { samples, resolution_w }
    }

    /// Energy at time t, interpolated; None outside the samples.
    fn energy_at(&self, t: f64) -> Option<f64> {
        let s = &self.samples;
        let first = s.first()?;
        let last = s.last()?;
        if t < first.0 - 1e-9 || t > last.0 + 1e-9 {
            return None;
        }
        let i = s.partition_point(|p| p.0 < t);
        if i == 0 {
            return Some(first.1);
        }
        if i >= s.len() {
            return Some(last.1);
        }
        let (t0, e0) = s[i - 1];
        let (t1, e1) = s[i];
        Some(if t1 > t0 { e0 + (e1 - e0) * (t - t0) / (t1 - t0) } else { e1 })
    }

    /// Average watts over [from, to], when the samples cover it.
    pub fn avg_watts(&self, from: f64, to: f64) -> Option<f64> {
        if to <= from {
            return None;
        }
        Some((self.energy_at(to)? - self.energy_at(from)?) / (to - from))
    }
}

/// What the user asked for with --power, --power-cmd and --power-log.
#[derive(Clone, Debug, Default)]
pub struct PowerRequest {
    /// auto (default), rapl, ipmi, cmd, log or none.
    pub source: Option<String>,
    pub command: Option<String>,
    pub log: Option<std::path::PathBuf>,
    pub idle: Option<Duration>,
    /// An idle baseline measured already (a lab measures one for all its
    /// legs): used instead of measuring `idle` again.
    pub baseline: Option<IdleBaseline>,
}

/// An idle baseline measured once and shared by several runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IdleBaseline {
    pub watts: Option<f64>,
    /// The meter's resolution seen while measuring it.
    pub resolution: Option<f64>,
    /// Why there is no figure, when there is none.
    pub problem: Option<String>,
    /// What each result says of it ("measured once, before the lab's first leg, for all 5 legs").
    pub note: String,
}

/// The sources `--power` names.
pub const SOURCES: &[&str] = &["auto", "rapl", "ipmi", "cmd", "log", "none"];

impl PowerRequest {
    /// Refuses, before anything runs, a request the run could only turn into a
    /// null figure: an unknown source name (a typo), `cmd` and `log` without
    /// the command or file they read, or an idle baseline with no source.
    pub fn check(&self) -> Result<(), String> {
        match self.source.as_deref() {
            Some(s) if !SOURCES.contains(&s) => Err(format!(
                "--power {s}: unknown power source{}; choose {}",
                crate::workload::profile::nearest(s, SOURCES.iter().copied())
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default(),
                SOURCES.join(", ")
            )),
            Some("cmd") if self.command.is_none() => Err("--power cmd needs --power-cmd 'COMMAND' (a command that prints watts)".into()),
            Some("log") if self.log.is_none() => Err("--power log needs --power-log FILE (a CSV of timestamp,watts)".into()),
            // An idle baseline is a power measurement: with no source it would be waited out and never taken.
            Some("none") if self.idle.is_some() => Err(format!(
                "--idle {:?}: the idle baseline is measured by the power source, and --power none measures none; \
                 drop --idle, or choose a source with --power (auto, rapl, ipmi, cmd, log)",
                self.idle.unwrap_or_default()
            )),
            _ => Ok(()),
        }
    }
}

/// A source that was found and works.
#[derive(Clone, Debug)]
pub enum Source {
    Rapl(rapl::Rapl),
    Ipmi(ipmi::Ipmi),
    Command(String),
    Log(std::path::PathBuf),
}

impl Source {
    pub fn describe(&self) -> String {
        match self {
            Source::Rapl(r) => format!("rapl ({})", r.domain_names().join(" + ")),
            Source::Ipmi(_) => "ipmi dcmi".into(),
            Source::Command(c) => format!("command: {c}"),
            Source::Log(p) => format!("log: {}", p.display()),
        }
    }
}

/// Chooses the source: the one asked for, or the first that works of RAPL,
/// then IPMI DCMI. Err is the reason there is none, said so it can be fixed.
pub fn resolve(req: &PowerRequest) -> Result<Source, String> {
    if let Some(c) = &req.command {
        return Ok(Source::Command(c.clone()));
    }
    if let Some(p) = &req.log {
        return Ok(Source::Log(p.clone()));
    }
    match req.source.as_deref().unwrap_or("auto") {
        "none" => Err("power measurement turned off (--power none)".into()),
        "rapl" => rapl::Rapl::discover().map(Source::Rapl),
        "ipmi" => ipmi::Ipmi::discover().map(Source::Ipmi),
        "cmd" => Err("--power cmd needs --power-cmd 'COMMAND' (a command that prints watts)".into()),
        "log" => Err("--power log needs --power-log FILE (a CSV of timestamp,watts)".into()),
        "auto" => {
            let rapl = match rapl::Rapl::discover() {
                Ok(r) => return Ok(Source::Rapl(r)),
                Err(e) => e,
            };
            let ipmi = match ipmi::Ipmi::discover() {
                Ok(i) => return Ok(Source::Ipmi(i)),
                Err(e) => e,
            };
            Err(format!("no power source: {rapl}; {ipmi}; or give --power-cmd 'COMMAND' or --power-log FILE"))
        }
        other => Err(format!("unknown power source '{other}': choose auto, rapl, ipmi, cmd, log or none")),
    }
}

/// Power figures of one point (or why there are none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PowerStats {
    /// The source, e.g. "rapl (package-0 + dram)"; null when there is none.
    pub source: Option<String>,
    /// Why the figures are null, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Average watts over the measured interval.
    pub avg_watts: Option<f64>,
    /// Average watts over the idle period before the run (--idle).
    pub idle_watts: Option<f64>,
    /// Where the idle baseline comes from when it was not measured before
    /// this run: a lab measures one for all its legs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_from: Option<String>,
    /// avg_watts - idle_watts.
    pub delta_watts: Option<f64>,
    /// The step of the meter's watt readings, when it reads watts (1 for whole watts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_watts: Option<f64>,
    /// IOPS ÷ delta watts.
    pub iops_per_delta_watt: Option<f64>,
    /// MB/s ÷ delta watts.
    pub mbps_per_delta_watt: Option<f64>,
    /// IOPS ÷ average watts (whole-system efficiency, without a baseline).
    pub iops_per_watt: Option<f64>,
    pub mbps_per_watt: Option<f64>,
}

impl PowerStats {
    pub fn unavailable(reason: &str) -> PowerStats {
        PowerStats { reason: Some(reason.to_string()), ..Default::default() }
    }

    /// The figures for a point, from its average, the idle baseline and the
    /// meter's resolution. Per-delta-watt figures are given only when the delta
    /// is a real signal: at least the meter's resolution and at least 1% of the
    /// average (a constant meter's delta is rounding noise, and IOPS divided by
    /// noise is a number with twenty digits).
    pub fn measured(source: &str, avg: Option<f64>, idle: Option<f64>, resolution: Option<f64>, iops: f64, mbps: f64) -> PowerStats {
        let Some(avg) = avg else {
            return PowerStats {
                source: Some(source.into()),
                reason: Some("the power source gave no readings covering the measured interval".into()),
                resolution_watts: resolution,
                ..Default::default()
            };
        };
        let delta = idle.map(|i| avg - i);
        let per = |rate: f64, w: Option<f64>| w.filter(|w| *w > 0.0).map(|w| rate / w);
        let floor = (avg.abs() * MIN_DELTA_SHARE).max(resolution.unwrap_or(0.0));
        let idle_w = idle.unwrap_or_default();
        let reason = match delta {
            Some(d) if d <= 0.0 => Some(format!(
                "the run drew no more than idle ({avg:.1} W against {idle_w:.1} W idle): per-delta-watt figures are undefined"
            )),
            Some(d) if d < floor => Some(format!(
                "the run drew only {d:.3} W above idle ({avg:.1} W against {idle_w:.1} W idle), less than {}: per-delta-watt figures would divide by noise and are left out",
                match resolution {
                    Some(r) => format!("the meter's resolution of {r} W or 1% of the average ({:.2} W)", avg.abs() * MIN_DELTA_SHARE),
                    None => format!("1% of the average ({:.2} W)", avg.abs() * MIN_DELTA_SHARE),
                }
            )),
            _ => None,
        };
        let usable = delta.filter(|_| reason.is_none());
        PowerStats {
            source: Some(source.into()),
            reason,
            avg_watts: Some(avg),
            idle_watts: idle,
            idle_from: None,
            delta_watts: delta,
            resolution_watts: resolution,
            iops_per_delta_watt: per(iops, usable),
            mbps_per_delta_watt: per(mbps, usable),
            iops_per_watt: per(iops, Some(avg)),
            mbps_per_watt: per(mbps, Some(avg)),
        }
    }
}

/// The smallest delta above idle, as a share of the average, taken as a signal.
pub const MIN_DELTA_SHARE: f64 = 0.01;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_resolution() {
        assert_eq!(resolution_of(230.0), 1.0);
        assert_eq!(resolution_of(230.5), 0.1);
        assert_eq!(resolution_of(230.25), 0.01);
        let t = EnergySamples::from_watts(&[(0.0, 100.0), (1.0, 100.5)]);
        assert_eq!(t.resolution_w, Some(0.1));
    }

    #[test]
    fn samples_average_energy_over_time() {
        // 100 W for 2 s then 200 W for 2 s.
        let t = EnergySamples::from_watts(&[(0.0, 100.0), (2.0, 100.0), (2.0, 200.0), (4.0, 200.0)]);
        assert!((t.avg_watts(0.0, 4.0).unwrap() - 150.0).abs() < 1e-9);
        assert!((t.avg_watts(2.5, 3.5).unwrap() - 200.0).abs() < 1e-9);
        assert!(t.avg_watts(3.0, 5.0).is_none(), "outside the samples");
    }

    #[test]
    fn per_delta_watt_figures() {
        let p = PowerStats::measured("test", Some(250.0), Some(211.0), Some(1.0), 39_000.0, 3_900.0);
        assert_eq!(p.delta_watts, Some(39.0));
        assert_eq!(p.iops_per_delta_watt, Some(1000.0));
        assert_eq!(p.mbps_per_delta_watt, Some(100.0));
        let p = PowerStats::measured("test", Some(200.0), Some(211.0), None, 1.0, 1.0);
        assert!(p.iops_per_delta_watt.is_none() && p.reason.unwrap().contains("no more than idle"));
        // A constant meter: idle and run both 100 W but for rounding in the integration.
        let p = PowerStats::measured("test", Some(100.000_000_000_01), Some(100.0), Some(1.0), 1e6, 4e3);
        assert!(p.iops_per_delta_watt.is_none() && p.mbps_per_delta_watt.is_none(), "{p:?}");
        assert!(p.reason.as_deref().unwrap().contains("resolution of 1 W"), "{p:?}");
        assert_eq!(p.iops_per_watt, Some(1e6 / 100.000_000_000_01));
        // Under 1% of the average with a fine meter (RAPL: no resolution in watts).
        let p = PowerStats::measured("test", Some(100.5), Some(100.0), None, 1e6, 4e3);
        assert!(p.iops_per_delta_watt.is_none() && p.reason.as_deref().unwrap().contains("1% of the average"), "{p:?}");
        // Just above both floors: figures present.
        let p = PowerStats::measured("test", Some(102.0), Some(100.0), Some(1.0), 1e6, 4e3);
        assert_eq!(p.iops_per_delta_watt, Some(1e6 / 2.0));
        let none = PowerStats::unavailable("no source");
        assert!(none.avg_watts.is_none() && none.reason.is_some());
    }
}
