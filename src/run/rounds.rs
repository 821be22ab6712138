//! A run made of rounds (SNIA PTS, the `pts-iops` profile): purge, then
//! precondition, then the plan's points once per round until the watched
//! point's IOPS is steady over the last window of rounds, or the last round
//! allowed has run. Each round is an ordinary run of the points
//! (`run::execute`); their points are gathered in one result, under the first
//! one's id, with `params.round` (and `params.phase = "precondition"` for the
//! preconditioning point), and the run's `rounds` outcome.

use std::os::fd::AsRawFd;

use anyhow::{anyhow, bail, Result};
use serde_json::Value;

use super::{RunContext, RunObserver, RunPlan};
use crate::results::model::{RunResult, Status};
use crate::results::steady::RoundsOutcome;
use crate::targets::{self, Target, TargetUri};
use crate::units::Bytes;
use crate::workload::rounds::{Rounds, PRECONDITION_BS};
use crate::workload::steady::judge;
use crate::workload::{AccessLine, RunLength, WorkerGroup, WorkloadSpec};

/// Passes each round's growing result on as part of the whole run's; its
/// progress and notes as they come. The whole run starts and finishes once:
/// each round's own start and end are not passed on.
pub(super) struct Gathering<'a> {
    pub(super) so_far: Option<RunResult>,
    pub(super) inner: &'a mut dyn RunObserver,
    /// The points the whole run plans, when known (a curve's); otherwise the
    /// live figures count the points so far (a knee search's steps, rounds).
    pub(super) planned: Option<usize>,
}

impl<'a> Gathering<'a> {
    pub(super) fn new(inner: &'a mut dyn RunObserver, planned: Option<usize>) -> Gathering<'a> {
        Gathering { so_far: None, inner, planned }
    }

    pub(super) fn merged(&self, part: &RunResult) -> RunResult {
        match &self.so_far {
            None => part.clone(),
            Some(whole) => {
                let mut m = whole.clone();
                m.points.extend(part.points.iter().cloned());
                for t in &part.targets {
                    if !m.targets.iter().any(|k| k.uri == t.uri) {
                        m.targets.push(t.clone());
                    }
                }
                m.status = part.status;
                m.status_reason = part.status_reason.clone();
                m.finished_at = part.finished_at.clone();
                m.live_json = part.live_json.clone();
                m
            }
        }
    }
}

impl RunObserver for Gathering<'_> {
    /// A part's point is told as the whole run's: point 3 of a curve is not
    /// "point 1 of 1" of its part (the live line, --live-json, the metrics).
    fn tick(&mut self, f: &super::live::LiveFigures<'_>) {
        let done = self.so_far.as_ref().map_or(0, |r| r.points.len());
        let point = done + f.point;
        self.inner.tick(&f.renumbered(point, self.planned.unwrap_or(done + f.points).max(point)));
    }
    fn point_finished(&mut self, result: &RunResult) {
        let m = self.merged(result);
        self.inner.point_finished(&m);
    }
    fn note(&mut self, text: &str) {
        self.inner.note(text);
    }
}

/// Refuses what a run of rounds cannot do, before anything runs (the dry run too).
pub fn check(plan: &RunPlan, rounds: &Rounds, ctx: &RunContext) -> Result<usize> {
    let watch = plan
        .points
        .iter()
        .position(|p| rounds.watches(&p.params))
        .ok_or_else(|| anyhow!("rounds: no point of the run has the sweep values '{}': keep them in the sweeps (for example --sweep read=0,100 --sweep bs=4k,64k)", rounds.watch))?;
    if plan.repeat > 1 {
        bail!("--repeat with a run of rounds: the rounds already repeat every point; drop --repeat");
    }
    if ctx.trace.is_some() || ctx.verify.is_some() {
        bail!("--trace and --verify are not supported with a run of rounds (each round is a run of its own): drop them");
    }
    for t in &plan.points[0].targets {
        let uri = &t.text;
        match t.uri {
            TargetUri::Mem(_) | TargetUri::Null(_) => bail!(
                "target {uri}: a run of rounds needs a target that keeps its data from round to round (a file or a block device); mem: and null: start empty at every round"
            ),
            TargetUri::Nbd(_) | TargetUri::Iscsi(_) if rounds.purge => {
                bail!("target {uri}: the purge of a run of rounds discards a file's or a block device's region; a network target cannot be purged from here")
            }
            // Its purge, precondition and write mixes write whatever the flags:
            // a read-only run of it does not exist, so none is suggested.
            TargetUri::Device(_) if !ctx.safety.destructive => bail!(
                "{uri} is a block device, and this run of rounds writes to it (its purge, a precondition of {}x the region, the write mixes of its sweep), \
                 which destroys its data: add --destructive if you mean it, or give a file as the target (-t /path/to/file, which lunmark creates)",
                rounds.precondition
            ),
            _ => {}
        }
    }
    Ok(watch)
}

/// The region length of a target that exists (None: a file lunmark will create).
fn region_len(target: &Target, spec: &WorkloadSpec) -> Result<Option<u64>> {
    let path = match &target.uri {
        TargetUri::File(p) | TargetUri::Device(p) => p,
        _ => return Ok(spec.size.map(|s| s.get())),
    };
    if let Some(size) = spec.size {
        return Ok(Some(size.get()));
    }
    let Ok(file) = std::fs::File::open(path) else { return Ok(None) };
    let total = if file.metadata()?.file_type().is_file() { file.metadata()?.len() } else { targets::device_geometry(&file)?.0 };
    Ok(Some(total.saturating_sub(spec.offset.get())))
}

/// Purges one target's region: BLKDISCARD on a device, FALLOC_FL_PUNCH_HOLE on
/// a file; where those are refused, the region is rewritten with zeros. Says what it did.
fn purge(target: &Target, spec: &WorkloadSpec) -> Result<String> {
    let uri = &target.text;
    let (path, device) = match &target.uri {
        TargetUri::File(p) => (p.clone(), false),
        TargetUri::Device(p) => (p.clone(), true),
        _ => unreachable!("checked: only files and devices are purged"),
    };
    let len = match region_len(target, spec)? {
        Some(len) if path.exists() => len,
        _ => return Ok(format!("{uri}: a new file, nothing to purge")),
    };
    let file = std::fs::OpenOptions::new().write(true).open(&path).map_err(|e| anyhow!("purge {uri}: {e}"))?;
    let offset = spec.offset.get();
    let fd = file.as_raw_fd();
    let done = if device {
        const BLKDISCARD: libc::c_ulong = 0x1277;
        let range: [u64; 2] = [offset, len];
        // SAFETY: BLKDISCARD reads two u64 (start, length) through the pointer, a live local array.
        unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) == 0 }
    } else {
        // SAFETY: fallocate takes plain integers; fd is open for writing for the call.
        unsafe {
            libc::fallocate(fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, offset as libc::off_t, len as libc::off_t) == 0
        }
    };
    if done {
        let how = if device { "discarded (BLKDISCARD)" } else { "punched out of the file (FALLOC_FL_PUNCH_HOLE)" };
        return Ok(format!("{uri}: {} {how}", Bytes(len)));
    }
    let why = std::io::Error::last_os_error();
    use std::os::unix::fs::FileExt;
    let zeros = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(zeros.len() as u64) as usize;
        file.write_all_at(&zeros[..n], offset + at).map_err(|e| anyhow!("purge {uri}: rewriting with zeros failed: {e}"))?;
        at += n as u64;
    }
    file.sync_all()?;
    Ok(format!("{uri}: {} rewritten with zeros (discard refused: {why})", Bytes(len)))
}

/// The preconditioning point: 128 KiB sequential writes, `times` the region, one worker.
fn precondition_spec(first: &WorkloadSpec, region: u64, times: f64) -> WorkloadSpec {
    let per_target = ((region as f64 * times) / PRECONDITION_BS.get() as f64).ceil().max(1.0) as u64;
    WorkloadSpec {
        ramp: std::time::Duration::ZERO,
        run: RunLength::Ios(per_target * first.targets.len() as u64),
        steady: None,
        replay: None,
        groups: vec![WorkerGroup {
            name: "precondition".into(),
            workers: 1,
            qd: first.groups.first().map_or(32, |g| g.qd),
            targets: vec![],
            rate: None,
            follow: None,
            worker_per_target: false,
            access: vec![AccessLine { share: 100.0, bs: PRECONDITION_BS, read: 0.0, random: 0.0, align: None, ..Default::default() }],
            ..Default::default()
        }],
        ..first.clone()
    }
}

/// One sub-plan of the run: these points, labelled.
fn sub_plan(plan: &RunPlan, points: Vec<super::PlannedPoint>) -> RunPlan {
    RunPlan { points, rounds: None, search: None, curve: None, ..plan.clone() }
}

/// A part of the run (the preconditioning, a round): its points, run as a run
/// of their own (checked, then executed) and told to the observer given.
pub type RunPart<'a> = dyn FnMut(RunPlan, &mut dyn RunObserver) -> Result<RunResult> + 'a;

/// `watch`: the watched point, as `check` found it.
pub fn execute(
    plan: &RunPlan,
    rounds: &Rounds,
    watch: usize,
    ctx: &RunContext,
    observer: &mut dyn RunObserver,
    run_part: &mut RunPart,
) -> Result<RunResult> {
    let first = plan.points[0].spec.clone();
    let mut outcome = RoundsOutcome {
        watch: rounds.watch.clone(),
        window_rounds: rounds.window,
        max_rounds: rounds.max,
        range_limit_pct: rounds.range,
        slope_limit_pct: rounds.slope,
        ..Default::default()
    };
    let mut pre = Vec::new();
    if rounds.precondition > 0.0 {
        let region = plan.points[0].targets.iter().map(|t| region_len(t, &first)).collect::<Result<Vec<_>>>()?;
        let region =
            region.into_iter().flatten().max().ok_or_else(|| {
                anyhow!("preconditioning writes {}x the region, but its length is unknown: give --size", rounds.precondition)
            })?;
        let spec = precondition_spec(&first, region, rounds.precondition);
        let ios = if let RunLength::Ios(n) = spec.run { n } else { 0 };
        outcome.precondition_bytes = ios / first.targets.len() as u64 * PRECONDITION_BS.get();
        let mut params = std::collections::BTreeMap::new();
        params.insert("phase".to_string(), Value::from("precondition"));
        let asked_qd = spec.groups.iter().map(|g| g.qd).collect();
        let targets = plan.points[0].targets.clone();
        pre.push(super::PlannedPoint::new(params, "precondition".into(), spec, asked_qd, targets));
    }
    // Every check before the purge: a device without --destructive is refused with nothing touched.
    let specs: Vec<&WorkloadSpec> = plan.points.iter().map(|p| &p.spec).chain(pre.iter().map(|p| &p.spec)).collect();
    targets::preflight(&specs, ctx.safety)?;
    if rounds.purge {
        for t in &plan.points[0].targets {
            outcome.purge.push(purge(t, &first)?);
        }
    }
    observer.started(plan);
    let mut gather = Gathering::new(observer, None);
    let mut run = |points: Vec<super::PlannedPoint>, gather: &mut Gathering| -> Result<Status> {
        let part = run_part(sub_plan(plan, points), gather)?;
        let merged = gather.merged(&part);
        let status = part.status;
        gather.so_far = Some(merged);
        Ok(status)
    };
    let mut status = if pre.is_empty() { Status::Completed } else { run(pre, &mut gather)? };
    let mut round = 0;
    while status == Status::Completed && round < rounds.max {
        round += 1;
        let points = plan
            .points
            .iter()
            .map(|p| {
                let mut p = p.clone();
                p.params.insert("round".into(), Value::from(round));
                p.label = format!("round {round}/{} {}", rounds.max, p.label).trim().to_string();
                p
            })
            .collect();
        let before = gather.so_far.as_ref().map_or(0, |r| r.points.len());
        status = run(points, &mut gather)?;
        let whole = gather.so_far.as_ref().expect("a round ran");
        let Some(p) = whole.points.get(before + watch) else { break };
        outcome.watched_iops.push(p.summary.iops);
        let w = rounds.window as usize;
        if outcome.watched_iops.len() >= w {
            let f = judge(&outcome.watched_iops[outcome.watched_iops.len() - w..], rounds.range, rounds.slope);
            (outcome.mean, outcome.range, outcome.slope) = (Some(f.mean), Some(f.range), Some(f.slope));
            if f.steady {
                outcome.reached = true;
                outcome.reached_at_round = Some(round);
                break;
            }
        }
    }
    let mut result = gather.so_far.take().ok_or_else(|| anyhow!("no round ran"))?;
    result.rounds = Some(outcome);
    result.profile = plan.profile.clone().or(result.profile);
    gather.inner.point_finished(&result);
    gather.inner.finished(&result);
    Ok(result)
}
