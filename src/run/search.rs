//! The knee search (`--sla EXPR`, issue 28): a run made of checked points, one
//! per queue depth the search chooses (`results::search::SearchSpec::next_qd`),
//! each run as a run of its own (checked, then executed, as a round of
//! `rounds.rs` is) and gathered in one result under the first step's id, with
//! the run's `search` outcome. The search only chooses points: the I/O loop of
//! each is the ordinary one.

use anyhow::{anyhow, Result};
use serde_json::Value;

use super::plan::{PlanError, PlanRequest, PlannedPoint};
use super::rounds::{Gathering, RunPart};
use super::{RunContext, RunObserver, RunPlan};
use crate::results::model::{RunResult, Status};
use crate::results::search::{self, Load, SearchPoint, SearchSpec, WorkerRange};

/// The search `--sla` asks for on these points, refused where it makes no sense
/// (before anything runs, the dry run too). None without --sla.
pub(super) fn spec_of(req: &PlanRequest, points: &[PlannedPoint]) -> Result<Option<SearchSpec>, PlanError> {
    // The flag's bounds, else the profile's (a fio job's latency_target).
    let range = req.overrides.workers_range;
    let Some(expr) = req.sla.as_deref().or(req.profile.sla.as_deref()) else {
        return match range {
            Some(r) => Err(PlanError::Search(format!(
                "--workers {}-{}: a range of workers is searched by --sla (the most IOPS within the bounds): add --sla BOUNDS, or give one count (for example --workers {})",
                r.min, r.max, r.max
            ))),
            None => Ok(None),
        };
    };
    // The expression first: a bad one is told as --pass tells it, whatever else is wrong.
    let criteria = crate::results::pass::parse(expr)?;
    // A fio job's latency_target is named where it was written: the user typed no --sla.
    let from_job = req.sla.is_none().then_some(req.profile.sla_origin.as_deref()).flatten();
    let asked = match from_job {
        Some(origin) => format!("{origin} (the knee search --sla '{expr}')"),
        None => format!("--sla {expr}"),
    };
    let refuse = |why: String| Err(PlanError::Search(format!("{asked}: {why}")));
    if let Some(why) = criteria.iter().find_map(search::senseless_bound) {
        return refuse(why);
    }
    if let Some(why) = search::needs_a_steering_bound(&criteria) {
        return refuse(why);
    }
    if let Some(why) = refusal_of_the_plan(req, points, range, from_job.is_some()) {
        return refuse(why);
    }
    let point = &points[0];
    // --tune searches one group's workers and leaves the others as the profile has them.
    let tuned = match &req.tune {
        Some(t) => Some(point.spec.groups.iter().position(|g| g.name == t.group).ok_or_else(|| {
            PlanError::Search(format!("--tune: the profile tunes the group '{}', which its workload does not have", t.group))
        })?),
        None => None,
    };
    if point.spec.groups.len() > 1 && tuned.is_none() {
        let names: Vec<&str> = point.spec.groups.iter().map(|g| g.name.as_str()).collect();
        return refuse(format!(
            "the profile's groups ({}) each fix their own queue depth, and the search sets one: use a profile of one group, or flags",
            names.join(", ")
        ));
    }
    let max_qd = match engine_max_qd(point) {
        Ok(q) => q,
        Err(why) => return refuse(why),
    };
    let workers: u32 = point.spec.groups.iter().map(|g| g.workers).sum();
    let workers = range.unwrap_or(WorkerRange { min: workers, max: workers });
    let fixed_qd = match tuned {
        Some(gi) => Some(point.spec.groups[gi].qd),
        None => req.overrides.qd.filter(|_| range.is_some()),
    };
    if let Some(qd) = fixed_qd.filter(|&q| q > max_qd) {
        return refuse(format!("--qd {qd}: the engine holds at most {max_qd} I/Os per worker per target here: give --qd {max_qd} or less"));
    }
    let max_steps = SearchSpec::steps_cap(workers, max_qd, fixed_qd);
    let tune = req.tune.clone();
    Ok(Some(SearchSpec { expr: expr.to_string(), criteria, max_qd, max_steps, workers, fixed_qd, group: tuned, tune }))
}

/// Why the plan or flags cannot be searched (a --qd or a sweep that sets what
/// the search chooses, a rate, several points, rounds), None when they can.
fn refusal_of_the_plan(req: &PlanRequest, points: &[PlannedPoint], range: Option<WorkerRange>, from_job: bool) -> Option<String> {
    // With a range of workers, --qd holds the depth and only the workers are searched.
    if let (Some(_), None) = (req.overrides.qd, range) {
        let drop = if from_job { "drop --qd, or drop latency_target to run at --qd" } else { "drop --qd" };
        return Some(format!("the search chooses the queue depth, so --qd would be ignored: {drop}"));
    }
    if let Some(s) = req.sweeps.iter().find(|s| s.key == "qd" || s.key == "workers") {
        return Some(format!(
            "the search chooses the {}, and --sweep {}=... sets it too: drop the sweep",
            what_is_searched(range.is_some()),
            s.key
        ));
    }
    // A total rate (--rate, mailboxes) is spread over the groups: each has its share by now.
    if points.iter().any(|p| p.spec.groups.iter().any(|g| g.rate.is_some())) {
        return Some(
            "a rate (--rate, --mailboxes, or the profile's) fixes the load, and the search looks for the most load within the bounds: drop the rate"
                .into(),
        );
    }
    if points.len() > 1 {
        // Without a sweep the points are the profile's: name it (the default one too), and how to give one point.
        let why = match req.sweeps.is_empty() {
            true => format!(
                "the search varies the queue depth of one workload, and the profile '{}' has {} points: give --bs and --read for one point, or search each workload in a run of its own",
                req.profile.name,
                points.len()
            ),
            false => format!(
                "the search varies the queue depth of one workload, and this plan has {} points (a sweep): drop the sweep, or search each workload in a run of its own",
                points.len()
            ),
        };
        return Some(why);
    }
    if req.profile.rounds.is_some() {
        return Some(
            "a run of rounds (the profile's [rounds]) repeats its points until steady; it cannot be searched: use another profile".into(),
        );
    }
    None
}

/// The deepest queue depth the point's engines can search: an engine's ring
/// over the targets a worker drives; refused for an engine of one I/O at a time.
fn engine_max_qd(point: &PlannedPoint) -> Result<u32, String> {
    let mut max_qd = search::MAX_SEARCH_QD;
    for (g, t) in point.spec.groups.iter().map(|g| (g, point.spec.group_targets(g))) {
        let Some(&first) = t.first() else { continue };
        let kind = point.engines[first];
        let caps = kind.capabilities();
        if caps.max_qd.is_some() {
            return Err(format!(
                "the {} engine does one I/O at a time per worker, so there is no queue depth to search: use --engine io_uring",
                kind.name()
            ));
        }
        if let Some(ring) = caps.max_in_flight {
            max_qd = max_qd.min((ring as usize / point.spec.targets_per_worker(g).max(1)) as u32);
        }
    }
    Ok(max_qd.max(1))
}

/// What the search chooses, for its refusals.
fn what_is_searched(workers: bool) -> &'static str {
    if workers {
        "workers (then the queue depth)"
    } else {
        "queue depth"
    }
}

/// The step's point: the searched one at `load`, labelled `qd=N` (`workers=W qd=N` when the workers are searched).
fn step_point(base: &PlannedPoint, spec: &SearchSpec, load: Load, step: usize) -> Result<PlannedPoint> {
    let mut ws = base.spec.clone();
    match spec.group {
        // --tune: the tuned group's workers; every group keeps its queue depth.
        Some(gi) => ws.groups[gi].workers = load.workers,
        None => {
            for g in &mut ws.groups {
                g.qd = load.qd;
                // One group (more are refused): the search's workers are its own.
                if spec.searches_workers() {
                    g.workers = load.workers;
                }
            }
        }
    }
    let (ws, _) = super::plan::effective(ws, &base.targets)?;
    let mut params = base.params.clone();
    params.insert("qd".into(), Value::from(load.qd));
    if spec.searches_workers() {
        params.insert("workers".into(), Value::from(load.workers));
    }
    params.insert("search_step".into(), Value::from(step + 1));
    let asked_qd = ws.groups.iter().map(|g| g.qd).collect();
    Ok(PlannedPoint::new(params, spec.label(load), ws, asked_qd, base.targets.clone()))
}

/// Runs the search: a step at each load `next` chooses, until it chooses
/// none or a step does not complete; the gathered result with its `search`.
pub fn execute(
    plan: &RunPlan,
    spec: &SearchSpec,
    ctx: &RunContext,
    observer: &mut dyn RunObserver,
    run_part: &mut RunPart,
) -> Result<RunResult> {
    let base = &plan.points[0];
    observer.started(plan);
    let mut gather = Gathering::new(observer, None);
    let mut tried: Vec<(Load, bool)> = Vec::new();
    let mut steps: Vec<SearchPoint> = Vec::new();
    let mut status = Status::Completed;
    let mut refused: Option<String> = None;
    while let Some(load) = spec.next(&tried) {
        let point = step_point(base, spec, load, tried.len())?;
        // With --tune, the threads tuned (the group's workers, each rank's); else every group's,
        // and under MPI every rank's (each rank runs the step's workers).
        let workers: u32 = match spec.group {
            Some(_) => load.workers,
            None => point.spec.groups.iter().map(|g| g.workers).sum::<u32>() * ctx.cluster.get().processes(),
        };
        let label = point.label.clone();
        let part = match run_part(RunPlan { points: vec![point], rounds: None, search: None, curve: None, ..plan.clone() }, &mut gather) {
            Ok(part) => part,
            // A deeper step refused (the memory check at a deep queue) leaves the steps so far standing.
            Err(e) if gather.so_far.is_some() => {
                refused = Some(format!("the step at {label} could not run: {e:#}"));
                break;
            }
            Err(e) => return Err(e),
        };
        let merged = gather.merged(&part);
        status = part.status;
        let index = merged.points.len().saturating_sub(1);
        let measured = merged.points.len() > gather.so_far.as_ref().map_or(0, |r| r.points.len());
        gather.so_far = Some(merged);
        if !measured {
            break;
        }
        let whole = gather.so_far.as_ref().expect("a step ran");
        let mut step = SearchPoint::judge(spec, index, &whole.points[index], load.qd, workers);
        if status != Status::Completed {
            // Cut short or failed: shown with its figures so far, judging nothing.
            step.unfinished = Some(match &part.status_reason {
                Some(why) if status == Status::Failed => format!("failed: {why}"),
                _ => "cut short".to_string(),
            });
            steps.push(step);
            break;
        }
        // Only the upper (latency) bounds steer: a step failing only a lower (throughput) bound had too little load.
        // Under MPI only rank 0 holds the merged point: its verdict is every rank's next step.
        let held = spec.steering_held(&step);
        let passed = ctx.cluster.get().root_figures(vec![f64::from(u8::from(held))])[0] > 0.5;
        tried.push((load, passed));
        steps.push(step);
    }
    let ended = match &refused {
        Some(why) => format!("{why}; the steps so far are kept, the knee was not reached"),
        None => spec.ended(&tried, status),
    };
    let mut result = gather.so_far.take().ok_or_else(|| anyhow!("no step of the search ran"))?;
    if let Some(why) = refused {
        result.status = Status::Failed;
        result.status_reason = Some(why);
    }
    let mut outcome = search::outcome(spec, steps, ended);
    if let Some(t) = &spec.tune {
        let threads: Vec<(u32, bool)> = tried.iter().map(|(l, p)| (l.workers, *p)).collect();
        outcome.tuning = Some(crate::results::tuning::outcome(t, &threads, &outcome.steps, &result.points, spec.workers.max));
    }
    result.search = Some(outcome);
    result.profile = plan.profile.clone().or(result.profile);
    gather.inner.point_finished(&result);
    gather.inner.finished(&result);
    Ok(result)
}
