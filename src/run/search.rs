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
use crate::results::search::{self, SearchPoint, SearchSpec};

/// The search `--sla` asks for on these points, refused where it makes no sense
/// (before anything runs, the dry run too). None without --sla.
pub(super) fn spec_of(req: &PlanRequest, points: &[PlannedPoint]) -> Result<Option<SearchSpec>, PlanError> {
    // The flag's bounds, else the profile's (a fio job's latency_target).
    let Some(expr) = req.sla.as_deref().or(req.profile.sla.as_deref()) else { return Ok(None) };
    // The expression first: a bad one is told as --pass tells it, whatever else is wrong.
    let criteria = crate::results::pass::parse(expr)?;
    let refuse = |why: String| Err(PlanError::Search(format!("--sla {expr}: {why}")));
    if let Some(why) = criteria.iter().find_map(search::senseless_bound) {
        return refuse(why);
    }
    if req.overrides.qd.is_some() {
        return refuse("the search chooses the queue depth, so --qd would be ignored: drop --qd".into());
    }
    if let Some(s) = req.sweeps.iter().find(|s| s.key == "qd") {
        return refuse(format!("the search chooses the queue depth, and --sweep {}=... sets it too: drop the sweep", s.key));
    }
    // A total rate (--rate, mailboxes) is spread over the groups: each has its share by now.
    if points.iter().any(|p| p.spec.groups.iter().any(|g| g.rate.is_some())) {
        return refuse(
            "a rate (--rate, --mailboxes, or the profile's) fixes the load, and the search looks for the most load within the bounds: drop the rate"
                .into(),
        );
    }
    if points.len() > 1 {
        return refuse(format!(
            "the search varies the queue depth of one workload, and this plan has {} points (a sweep, or the profile's phases): drop the sweep, or search each workload in a run of its own",
            points.len()
        ));
    }
    if req.profile.rounds.is_some() {
        return refuse(
            "a run of rounds (the profile's [rounds]) repeats its points until steady; it cannot be searched: use another profile".into(),
        );
    }
    let point = &points[0];
    if point.spec.groups.len() > 1 {
        let names: Vec<&str> = point.spec.groups.iter().map(|g| g.name.as_str()).collect();
        return refuse(format!(
            "the profile's groups ({}) each fix their own queue depth, and the search sets one: use a profile of one group, or flags",
            names.join(", ")
        ));
    }
    let mut max_qd = search::MAX_SEARCH_QD;
    for (g, t) in point.spec.groups.iter().map(|g| (g, point.spec.group_targets(g))) {
        let Some(&first) = t.first() else { continue };
        let kind = point.engines[first];
        let caps = kind.capabilities();
        if caps.max_qd.is_some() {
            return refuse(format!(
                "the {} engine does one I/O at a time per worker, so there is no queue depth to search: use --engine io_uring",
                kind.name()
            ));
        }
        if let Some(ring) = caps.max_in_flight {
            max_qd = max_qd.min((ring as usize / point.spec.targets_per_worker(g).max(1)) as u32);
        }
    }
    Ok(Some(SearchSpec { expr: expr.to_string(), criteria, max_qd: max_qd.max(1), max_steps: search::MAX_STEPS }))
}

/// The step's point: the searched one at queue depth `qd`, labelled `qd=N`.
fn step_point(base: &PlannedPoint, qd: u32, step: usize) -> Result<PlannedPoint> {
    let mut spec = base.spec.clone();
    for g in &mut spec.groups {
        g.qd = qd;
    }
    let (spec, _) = super::plan::effective(spec, &base.targets)?;
    let mut params = base.params.clone();
    params.insert("qd".into(), Value::from(qd));
    params.insert("search_step".into(), Value::from(step + 1));
    let asked_qd = spec.groups.iter().map(|g| g.qd).collect();
    Ok(PlannedPoint::new(params, format!("qd={qd}"), spec, asked_qd, base.targets.clone()))
}

/// Runs the search: a step at each queue depth `next_qd` chooses, until it
/// chooses none or a step does not complete; the gathered result with its `search`.
pub fn execute(
    plan: &RunPlan,
    spec: &SearchSpec,
    _ctx: &RunContext,
    observer: &mut dyn RunObserver,
    run_part: &mut RunPart,
) -> Result<RunResult> {
    let base = &plan.points[0];
    let workers: u32 = base.spec.groups.iter().map(|g| g.workers).sum();
    observer.started(plan);
    let mut gather = Gathering::new(observer, None);
    let mut tried: Vec<(u32, bool)> = Vec::new();
    let mut steps: Vec<SearchPoint> = Vec::new();
    let mut status = Status::Completed;
    let mut refused: Option<String> = None;
    while let Some(qd) = spec.next_qd(&tried) {
        let part = step_point(base, qd, tried.len()).and_then(|point| {
            run_part(RunPlan { points: vec![point], rounds: None, search: None, curve: None, ..plan.clone() }, &mut gather)
        });
        let part = match part {
            Ok(part) => part,
            // A deeper step refused (the memory check at a deep queue) leaves the steps so far standing.
            Err(e) if gather.so_far.is_some() => {
                refused = Some(format!("the step at qd={qd} could not run: {e:#}"));
                break;
            }
            Err(e) => return Err(e),
        };
        let merged = gather.merged(&part);
        status = part.status;
        let index = merged.points.len().saturating_sub(1);
        let measured = merged.points.len() > gather.so_far.as_ref().map_or(0, |r| r.points.len());
        gather.so_far = Some(merged);
        if !measured || status != Status::Completed {
            break;
        }
        let whole = gather.so_far.as_ref().expect("a step ran");
        let step = SearchPoint::judge(spec, index, &whole.points[index], qd, workers);
        tried.push((qd, step.passed));
        steps.push(step);
    }
    let ended = match &refused {
        Some(why) => format!("{why}; the steps so far are kept, the knee was not reached"),
        None => ended(spec, &tried, status),
    };
    let mut result = gather.so_far.take().ok_or_else(|| anyhow!("no step of the search ran"))?;
    if let Some(why) = refused {
        result.status = Status::Failed;
        result.status_reason = Some(why);
    }
    result.search = Some(search::outcome(spec, steps, ended));
    result.profile = plan.profile.clone().or(result.profile);
    gather.inner.point_finished(&result);
    gather.inner.finished(&result);
    Ok(result)
}

/// Why the search ended, in words.
fn ended(spec: &SearchSpec, tried: &[(u32, bool)], status: Status) -> String {
    let fail = tried.iter().filter(|s| !s.1).map(|s| s.0).min();
    match (status, tried.first(), fail) {
        (Status::Interrupted, ..) => "interrupted: the steps so far are kept, the knee was not reached".into(),
        (Status::Failed, ..) => "a step failed: the steps so far are kept, the knee was not reached".into(),
        (_, Some((1, false)), _) => "not met at the lightest load (qd=1): no load meets these bounds".into(),
        // It would have gone on, but for the cap on steps.
        _ if SearchSpec { max_steps: u32::MAX, ..spec.clone() }.next_qd(tried).is_some() => {
            format!("the cap of {} steps was reached before the knee was bracketed to one queue depth", spec.max_steps)
        }
        (_, _, None) => format!("every bound held up to the highest queue depth tried (qd={}): the knee is beyond it", spec.max_qd),
        (_, _, Some(f)) => format!("the bounds fail from qd={f}; bisected to within one queue depth"),
    }
}
