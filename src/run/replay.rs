//! Replaying a recorded trace (`lunmark run --replay FILE`). The trace is
//! loaded and checked when the plan is made, before anything runs: its format,
//! its devices mapped to the run's targets, its operations and lengths. Once
//! the targets are open, `check_targets` refuses offsets beyond a region (with
//! `--replay-offsets refuse`) and transfers direct I/O cannot do, naming the
//! first offending record. During the run one worker takes its I/Os from a
//! `ReplayCursor` (through `run::op_source`) instead of the generator: each
//! record is due at its recorded time divided by the speed, and the cursor
//! keeps how late each was issued (the replay lag).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::targets::{Handle, OpenTarget};
use crate::trace::{load_trace_as, TraceKind, TraceRecord};
use crate::units::Bytes;
use crate::workload::replay::{DeviceKey, OffsetMode, ReplayFormat, ReplaySettings, ReplaySpeed};
use crate::workload::{IoShape, Op, Region};

/// The largest transfer a replayed record may ask for (as an access line's bs).
const MAX_LEN: u32 = 64 << 20;

/// Direct I/O needs offsets and lengths in whole sectors.
const SECTOR: u64 = 512;

/// A trace loaded for replay, its records mapped to the run's targets.
pub struct ReplayPlan {
    pub settings: ReplaySettings,
    pub kind: TraceKind,
    /// The I/Os to issue, in trace order: `target` is the run's target index,
    /// `t_ns` is relative to the first of them.
    pub records: Vec<TraceRecord>,
    /// For each of `records`, its number among the trace's I/O records (from 1),
    /// when some were left out (unmapped devices); empty when none were.
    origin: Vec<u64>,
    /// The trace's devices, by index.
    pub devices: Vec<String>,
    /// (device name, run target index) of each device replayed.
    pub mapping: Vec<(String, usize)>,
    /// Trace events that are not reads or writes (blkparse discards, flushes), not replayed.
    pub not_io: u64,
    /// Of `not_io`, events whose time is not one.
    pub bad_times: u64,
    /// Records the trace listed out of time order (now sorted).
    pub reordered: u64,
    /// Records of devices the map leaves out, not replayed.
    pub unmapped: u64,
    /// Recorded time from the first record replayed to the last.
    pub span_ns: u64,
    pub max_len: u32,
    pub reads: u64,
    pub writes: u64,
    /// The highest byte any record reaches, per run target.
    pub reach: Vec<u64>,
}

impl std::fmt::Debug for ReplayPlan {
    /// The settings and counts, not the (possibly millions of) records.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayPlan")
            .field("settings", &self.settings)
            .field("kind", &self.kind)
            .field("records", &self.records.len())
            .field("mapping", &self.mapping)
            .field("skipped", &self.skipped())
            .finish()
    }
}

/// Device index of the trace -> run target, for each device replayed:
/// `--replay-map`'s choice, else device N to target N (each device needs a target).
fn device_targets(settings: &ReplaySettings, devices: &[String], targets: &[String]) -> Result<Vec<Option<usize>>> {
    let name = settings.file.display();
    let show = |d: &[String]| d.iter().enumerate().map(|(i, n)| format!("{i} ({n})")).collect::<Vec<_>>().join(", ");
    let mut to_target: Vec<Option<usize>> = vec![None; devices.len()];
    match &settings.map {
        Some(map) => {
            for (key, target) in &map.0 {
                let dev = match key {
                    DeviceKey::Index(i) if *i < devices.len() => *i,
                    DeviceKey::Name(n) if devices.contains(n) => devices.iter().position(|d| d == n).expect("contained"),
                    _ => bail!("--replay-map: the trace has no device {key}; its devices are {}", show(devices)),
                };
                if *target >= targets.len() {
                    bail!(
                            "--replay-map: device {key} goes to target {target}, but the run has {}, counted from 0; add --target or map to 0..{}",
                            crate::units::counted(targets.len() as u64, "target"),
                            targets.len().saturating_sub(1)
                        );
                }
                to_target[dev] = Some(*target);
            }
        }
        None => {
            if devices.len() > targets.len() {
                bail!(
                        "--replay {name}: the trace has {} devices ({}), the run {}: give a --target for each device (in order of first appearance), \
                         or --replay-map DEVICE=TARGET,... to choose which devices go where (the others are left out)",
                        devices.len(),
                        show(devices),
                        crate::units::counted(targets.len() as u64, "target")
                    );
            }
            for (d, t) in to_target.iter_mut().enumerate() {
                *t = Some(d);
            }
        }
    }
    Ok(to_target)
}

impl ReplayPlan {
    /// Loads the trace and maps its devices to `targets` (the run's target URIs).
    /// Everything wrong with the trace or the mapping is an error here.
    pub fn load(settings: ReplaySettings, targets: &[String]) -> Result<(ReplayPlan, Vec<String>)> {
        let path = &settings.file;
        if !path.exists() {
            bail!(
                "--replay {}: no such file; give a lunmark trace (what --trace writes), blkparse text or MSR Cambridge CSV",
                path.display()
            );
        }
        let kind = settings.format.map(|f| match f {
            ReplayFormat::Lunmark => TraceKind::Binary,
            ReplayFormat::Blkparse => TraceKind::Blkparse,
            ReplayFormat::Msr => TraceKind::Msr,
        });
        let loaded = load_trace_as(path, kind).map_err(|e| anyhow::anyhow!("--replay: {e:#}"))?;
        let name = path.display();
        if let Some((i, r)) = loaded.records.iter().enumerate().find(|(_, r)| r.op != Op::Read && r.op != Op::Write) {
            bail!("--replay {name}: I/O record {} is a {:?}; a replay issues reads and writes only", i + 1, r.op);
        }
        if loaded.records.is_empty() {
            bail!("--replay {name}: the trace holds no I/O records, so there is nothing to replay");
        }
        let devices = loaded.devices;
        let show = |d: &[String]| d.iter().enumerate().map(|(i, n)| format!("{i} ({n})")).collect::<Vec<_>>().join(", ");
        let to_target = device_targets(&settings, &devices, targets)?;
        let mut records = Vec::with_capacity(loaded.records.len());
        let mut origin = Vec::new();
        let (mut unmapped, mut reads, mut writes, mut max_len) = (0u64, 0u64, 0u64, 0u32);
        let mut reach = vec![0u64; targets.len()];
        let mut first_t = None;
        for (i, r) in loaded.records.iter().enumerate() {
            let Some(target) = to_target.get(r.target as usize).copied().flatten() else {
                unmapped += 1;
                continue;
            };
            if r.len == 0 || r.len > MAX_LEN {
                bail!(
                    "--replay {name}: I/O record {} ({} at offset {}) has length {}; a replayed transfer must be 1 byte to {}",
                    i + 1,
                    op_name(r.op),
                    r.offset,
                    r.len,
                    Bytes(MAX_LEN as u64)
                );
            }
            let t0 = *first_t.get_or_insert(r.t_ns);
            if unmapped > 0 {
                // From the first record left out on, numbers no longer follow positions.
                if origin.is_empty() {
                    origin.extend(1..=records.len() as u64);
                }
                origin.push(i as u64 + 1);
            }
            if r.op == Op::Read {
                reads += 1;
            } else {
                writes += 1;
            }
            max_len = max_len.max(r.len);
            reach[target] = reach[target].max(r.offset.saturating_add(r.len as u64));
            records.push(TraceRecord { t_ns: r.t_ns - t0, target: target as u16, ..*r });
        }
        if records.is_empty() {
            bail!("--replay-map leaves out every device of {name}: nothing to replay; its devices are {}", show(&devices));
        }
        let mapping: Vec<(String, usize)> = to_target.iter().enumerate().filter_map(|(d, t)| t.map(|t| (devices[d].clone(), t))).collect();
        let mut warnings = Vec::new();
        for (ti, uri) in targets.iter().enumerate() {
            if !mapping.iter().any(|(_, t)| *t == ti) {
                warnings.push(format!("target {ti} ({uri}) gets no I/O: no device of the replayed trace goes to it"));
            }
        }
        warnings.extend(order_said(&name.to_string(), loaded.reordered, loaded.bad_times));
        let span_ns = records.iter().map(|r| r.t_ns).max().unwrap_or(0);
        let plan = ReplayPlan {
            settings,
            kind: loaded.kind,
            records,
            origin,
            devices,
            mapping,
            not_io: loaded.skipped,
            bad_times: loaded.bad_times,
            reordered: loaded.reordered,
            unmapped,
            span_ns,
            max_len,
            reads,
            writes,
            reach,
        };
        Ok((plan, warnings))
    }

    /// The number of `records[k]` among the trace's I/O records, from 1.
    fn record_number(&self, k: usize) -> u64 {
        self.origin.get(k).copied().unwrap_or(k as u64 + 1)
    }

    /// Trace events not replayed: not reads or writes, or of unmapped devices.
    pub fn skipped(&self) -> u64 {
        self.not_io + self.unmapped
    }

    /// Refuses, naming the first offending record, what cannot run on the open
    /// targets: with `--replay-offsets refuse` an I/O beyond its target's region;
    /// in any mode one longer than the region; with direct I/O an offset or
    /// length not in whole 512-byte sectors.
    pub fn check_targets(&self, targets: &[OpenTarget], buffered: bool) -> Result<()> {
        let name = self.settings.file.display();
        let refuse = self.settings.offsets == OffsetMode::Refuse;
        for (k, r) in self.records.iter().enumerate() {
            let t = &targets[r.target as usize];
            let region = t.region.len;
            let end = r.offset.saturating_add(r.len as u64);
            let what = || {
                format!(
                    "I/O record {} of {name} ({} of {} bytes at offset {}, device {}, {:.6} s into the trace)",
                    self.record_number(k),
                    op_name(r.op),
                    r.len,
                    r.offset,
                    self.device_of(r.target as usize),
                    r.t_ns as f64 / 1e9
                )
            };
            if r.len as u64 > region {
                bail!(
                    "--replay: {} is longer than the region of target {} ({}): {} bytes. Give a larger target or --size",
                    what(),
                    r.target,
                    t.facts.uri,
                    region
                );
            }
            if refuse && end > region {
                bail!(
                    "--replay-offsets refuse: {} ends at byte {end}, beyond the region of target {} ({}): {} bytes. \
                     Give a target (or --size) of at least {} bytes, or --replay-offsets wrap to wrap offsets into the region",
                    what(),
                    r.target,
                    t.facts.uri,
                    region,
                    self.reach[r.target as usize]
                );
            }
            let direct = matches!(t.handle, Handle::Fd(_)) && !buffered;
            if direct && !(r.offset.is_multiple_of(SECTOR) && (r.len as u64).is_multiple_of(SECTOR)) {
                bail!(
                    "--replay: {} is not in whole 512-byte sectors, which direct I/O to {} needs: add --buffered to go through the page cache",
                    what(),
                    t.facts.uri
                );
            }
        }
        Ok(())
    }

    /// The device (name) replayed onto run target `target`, for messages.
    fn device_of(&self, target: usize) -> String {
        let names: Vec<&str> = self.mapping.iter().filter(|(_, t)| *t == target).map(|(d, _)| d.as_str()).collect();
        names.join("+")
    }
}

fn op_name(op: Op) -> &'static str {
    if op == Op::Read {
        "read"
    } else {
        "write"
    }
}

/// What a worker's replay did: I/Os issued, offsets wrapped, and how late the
/// timed I/Os were issued behind their recorded time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReplayTally {
    pub issued: u64,
    pub wrapped: u64,
    pub lag_count: u64,
    pub lag_sum_ns: u64,
    pub lag_max_ns: u64,
}

impl std::ops::AddAssign<&ReplayTally> for ReplayTally {
    fn add_assign(&mut self, o: &ReplayTally) {
        self.issued += o.issued;
        self.wrapped += o.wrapped;
        self.lag_count += o.lag_count;
        self.lag_sum_ns += o.lag_sum_ns;
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
    }
}

/// A worker's position in the trace: the next record, its due time, and the tally.
pub struct ReplayCursor {
    plan: Arc<ReplayPlan>,
    next: usize,
    /// Run target index -> the worker's own target index.
    local: Vec<u32>,
    /// The region of each of the worker's targets.
    regions: Vec<Region>,
    t0: Instant,
    /// 1 / speed for a timed replay; None at max speed.
    inv_speed: Option<f64>,
    pub tally: ReplayTally,
}

impl ReplayCursor {
    /// `targets` are the run target indexes of the worker's targets (whose
    /// regions are `regions`); the trace's clock starts at `t0`.
    pub fn new(plan: Arc<ReplayPlan>, targets: &[usize], regions: Vec<Region>, t0: Instant) -> Self {
        let mut local = vec![u32::MAX; targets.iter().copied().max().map_or(0, |m| m + 1)];
        for (i, &t) in targets.iter().enumerate() {
            local[t] = i as u32;
        }
        let inv_speed = match plan.settings.speed {
            ReplaySpeed::Factor(f) => Some(1.0 / f),
            ReplaySpeed::Max => None,
        };
        ReplayCursor { plan, next: 0, local, regions, t0, inv_speed, tally: ReplayTally::default() }
    }

    pub fn exhausted(&self) -> bool {
        self.next >= self.plan.records.len()
    }

    #[inline]
    fn due(&self, inv: f64) -> Instant {
        self.t0 + Duration::from_nanos((self.plan.records[self.next].t_ns as f64 * inv) as u64)
    }

    /// The due time of the next record when it is due by `now` (its lag is
    /// counted then: it is issued next). Call `take_next` after each Some.
    #[inline]
    pub fn take_due(&mut self, now: Instant) -> Option<Instant> {
        if self.exhausted() {
            return None;
        }
        let Some(inv) = self.inv_speed else { return Some(now) };
        let due = self.due(inv);
        if due > now {
            return None;
        }
        let lag = now.duration_since(due).as_nanos() as u64;
        self.tally.lag_count += 1;
        self.tally.lag_sum_ns += lag;
        self.tally.lag_max_ns = self.tally.lag_max_ns.max(lag);
        Some(due)
    }

    /// How long until the next record is due (`idle` once the trace is done).
    pub fn wait(&self, now: Instant, idle: Duration) -> Duration {
        match self.inv_speed {
            _ if self.exhausted() => idle,
            None => Duration::ZERO,
            Some(inv) => self.due(inv).saturating_duration_since(now),
        }
    }

    /// The next record as an I/O on one of the worker's targets: (shape, target).
    #[inline]
    pub fn take_next(&mut self) -> (IoShape, u32) {
        let r = self.plan.records[self.next];
        self.next += 1;
        let target = self.local[r.target as usize];
        let region = self.regions[target as usize];
        let len = r.len as u64;
        let mut offset = r.offset;
        if offset + len > region.len {
            // Only with --replay-offsets wrap: check_targets refused it otherwise.
            offset %= region.len;
            if offset + len > region.len {
                offset = 0;
            }
            self.tally.wrapped += 1;
        }
        self.tally.issued += 1;
        (IoShape { op: r.op, offset: region.start + offset, len: r.len, random: false, line: 0 }, target)
    }
}

/// Sets `plan` up to replay the trace `settings` names: every point must be
/// one group of one worker at no fixed rate (the trace's order and timing are
/// the schedule), the same targets at every point, and a sweep may only vary
/// the queue depth. Without a run length (`run_given`) a point replays the
/// whole trace; without a ramp (`ramp_given`) nothing is left unmeasured.
/// Returns the warnings to show.
pub fn attach(plan: &mut super::RunPlan, settings: ReplaySettings, run_given: bool, ramp_given: bool) -> Result<Vec<String>> {
    let first = &plan.points[0].spec;
    for p in &plan.points {
        if let Some(key) = p.params.keys().find(|k| *k != "qd") {
            bail!(
                "--replay: the plan varies '{key}' between points, which a replay cannot apply (the trace gives each I/O); only a sweep of qd may go with --replay"
            );
        }
        let s = &p.spec;
        if s.groups.len() != 1 {
            bail!("--replay: the workload has {} worker groups; a replay issues the trace from one worker: use a profile of one group, or none", s.groups.len());
        }
        let g = &s.groups[0];
        if s.group_workers(g) != 1 {
            bail!(
                "--replay issues the trace's records in order from one worker, but the workload has {} workers: drop --workers (use --qd for more I/Os in flight per target)",
                s.group_workers(g)
            );
        }
        if g.rate.is_some() || g.follow.is_some() {
            bail!("--replay: the trace's own timing is the schedule (--replay-speed scales it): drop --rate and any rate or follow of the profile");
        }
        if s.targets != first.targets || !g.targets.is_empty() {
            bail!("--replay: every point must drive all the run's targets, the same at every point: drop a targets sweep and a group's own targets");
        }
    }
    let (replay, warnings) = ReplayPlan::load(settings, &first.targets)?;
    let stored = crate::workload::replay::ReplayWorkload {
        file: replay.settings.file.display().to_string(),
        format: replay.kind.name().into(),
        speed: replay.settings.speed.to_string(),
        records: replay.records.len() as u64,
    };
    for p in &mut plan.points {
        p.spec.replay = Some(stored.clone());
        if !run_given {
            p.spec.run = crate::workload::RunLength::Ios(replay.records.len() as u64);
        }
        if !ramp_given {
            p.spec.ramp = Duration::ZERO;
        }
    }
    plan.replay = Some(Arc::new(replay));
    Ok(warnings)
}

/// Adds a replayed point's figures to its summary: the replay itself, and for
/// a timed replay the service time beside the latency from recorded time.
pub fn add_outcome<'a>(
    plan: &ReplayPlan,
    tallies: impl Iterator<Item = &'a ReplayTally>,
    total: &crate::metrics::Recorder,
    summary: &mut crate::results::Summary,
) {
    let mut t = ReplayTally::default();
    for x in tallies {
        t += x;
    }
    let s = &plan.settings;
    let timed = s.speed.timed() && t.lag_count > 0;
    if s.speed.timed() {
        summary.service_latency_us = Some(crate::results::paced_outcome::service_latency(total));
    }
    summary.replay = Some(crate::results::replay::ReplaySummary {
        file: s.file.display().to_string(),
        format: plan.kind.name().into(),
        speed: s.speed.to_string(),
        offsets: s.offsets.to_string(),
        records: plan.records.len() as u64,
        issued: t.issued,
        skipped: plan.skipped(),
        bad_times: plan.bad_times,
        reordered: plan.reordered,
        wrapped: t.wrapped,
        span_s: plan.span_ns as f64 / 1e9,
        mapping: plan.mapping.iter().map(|(d, t)| format!("{d} -> target {t}")).collect(),
        lag_mean_us: timed.then(|| t.lag_sum_ns as f64 / t.lag_count as f64 / 1e3),
        lag_max_us: timed.then(|| t.lag_max_ns as f64 / 1e3),
    });
}

/// What the loading of a trace changed or left out of its order: records
/// sorted by their recorded time, events skipped for a time that is not one.
fn order_said(name: &str, reordered: u64, bad_times: u64) -> Vec<String> {
    let mut said = Vec::new();
    if reordered > 0 {
        said.push(format!(
            "--replay {name}: {reordered} of its I/O records came after a later-timed one; they are replayed in the order of their recorded times"
        ));
    }
    if bad_times > 0 {
        said.push(format!(
            "--replay {name}: {} skipped: their recorded time is not a time (NaN, negative or beyond a year)",
            crate::units::counted(bad_times, "event")
        ));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::replay::ReplayMap;

    fn msr(dir: &std::path::Path, lines: &str) -> std::path::PathBuf {
        let p = dir.join("t.csv");
        std::fs::write(&p, lines).unwrap();
        p
    }

    const TRACE: &str = "\
1000,usr,0,Read,0,4096,1
11000,usr,1,Write,8192,4096,1
21000,usr,0,Read,1048576,8192,1
";

    fn settings(file: std::path::PathBuf) -> ReplaySettings {
        ReplaySettings { file, ..Default::default() }
    }

    #[test]
    fn devices_map_in_order_or_by_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let file = msr(dir.path(), TRACE);
        let two = vec!["mem:1m".to_string(), "mem:2m".to_string()];
        let (p, w) = ReplayPlan::load(settings(file.clone()), &two).unwrap();
        assert!(w.is_empty());
        assert_eq!(p.mapping, vec![("usr/0".to_string(), 0), ("usr/1".to_string(), 1)]);
        assert_eq!((p.reads, p.writes, p.max_len, p.span_ns), (2, 1, 8192, 2_000_000));
        assert_eq!(p.reach, vec![1048576 + 8192, 12288]);

        let mut s = settings(file.clone());
        s.map = Some("usr/1=0".parse::<ReplayMap>().unwrap());
        let (p, w) = ReplayPlan::load(s, &two).unwrap();
        assert_eq!(p.records.len(), 1);
        assert_eq!((p.unmapped, p.records[0].t_ns, p.record_number(0)), (2, 0, 2));
        assert!(w[0].contains("target 1 (mem:2m) gets no I/O"), "{w:?}");

        let e = ReplayPlan::load(settings(file.clone()), &two[..1]).unwrap_err().to_string();
        assert!(e.contains("2 devices (0 (usr/0), 1 (usr/1)), the run 1 target:") && e.contains("--replay-map"), "{e}");
        let mut s = settings(file);
        s.map = Some("0=5".parse::<ReplayMap>().unwrap());
        let e = ReplayPlan::load(s, &two).unwrap_err().to_string();
        assert!(e.contains("target 5, but the run has 2 targets, counted from 0"), "{e}");
    }

    #[test]
    fn the_cursor_keeps_time_wraps_and_counts_lag() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = settings(msr(dir.path(), TRACE));
        s.speed = ReplaySpeed::Factor(2.0);
        let two = vec!["mem:1m".to_string(), "mem:1m".to_string()];
        let (p, _) = ReplayPlan::load(s, &two).unwrap();
        let t0 = Instant::now();
        let regions = vec![Region { start: 4096, len: 1 << 20 }, Region { start: 0, len: 1 << 20 }];
        let mut c = ReplayCursor::new(Arc::new(p), &[0, 1], regions, t0);
        assert_eq!(c.take_due(t0), Some(t0));
        let (io, t) = c.take_next();
        assert_eq!((io.op, io.offset, io.len, t), (Op::Read, 4096, 4096, 0));
        // The second record is 1 ms in at speed 2: 0.5 ms.
        assert_eq!(c.take_due(t0), None);
        assert_eq!(c.wait(t0, Duration::MAX), Duration::from_micros(500));
        let late = t0 + Duration::from_millis(3);
        assert_eq!(c.take_due(late), Some(t0 + Duration::from_micros(500)));
        assert_eq!(c.take_next().1, 1);
        assert_eq!(c.take_due(late), Some(t0 + Duration::from_millis(1)));
        let (io, _) = c.take_next();
        // 1 MiB + 8 KiB does not fit a 1 MiB region: wrapped to its start.
        assert_eq!(io.offset, 4096);
        assert!(c.exhausted() && c.take_due(late).is_none());
        assert_eq!(c.tally.wrapped, 1);
        assert_eq!(c.tally.issued, 3);
        assert_eq!(c.tally.lag_count, 3);
        assert_eq!(c.tally.lag_max_ns, 2_500_000);
        assert_eq!(c.tally.lag_sum_ns, 2_500_000 + 2_000_000);
    }
}
