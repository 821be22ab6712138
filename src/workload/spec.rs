//! The workload specification with IOmeter semantics: worker groups, each with an
//! access specification (weighted lines of share, transfer size, read %, random %,
//! alignment), a number of workers (threads), outstanding I/Os per worker per
//! target, and the targets it drives. This is the "low" configuration: plain
//! data, checked by `validate`, serialisable to TOML and JSON unchanged.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::units::{format_duration, parse_duration, Bytes};

/// One line of an access specification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessLine {
    /// Share of this group's I/Os that take this line, in percent.
    pub share: f64,
    /// Transfer size.
    pub bs: Bytes,
    /// Share of reads, in percent; the rest are writes.
    pub read: f64,
    /// Share of random I/Os, in percent; the rest continue sequentially.
    pub random: f64,
    /// Alignment of random offsets; defaults to the transfer size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<Bytes>,
}

impl AccessLine {
    pub fn alignment(&self) -> u64 {
        self.align.unwrap_or(self.bs).get()
    }
}

/// Workers that share one access specification (an IOmeter "worker" row, times `workers`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerGroup {
    pub name: String,
    /// Threads in this group.
    pub workers: u32,
    /// Outstanding I/Os per worker per target.
    pub qd: u32,
    /// Indexes into the workload's targets; empty means all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<usize>,
    /// Fixed issue rate for the whole group, I/Os per second (None: as fast as possible).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Keep this group's IOPS at a fixed ratio of another group's (Exchange's log
    /// at a quarter of the database): its workers hold back while ahead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow: Option<Follow>,
    /// One worker per target (IOmeter's "1 worker per target"): `workers` is ignored
    /// and each worker drives one of the group's targets.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub worker_per_target: bool,
    pub access: Vec<AccessLine>,
}

/// This group's IOPS = `ratio` x the IOPS of `group`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Follow {
    pub group: String,
    pub ratio: f64,
}

/// How long the measured phase lasts.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunLength {
    /// Wall-clock time after the ramp.
    #[serde(with = "duration_text")]
    Time(Duration),
    /// I/Os completed by each worker after the ramp.
    Ios(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// io_uring where the kernel has it, psync otherwise; targets that are not
    /// local files or devices use their own engine (mem, nbd, iscsi).
    #[default]
    Auto,
    IoUring,
    Psync,
}

impl std::str::FromStr for EngineChoice {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        match s {
            "auto" => Ok(Self::Auto),
            "io_uring" | "io-uring" | "uring" => Ok(Self::IoUring),
            "psync" => Ok(Self::Psync),
            _ => Err(SpecError::UnknownEngine { value: s.to_string() }),
        }
    }
}

/// The whole workload of one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Target URIs: /path, file:/path, /dev/..., mem:SIZE, nbd://..., iscsi://...
    pub targets: Vec<String>,
    /// Size of files lunmark creates, and the length of the region used on each target
    /// (None: the whole target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Start of the region used on each target.
    #[serde(default)]
    pub offset: Bytes,
    #[serde(with = "duration_text")]
    pub ramp: Duration,
    pub run: RunLength,
    pub seed: u64,
    #[serde(default)]
    pub engine: EngineChoice,
    /// Use the page cache (no O_DIRECT).
    #[serde(default)]
    pub buffered: bool,
    /// Connections each worker opens to each network target.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub connections: u32,
    /// io_uring polling: --sqpoll[=CPU], --poll (issue 14).
    #[serde(default, skip_serializing_if = "super::polling::Polling::is_off")]
    pub polling: super::polling::Polling,
    pub groups: Vec<WorkerGroup>,
}

impl WorkloadSpec {
    /// Target indexes a group drives.
    pub fn group_targets(&self, group: &WorkerGroup) -> Vec<usize> {
        if group.targets.is_empty() {
            (0..self.targets.len()).collect()
        } else {
            group.targets.clone()
        }
    }

    /// Worker threads a group runs.
    pub fn group_workers(&self, group: &WorkerGroup) -> u32 {
        if group.worker_per_target {
            self.group_targets(group).len() as u32
        } else {
            group.workers
        }
    }

    /// Targets each worker of a group drives.
    pub fn targets_per_worker(&self, group: &WorkerGroup) -> usize {
        if group.worker_per_target {
            1
        } else {
            self.group_targets(group).len()
        }
    }

    pub fn total_workers(&self) -> u32 {
        self.groups.iter().map(|g| self.group_workers(g)).sum()
    }

    /// I/Os in flight at once across all workers.
    pub fn total_in_flight(&self) -> u64 {
        self.groups.iter().map(|g| self.group_workers(g) as u64 * g.qd as u64 * self.targets_per_worker(g) as u64).sum()
    }

    pub fn max_block_size(&self) -> u64 {
        self.groups.iter().flat_map(|g| g.access.iter()).map(|l| l.bs.get()).max().unwrap_or(0)
    }

    pub fn has_writes(&self) -> bool {
        self.groups.iter().flat_map(|g| g.access.iter()).any(|l| l.read < 100.0)
    }

    /// Checks everything that can be checked without touching a target.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.targets.is_empty() {
            return Err(SpecError::NoTargets);
        }
        if self.size == Some(Bytes(0)) {
            return Err(SpecError::Zero { field: "size".into() });
        }
        if let RunLength::Ios(0) = self.run {
            return Err(SpecError::Zero { field: "run.ios".into() });
        }
        if let RunLength::Time(t) = self.run {
            if t.is_zero() {
                return Err(SpecError::Zero { field: "run.time".into() });
            }
        }
        if self.groups.is_empty() {
            return Err(SpecError::NoGroups);
        }
        for g in &self.groups {
            let at = |field: &str| format!("group '{}' {field}", g.name);
            if g.workers == 0 {
                return Err(SpecError::Zero { field: at("workers") });
            }
            if g.qd == 0 {
                return Err(SpecError::Zero { field: at("qd") });
            }
            if g.qd > 65_536 {
                return Err(SpecError::TooLarge { field: at("qd"), value: g.qd as u64, max: 65_536 });
            }
            if let Some(rate) = g.rate {
                if !(rate.is_finite() && rate > 0.0) {
                    return Err(SpecError::BadRate { group: g.name.clone(), value: rate });
                }
            }
            if let Some(f) = &g.follow {
                if f.group == g.name || !self.groups.iter().any(|o| o.name == f.group && o.follow.is_none()) {
                    return Err(SpecError::BadFollow { group: g.name.clone(), leader: f.group.clone() });
                }
                if !(f.ratio.is_finite() && f.ratio > 0.0) {
                    return Err(SpecError::BadRate { group: g.name.clone(), value: f.ratio });
                }
            }
            for &t in &g.targets {
                if t >= self.targets.len() {
                    return Err(SpecError::BadTargetIndex { group: g.name.clone(), index: t, count: self.targets.len() });
                }
            }
            if g.access.is_empty() {
                return Err(SpecError::NoLines { group: g.name.clone() });
            }
            let mut total = 0.0;
            for (i, line) in g.access.iter().enumerate() {
                let at = |field: &str| format!("group '{}' access line {} {field}", g.name, i + 1);
                for (name, v) in [("share", line.share), ("read", line.read), ("random", line.random)] {
                    if !(0.0..=100.0).contains(&v) || v.is_nan() {
                        return Err(SpecError::BadPercent { field: at(name), value: v });
                    }
                }
                if line.bs.get() == 0 {
                    return Err(SpecError::Zero { field: at("bs") });
                }
                if line.bs.get() > 64 * Bytes::MIB {
                    return Err(SpecError::TooLarge { field: at("bs"), value: line.bs.get(), max: 64 * Bytes::MIB });
                }
                if line.alignment() == 0 {
                    return Err(SpecError::Zero { field: at("align") });
                }
                total += line.share;
            }
            if (total - 100.0).abs() > 0.01 {
                return Err(SpecError::SharesNot100 { group: g.name.clone(), total });
            }
        }
        Ok(())
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum SpecError {
    #[error("no target given: add --target PATH (a file, /dev/..., mem:1G, nbd://..., iscsi://...)")]
    NoTargets,
    #[error("the workload has no worker groups: give at least one group with an access line")]
    NoGroups,
    #[error("{field} must be greater than 0")]
    Zero { field: String },
    #[error("{field} is {value}, above the largest allowed value {max}")]
    TooLarge { field: String, value: u64, max: u64 },
    #[error("{field} is {value}: a percentage must lie between 0 and 100")]
    BadPercent { field: String, value: f64 },
    #[error("group '{group}': the shares of its access lines add up to {total}%, they must add up to 100%")]
    SharesNot100 { group: String, total: f64 },
    #[error("group '{group}' has no access lines: give at least one (share, bs, read, random)")]
    NoLines { group: String },
    #[error("group '{group}' names target {index}, but there are only {count} targets (indexes start at 0)")]
    BadTargetIndex { group: String, index: usize, count: usize },
    #[error("group '{group}': rate {value} is not a positive number of I/Os per second")]
    BadRate { group: String, value: f64 },
    #[error("group '{group}' follows '{leader}', which is not another group of this workload that itself follows none")]
    BadFollow { group: String, leader: String },
    #[error("unknown engine '{value}': choose auto, io_uring or psync")]
    UnknownEngine { value: String },
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// Serde for optional durations as text.
pub mod opt_duration_text {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map(Some).map_err(serde::de::Error::custom)
    }
}

/// Serde for durations as the text users type ("10s", "500ms").
pub mod duration_text {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A one-group, one-line workload on mem:64m, for tests elsewhere too.
    pub fn one_line_spec() -> WorkloadSpec {
        WorkloadSpec {
            targets: vec!["mem:64m".into()],
            size: None,
            offset: Bytes(0),
            ramp: Duration::ZERO,
            run: RunLength::Time(Duration::from_secs(1)),
            seed: 1,
            engine: EngineChoice::Auto,
            buffered: false,
            connections: 1,
            polling: Default::default(),
            groups: vec![WorkerGroup {
                name: "main".into(),
                workers: 1,
                qd: 4,
                targets: vec![],
                rate: None,
                follow: None,
                worker_per_target: false,
                access: vec![AccessLine { share: 100.0, bs: Bytes(4096), read: 70.0, random: 100.0, align: None }],
            }],
        }
    }

    #[test]
    fn validation_names_the_field_and_value() {
        let mut s = one_line_spec();
        assert!(s.validate().is_ok());
        s.groups[0].access[0].read = 150.0;
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("read") && e.contains("150"), "{e}");
        let mut s = one_line_spec();
        s.groups[0].access[0].share = 60.0;
        assert!(s.validate().unwrap_err().to_string().contains("add up to 60%"));
        let mut s = one_line_spec();
        s.size = Some(Bytes(0));
        assert!(s.validate().unwrap_err().to_string().contains("size must be greater than 0"));
    }

    #[test]
    fn spec_round_trips_through_toml() {
        let s = one_line_spec();
        let text = toml::to_string(&s).unwrap();
        let back: WorkloadSpec = toml::from_str(&text).unwrap();
        assert_eq!(s, back);
    }
}
