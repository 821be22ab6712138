//! Running a plan: points one after another, each result kept as soon as its
//! point is done (an observer saves it), so a failure or Ctrl-C at point 5 keeps
//! points 1-4. The run prints nothing: what it has to say (its progress, its
//! warnings, each point, its end) goes to its `RunObserver`.

pub mod cluster;
pub mod control;
pub mod data_fill;
pub mod fd_table;
pub mod live;
pub mod observer;
pub mod op_source;
pub mod outcome;
pub mod pacing;
pub mod pinning;
pub mod plan;
pub mod point;
pub mod polling;
pub mod power_meter;
pub mod progress;
pub mod replay;
pub mod request;
pub mod resources;
pub mod rounds;
pub mod signals;
pub mod steady;
pub mod stop_reason;
pub mod sync_clock;
pub mod trace_sink;
pub mod worker;

use std::sync::atomic::Ordering;

use anyhow::Result;

use crate::results::host::{host_facts, new_id};
use crate::results::model::{RunResult, Status, SCHEMA_VERSION};
use crate::target::{self, SafetyFlags};
pub use observer::{Fanout, NoObserver, RunObserver};
pub use plan::{PlannedPoint, RunPlan};

/// Who ran it and how, for the result.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    pub command_line: Vec<String>,
    pub label: Option<String>,
    pub profile: Option<String>,
    pub safety: SafetyFlags,
    /// With --quiet: the command line shows no live view, and the run does not announce its trace.
    pub quiet: bool,
    pub power: crate::metrics::power::PowerRequest,
    /// With --verify.
    pub verify: Option<crate::verify::VerifyOptions>,
    /// With --trace: record every I/O issued here.
    pub trace: Option<std::path::PathBuf>,
    /// Say where the trace was recorded (false for a trace the caller deletes afterwards, as `lab cache` does).
    pub announce_trace: bool,
    /// With --cache: the host-side cache tier in front of every target.
    pub cache: Option<crate::engine::cache::config::CacheConfig>,
    /// With --continue-on-error: I/O errors are counted and the run goes on.
    pub continue_on_error: bool,
    /// With --link: the link (or links per target) whose share each point reports.
    pub link: Option<crate::results::line_rate::LinkSetting>,
    /// Under MPI (issue 17): the ranks running this plan together; `Solo` otherwise.
    pub cluster: cluster::ClusterRef,
    /// With --cpus: the CPUs the workers are pinned to, and how they share them.
    pub pinning: Option<crate::workload::cpus::Pinning>,
}

impl RunContext {
    /// What this context adds to every point's memory (a cache tier, verification).
    pub fn resource_extras(&self) -> resources::Extras<'_> {
        resources::Extras { cache: self.cache.as_ref(), verify: self.verify.is_some() }
    }
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Dirty blocks a write-back cache never wrote to the target (the target went
/// away): counted in the point's cache summary, and the point fails saying how
/// much data an application would have lost.
fn account_unwritten(
    cfg: &crate::engine::cache::config::CacheConfig,
    caches: &[std::sync::Arc<crate::engine::cache::TargetCache>],
    outcome: &mut point::PointOutcome,
) {
    let blocks: u64 = caches.iter().map(|c| c.unwritten_blocks()).sum();
    if blocks == 0 {
        return;
    }
    let summary = outcome.point.summary.cache.get_or_insert_with(Default::default);
    summary.dirty_lost_blocks = blocks;
    summary.dirty_lost_bytes = blocks * cfg.block_bytes as u64;
    let loss = summary.loss().unwrap_or_default();
    if outcome.status == Status::Completed {
        outcome.status = Status::Failed;
    }
    outcome.reason = Some(match outcome.reason.take() {
        Some(why) => format!("{why}; {loss}"),
        None => loss,
    });
}

/// Every target any point of the plan uses, in the order they first appear
/// (a `targets=1,2` sweep uses one at its first point and two at its second).
fn every_target(plan: &RunPlan) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    for uri in plan.points.iter().flat_map(|p| p.spec.targets.iter()) {
        if !all.contains(uri) {
            all.push(uri.clone());
        }
    }
    all
}

/// Runs every point of the plan. Errors before the first point (bad targets)
/// come back as Err; anything after that ends the run with a status and keeps
/// what was measured.
pub fn execute(plan: &RunPlan, ctx: &RunContext, observer: &mut dyn RunObserver) -> Result<RunResult> {
    if let Some(r) = &plan.rounds {
        return rounds::execute(plan, r, ctx, observer);
    }
    if ctx.verify.is_some() {
        data_fill::refuse_with_verify(plan).map_err(anyhow::Error::msg)?;
    }
    let interrupt = signals::interrupt_flag();
    let first = &plan.points[0].spec;
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        id: new_id(),
        lunmark_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: now_rfc3339(),
        finished_at: None,
        status: Status::Running,
        status_reason: None,
        command_line: ctx.command_line.clone(),
        label: ctx.label.clone(),
        profile: plan.profile.clone().or_else(|| ctx.profile.clone()),
        host: host_facts(),
        workload: crate::workload::WorkloadSpec { targets: every_target(plan), ..first.clone() },
        targets: Vec::new(),
        engine: plan.points[0].engine_name(),
        cpus: ctx.pinning.clone(),
        points: Vec::new(),
        mpi: ctx.cluster.get().facts(),
        rounds: None,
        warnings: plan.warnings.clone(),
    };
    let cluster = ctx.cluster.get();
    let links = match &ctx.link {
        Some(l) => l.resolve(&plan.points.iter().map(|p| &p.spec).collect::<Vec<_>>()).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let ready = target::preflight(&plan.points.iter().map(|p| &p.spec).collect::<Vec<_>>(), ctx.safety)
        .map_err(anyhow::Error::from)
        .and_then(|_| resources::preflight(plan, ctx.resource_extras()).map_err(anyhow::Error::from));
    // Every rank of a cluster checks its own targets: one that cannot start stops them all, before any load.
    if let Some(e) = cluster.agree("checking the targets", ready.as_ref().err()) {
        return Err(e);
    }
    ready?;
    observer.started(plan);
    // Under MPI every rank planned the same run: rank 0 alone says what is worth a warning.
    for w in plan.warnings.iter().filter(|_| cluster.is_root()) {
        observer.note(&format!("warning: {w}"));
    }
    let meter = power_meter::PowerMeter::new(&ctx.power, &interrupt, observer);
    // Verification state lives for the whole run: blocks written at one point are checked at the next.
    let mut verify: Option<std::sync::Arc<crate::verify::VerifyShared>> = None;
    let verify_block = match ctx.verify {
        Some(_) => {
            Some(crate::verify::run_block_size(&plan.points.iter().map(|p| &p.spec).collect::<Vec<_>>()).map_err(anyhow::Error::msg)?)
        }
        None => None,
    };
    if let Some(cfg) = &ctx.cache {
        // Before any target is created: a refused cache leaves nothing behind.
        for p in &plan.points {
            crate::engine::cache::config::check(cfg, &p.spec, ctx.safety)?;
        }
    }
    let trace = match &ctx.trace {
        Some(path) => Some(std::sync::Arc::new(trace_sink::TraceSink::create(path).map_err(anyhow::Error::msg)?)),
        None => None,
    };
    // NBD connections and RAM LUNs live for the whole run: opened before a point, reused by the next.
    let mut run_targets = target::RunTargets::default();
    'points: for (i, p) in plan.points.iter().enumerate() {
        let mut outcomes: Vec<point::PointOutcome> = Vec::new();
        for r in 0..plan.repeat {
            if interrupt.load(Ordering::Relaxed) {
                result.status = Status::Interrupted;
                result.status_reason =
                    Some(stop_reason::before(&signals::reason(), i, plan.points.len(), r as usize, plan.repeat as usize));
                if outcomes.is_empty() {
                    break 'points;
                }
                // The finished repeats of this point are kept, as when a later one is cut short.
                break;
            }
            let opened = p.open_targets(ctx.safety, &mut run_targets).map_err(anyhow::Error::from).and_then(|mut t| {
                if let Some(cfg) = &ctx.cache {
                    let ready = crate::engine::cache::config::check(cfg, &p.spec, ctx.safety)
                        .and_then(|_| crate::engine::cache::config::attach(cfg, &mut t));
                    if let Err(e) = ready {
                        target::discard_created(t);
                        return Err(e);
                    }
                }
                Ok(t)
            });
            let agreed = cluster.agree(&format!("opening the targets of point {}", i + 1), opened.as_ref().err());
            let opened = match (opened, agreed) {
                (opened, None) => opened,
                (Ok(t), Some(e)) => {
                    target::discard_created(t);
                    Err(e)
                }
                (Err(_), Some(e)) => Err(e),
            };
            let targets = match opened {
                Ok(t) => t,
                Err(e) if i == 0 && r == 0 => return Err(e),
                Err(e) if outcomes.is_empty() => {
                    result.status = Status::Failed;
                    result.status_reason = Some(format!("point {}: {e}", i + 1));
                    break 'points;
                }
                // The finished repeats of this point are kept, as after a Ctrl-C between repeats.
                Err(e) => {
                    result.status = Status::Failed;
                    result.status_reason = Some(format!(
                        "point {}, repeat {} of {}: {e}; {}",
                        i + 1,
                        r + 1,
                        plan.repeat,
                        stop_reason::repeats_kept(outcomes.len())
                    ));
                    break;
                }
            };
            // A sweep over targets uses more of them at later points: each is recorded once, when first opened.
            for t in &targets {
                if !result.targets.iter().any(|known| known.uri == t.facts.uri) {
                    result.targets.push(t.facts.clone());
                }
            }
            if let Some(replay) = &plan.replay {
                // Before any I/O: offsets beyond a region (refuse), transfers direct I/O cannot do.
                if let Err(e) = replay.check_targets(&targets, p.spec.buffered) {
                    target::discard_created(targets);
                    if i == 0 && r == 0 {
                        return Err(e);
                    }
                    result.status = Status::Failed;
                    result.status_reason = Some(format!("point {}: {e}", i + 1));
                    break 'points;
                }
            }
            let regions: Vec<_> = targets.iter().map(|t| (t.facts.uri.clone(), t.region)).collect();
            if let Some(v) = verify.as_ref().filter(|v| !v.covers(&regions)) {
                // The CLI refuses a sweep of the targets with --verify; this
                // keeps any other way in from indexing tables it has not got.
                let e = anyhow::anyhow!(
                    "point {}: --verify keeps one block table per target for the whole run ({}), and this point drives other targets or regions",
                    i + 1,
                    v.uris.join(", ")
                );
                target::discard_created(targets);
                if i == 0 && r == 0 {
                    return Err(e);
                }
                result.status = Status::Failed;
                result.status_reason = Some(e.to_string());
                break 'points;
            }
            if let (Some(opts), None, Some(block)) = (&ctx.verify, &verify, verify_block) {
                match crate::verify::VerifyShared::new(opts, block, &regions) {
                    Ok(v) => verify = Some(std::sync::Arc::new(v)),
                    Err(e) => {
                        target::discard_created(targets);
                        return Err(e);
                    }
                }
            }
            let label = if plan.repeat > 1 { format!("{} repeat {}/{}", p.label, r + 1, plan.repeat) } else { p.label.clone() };
            let position = point::PointPosition { index: i, count: plan.points.len(), label: label.trim() };
            let region_bytes = targets.first().map(|t| t.region.len).unwrap_or(0);
            let caches: Vec<_> = targets.iter().filter_map(|t| t.cache.as_ref().map(|(c, _)| c.clone())).collect();
            let sampling = meter.start();
            let mut outcome = point::run_point(
                &p.spec,
                p.params.clone(),
                targets,
                position,
                observer,
                &interrupt,
                &point::PointShared {
                    verify: verify.clone(),
                    trace: trace.clone(),
                    continue_on_error: ctx.continue_on_error,
                    cluster: Some(ctx.cluster.clone()),
                    pinning: ctx.pinning.clone(),
                    asked_qd: p.asked_qd.clone(),
                    replay: plan.replay.clone(),
                },
            );
            meter.finish(sampling, &mut outcome);
            cluster::keep_before_reduction(cluster, &outcome, i, &result, observer);
            // Under MPI every rank's figures are merged into rank 0's outcome, and all take the point's overall status.
            cluster.reduce_point(i, &mut outcome);
            // The raw figures served the reduction: freed here rather than kept through the repeats.
            outcome.measured = point::Measured::default();
            if let Some(cfg) = &ctx.cache {
                account_unwritten(cfg, &caches, &mut outcome);
            }
            if let Some(Some(link)) = links.get(i) {
                outcome.point.summary.line_rate = Some(link.figure(&outcome.point.summary));
            }
            if let (Some(cfg), Some(c)) = (&ctx.cache, outcome.point.summary.cache.as_mut()) {
                crate::results::summarize::describe_cache(cfg, region_bytes, c);
            }
            let done = outcome.status == Status::Completed;
            outcomes.push(outcome);
            if !done {
                break;
            }
        }
        // A run stopped before it measured anything (Ctrl-C in the ramp) has no
        // figures: it is not kept, so no zeros pass for a measurement; the result,
        // interrupted, keeps the points (and repeats) that finished.
        // So is a repeat cut short once earlier repeats have finished: the point
        // is the finished repeats, not a fraction of the last one.
        let cut_repeat = outcomes.len() > 1 && outcomes.last().is_some_and(|o| o.status == Status::Interrupted);
        if cut_repeat || outcomes.last().is_some_and(outcome::measured_nothing) {
            let stopped = outcomes.pop().expect("the last run");
            result.status = stopped.status;
            result.status_reason = match (stopped.reason, outcomes.len()) {
                (Some(why), n) if n > 0 => Some(stop_reason::in_repeat(
                    format!(
                        "{why} during repeat {} of {}{}; {}",
                        n + 1,
                        plan.repeat,
                        if plan.points.len() > 1 { format!(" of point {} of {}", i + 1, plan.points.len()) } else { String::new() },
                        stop_reason::repeats_kept(n)
                    ),
                    i,
                    plan.points.len(),
                )),
                // Stopped in its ramp: the point is dropped, and the reason says so.
                (Some(why), _) if stopped.status == Status::Interrupted => Some(stop_reason::in_ramp(&why, i, plan.points.len())),
                (why, _) => why,
            };
            if outcomes.is_empty() {
                break 'points;
            }
        }
        let last = outcomes.last().expect("at least one run of each point");
        let (status, reason) = (last.status, last.reason.clone());
        let mut point = if status == Status::Completed && outcomes.len() > 1 {
            let summaries: Vec<_> = outcomes.iter().map(|o| o.point.summary.clone()).collect();
            let (index, stats) = crate::results::repeats::combine(&summaries, plan.pick);
            let mut point = outcomes.swap_remove(index).point;
            point.repeats = Some(stats);
            point
        } else {
            outcomes.pop().expect("at least one run").point
        };
        if !plan.criteria.is_empty() && status == Status::Completed {
            point.verdict = Some(crate::results::pass::judge(&plan.criteria, &point.summary, &point.groups));
        }
        result.points.push(point);
        if status != Status::Completed {
            result.status = status;
            result.status_reason = match reason {
                Some(why) if status == Status::Interrupted => Some(stop_reason::in_point(&why, i, plan.points.len())),
                why => why,
            };
        }
        observer.point_finished(&result);
        // Completed repeats kept after one interrupted in its ramp: the run ends there too.
        if status != Status::Completed || result.status != Status::Running {
            break;
        }
    }
    if let (Some(t), Some(path)) = (&trace, &ctx.trace) {
        // The trace is kept whatever the run's outcome: its I/Os were issued.
        match t.finish() {
            Ok(n) if !ctx.quiet && ctx.announce_trace => {
                observer.note(&format!("trace: {} recorded in {}", crate::units::counted(n, "I/O"), path.display()))
            }
            Ok(_) => {}
            Err(e) => observer.note(&format!("warning: the trace {} is incomplete: {e}", path.display())),
        }
    }
    if result.status == Status::Running {
        result.status = Status::Completed;
    }
    result.finished_at = Some(now_rfc3339());
    observer.finished(&result);
    Ok(result)
}
