//! The load-latency curve (`--curve PCT,...`, issue 28): a run made of checked
//! points, as the knee search is (`search.rs`): the workload as fast as its
//! queue depth allows, then paced (the run's coordinated-omission-free pacing,
//! latency counted from each I/O's scheduled time) at each percentage of the
//! IOPS measured, ended at the first point that breaks `--curve-stop`.

use anyhow::{anyhow, Result};
use serde_json::Value;

use super::cluster::Cluster;
use super::plan::{PlanError, PlanRequest, PlannedPoint};
use super::rounds::{Gathering, RunPart};
use super::{RunObserver, RunPlan};
use crate::results::curve::{CurveOutcome, CurvePoint, CurveSpec};
use crate::results::model::{RunResult, Status};

/// The curve `--curve` asks for on these points, refused where it makes no
/// sense (before anything runs, the dry run too). None without --curve.
pub(super) fn spec_of(req: &PlanRequest, points: &[PlannedPoint]) -> Result<Option<CurveSpec>, PlanError> {
    let Some(list) = req.curve.as_deref() else {
        return match &req.curve_stop {
            Some(s) => Err(PlanError::Search(format!(
                "--curve-stop {s} ends a load-latency curve: add --curve PCT,... (for example --curve 10,50,90,100)"
            ))),
            None => Ok(None),
        };
    };
    let spec = CurveSpec::parse(list, req.curve_stop.as_deref()).map_err(PlanError::Search)?;
    let refuse = |why: String| Err(PlanError::Search(format!("--curve {list}: {why}")));
    if req.sla.is_some() || req.profile.sla.is_some() {
        return refuse("--sla searches the queue depth and --curve paces one depth: use one of them per run".into());
    }
    if points.iter().any(|p| p.spec.groups_apart()) {
        return refuse(
            "the groups run apart (a start delay or a time of their own: fio's startdelay or runtime), so no rate is held over the whole point and a share of the maximum cannot be paced: give the groups one start and time (or --time)".into(),
        );
    }
    if points.iter().any(|p| p.spec.groups.iter().any(|g| g.rate.is_some())) {
        return refuse(
            "the curve sets the rates itself, from the maximum it measures first: drop --rate (or the profile's rate, mailboxes)".into(),
        );
    }
    if points.len() > 1 {
        return refuse(format!(
            "a curve paces one workload, and this plan has {} points (a sweep, or the profile's phases): drop the sweep, or run each workload's curve on its own",
            points.len()
        ));
    }
    if req.profile.rounds.is_some() {
        return refuse("a run of rounds (the profile's [rounds]) cannot be paced into a curve: use another profile".into());
    }
    if points[0].spec.groups.iter().any(|g| g.follow.is_some()) {
        return refuse(
            "a group that follows another takes its rate from it, so the curve cannot pace it: use a profile without follow".into(),
        );
    }
    Ok(Some(spec))
}

/// The point paced at `pct` of `max_iops` (None: the maximum-rate point, as planned).
fn curve_point(base: &PlannedPoint, pct: Option<f64>, rate: Option<f64>) -> Result<PlannedPoint> {
    let mut p = base.clone();
    if let Some(rate) = rate {
        super::plan::spread_rate(&mut p.spec, rate);
        p.spec = super::plan::effective(p.spec, &p.targets)?.0;
    }
    match pct {
        Some(pct) => {
            p.params.insert("curve_pct".into(), Value::from(pct));
            p.label = format!("curve {pct}%");
        }
        None => {
            p.params.insert("curve_pct".into(), Value::from("max"));
            p.label = "curve max".into();
        }
    }
    Ok(p)
}

/// A point's ending in plain words ("interrupted at 50%", not the status's name).
fn status_words(status: Status) -> &'static str {
    match status {
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
        Status::Running => "still running",
        Status::Completed => "completed without a measured interval",
    }
}

/// Runs the curve: the maximum-rate point, then each percentage in turn,
/// until one breaks the stop bounds or does not complete.
///
/// Under MPI the maximum and each point's verdict are rank 0's, judged on the
/// merged point, and each rank paces its share of the job's rate.
pub fn execute(
    plan: &RunPlan,
    spec: &CurveSpec,
    cluster: &dyn Cluster,
    observer: &mut dyn RunObserver,
    run_part: &mut RunPart,
) -> Result<RunResult> {
    observer.started(plan);
    let mut gather = Gathering::new(observer, Some(spec.pcts.len() + 1));
    let mut points: Vec<CurvePoint> = Vec::new();
    let mut max_iops = 0.0;
    let mut ended = String::from("every percentage ran");
    for pct in std::iter::once(None).chain(spec.pcts.iter().map(|p| Some(*p))) {
        let rate = pct.map(|p| max_iops * p / 100.0);
        if rate.is_some_and(|r| r < 1.0) {
            ended = format!("the maximum-rate point measured {max_iops:.0} IOPS: too few to pace a fraction of");
            break;
        }
        let share = rate.map(|r| r / f64::from(cluster.processes()));
        let point = curve_point(&plan.points[0], pct, share)?;
        let part = run_part(RunPlan { points: vec![point], rounds: None, search: None, curve: None, ..plan.clone() }, &mut gather)?;
        let before = gather.so_far.as_ref().map_or(0, |r| r.points.len());
        let merged = gather.merged(&part);
        let measured = merged.points.len() > before;
        gather.so_far = Some(merged);
        let at = pct.map_or("the maximum-rate point".into(), |p| format!("{p}%"));
        if !measured || part.status != Status::Completed {
            // A point cut short (Ctrl-C, a signal) measured part of its time: it stays in the table, marked.
            if measured {
                let whole = gather.so_far.as_ref().expect("a point ran");
                let mut cp = spec.judge(before, &whole.points[before], pct, rate);
                cp.cut_short = Some(whole.points[before].cut_short.clone().unwrap_or_else(|| status_words(part.status).into()));
                points.push(cp);
            }
            let kept = if measured { "its figures and the points before it are kept" } else { "the points before it are kept" };
            ended = format!("{} at {at}: {kept}", status_words(part.status));
            break;
        }
        let whole = gather.so_far.as_ref().expect("a point ran");
        let cp = spec.judge(before, &whole.points[before], pct, rate);
        let root = cluster.root_figures(vec![cp.iops, f64::from(u8::from(cp.passed == Some(false)))]);
        if pct.is_none() {
            max_iops = root[0];
        }
        // The maximum-rate point is saturated by design: the stop bounds end the paced points only.
        let failed = root[1] > 0.5 && pct.is_some();
        points.push(cp);
        if failed {
            ended = format!("stopped at {}% of the maximum: a --curve-stop bound failed there", pct.unwrap_or_default());
            break;
        }
    }
    let mut result = gather.so_far.take().ok_or_else(|| anyhow!("no point of the curve ran"))?;
    let stop = spec.stop.as_ref().map(|(t, _)| t.clone());
    result.curve =
        Some(CurveOutcome { pcts: spec.pcts.clone(), stop, latency_limits_us: spec.latency_limits_us(), max_iops, points, ended });
    result.profile = plan.profile.clone().or(result.profile);
    gather.inner.point_finished(&result);
    gather.inner.finished(&result);
    Ok(result)
}
