//! What pacing adds to a point's summary: service latency beside latency from
//! schedule, the achieved rate against the target, and followers' IOPS ratios.

use super::model::{FollowOutcome, GroupSummary, LatencyByOp, RateOutcome, Summary};
use super::summarize::latency_stats;
use crate::metrics::Recorder;
use crate::workload::WorkloadSpec;

/// A rate is held when the achieved rate is within this share of the target.
const HELD_WITHIN: f64 = 0.01;

pub fn add(spec: &WorkloadSpec, total: &Recorder, by_group: &[Recorder], summary: &mut Summary, _groups: &[GroupSummary]) {
    let paced = spec.groups.iter().any(|g| g.rate.is_some() || g.follow.is_some());
    if !paced {
        return;
    }
    summary.service_latency_us = Some(service_latency(total));
    let target: f64 = spec.groups.iter().filter_map(|g| g.rate).sum();
    if target > 0.0 && summary.duration_s > 0.0 {
        // Each paced group's rate over its own window (a group that starts late measures less of the span).
        let achieved: f64 = spec
            .groups
            .iter()
            .zip(by_group)
            .filter(|(g, _)| g.rate.is_some())
            .map(|(g, r)| r.ios() as f64 / spec.group_window(g, summary.duration_s).duration_s.max(f64::MIN_POSITIVE))
            .sum();
        let held = achieved >= target * (1.0 - HELD_WITHIN);
        let short = (!held).then(|| {
            format!(
                "the target rate of {target:.0} IOPS could not be held: {achieved:.0} IOPS were completed ({:.1}% short). The target is slower than asked at this queue depth; latency from schedule shows the backlog",
                (1.0 - achieved / target) * 100.0
            )
        });
        // Groups that run apart are never all paced at once: the rates are each group's over its own window.
        let apart = spec.groups_apart().then(|| {
            format!(
                "the target and achieved rates are the paced groups' own, each over its own measured window; the groups run apart (groups[].window), so the point's {:.0} IOPS over its whole span is less",
                summary.iops
            )
        });
        let note = match (short, apart) {
            (Some(a), Some(b)) => Some(format!("{a}. {b}")),
            (a, b) => a.or(b),
        };
        summary.rate = Some(RateOutcome { target_iops: target, achieved_iops: achieved, held, note });
    }
}

/// Service time (issue to completion) of reads, writes and both, beside the
/// latency from schedule (or from recorded time, for a timed replay).
pub fn service_latency(total: &Recorder) -> LatencyByOp {
    let mut all = total.service_read.clone();
    all.add(&total.service_write);
    LatencyByOp {
        read: latency_stats(&total.service_read),
        write: latency_stats(&total.service_write),
        all: latency_stats(&all),
        ..Default::default()
    }
}

pub fn add_follow_ratios(spec: &WorkloadSpec, groups: &mut [GroupSummary]) {
    let iops: Vec<(String, f64)> = groups.iter().map(|g| (g.name.clone(), g.iops)).collect();
    for (g, spec_group) in groups.iter_mut().zip(&spec.groups) {
        if let Some(f) = &spec_group.follow {
            let leader = iops.iter().find(|(n, _)| *n == f.group).map(|(_, v)| *v).unwrap_or(0.0);
            let achieved = if leader > 0.0 { g.iops / leader } else { 0.0 };
            g.follow = Some(FollowOutcome { group: f.group.clone(), target_ratio: f.ratio, achieved_ratio: achieved });
        }
    }
}
