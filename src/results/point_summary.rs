//! One point's summary from its merged recorders: the one function both a
//! single process (`run/point.rs`) and rank 0 of an MPI job (`mpi/reduce.rs`,
//! over every rank's recorders) build it with, so that a figure added to the
//! summary is added for both. What only one of them knows (the steady-state
//! outcome, pinned CPUs, per-worker rows, a replay; the ranks' power and queue
//! depth) each adds afterwards. Pure: no I/O, no clocks.

use super::model::{GroupSummary, Summary};
use super::paced_outcome;
use super::stall::{self, InFlightAtEnd};
use super::summarize::{add_percentiles, group_summary, summarize};
use crate::metrics::cpu::CpuUsage;
use crate::metrics::{IntervalSlice, Recorder};
use crate::workload::WorkloadSpec;

/// What a point's summary is built from.
pub struct PointFigures<'a> {
    /// The point's workload (its groups, their pacing); None when not known.
    pub spec: Option<&'a WorkloadSpec>,
    /// Every worker's recorder merged, and per group (in the spec's order).
    pub total: &'a Recorder,
    pub by_group: &'a [Recorder],
    /// The merged one-second slices, in index order.
    pub slices: &'a [IntervalSlice],
    pub usage: &'a CpuUsage,
    /// The measured interval, and when it began (Unix seconds).
    pub duration_s: f64,
    pub start_unix_s: f64,
    /// Processes that ran the workload together (MPI ranks; 1 alone): each
    /// group's workers count once per process.
    pub processes: u32,
    /// With --verify: the verification counts go into the summary.
    pub verify: bool,
    /// What was outstanding when the measured interval ended.
    pub in_flight: InFlightAtEnd,
}

/// The point's summary and, for a workload of several groups, each group's.
pub fn point_summary(f: &PointFigures) -> (Summary, Vec<GroupSummary>) {
    let mut summary = summarize(f.total, f.slices, f.usage, f.duration_s);
    // A second that starts at the end of the interval (the stop landed on it) holds nothing measured.
    summary.intervals.retain(|i| i.t_s < f.duration_s);
    let mut seconds = super::histograms::of_rows(&super::summarize::rows(f.slices, f.duration_s), f.start_unix_s);
    seconds.seconds.retain(|i| i.t_s < f.duration_s);
    summary.histograms = Some(seconds);
    if f.verify {
        summary.verify = Some(f.total.verify.clone());
    }
    stall::mark(&mut summary, f.in_flight);
    let mut groups = Vec::new();
    if let Some(spec) = f.spec {
        if spec.groups.len() > 1 {
            groups = spec
                .groups
                .iter()
                .zip(f.by_group)
                .map(|(g, r)| {
                    // Groups that run apart: each one's figures over its own window.
                    let window = spec.group_window(g, f.duration_s);
                    let mut summary = group_summary(&g.name, spec.group_workers(g) * f.processes, r, window.duration_s);
                    summary.window = spec.groups_apart().then_some(window);
                    summary
                })
                .collect();
        }
        let l = &mut summary.latency_us;
        add_percentiles(&mut l.read, &f.total.read, &spec.percentiles);
        add_percentiles(&mut l.write, &f.total.write, &spec.percentiles);
        add_percentiles(&mut l.all, &f.total.all(), &spec.percentiles);
        if let Some(t) = &mut l.trim {
            add_percentiles(t, &f.total.trim, &spec.percentiles);
        }
        paced_outcome::add(spec, f.total, f.by_group, &mut summary, &groups);
        paced_outcome::add_follow_ratios(spec, &mut groups);
    }
    (summary, groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    /// A paced database group of 2 workers and a log group following it at
    /// half its rate, run by 3 processes for 2 s with --verify, an I/O stuck
    /// at the end: every part of the summary is there, and from these recorders.
    #[test]
    fn a_point_summary_has_every_part_from_the_recorders() {
        let spec: WorkloadSpec = serde_json::from_value(serde_json::json!({
            "targets": ["mem:1m"], "ramp": "0s", "run": {"time": "2s"}, "seed": 1,
            "groups": [
                {"name": "db", "workers": 2, "qd": 4, "rate": 1000.0, "access": [{"share": 100.0, "bs": "8k", "read": 70.0, "random": 100.0}]},
                {"name": "log", "workers": 1, "qd": 1, "follow": {"group": "db", "ratio": 0.5}, "access": [{"share": 100.0, "bs": "4k", "read": 0.0, "random": 0.0}]}
            ]
        }))
        .unwrap();
        let (mut db, mut log) = (Recorder::default(), Recorder::default());
        let mut slices = vec![IntervalSlice::new(0), IntervalSlice::new(1), IntervalSlice::new(2)];
        for i in 0..2000u64 {
            let op = if i % 10 < 7 { Op::Read } else { Op::Write };
            db.record(op, 8192, 100_000);
            db.record_service(op, 40_000);
            slices[(i / 1000) as usize].record(op, 8192, 100_000);
        }
        for i in 0..1000u64 {
            log.record(Op::Write, 4096, 50_000);
            slices[(i / 500) as usize].record(Op::Write, 4096, 50_000);
        }
        db.verify.blocks_checked = 1400;
        let mut total = db.clone();
        total += &log;
        let usage = CpuUsage { utilization_pct: 25.0, busy_cpu_s: 1.0, ..Default::default() };
        let (s, groups) = point_summary(&PointFigures {
            spec: Some(&spec),
            total: &total,
            by_group: &[db, log],
            slices: &slices,
            usage: &usage,
            duration_s: 2.0,
            start_unix_s: 0.0,
            processes: 3,
            verify: true,
            in_flight: InFlightAtEnd { ios: 2, oldest_s: Some(2.5), abandoned: 0 },
        });
        assert_eq!((s.ios_read, s.ios_written), (1400, 1600));
        assert_eq!(s.iops, 1500.0);
        assert_eq!(s.cpu.utilization_pct, 25.0);
        assert_eq!(s.intervals.len(), 2, "the second starting at the end is dropped");
        assert_eq!(s.intervals[0].iops, 1500.0);
        assert_eq!(s.verify.as_ref().map(|v| v.blocks_checked), Some(1400));
        assert!(s.stalled && s.in_flight_at_end == 2, "{:?}", s.stall_reason);
        let service = s.service_latency_us.as_ref().expect("a paced point's service latency");
        assert!((service.read.mean - 40.0).abs() < 1e-9 && service.all.count == 2000, "{service:?}");
        let rate = s.rate.as_ref().expect("a rate outcome");
        assert_eq!((rate.target_iops, rate.achieved_iops), (1000.0, 1000.0));
        assert_eq!(groups.iter().map(|g| (g.name.as_str(), g.workers)).collect::<Vec<_>>(), vec![("db", 6), ("log", 3)]);
        assert_eq!((groups[0].iops, groups[1].iops), (1000.0, 500.0));
        let follow = groups[1].follow.as_ref().expect("the follower's ratio");
        assert_eq!((follow.target_ratio, follow.achieved_ratio), (0.5, 0.5));

        // Alone and without --verify: no verification counts, one worker set per group.
        let by_group = [Recorder::default(), Recorder::default()];
        let (s, groups) = point_summary(&PointFigures {
            spec: Some(&spec),
            total: &total,
            by_group: &by_group,
            slices: &slices,
            usage: &usage,
            duration_s: 2.0,
            start_unix_s: 0.0,
            processes: 1,
            verify: false,
            in_flight: InFlightAtEnd::default(),
        });
        assert!(s.verify.is_none() && !s.stalled);
        assert_eq!(groups.iter().map(|g| g.workers).collect::<Vec<_>>(), vec![2, 1]);
    }
}
