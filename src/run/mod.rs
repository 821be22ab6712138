//! Running a plan: points one after another, each result kept as soon as its
//! point is done (an observer saves it), so a failure or Ctrl-C at point 5 keeps
//! points 1-4. The run prints nothing: what it has to say (its progress, its
//! warnings, each point, its end) goes to its `RunObserver`.

pub mod assemble;
pub mod check;
pub mod cluster;
pub mod control;
pub mod curve;
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
pub mod search;
pub mod session;
pub mod signals;
pub mod steady;
pub mod stop;
pub mod stop_reason;
pub mod sync_clock;
pub mod trace_sink;
pub mod worker;

use std::sync::atomic::Ordering;

use anyhow::Result;

use crate::results::host::{host_facts, new_id};
use crate::results::model::{RunResult, Status, SCHEMA_VERSION};
use crate::targets::SafetyFlags;
pub use check::{check, ReadyPlan};
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
    /// With --live-json: the stream's counts, stored in the result as it stands after each point and at the end.
    pub live_json: Option<std::sync::Arc<live::StreamCounts>>,
}

impl RunContext {
    /// What this context adds to every point's memory (a cache tier, verification).
    pub fn resource_extras(&self) -> resources::Extras<'_> {
        let ranks_here = if self.cluster.get().processes() > 1 { resources::ranks_on_this_host() } else { 1 };
        resources::Extras { cache: self.cache.as_ref(), verify: self.verify.is_some(), ranks_here }
    }
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
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

/// The result before its first point: who ran what, where and when.
fn new_result(plan: &RunPlan, ctx: &RunContext) -> RunResult {
    RunResult {
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
        workload: crate::workload::WorkloadSpec { targets: every_target(plan), ..plan.points[0].spec.clone() },
        targets: Vec::new(),
        engine: plan.points[0].engine_name(),
        cpus: ctx.pinning.clone(),
        points: Vec::new(),
        mpi: ctx.cluster.get().facts(),
        rounds: None,
        search: None,
        curve: None,
        warnings: plan.warnings.clone(),
        live_json: None,
    }
}

/// Runs every point of a checked plan. Errors before the first point (a
/// target that cannot be opened) come back as Err; anything after that ends
/// the run with a status and keeps what was measured (`stop::settle` decides what).
pub fn execute(ready: &ReadyPlan, ctx: &RunContext, observer: &mut dyn RunObserver) -> Result<RunResult> {
    if let Some(r) = &ready.rounds {
        // Each round is a run of its own, checked as every run is.
        let mut run_part = |part: RunPlan, observer: &mut dyn RunObserver| execute(&check(part, ctx)?, ctx, observer);
        let watch = ready.watched_point.expect("check found the watched point of a run of rounds");
        return rounds::execute(ready, r, watch, ctx, observer, &mut run_part);
    }
    if let Some(s) = &ready.search {
        // Each step of the search is a run of its own, checked as every run is.
        let mut run_part = |part: RunPlan, observer: &mut dyn RunObserver| execute(&check(part, ctx)?, ctx, observer);
        return search::execute(ready, s, ctx, observer, &mut run_part);
    }
    if let Some(c) = &ready.curve {
        // Each point of the curve is a run of its own, checked as every run is.
        let mut run_part = |part: RunPlan, observer: &mut dyn RunObserver| execute(&check(part, ctx)?, ctx, observer);
        return curve::execute(ready, c, ctx.cluster.get(), observer, &mut run_part);
    }
    let interrupt = signals::interrupt_flag();
    let mut result = new_result(ready, ctx);
    observer.started(ready);
    // Under MPI every rank planned the same run: rank 0 alone says what is worth a warning.
    for w in ready.warnings.iter().filter(|_| ctx.cluster.get().is_root()) {
        observer.note(&format!("warning: {w}"));
    }
    let mut session = session::Session::open(ready, ctx, &interrupt, observer)?;
    for (i, p) in ready.points.iter().enumerate() {
        let at = stop::At { point: i, points: ready.points.len(), repeats: ready.repeat as usize };
        let mut run = Repeats { session: &mut session, result: &mut result, observer: &mut *observer, interrupt: &interrupt };
        let (outcomes, end, set_up_error) = run.point(at, p);
        let ends: Vec<stop::RepeatEnd> = outcomes.iter().map(outcome::repeat_end).collect();
        let (kept, ends) = match stop::settle(at, &ends, &end) {
            stop::Stop::Refused => return Err(set_up_error.expect("a set-up error refuses the run")),
            stop::Stop::Settled { kept, ends } => (kept, ends),
        };
        let point = keep(ready, outcomes, kept);
        let kept_any = point.is_some();
        result.points.extend(point);
        if let Some((status, reason)) = &ends {
            result.status = *status;
            result.status_reason = reason.clone();
        }
        if kept_any {
            stamp_live_json(&mut result, ctx);
            observer.point_finished(&result);
        }
        if ends.is_some() {
            break;
        }
    }
    session.close(observer);
    if result.status == Status::Running {
        result.status = Status::Completed;
    }
    result.finished_at = Some(now_rfc3339());
    stamp_live_json(&mut result, ctx);
    observer.finished(&result);
    Ok(result)
}

/// The --live-json stream's counts so far, into the result.
fn stamp_live_json(result: &mut RunResult, ctx: &RunContext) {
    use std::sync::atomic::Ordering::Relaxed;
    result.live_json = ctx
        .live_json
        .as_ref()
        .map(|c| crate::results::model::LiveJsonCounts { lines: c.lines.load(Relaxed), dropped: c.dropped.load(Relaxed) });
}

/// The point a settled stop keeps: its finished repeats combined (judged
/// against the plan's criteria), or its last run alone, or nothing.
fn keep(plan: &RunPlan, mut outcomes: Vec<point::PointOutcome>, kept: stop::Kept) -> Option<crate::results::model::Point> {
    let mut point = match kept {
        stop::Kept::Nothing => return None,
        stop::Kept::Last => return outcomes.pop().map(|o| o.point),
        stop::Kept::Repeats(1) => outcomes.swap_remove(0).point,
        stop::Kept::Repeats(n) => {
            outcomes.truncate(n);
            let summaries: Vec<_> = outcomes.iter().map(|o| o.point.summary.clone()).collect();
            let (index, stats) = crate::results::repeats::combine(&summaries, plan.pick);
            let mut point = outcomes.swap_remove(index).point;
            point.repeats = Some(stats);
            point
        }
    };
    if !plan.criteria.is_empty() {
        point.verdict = Some(crate::results::pass::judge(&plan.criteria, &point.summary, &point.groups));
    }
    Some(point)
}

/// The repeats of one point, run in the session, each outcome finished by the assembler.
struct Repeats<'s, 'a, 'o> {
    session: &'s mut session::Session<'a>,
    result: &'s mut RunResult,
    observer: &'s mut (dyn RunObserver + 'o),
    interrupt: &'s std::sync::atomic::AtomicBool,
}

impl Repeats<'_, '_, '_> {
    /// Runs the repeats of point `p` until they are done, one does not
    /// complete, a stop is seen before the next, or the next cannot be set up
    /// (its error is returned too, for a run refused before anything ran).
    fn point(&mut self, at: stop::At, p: &PlannedPoint) -> (Vec<point::PointOutcome>, stop::RepeatsEnd, Option<anyhow::Error>) {
        let mut outcomes = Vec::new();
        for r in 0..at.repeats {
            if self.interrupt.load(Ordering::Relaxed) {
                return (outcomes, stop::RepeatsEnd::StopBefore { why: signals::reason() }, None);
            }
            let targets = match self.session.open_point(at.point, p) {
                Ok(t) => t,
                // A stop while a file was filled: the point measured nothing, as after a stop in its ramp.
                // The result still names the targets that set-up was for.
                Err(_) if self.interrupt.load(Ordering::Relaxed) => {
                    p.spec.targets.iter().filter_map(|uri| crate::targets::unopened_facts(uri, &p.spec)).for_each(|f| self.know(f));
                    return (outcomes, stop::RepeatsEnd::StopInSetUp { why: signals::reason() }, None);
                }
                Err(e) => return (outcomes, stop::RepeatsEnd::SetUpFailed { error: e.to_string() }, Some(e)),
            };
            targets.iter().for_each(|t| self.know(t.facts.clone()));
            let outcome = self.measure(at, r, p, targets);
            let done = outcome.status == Status::Completed;
            outcomes.push(outcome);
            if !done {
                break;
            }
        }
        (outcomes, stop::RepeatsEnd::Ran, None)
    }

    /// Records a target in the result. A sweep over targets uses more of them
    /// at later points: each is recorded once, when first opened.
    fn know(&mut self, facts: crate::targets::TargetFacts) {
        if !self.result.targets.iter().any(|known| known.uri == facts.uri) {
            self.result.targets.push(facts);
        }
    }

    /// One run of point `p` on its opened targets, with power sampled around it, assembled.
    fn measure(&mut self, at: stop::At, repeat: usize, p: &PlannedPoint, targets: Vec<crate::targets::OpenTarget>) -> point::PointOutcome {
        let label = if at.repeats > 1 { format!("{} repeat {}/{}", p.label, repeat + 1, at.repeats) } else { p.label.clone() };
        let position = point::PointPosition { index: at.point, count: at.points, label: label.trim() };
        let shared = self.session.shared(p);
        let added = assemble::Added::of(&p.spec, &shared, &targets);
        let sampling = self.session.start_power();
        let ran = point::run_point(&p.spec, p.params.clone(), targets, position, self.observer, self.interrupt, &shared);
        assemble::point(self.session, at.point, self.result, ran, sampling, &added, &mut *self.observer)
    }
}
