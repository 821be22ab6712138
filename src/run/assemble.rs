//! A point's result, built in one place, in one ordered list of what each
//! feature adds (`point`): from what the point measured, its summary, steady
//! state, pinned CPU, each worker and target with the depth held, the
//! replay's figures and the cut-short note; then power from the session's
//! meter; under MPI the figures kept before the reduction and the reduction
//! itself (every rank's raw figures merged into rank 0's and summarized again
//! by the same `point_summary`); a write-back cache's lost blocks; the share
//! of line rate; the cache's description.

use std::sync::Arc;
use std::time::Instant;

use super::observer::RunObserver;
use super::point::{Measured, PointOutcome, PointShared, Ran};
use super::session::Session;
use super::worker::WorkerOutcome;
use crate::engine::cache::config::CacheConfig;
use crate::engine::cache::TargetCache;
use crate::metrics::power::sampler::Sampler;
use crate::metrics::{cpu, Recorder};
use crate::results::model::{PinnedCpuStats, Point};
use crate::results::model::{RunResult, Status};
use crate::results::per_worker::{self, TargetFigures, WorkerFigures, WorkerInput};
use crate::results::point_summary::{point_summary, PointFigures};
use crate::targets::OpenTarget;
use crate::workload::{RunLength, WorkloadSpec};

/// What a point's result is built with besides its measurements: its
/// workload and shared state, and what its targets bring, taken before they
/// move into the workers.
pub struct Added<'p> {
    spec: &'p WorkloadSpec,
    shared: &'p PointShared,
    /// Each target's region, for the cache's description (every target has a cache of its own).
    regions: Vec<u64>,
    /// Each target's cache tier, for the blocks it never wrote back.
    caches: Vec<Arc<TargetCache>>,
}

impl<'p> Added<'p> {
    pub fn of(spec: &'p WorkloadSpec, shared: &'p PointShared, targets: &[OpenTarget]) -> Added<'p> {
        Added {
            spec,
            shared,
            regions: targets.iter().map(|t| t.region.len).collect(),
            caches: targets.iter().filter_map(|t| t.cache.as_ref().map(|(c, _)| c.clone())).collect(),
        }
    }
}

/// Point `index`'s result (`result` holds the points before it), from what
/// its run measured and the power sampled around it: the whole ordered list.
pub fn point(
    session: &Session,
    index: usize,
    result: &RunResult,
    ran: Ran,
    sampling: Option<Sampler>,
    added: &Added,
    observer: &mut dyn RunObserver,
) -> PointOutcome {
    let mut outcome = measured_figures(added.spec, added.shared, ran);
    session.finish_power(sampling, &mut outcome);
    run_figures(session, index, result, &mut outcome, added, observer);
    outcome
}

/// What the run adds once the point's own figures are in: the reduction
/// under MPI, lost dirty blocks, line rate, the cache's description.
fn run_figures(
    session: &Session,
    index: usize,
    result: &RunResult,
    outcome: &mut PointOutcome,
    added: &Added,
    observer: &mut dyn RunObserver,
) {
    let cluster = session.cluster();
    super::cluster::keep_before_reduction(cluster, outcome, index, result, observer);
    cluster.reduce_point(index, outcome);
    // The raw figures served the reduction: freed here rather than kept through the repeats.
    outcome.measured = Measured::default();
    if let Some(cfg) = session.cache() {
        account_unwritten(cfg, &added.caches, outcome);
    }
    if let Some(link) = session.link(index) {
        outcome.point.summary.line_rate = Some(link.figure(&outcome.point.summary));
    }
    if let (Some(cfg), Some(c)) = (session.cache(), outcome.point.summary.cache.as_mut()) {
        crate::results::summarize::describe_cache(cfg, &added.regions, c);
    }
}

/// Dirty blocks a write-back cache never wrote to the target (the target went
/// away): counted in the point's cache summary, and the point fails saying how
/// much data an application would have lost.
fn account_unwritten(cfg: &CacheConfig, caches: &[Arc<TargetCache>], outcome: &mut PointOutcome) {
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

/// The figures of the point itself, from what it measured, in order: the
/// summary, steady state, pinned CPU, each worker and target with the depth
/// held, the replay's figures, and the cut-short note.
pub(super) fn measured_figures(spec: &WorkloadSpec, shared: &PointShared, ran: Ran) -> PointOutcome {
    let duration_s = ran.duration_s;
    let unix_start = crate::metrics::power::unix_now() - Instant::now().saturating_duration_since(ran.measure_start).as_secs_f64();
    let usage = ran.cpu_start.as_ref().map(|a| cpu::usage_between(a, &ran.cpu_end)).unwrap_or_default();
    let pinned_usage = shared.pinning.as_ref().zip(ran.cpu_start.as_ref()).map(|(p, a)| (p, cpu::usage_of(a, &ran.cpu_end, &p.cpus.0)));
    let mut total = Recorder::default();
    let mut by_group = vec![Recorder::default(); spec.groups.len()];
    for o in &ran.outcomes {
        total += &o.recorder;
        by_group[o.group] += &o.recorder;
    }
    let (status, reason, slices) = (ran.status, ran.reason, ran.slices);
    let figures = PointFigures {
        spec: Some(spec),
        total: &total,
        by_group: &by_group,
        slices: &slices,
        usage: &usage,
        duration_s,
        start_unix_s: unix_start,
        processes: 1,
        verify: shared.verify.is_some(),
        in_flight: ran.in_flight,
    };
    let (mut summary, groups) = point_summary(&figures);
    summary.steady = ran.steady.map(|t| t.outcome());
    if let Some((p, u)) = &pinned_usage {
        summary.cpu.pinned =
            Some(PinnedCpuStats::from_usage(&p.cpus.to_string(), u, summary.iops, summary.bytes_read + summary.bytes_written));
    }
    let (workers, target_rows) =
        per_worker_figures(spec, shared, &ran.targets, &ran.shapes, &ran.present, &ran.outcomes, duration_s, &mut summary);
    if let Some(r) = &shared.replay {
        super::replay::add_outcome(r, ran.outcomes.iter().filter_map(|o| o.replay.as_ref()), &total, &mut summary);
    }
    // The kept part of an interrupted point says so, whichever point of the run it was.
    let cut_short = cut_short(spec, status, reason.as_deref(), duration_s, &ran.outcomes);
    PointOutcome {
        point: Point {
            params: ran.params,
            summary,
            groups,
            repeats: None,
            verdict: None,
            workload: Some(spec.clone()),
            mpi: None,
            workers,
            targets: target_rows,
            cut_short,
        },
        status,
        reason,
        span: (unix_start, unix_start + duration_s),
        measured: Measured { total, by_group, slices, usage },
    }
}

/// The note of a point that stopped before its plan: interrupted (a signal),
/// or failed part way (a target gone, an I/O error) after measuring some of it;
/// the kept part of such a point says so, whichever point of the run it was.
fn cut_short(spec: &WorkloadSpec, status: Status, reason: Option<&str>, duration_s: f64, outcomes: &[WorkerOutcome]) -> Option<String> {
    // Of the whole planned span: groups that start late end that much later.
    let planned = spec.planned_span().map_or(spec.run, RunLength::Time);
    let note = |why: &str| crate::results::cut_short::note(why, duration_s, &planned);
    let ended_early = match spec.planned_span() {
        Some(d) => duration_s + 1e-3 < d.as_secs_f64(),
        None => !outcomes.iter().all(|o| o.counted_all),
    };
    match status {
        Status::Interrupted => Some(note(reason.unwrap_or("interrupted"))),
        Status::Failed if ended_early && duration_s > 0.0 => Some(note(&format!("failed ({})", reason.unwrap_or("an error")))),
        _ => None,
    }
}

/// Each worker's and each target's figures, and the queue depth held against the
/// depth asked (into `summary`). `present[k]` is the index of `outcomes[k]`.
#[allow(clippy::too_many_arguments)]
fn per_worker_figures(
    spec: &WorkloadSpec,
    shared: &PointShared,
    targets: &[OpenTarget],
    shapes: &[(usize, Vec<usize>, Vec<u32>)],
    present: &[usize],
    outcomes: &[WorkerOutcome],
    duration_s: f64,
    summary: &mut crate::results::Summary,
) -> (Vec<WorkerFigures>, Vec<TargetFigures>) {
    const PSYNC: &str = "the psync engine does one I/O at a time per target (use --engine io_uring for depth, or more --workers)";
    const PACED: &str = "a paced group (a rate, or following another group) keeps only the I/Os that are due in flight";
    const THINK: &str = "the think time (--thinktime, or a line's delay) holds the depth down: no I/O is issued while a worker pauses";
    let inputs: Vec<WorkerInput> = present
        .iter()
        .zip(outcomes)
        .map(|(&w, o)| {
            let (gi, ref mine, ref cpus) = shapes[w];
            let g = &spec.groups[gi];
            let asked = shared.asked_qd.get(gi).copied().unwrap_or(g.qd).max(g.qd);
            let why_short = if asked > g.qd {
                Some(PSYNC)
            } else if g.rate.is_some() || g.follow.is_some() {
                Some(PACED)
            } else if g.thinktime.is_some() || g.access.iter().any(|l| l.delay.is_some()) {
                Some(THINK)
            } else {
                None
            };
            WorkerInput {
                index: w as u32,
                group: &g.name,
                targets: mine,
                cpus,
                recorder: &o.recorder,
                per_target: &o.per_target,
                qd_requested: asked * mine.len() as u32,
                qd_achieved: o.depth_mean,
                why_short,
                by_design: why_short.is_some_and(|w| w == PACED || w == THINK),
            }
        })
        .collect();
    let uris: Vec<String> = targets.iter().map(|t| t.facts.uri.clone()).collect();
    summary.queue_depth = per_worker::queue_depth(&inputs);
    if let Some(q) = summary.queue_depth.as_mut().filter(|_| spec.groups_apart()) {
        // Each worker held its depth over its own group's window, not the whole span.
        let basis = "each worker's depth is its mean over its own group's measured window (the groups run apart: groups[].window), summed; over the whole span fewer were in flight";
        q.note = Some(q.note.take().map_or(basis.to_string(), |n| format!("{n}; {basis}")));
    }
    // A worker's figures are over its group's own measured window (a group
    // that starts late measures less of the point); a target's over the point's.
    let workers = inputs
        .iter()
        .zip(present)
        .map(|(w, &k)| per_worker::worker_figures(w, spec.group_window(&spec.groups[shapes[k].0], duration_s).duration_s))
        .collect();
    (workers, per_worker::target_figures(&inputs, &uris, duration_s))
}
