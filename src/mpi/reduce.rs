//! Rank 0's reduction of a point: every rank's report merged into one point.
//! Counts are summed and HDR histograms added (percentiles come from the merged
//! histogram, never averaged); seconds are aligned on the earliest rank's start
//! (a rank's second i is the job's second i + its start offset, rounded to
//! whole seconds: the barrier keeps offsets to ms, so that is i), and each
//! second's watts are every machine's summed; rates are taken as IOR does,
//! over the span from the earliest start to the latest end of the ranks'
//! measured intervals. CPU and power are taken once per machine (ranks grouped
//! by kernel boot id), so ranks sharing a kernel are never counted twice.
//! Pure: no MPI, no clocks.

use crate::metrics::cpu::CpuUsage;
use crate::metrics::power::PowerStats;
use crate::metrics::{IntervalSlice, Recorder};
use crate::results::cluster::{MachineFigures, PointSpread, RankFigures};
use crate::results::model::Status;
use crate::results::per_worker::QueueDepth;
use crate::results::point_summary::{point_summary, PointFigures};
use crate::results::stall::InFlightAtEnd;
use crate::results::summarize::latency_stats;
use crate::run::point::{Measured, PointOutcome};

use super::report::RankReport;

/// The point's status over all ranks: failed if any rank failed (naming every
/// failed rank and its host), else interrupted if any was, else completed.
pub fn overall_status(reports: &[RankReport]) -> (Status, Option<String>) {
    let named = |want: Status| -> Vec<String> {
        reports
            .iter()
            .filter(|r| r.status == want)
            .map(|r| format!("rank {} on {}: {}", r.rank, r.host, r.reason.as_deref().unwrap_or("no reason given")))
            .collect()
    };
    let failed = named(Status::Failed);
    if !failed.is_empty() {
        return (Status::Failed, Some(failed.join("; ")));
    }
    let interrupted = named(Status::Interrupted);
    if !interrupted.is_empty() {
        return (Status::Interrupted, Some(interrupted.join("; ")));
    }
    (Status::Completed, None)
}

/// Merges every rank's report (in rank order) into `outcome`, rank 0's own.
pub fn merge_into(outcome: &mut PointOutcome, reports: &[RankReport]) -> Result<(), String> {
    let measured: Vec<Measured> = reports.iter().map(RankReport::measured).collect::<Result<_, _>>()?;
    let start = reports.iter().map(|r| r.span.0).fold(f64::INFINITY, f64::min);
    let end = reports.iter().map(|r| r.span.1).fold(f64::NEG_INFINITY, f64::max);
    let latest_start = reports.iter().map(|r| r.span.0).fold(f64::NEG_INFINITY, f64::max);
    // No rank measured anything (all were interrupted in the ramp): the span is
    // empty, as one process's would be, not the few ms between the ranks' stops.
    let span_s = if reports.iter().all(|r| r.span.1 <= r.span.0) { 0.0 } else { (end - start).max(0.0) };

    let mut total = Recorder::default();
    let groups_n = measured.iter().map(|m| m.by_group.len()).max().unwrap_or(0);
    let mut by_group = vec![Recorder::default(); groups_n];
    let mut seconds: std::collections::BTreeMap<u32, IntervalSlice> = Default::default();
    for (r, m) in reports.iter().zip(&measured) {
        total += &m.total;
        for (g, rec) in m.by_group.iter().enumerate() {
            by_group[g] += rec;
        }
        let shift = second_shift(r, start);
        for s in &m.slices {
            let at = s.index + shift;
            seconds.entry(at).or_insert_with(|| IntervalSlice::new(at)).merge(s);
        }
    }
    // Every second of the span has its row, as a single process's point has (a second no rank completed an I/O in is a zero row).
    for i in 0..span_s.ceil() as u32 {
        seconds.entry(i).or_insert_with(|| IntervalSlice::new(i));
    }
    let slices: Vec<IntervalSlice> = seconds.into_values().collect();

    let machines = machines(reports);
    let usage = machine_usage(reports, &machines);
    let (mut summary, groups) = point_summary(&PointFigures {
        spec: outcome.point.workload.as_ref(),
        total: &total,
        by_group: &by_group,
        slices: &slices,
        usage: &usage,
        duration_s: span_s,
        start_unix_s: start,
        processes: reports.len() as u32,
        verify: outcome.point.summary.verify.is_some(),
        in_flight: InFlightAtEnd {
            ios: reports.iter().map(|r| r.in_flight_at_end).sum(),
            oldest_s: reports.iter().filter_map(|r| r.oldest_in_flight_ms).reduce(f64::max).map(|ms| ms / 1e3),
            abandoned: reports.iter().map(|r| r.abandoned_ios).sum(),
        },
    });
    summary.intervals.retain(|i| i.t_s < span_s);
    let watts = watts_by_second(reports, &machines, start);
    for i in &mut summary.intervals {
        i.watts = watts.get(&(i.t_s as u32)).copied();
    }
    summary.power = power(reports, &machines, summary.iops, summary.mbps);
    summary.queue_depth = queue_depth(reports);

    let ranks = reports
        .iter()
        .zip(&measured)
        .map(|(r, m)| {
            let secs = (r.span.1 - r.span.0).max(0.0);
            let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
            let all = latency_stats(&m.total.all());
            RankFigures {
                rank: r.rank,
                host: r.host.clone(),
                ios_read: m.total.ios_read,
                ios_written: m.total.ios_written,
                ios_trimmed: m.total.ios_trimmed,
                bytes_read: m.total.bytes_read,
                bytes_written: m.total.bytes_written,
                iops: rate(m.total.ios()),
                mbps: rate(m.total.bytes_read + m.total.bytes_written) / 1e6,
                lat_mean_us: all.mean,
                lat_p99_us: all.p99,
                start_offset_ms: (r.span.0 - start) * 1e3,
                duration_s: secs,
                status: status_name(r.status).into(),
                reason: r.reason.clone(),
                targets: r.targets.clone(),
            }
        })
        .collect();

    outcome.point.summary = summary;
    outcome.point.groups = groups;
    // Worker and target rows are rank 0's alone and would not add up to the
    // merged summary: the per-rank rows stand in for them under MPI.
    outcome.point.workers.clear();
    outcome.point.targets.clear();
    outcome.point.mpi = Some(PointSpread { ranks, machines, start_skew_ms: (latest_start - start).max(0.0) * 1e3, span_s });
    outcome.span = (start, end);
    outcome.measured = Measured { total, by_group, slices, usage };
    Ok(())
}

/// How many whole seconds after the earliest rank's start this rank's own second 0 began.
fn second_shift(r: &RankReport, start: f64) -> u32 {
    (r.span.0 - start).max(0.0).round() as u32
}

/// Each second's watts over all machines: every machine's (its lowest rank's
/// reading: every rank on it read the same meter) summed, for the seconds every
/// machine has a reading of; a second some machine has none of has no figure.
fn watts_by_second(reports: &[RankReport], machines: &[MachineFigures], start: f64) -> std::collections::BTreeMap<u32, f64> {
    let mut sums: std::collections::BTreeMap<u32, (f64, usize)> = Default::default();
    for m in machines {
        let Some(r) = reports.iter().find(|r| r.rank == m.ranks[0]) else { continue };
        let shift = second_shift(r, start);
        for s in &r.slices {
            if let Some(w) = s.watts {
                let e = sums.entry(s.index + shift).or_default();
                e.0 += w;
                e.1 += 1;
            }
        }
    }
    sums.into_iter().filter(|(_, (_, n))| *n == machines.len()).map(|(i, (w, _))| (i, w)).collect()
}

/// The queue depth asked for and held over all ranks: both summed, with each
/// rank's shortfall warning named by its rank (None when no rank measured it).
fn queue_depth(reports: &[RankReport]) -> Option<QueueDepth> {
    let held: Vec<(&RankReport, &QueueDepth)> = reports.iter().filter_map(|r| r.queue_depth.as_ref().map(|q| (r, q))).collect();
    if held.is_empty() {
        return None;
    }
    let requested: u64 = held.iter().map(|(_, q)| q.requested).sum();
    let achieved: f64 = held.iter().map(|(_, q)| q.achieved).sum();
    let short_pct = if requested > 0 { ((requested as f64 - achieved) / requested as f64 * 100.0).max(0.0) } else { 0.0 };
    let warnings: Vec<String> =
        held.iter().filter_map(|(r, q)| q.warning.as_ref().map(|w| format!("rank {} on {}: {w}", r.rank, r.host))).collect();
    // Every rank runs the same workload: rank 0's note (a shortfall by design, groups that run apart) is every rank's.
    let note = held.first().and_then(|(r, q)| q.note.as_ref().map(|n| format!("rank {} on {}: {n}", r.rank, r.host)));
    Some(QueueDepth { requested, achieved, short_pct, warning: (!warnings.is_empty()).then(|| warnings.join("; ")), note })
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Running => "running",
        Status::Completed => "completed",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

/// The machines of the job, by kernel boot id, in order of their lowest rank.
fn machines(reports: &[RankReport]) -> Vec<MachineFigures> {
    let mut out: Vec<MachineFigures> = Vec::new();
    for r in reports {
        match out.iter_mut().find(|m| m.boot_id == r.boot_id) {
            Some(m) => {
                m.ranks.push(r.rank);
                if !m.hosts.contains(&r.host) {
                    m.hosts.push(r.host.clone());
                }
            }
            None => out.push(MachineFigures {
                boot_id: r.boot_id.clone(),
                hosts: vec![r.host.clone()],
                ranks: vec![r.rank],
                // A machine's CPU and power are its lowest rank's readings: every rank on it read the same kernel.
                cpu_utilization_pct: r.usage.utilization_pct,
                busy_cpu_s: r.usage.busy_cpu_s,
                avg_watts: r.power.as_ref().and_then(|p| p.avg_watts),
            }),
        }
    }
    out
}

/// CPU over all machines: the mean utilization, every machine's busy
/// CPU-seconds summed (service demand divides these by all the data moved),
/// each machine's cores once, and lunmark's own time over all ranks.
fn machine_usage(reports: &[RankReport], machines: &[MachineFigures]) -> CpuUsage {
    let n = machines.len().max(1) as f64;
    let lowest = |m: &MachineFigures| reports.iter().find(|r| r.rank == m.ranks[0]).expect("a machine's rank reported");
    CpuUsage {
        utilization_pct: machines.iter().map(|m| m.cpu_utilization_pct).sum::<f64>() / n,
        per_core_pct: machines.iter().flat_map(|m| lowest(m).usage.per_core_pct.clone()).collect(),
        process_pct: machines
            .iter()
            .map(|m| reports.iter().filter(|r| m.ranks.contains(&r.rank)).map(|r| r.usage.process_pct).sum::<f64>())
            .sum::<f64>()
            / n,
        busy_cpu_s: machines.iter().map(|m| m.busy_cpu_s).sum(),
        process_cpu_s: reports.iter().map(|r| r.usage.process_cpu_s).sum(),
        process_user_cpu_s: reports.iter().map(|r| r.usage.process_user_cpu_s).sum(),
        other_processes_cpu_s: None,
        other_processes_pct: None,
        other_processes_top: Vec::new(),
        other_processes_estimate: None,
        // Servers a rank started are not gathered across ranks.
        started_processes_cpu_s: None,
        started_processes_pct: None,
        started_processes_top: Vec::new(),
    }
}

/// Power of all machines summed, when every machine's was measured.
fn power(reports: &[RankReport], machines: &[MachineFigures], iops: f64, mbps: f64) -> Option<PowerStats> {
    let first = reports.first()?.power.clone()?;
    if machines.len() == 1 {
        return Some(PowerStats {
            iops_per_watt: first.avg_watts.map(|w| iops / w),
            mbps_per_watt: first.avg_watts.map(|w| mbps / w),
            ..first
        });
    }
    let lowest: Vec<&PowerStats> =
        machines.iter().filter_map(|m| reports.iter().find(|r| r.rank == m.ranks[0]).and_then(|r| r.power.as_ref())).collect();
    if lowest.len() < machines.len() || lowest.iter().any(|p| p.avg_watts.is_none()) {
        return Some(PowerStats::unavailable(
            "power was not measured on every machine of the job, so no sum is given (machines[].avg_watts holds those measured)",
        ));
    }
    let avg: f64 = lowest.iter().filter_map(|p| p.avg_watts).sum();
    let idle = lowest.iter().map(|p| p.idle_watts).sum::<Option<f64>>();
    let source = format!("sum of {} machines ({})", machines.len(), first.source.clone().unwrap_or_default());
    Some(PowerStats::measured(&source, Some(avg), idle, None, iops, mbps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::cpu::CpuUsage;
    use crate::mpi::report::{WireHistogram, WireSlice};
    use crate::workload::Op;

    fn report(rank: u32, host: &str, boot: &str, lat: &[u64], start: f64) -> RankReport {
        report_of(rank, host, boot, lat, start, |i| if i % 2 == 0 { Op::Read } else { Op::Write })
    }

    /// A rank's report whose I/O `i` took `lat[i]` ns and was an `op(i)`.
    fn report_of(rank: u32, host: &str, boot: &str, lat: &[u64], start: f64, op: impl Fn(usize) -> Op) -> RankReport {
        let mut o = report_outcome();
        o.span = (start, start + 2.0);
        for (i, &l) in lat.iter().enumerate() {
            o.measured.total.record(op(i), 4096, l);
        }
        o.measured.usage = CpuUsage { utilization_pct: 40.0 + rank as f64, busy_cpu_s: 1.0 + rank as f64, ..Default::default() };
        RankReport::decode(&RankReport::of(rank, host, boot, &o).encode()).unwrap()
    }

    /// Three ranks on two hosts of one kernel: counts sum, the p99 is the merged
    /// sample's, the rate is over the whole span, and CPU is counted once.
    #[test]
    fn ranks_merge_exactly_and_one_kernel_is_one_machine() {
        let a: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        let b: Vec<u64> = (1..=500).map(|i| i * 7000).collect();
        let c: Vec<u64> = vec![50_000; 300];
        let reports =
            vec![report(0, "h1", "boot-x", &a, 100.0), report(1, "h1", "boot-x", &b, 100.004), report(2, "h2", "boot-x", &c, 100.010)];
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        let s = &out.point.summary;
        assert_eq!(s.ios_read + s.ios_written, 1800);
        assert_eq!(s.latency_us.all.count, 1800);
        let mut all: Vec<u64> = a.iter().chain(&b).chain(&c).copied().collect();
        all.sort_unstable();
        let exact = all[(0.99 * all.len() as f64).ceil() as usize - 1] as f64 / 1e3;
        assert!(
            (s.latency_us.all.p99 - exact).abs() / exact <= crate::metrics::histogram::RELATIVE_ERROR,
            "{} vs {exact}",
            s.latency_us.all.p99
        );
        let spread = out.point.mpi.as_ref().unwrap();
        assert!((spread.span_s - 2.010).abs() < 1e-9 && (spread.start_skew_ms - 10.0).abs() < 1e-6);
        assert!((s.iops - 1800.0 / 2.010).abs() < 1e-6);
        assert_eq!(spread.machines.len(), 1);
        assert_eq!(spread.machines[0].hosts, vec!["h1".to_string(), "h2".to_string()]);
        assert_eq!(s.cpu.busy_cpu_s, 1.0, "one machine's CPU counted once, from its lowest rank");
        assert_eq!(spread.ranks.iter().map(|r| r.ios_read + r.ios_written).sum::<u64>(), 1800);
    }

    /// `secs` one-second slices of 100 reads each, with `watts` as the machine's reading of each.
    fn with_seconds(mut r: RankReport, secs: u32, watts: Option<f64>) -> RankReport {
        r.slices = (0..secs)
            .map(|i| {
                let mut s = IntervalSlice::new(i);
                for _ in 0..100 {
                    s.record(Op::Read, 4096, 1000);
                }
                WireSlice {
                    index: i,
                    ios_read: s.ios_read,
                    ios_written: 0,
                    bytes_read: s.bytes_read,
                    bytes_written: 0,
                    ios_trimmed: 0,
                    read: s.read.as_ref().map(WireHistogram::of),
                    write: None,
                    trim: None,
                    watts: watts.map(|w| w + i as f64),
                }
            })
            .collect();
        r
    }

    /// Per-second rows: counts summed over all ranks second by second, and
    /// watts summed over machines (once per machine: its lowest rank's reading,
    /// never each rank's), with each rank's targets beside its figures.
    #[test]
    fn seconds_sum_counts_over_ranks_and_watts_over_machines() {
        let mut reports = vec![
            with_seconds(report(0, "h1", "boot-a", &[1000; 10], 50.0), 2, Some(100.0)),
            with_seconds(report(1, "h1", "boot-a", &[1000; 10], 50.002), 2, Some(999.0)),
            with_seconds(report(2, "h2", "boot-b", &[1000; 10], 50.004), 2, Some(40.0)),
        ];
        for r in &mut reports {
            r.targets = vec![format!("/dev/shm/lun{}", r.rank)];
        }
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        let rows = &out.point.summary.intervals;
        assert_eq!(
            rows.iter().map(|i| i.t_s).collect::<Vec<_>>(),
            vec![0.0, 1.0],
            "span 2.006 s: its last 6 ms are folded into second 1, no row of their own"
        );
        assert!((rows[0].iops - 300.0).abs() < 1e-9, "three ranks' 100 I/Os of second 0: {}", rows[0].iops);
        assert_eq!(rows.iter().map(|i| i.watts).collect::<Vec<_>>(), vec![Some(140.0), Some(142.0)]);
        let ranks = &out.point.mpi.as_ref().unwrap().ranks;
        assert_eq!(ranks.iter().map(|r| r.targets.join(",")).collect::<Vec<_>>(), vec!["/dev/shm/lun0", "/dev/shm/lun1", "/dev/shm/lun2"]);
        // A machine without a reading leaves the seconds without a sum, not a smaller one.
        reports[2] = with_seconds(report(2, "h2", "boot-b", &[1000; 10], 50.004), 2, None);
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        assert!(out.point.summary.intervals.iter().all(|i| i.watts.is_none()));
    }

    /// A rank that started whole seconds after the earliest has its seconds
    /// placed where they fell in the job's time, not on the earliest's.
    #[test]
    fn a_late_rank_s_seconds_are_aligned_on_the_job_s_clock() {
        let reports = vec![
            with_seconds(report(0, "h1", "b", &[1000; 10], 10.0), 3, None),
            with_seconds(report(1, "h2", "b", &[1000; 10], 11.0), 2, None),
        ];
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        let ios: Vec<f64> = out.point.summary.intervals.iter().map(|i| i.iops * i.duration_s).collect();
        assert_eq!(ios, vec![100.0, 200.0, 200.0], "rank 1's second 0 is the job's second 1");
        // The kept per-second histograms (--hdr-log, results percentiles) are the job's, merged the same way.
        let kept = out.point.summary.histograms.as_ref().expect("the job's seconds keep their histograms");
        let reads: Vec<u64> =
            kept.seconds.iter().map(|s| crate::results::histograms::decode(s.of("read").unwrap()).unwrap().count()).collect();
        assert_eq!((kept.start_unix_s, reads), (10.0, vec![100, 200, 200]), "from the earliest rank's start");
    }

    /// A rank's row counts trims in its `iops` as the summary does, and syncs in neither.
    #[test]
    fn rank_rows_count_trims_as_the_summary_does() {
        let ops = |i: usize| [Op::Read, Op::Write, Op::Trim, Op::Sync][i % 4];
        let reports = vec![report_of(0, "h1", "b", &[1000; 400], 10.0, ops), report_of(1, "h2", "b", &[2000; 200], 10.0, ops)];
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        let s = &out.point.summary;
        assert_eq!((s.ios_trimmed, s.ios_synced), (150, 150));
        let ranks = &out.point.mpi.as_ref().unwrap().ranks;
        assert_eq!(ranks.iter().map(|r| r.ios_trimmed).collect::<Vec<_>>(), vec![100, 50]);
        for r in ranks {
            assert!((r.iops - 3.0 * r.ios_trimmed as f64 / 2.0).abs() < 1e-9, "rank {}: {} IOPS", r.rank, r.iops);
        }
        assert!((ranks.iter().map(|r| r.iops).sum::<f64>() - s.iops).abs() < 1e-9, "same span: rank rows add up to the summary");
    }

    /// An empty completed point, the base every test's outcome starts from.
    fn report_outcome() -> PointOutcome {
        PointOutcome {
            point: crate::results::model::Point {
                params: Default::default(),
                summary: Default::default(),
                groups: vec![],
                repeats: None,
                verdict: None,
                workload: None,
                mpi: None,
                workers: vec![],
                targets: vec![],
                cut_short: None,
            },
            status: Status::Completed,
            reason: None,
            span: (0.0, 0.0),
            measured: Measured::default(),
        }
    }

    /// Queue depth is every rank's summed (not rank 0's alone); trims and syncs are summed.
    #[test]
    fn queue_depth_trims_and_syncs_are_summed_over_ranks() {
        let mut reports = vec![report(0, "h1", "b", &[1000; 10], 0.0), report(1, "h2", "b", &[2000; 10], 0.0)];
        let note = Some("each worker's depth is over its own group's window".to_string());
        reports[0].queue_depth = Some(QueueDepth { requested: 8, achieved: 8.0, short_pct: 0.0, warning: None, note });
        reports[1].queue_depth =
            Some(QueueDepth { requested: 8, achieved: 4.0, short_pct: 50.0, warning: Some("queue depth fell short".into()), note: None });
        for (i, r) in reports.iter_mut().enumerate() {
            r.total.ios_trimmed = 3 + i as u64;
            r.total.ios_synced = 5 + i as u64;
        }
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        let s = &out.point.summary;
        let q = s.queue_depth.as_ref().expect("the ranks' queue depth");
        assert_eq!((q.requested, q.achieved, q.short_pct), (16, 12.0, 25.0));
        assert_eq!(q.warning.as_deref(), Some("rank 1 on h2: queue depth fell short"));
        // Rank 0's note (groups that run apart, a shortfall by design) is kept; it was dropped.
        assert_eq!(q.note.as_deref(), Some("rank 0 on h1: each worker's depth is over its own group's window"));
        assert_eq!((s.ios_trimmed, s.ios_synced), (7, 11));
    }

    /// Every rank interrupted in its ramp: nothing was measured, so the point
    /// is not marked stalled over the few ms between the ranks' stops.
    #[test]
    fn ranks_interrupted_in_the_ramp_measured_nothing_and_did_not_stall() {
        let mut reports = vec![report(0, "h1", "b", &[], 100.0), report(1, "h1", "b", &[], 100.004)];
        for r in &mut reports {
            r.span.1 = r.span.0;
            r.status = Status::Interrupted;
            r.in_flight_at_end = 31;
            r.oldest_in_flight_ms = Some(3.0);
        }
        let mut out = report_outcome();
        merge_into(&mut out, &reports).unwrap();
        let s = &out.point.summary;
        assert_eq!(s.duration_s, 0.0);
        assert!(!s.stalled, "{:?}", s.stall_reason);
        assert_eq!(overall_status(&reports).0, Status::Interrupted);
    }

    #[test]
    fn a_failed_rank_fails_the_point_by_name() {
        let mut r = report(1, "h2", "b", &[1000], 0.0);
        r.status = Status::Failed;
        r.reason = Some("nbd: connection reset".into());
        let (status, reason) = overall_status(&[report(0, "h1", "b", &[1000], 0.0), r]);
        assert_eq!(status, Status::Failed);
        assert_eq!(reason.unwrap(), "rank 1 on h2: nbd: connection reset");
    }
}
