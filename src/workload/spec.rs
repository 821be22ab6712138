//! The workload specification with IOmeter semantics: worker groups, each with an
//! access specification (weighted lines of share, transfer size, read %, random %,
//! alignment), a number of workers (threads), outstanding I/Os per worker per
//! target, and the targets it drives. This is the "low" configuration: plain
//! data, checked by `validate`, serialisable to TOML and JSON unchanged.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::timing::ThinkRule;
use crate::units::Bytes;

pub use super::serde_text::{duration_text, opt_duration_text};

/// One line of an access specification.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessLine {
    /// Share of this group's I/Os that take this line, in percent.
    pub share: f64,
    /// Transfer size.
    pub bs: Bytes,
    /// Share of reads, in percent; the rest are writes (and trims).
    pub read: f64,
    /// Share of trims (discards), in percent; read + trim is at most 100.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim: f64,
    /// Share of random I/Os, in percent; the rest continue sequentially.
    pub random: f64,
    /// Alignment of random offsets; defaults to the transfer size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<Bytes>,
    // Access distribution and think time (issue 15, src/workload/dist.rs and timing.rs).
    /// Where random I/Os land (None: uniform): zipf:0.9, zoned:80/20:20/80, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<super::dist::Distribution>,
    /// IOmeter's transfer delay: after `burst` I/Os of this line the worker issues nothing for this long.
    #[serde(default, with = "opt_duration_text", skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    /// IOmeter's burst length: I/Os of this line between two delays (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    // fio's `rw=read:8k` and `rw=randread:8` with `rw_sequencer` (issue 26).
    /// A hole left after each sequential I/O: the next starts `bs + skip` on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<Bytes>,
    /// A random offset is drawn every `random_run` random I/Os; those between
    /// continue sequentially from it (or repeat it, with `random_run_same`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_run: Option<u32>,
    /// The I/Os of a random run repeat its offset instead of moving on (fio's rw_sequencer=identical).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_run_same: bool,
}

impl AccessLine {
    pub fn alignment(&self) -> u64 {
        self.align.unwrap_or(self.bs).get()
    }
}

/// Workers that share one access specification (an IOmeter "worker" row, times `workers`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    // Arrivals and think time (issue 15, src/workload/timing.rs).
    /// With a rate: fixed intervals or Poisson arrivals.
    #[serde(default, skip_serializing_if = "super::timing::Arrivals::is_fixed")]
    pub arrivals: super::timing::Arrivals,
    /// fio's thinktime: after `thinktime_blocks` I/Os of any line, each worker issues nothing for this long.
    #[serde(default, with = "super::serde_text::opt_duration_unit_text", skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<Duration>,
    /// fio's thinktime_blocks (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_blocks: Option<u32>,
    /// fio's offset_increment: worker i of the group does its I/O on its own
    /// part of the region, from `i x offset_increment` after its start, each
    /// part the region's length less `(workers - 1) x offset_increment`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment: Option<Bytes>,
    /// How long after the point's start this group starts (fio's `startdelay`
    /// where jobs of one phase differ): its ramp and its measured time count
    /// from then, and its figures are over its own measured window.
    #[serde(default, with = "opt_duration_text", skip_serializing_if = "Option::is_none")]
    pub start_delay: Option<Duration>,
    /// This group's own measured time, when it differs from the point's (fio
    /// jobs of one phase with their own `runtime`): it stops that long after
    /// its own measured start, while the others go on.
    #[serde(default, with = "opt_duration_text", skip_serializing_if = "Option::is_none")]
    pub time: Option<Duration>,
    pub access: Vec<AccessLine>,
}

/// Where a group measured within its point's measured span, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupWindow {
    pub start_s: f64,
    pub duration_s: f64,
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

impl std::fmt::Display for EngineChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::IoUring => "io_uring",
            Self::Psync => "psync",
        })
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
    /// A sync every N writes per worker and target (--fsync, --fdatasync, --flush).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<super::ops::SyncEvery>,
    /// io_uring polling: --sqpoll[=CPU], --poll (issue 14).
    #[serde(default, skip_serializing_if = "super::polling::Polling::is_off")]
    pub polling: super::polling::Polling,
    pub groups: Vec<WorkerGroup>,
    /// Data reduction: compressible and duplicate written data (--compress, --dedupe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<super::reduction::DataReduction>,
    /// End the point once it is steady, --time being the maximum (--steady).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<super::steady::SteadySpec>,
    /// The trace replayed in place of generated I/O (run --replay): the access
    /// lines are then not what ran. Set on each point by run::replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<super::replay::ReplayWorkload>,
    /// Latency percentiles reported besides lunmark's own (a profile's
    /// `percentiles`, fio's `percentile_list`), percent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
}

impl WorkloadSpec {
    /// `groups` on `targets` with every other setting at its plain value: no
    /// size or offset, no ramp, 1 s, seed 1, the engine chosen per target,
    /// direct I/O, one connection, no syncs, polling, data reduction, steady
    /// state or replay. Callers change what they need.
    pub fn plain(targets: Vec<String>, groups: Vec<WorkerGroup>) -> WorkloadSpec {
        WorkloadSpec {
            targets,
            size: None,
            offset: Bytes(0),
            ramp: Duration::ZERO,
            run: RunLength::Time(Duration::from_secs(1)),
            seed: 1,
            engine: EngineChoice::Auto,
            buffered: false,
            connections: 1,
            sync: None,
            polling: Default::default(),
            groups,
            data: None,
            steady: None,
            replay: None,
            percentiles: Vec::new(),
        }
    }

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

    /// Transfer sizes of the access lines that write.
    pub fn write_sizes(&self) -> Vec<u64> {
        self.groups.iter().flat_map(|g| g.access.iter()).filter(|l| l.read + l.trim < 100.0).map(|l| l.bs.get()).collect()
    }

    /// The data reduction unit of this workload, when data reduction is on.
    pub fn data_unit(&self) -> Option<u64> {
        self.data.as_ref().and_then(|d| d.unit(self.write_sizes().into_iter()))
    }

    /// True when some access line trims.
    pub fn has_trims(&self) -> bool {
        self.groups.iter().flat_map(|g| g.access.iter()).any(|l| l.trim > 0.0)
    }

    /// What every group's start delay shares (zero when a group has none):
    /// it only idles the target before the point, so the point starts its
    /// groups that much earlier and measures from its first group's start.
    pub fn shared_start(&self) -> Duration {
        self.groups.iter().map(|g| g.start_delay.unwrap_or_default()).min().unwrap_or_default()
    }

    /// How long after the point's measured start group `g` starts: its delay
    /// past the earliest group's.
    pub fn group_start(&self, g: &WorkerGroup) -> Duration {
        g.start_delay.unwrap_or_default().saturating_sub(self.shared_start())
    }

    /// The latest a group starts after the point's start (zero when every group starts at once).
    pub fn latest_start(&self) -> Duration {
        self.groups.iter().map(|g| self.group_start(g)).max().unwrap_or(Duration::ZERO)
    }

    /// How long group `g` measures: its own time, else the point's (an I/O count as it is).
    pub fn group_run(&self, g: &WorkerGroup) -> RunLength {
        match self.run {
            RunLength::Time(t) => RunLength::Time(g.time.unwrap_or(t)),
            ios => ios,
        }
    }

    /// The planned measured span of a point: from the measured start of the
    /// groups that start first to the end of the last one's run (None for an
    /// I/O count, which has no planned end).
    pub fn planned_span(&self) -> Option<Duration> {
        let RunLength::Time(t) = self.run else { return None };
        let ends = self.groups.iter().map(|g| self.group_start(g) + g.time.unwrap_or(t));
        Some(ends.max().unwrap_or(t))
    }

    /// A point's planned length: its ramp and measured span (None for an I/O count).
    pub fn planned_length(&self) -> Option<Duration> {
        self.planned_span().map(|span| self.ramp + span)
    }

    /// Whether the groups run apart (one starts late, or runs a time of its
    /// own), so each group has a measured window of its own.
    pub fn groups_apart(&self) -> bool {
        let RunLength::Time(t) = self.run else { return false };
        let first = self.groups.first().map_or(t, |g| g.time.unwrap_or(t));
        self.groups.iter().any(|g| !self.group_start(g).is_zero() || g.time.unwrap_or(t) != first)
    }

    /// Group `g`'s planned measured window in the point's span (from, to), when
    /// the groups run apart (None when every group measures the whole span).
    pub fn planned_window(&self, g: &WorkerGroup) -> Option<(Duration, Duration)> {
        match self.group_run(g) {
            RunLength::Time(t) if self.groups_apart() => Some((self.group_start(g), self.group_start(g) + t)),
            _ => None,
        }
    }

    /// Group `g`'s own measured window in a point whose measured span lasted
    /// `span_s`: how far into the span it starts, and how long it measured (its
    /// run time at most; less when the point was cut short). When the groups
    /// run together each measures the whole span.
    pub fn group_window(&self, g: &WorkerGroup, span_s: f64) -> GroupWindow {
        let start_s = self.group_start(g).as_secs_f64();
        let duration_s = match self.group_run(g) {
            RunLength::Time(t) if self.groups_apart() => (span_s - start_s).clamp(0.0, t.as_secs_f64()),
            _ => span_s,
        };
        GroupWindow { start_s, duration_s }
    }

    /// With the group's `offset_increment`, worker `i`'s own part of each
    /// region: how far into the region it starts, and how much shorter than
    /// the region it is (checked by `validate` to hold a transfer).
    pub fn worker_part(&self, g: &WorkerGroup, i: u32) -> Option<(u64, u64)> {
        let inc = g.offset_increment?.get();
        Some((inc * i as u64, inc * (self.group_workers(g).saturating_sub(1)) as u64))
    }

    /// offset_increment needs a region size, and each worker's part must hold its largest transfer.
    fn check_offset_increment(&self, g: &WorkerGroup, inc: Bytes) -> Result<(), SpecError> {
        let field = format!("group '{}' offset_increment", g.name);
        let Some(size) = self.size else {
            return Err(SpecError::Setting(format!("{field} splits the region among the workers: give the region's size (--size)")));
        };
        let spread = inc.get().checked_mul(self.group_workers(g).saturating_sub(1) as u64);
        let part = spread.and_then(|s| size.get().checked_sub(s)).unwrap_or(0);
        let max_bs = g.access.iter().map(|l| l.bs.get()).max().unwrap_or(0);
        if inc.get() == 0 || part < max_bs {
            return Err(SpecError::Setting(format!(
                "{field} is {inc} with {} workers: each worker's part of the {size} region would be {} bytes, less than a {} transfer; give a larger size or a smaller increment",
                self.group_workers(g),
                part,
                Bytes(max_bs)
            )));
        }
        Ok(())
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
        if let Some(d) = &self.data {
            d.check(&self.write_sizes()).map_err(SpecError::Setting)?;
        }
        if let Some(s) = &self.steady {
            let time = match self.run {
                RunLength::Time(t) => Some(t),
                RunLength::Ios(_) => None,
            };
            s.check(time).map_err(SpecError::Setting)?;
        }
        for g in &self.groups {
            self.validate_group(g)?;
            validate_lines(g)?;
        }
        self.check_start_delays()
    }

    /// A group that starts late or runs a time of its own measures its own
    /// window, so the run must be a time; steady state, which ends the point
    /// when the whole rate settles, would judge groups that are not all running;
    /// a replay issues its trace's own times.
    fn check_start_delays(&self) -> Result<(), SpecError> {
        let delayed = self.groups.iter().find_map(|g| {
            Some(self.group_start(g)).filter(|d| !d.is_zero()).map(|d| (format!("group '{}' start_delay", g.name), d, "starts late"))
        });
        let timed = self.groups.iter().find_map(|g| g.time.map(|t| (format!("group '{}' time", g.name), t, "runs a time of its own")));
        if let Some(g) = self.groups.iter().find(|g| g.time.is_some_and(|t| t.is_zero())) {
            return Err(SpecError::Zero { field: format!("group '{}' time", g.name) });
        }
        let Some((field, value, what)) = delayed.or(timed) else {
            return Ok(());
        };
        let value = crate::units::format_duration(value);
        if let RunLength::Ios(_) = self.run {
            return Err(SpecError::Setting(format!(
                "{field} is {value}: a group that {what} measures its own window of time, so the point needs a run of a time (--time, or fio's time_based with runtime), not an I/O count"
            )));
        }
        if self.steady.is_some() {
            return Err(SpecError::Setting(format!(
                "{field} is {value}: --steady ends the point when its whole rate settles, which groups running apart never show; drop --steady or run the groups together"
            )));
        }
        if self.replay.is_some() {
            return Err(SpecError::Setting(format!("{field} is {value}: a replay issues its trace's own times; drop it")));
        }
        Ok(())
    }

    /// One group's settings: workers, depth, rate, the group it follows, its targets, think time.
    fn validate_group(&self, g: &WorkerGroup) -> Result<(), SpecError> {
        let at = |field: &str| format!("group '{}' {field}", g.name);
        if g.workers == 0 {
            return Err(SpecError::Zero { field: at("workers") });
        }
        if g.qd == 0 {
            return Err(SpecError::Zero { field: at("qd") });
        }
        if g.qd > MAX_QD {
            return Err(SpecError::TooLarge { field: at("qd"), value: g.qd as u64, max: MAX_QD as u64 });
        }
        if let Some(rate) = g.rate {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(SpecError::BadRate { group: g.name.clone(), value: rate });
            }
            if rate < MIN_RATE {
                return Err(SpecError::RateTooLow { group: g.name.clone(), value: rate });
            }
            if rate > MAX_RATE {
                return Err(SpecError::RateTooHigh { group: g.name.clone(), value: rate });
            }
        }
        if let Some(f) = &g.follow {
            if f.group == g.name || !self.groups.iter().any(|o| o.name == f.group && o.follow.is_none()) {
                return Err(SpecError::BadFollow { group: g.name.clone(), leader: f.group.clone() });
            }
            if !(f.ratio.is_finite() && f.ratio > 0.0) {
                return Err(SpecError::BadRatio { group: g.name.clone(), leader: f.group.clone(), value: f.ratio });
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
        if g.thinktime_blocks == Some(0) {
            return Err(SpecError::Zero { field: at("thinktime_blocks") });
        }
        if g.thinktime_blocks.is_some() && g.thinktime.is_none() {
            return Err(SpecError::BurstWithoutDelay { field: at("thinktime_blocks") });
        }
        if let Some(inc) = g.offset_increment {
            self.check_offset_increment(g, inc)?;
        }
        let thinks = g.thinktime.is_some() || g.access.iter().any(|l| l.delay.is_some());
        if thinks && (g.rate.is_some() || g.follow.is_some()) {
            return Err(SpecError::ThinkWithRate { group: g.name.clone() });
        }
        Ok(())
    }
}

/// A group's access lines: shares, percentages, sizes, alignment and bursts; the shares add up to 100%.
fn validate_lines(g: &WorkerGroup) -> Result<(), SpecError> {
    let mut total = 0.0;
    for (i, line) in g.access.iter().enumerate() {
        let at = |field: &str| format!("group '{}' access line {} {field}", g.name, i + 1);
        for (name, v) in [("share", line.share), ("read", line.read), ("trim", line.trim), ("random", line.random)] {
            if !(0.0..=100.0).contains(&v) || v.is_nan() {
                return Err(SpecError::BadPercent { field: at(name), value: v });
            }
        }
        if line.read + line.trim > 100.0 + 1e-9 {
            return Err(SpecError::ReadPlusTrim { field: at("read + trim"), read: line.read, trim: line.trim });
        }
        if line.bs.get() == 0 {
            return Err(SpecError::Zero { field: at("bs") });
        }
        if line.bs.get() > MAX_BS {
            return Err(SpecError::TooLarge { field: at("bs"), value: line.bs.get(), max: MAX_BS });
        }
        if line.alignment() == 0 {
            return Err(SpecError::Zero { field: at("align") });
        }
        if line.burst == Some(0) {
            return Err(SpecError::Zero { field: at("burst") });
        }
        if line.burst.is_some() && line.delay.is_none() {
            return Err(SpecError::BurstWithoutDelay { field: at("burst") });
        }
        if line.random_run == Some(0) {
            return Err(SpecError::Zero { field: at("random_run") });
        }
        if line.random_run_same && line.random_run.is_none() {
            return Err(SpecError::Needs { field: at("random_run_same"), needs: "random_run" });
        }
        if line.skip.is_some_and(|s| s.get() > MAX_SKIP) {
            return Err(SpecError::TooLarge { field: at("skip"), value: line.skip.map_or(0, |s| s.get()), max: MAX_SKIP });
        }
        total += line.share;
    }
    if (total - 100.0).abs() > 0.01 {
        return Err(SpecError::SharesNot100 { group: g.name.clone(), total });
    }
    Ok(())
}

/// The deepest queue a group may keep per worker and target.
pub const MAX_QD: u32 = 65_536;

/// The lowest group rate (I/Os per second): one I/O every 1000 s. Below it a
/// worker's interval (workers / rate) leaves what a Duration can hold
/// (`--rate 1e-300` panicked), and no run would issue an I/O anyway.
pub const MIN_RATE: f64 = 1e-3;

/// The highest group rate (I/Os per second): a thousand times what the fastest
/// device does today. Above it the schedule is no schedule (an I/O due every
/// picosecond), and latency counted from it would be the queue's, not the target's.
pub const MAX_RATE: f64 = 1e9;
/// The largest transfer size of an access line (64 MiB).
pub const MAX_BS: u64 = 64 * Bytes::MIB;
/// The largest hole after a sequential I/O (1 TiB): keeps `bs + skip` far from overflow.
pub const MAX_SKIP: u64 = 1 << 40;

#[derive(Debug, Error, PartialEq)]
pub enum SpecError {
    #[error("no target given: add --target PATH (a file, /dev/..., mem:1G, nbd://..., iscsi://...)")]
    NoTargets,
    #[error("the workload has no worker groups: give at least one group with an access line")]
    NoGroups,
    #[error("{field} is {read}% + {trim}%: reads and trims together may take at most 100% (the rest are writes); lower --read or --trim")]
    ReadPlusTrim { field: String, read: f64, trim: f64 },
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
    #[error("group '{group}' names target {index}, but there {} (indexes start at 0)", if *count == 1 { "is only 1 target".to_string() } else { format!("are only {count} targets") })]
    BadTargetIndex { group: String, index: usize, count: usize },
    #[error("group '{group}': rate {value} is not a positive number of I/Os per second")]
    BadRate { group: String, value: f64 },
    #[error("group '{group}': follow ratio {value} is not a positive number: the group runs at ratio x the IOPS of '{leader}' (for example ratio = 0.25)")]
    BadRatio { group: String, leader: String, value: f64 },
    #[error("group '{group}': rate {value:e} is below the lowest rate lunmark paces, {MIN_RATE} I/Os per second (one I/O every 1000 s): give a rate of at least {MIN_RATE}")]
    RateTooLow { group: String, value: f64 },
    #[error("group '{group}': rate {value:e} is above the highest rate lunmark paces, {MAX_RATE:e} I/Os per second: give a lower rate, or none to run as fast as the queue depth allows")]
    RateTooHigh { group: String, value: f64 },
    #[error("group '{group}' follows '{leader}', which is not another group of this workload that itself follows none")]
    BadFollow { group: String, leader: String },
    #[error("unknown engine '{value}': choose auto, io_uring or psync")]
    UnknownEngine { value: String },
    #[error("{field} is set without its pause: give the delay too (delay = \"5ms\" on the access line, or --thinktime)")]
    BurstWithoutDelay { field: String },
    #[error("{field} is set without {needs}: give {needs} too, or drop it")]
    Needs { field: String, needs: &'static str },
    #[error("group '{group}' has think time (delay, --thinktime) and a rate (--rate, follow): think time belongs to a closed loop, a rate sets the schedule itself; use one of them")]
    ThinkWithRate { group: String },
    /// A run-wide setting (data reduction, steady state) that cannot apply, in words naming its flag.
    #[error("{0}")]
    Setting(String),
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn one() -> u32 {
    1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

/// The think-time rules of a group: the group's own (thinktime) first, then
/// each access line's (delay, burst).
pub fn think_rules(group: &WorkerGroup) -> Vec<ThinkRule> {
    let mut rules = Vec::new();
    if let Some(delay) = group.thinktime.filter(|d| !d.is_zero()) {
        rules.push(ThinkRule { line: None, burst: group.thinktime_blocks.unwrap_or(1), delay });
    }
    for (i, l) in group.access.iter().enumerate() {
        if let Some(delay) = l.delay.filter(|d| !d.is_zero()) {
            rules.push(ThinkRule { line: Some(i as u16), burst: l.burst.unwrap_or(1), delay });
        }
    }
    rules
}

/// A line's skips and random runs, for the dry run ("" for none): fio's `rw=read:8k` and `rw=randread:8`.
pub fn describe_runs(l: &AccessLine) -> String {
    let mut out = String::new();
    if let Some(skip) = l.skip.filter(|_| l.random < 100.0) {
        out.push_str(&format!(", a hole of {skip} after each sequential I/O"));
    }
    if let Some(n) = l.random_run.filter(|_| l.random > 0.0) {
        let between = if l.random_run_same { "the same offset" } else { "sequential" };
        out.push_str(&format!(", a random offset every {n} random I/Os ({between} between)"));
    }
    out
}

/// Text for `--dry-run` of one line's think time ("" when none).
pub fn describe_think(l: &AccessLine) -> String {
    match l.delay {
        Some(d) => format!(
            ", a pause of {} after every {} of this line",
            crate::units::format_duration(d),
            crate::units::counted(l.burst.unwrap_or(1), "I/O")
        ),
        None => String::new(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A one-group, one-line workload on mem:64m, for tests elsewhere too.
    pub fn one_line_spec() -> WorkloadSpec {
        WorkloadSpec::plain(
            vec!["mem:64m".into()],
            vec![WorkerGroup {
                name: "main".into(),
                workers: 1,
                qd: 4,
                targets: vec![],
                rate: None,
                follow: None,
                worker_per_target: false,
                access: vec![AccessLine { share: 100.0, bs: Bytes(4096), read: 70.0, random: 100.0, ..Default::default() }],
                ..Default::default()
            }],
        )
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
        let mut s = one_line_spec();
        s.targets.truncate(1);
        s.groups[0].targets = vec![1];
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("there is only 1 target (indexes"), "{e}");
    }

    /// A follower's ratio of NaN said "rate NaN", a rate the user never gave.
    #[test]
    fn a_follow_ratio_that_is_not_a_number_is_named_as_the_ratio() {
        let mut s = one_line_spec();
        let mut log = s.groups[0].clone();
        log.name = "log".into();
        log.follow = Some(Follow { group: s.groups[0].name.clone(), ratio: f64::NAN });
        s.groups.push(log);
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("group 'log': follow ratio NaN is not a positive number") && !e.contains("rate NaN"), "{e}");
    }

    /// A group that starts 2 s late in a 3 s point: windows of 0-3 and 2-5 s,
    /// a 5 s span, less when the point was cut short; an I/O count or steady
    /// state with a start delay is refused naming the group.
    #[test]
    fn a_group_that_starts_late_has_its_own_window() {
        let mut s = one_line_spec();
        s.run = RunLength::Time(Duration::from_secs(3));
        let mut late = s.groups[0].clone();
        late.name = "late".into();
        late.start_delay = Some(Duration::from_secs(2));
        s.groups.push(late);
        assert!(s.validate().is_ok());
        assert_eq!((s.planned_span(), s.planned_length()), (Some(Duration::from_secs(5)), Some(Duration::from_secs(5))));
        let w = |g: usize, span: f64| {
            let w = s.group_window(&s.groups[g], span);
            (w.start_s, w.duration_s)
        };
        assert_eq!((w(0, 5.0), w(1, 5.0)), ((0.0, 3.0), (2.0, 3.0)));
        assert_eq!((w(0, 2.5), w(1, 2.5)), ((0.0, 2.5), (2.0, 0.5)), "cut short at 2.5 s");
        assert_eq!(w(1, 1.0), (2.0, 0.0), "cut short before it started");
        let text = toml::to_string(&s).unwrap();
        assert!(text.contains("start_delay = \"2s\""), "{text}");
        assert_eq!(toml::from_str::<WorkloadSpec>(&text).unwrap(), s);
        let mut ios = s.clone();
        ios.run = RunLength::Ios(100);
        let e = ios.validate().unwrap_err().to_string();
        assert!(e.contains("group 'late' start_delay is 2s") && e.contains("not an I/O count"), "{e}");
        let mut steady = s.clone();
        steady.run = RunLength::Time(Duration::from_secs(30));
        steady.steady = Some(toml::from_str("metric = \"iops\"").unwrap());
        let e = steady.validate().unwrap_err().to_string();
        assert!(e.contains("group 'late' start_delay is 2s: --steady"), "{e}");
        // A time of zero is refused; a delay of 1 us is a delay (it read "0s" and was refused).
        let mut zero = s.clone();
        zero.groups[0].time = Some(Duration::ZERO);
        assert!(zero.validate().unwrap_err().to_string().contains("group 'main' time must be greater than 0"));
        let mut tiny = s.clone();
        tiny.groups[1].start_delay = Some(Duration::from_micros(1));
        assert!(tiny.validate().is_ok());
        // A delay every group shares only idles the target: the point measures from its first group's start
        // (a trial: one group delayed 2 s of a 3 s run was "measured 5.00s" at 3/5 of its IOPS).
        let mut all_late = s.clone();
        all_late.groups[0].start_delay = Some(Duration::from_secs(1));
        assert_eq!(
            (all_late.planned_span(), all_late.group_start(&all_late.groups[1])),
            (Some(Duration::from_secs(4)), Duration::from_secs(1))
        );
        all_late.groups.truncate(1);
        assert!(!all_late.groups_apart() && all_late.planned_span() == Some(Duration::from_secs(3)));
        all_late.run = RunLength::Ios(10);
        assert!(all_late.validate().is_ok(), "a delay alone changes nothing, so an I/O count runs");
        // Without a delay every group measures the whole span, as before.
        let mut together = s.clone();
        together.groups[1].start_delay = None;
        let first = together.group_window(&together.groups[0], 3.0);
        assert_eq!((together.planned_span(), first.duration_s), (Some(Duration::from_secs(3)), 3.0));
    }

    #[test]
    fn spec_round_trips_through_toml() {
        let s = one_line_spec();
        let text = toml::to_string(&s).unwrap();
        let back: WorkloadSpec = toml::from_str(&text).unwrap();
        assert_eq!(s, back);
    }
}
