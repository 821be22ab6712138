//! Per-worker and per-target figures of a point (IOmeter's worker and target
//! rows), and the queue depth the workers really held against the depth asked
//! for. Pure: the workers' recorders in, result-model figures out.

use serde::{Deserialize, Serialize};

use crate::metrics::per_worker::TargetTally;
use crate::metrics::Recorder;

/// One worker's figures over the measured interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerFigures {
    /// Position among all workers of the point (as in its thread name, lunmark-wN).
    pub worker: u32,
    pub group: String,
    /// Indexes of the targets it drove (into `result.targets` of the point's workload).
    pub targets: Vec<usize>,
    /// With --cpus: the CPUs its thread was pinned to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// I/Os completed in the measured interval: reads, writes and trims, as the
    /// summary's `iops` counts them (syncs apart).
    pub ios: u64,
    pub iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    pub latency_mean_us: f64,
    pub latency_p99_us: f64,
    pub errors: u64,
    /// I/Os it was asked to keep in flight: the queue depth asked for x its targets.
    pub qd_requested: u32,
    /// The mean I/Os it held in flight (time-weighted, issue to reap) over the
    /// measured interval; null when it measured nothing.
    pub qd_achieved: Option<f64>,
}

/// One target's figures over the measured interval, all workers together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetFigures {
    /// Index of the target in the point's workload.
    pub target: usize,
    pub uri: String,
    /// Workers that drove it.
    pub workers: u32,
    /// Reads, writes and trims, as the worker rows and the summary count them.
    pub ios: u64,
    pub iops: f64,
    pub mbps: f64,
    pub latency_mean_us: f64,
    /// Within 1% (a 2-significant-digit histogram per worker and target).
    pub latency_p99_us: f64,
    pub errors: u64,
}

/// The queue depth the point asked for against the one its workers held.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueDepth {
    /// I/Os asked to be in flight, all workers together.
    pub requested: u64,
    /// Mean I/Os held in flight, all workers together.
    pub achieved: f64,
    /// How far the achieved depth fell short of the requested, percent (0 when it did not).
    pub short_pct: f64,
    /// Said when a worker held more than `SHORT_WARN_PCT` less than asked
    /// and nothing in the workload meant it to (the result is distorted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// Said instead when the shortfall is by design: a paced group (a rate,
    /// or following another group) or a think time keeps fewer I/Os in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A worker holding this much less than its requested depth is warned about, percent.
pub const SHORT_WARN_PCT: f64 = 10.0;

/// What the point knows of one worker when it ends.
pub struct WorkerInput<'a> {
    pub index: u32,
    pub group: &'a str,
    /// Global target indexes, in the order of `per_target`.
    pub targets: &'a [usize],
    pub cpus: &'a [u32],
    pub recorder: &'a Recorder,
    pub per_target: &'a [TargetTally],
    pub qd_requested: u32,
    pub qd_achieved: Option<f64>,
    /// Why a shortfall is expected (the psync engine, a rate), for the warning.
    pub why_short: Option<&'a str>,
    /// The workload means this worker to hold less than asked (a rate, a
    /// group it follows, a think time): its shortfall is noted, not warned about.
    pub by_design: bool,
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

pub fn worker_figures(w: &WorkerInput, duration_s: f64) -> WorkerFigures {
    let rec = w.recorder;
    let all = rec.all();
    WorkerFigures {
        worker: w.index,
        group: w.group.to_string(),
        targets: w.targets.to_vec(),
        cpus: w.cpus.to_vec(),
        ios: rec.ios(),
        iops: rate(rec.ios(), duration_s),
        mbps: rate(rec.bytes_read + rec.bytes_written, duration_s) / 1e6,
        latency_mean_us: all.mean_ns() / 1e3,
        latency_p99_us: if all.count() > 0 { all.quantile_ns(0.99) as f64 / 1e3 } else { 0.0 },
        errors: rec.error_count(),
        qd_requested: w.qd_requested,
        qd_achieved: w.qd_achieved,
    }
}

/// Each target's figures, summed over the workers that drove it; `uris` are the
/// point's targets by index.
pub fn target_figures(workers: &[WorkerInput], uris: &[String], duration_s: f64) -> Vec<TargetFigures> {
    let mut sums: Vec<(TargetTally, u32)> = vec![(TargetTally::default(), 0); uris.len()];
    for w in workers {
        for (&t, tally) in w.targets.iter().zip(w.per_target) {
            if let Some((sum, n)) = sums.get_mut(t) {
                sum.add(tally);
                *n += 1;
            }
        }
    }
    sums.iter()
        .zip(uris)
        .enumerate()
        .filter(|(_, ((_, n), _))| *n > 0)
        .map(|(i, ((t, n), uri))| TargetFigures {
            target: i,
            uri: uri.clone(),
            workers: *n,
            ios: t.ios,
            iops: rate(t.ios, duration_s),
            mbps: rate(t.bytes, duration_s) / 1e6,
            latency_mean_us: t.latency.mean_ns() / 1e3,
            latency_p99_us: if t.ios > 0 { t.latency.quantile_ns(0.99) as f64 / 1e3 } else { 0.0 },
            errors: t.errors,
        })
        .collect()
}

/// Requested against achieved depth over all workers, with a warning naming the
/// workers that held more than `SHORT_WARN_PCT` less than asked.
pub fn queue_depth(workers: &[WorkerInput]) -> Option<QueueDepth> {
    let measured: Vec<(&WorkerInput, f64)> = workers.iter().filter_map(|w| w.qd_achieved.map(|a| (w, a))).collect();
    if measured.is_empty() {
        return None;
    }
    let requested: u64 = measured.iter().map(|(w, _)| w.qd_requested as u64).sum();
    let achieved: f64 = measured.iter().map(|(_, a)| a).sum();
    let short = |asked: f64, held: f64| if asked > 0.0 { ((asked - held) / asked * 100.0).max(0.0) } else { 0.0 };
    let short_ones = |design: bool| -> Vec<&(&WorkerInput, f64)> {
        measured.iter().filter(|(w, a)| w.by_design == design && short(w.qd_requested as f64, *a) > SHORT_WARN_PCT).collect()
    };
    // (the workers short, why): None when none is.
    let said = |ones: Vec<&(&WorkerInput, f64)>, fallback: &str| -> Option<(String, String)> {
        let named: Vec<String> = ones.iter().map(|(w, a)| format!("worker {} held {a:.1} of {}", w.index, w.qd_requested)).collect();
        let mut why: Vec<&str> = ones.iter().filter_map(|(w, _)| w.why_short).collect();
        why.dedup();
        let cause = if why.is_empty() { fallback.to_string() } else { why.join("; ") };
        (!named.is_empty()).then(|| (named.join(", "), cause))
    };
    let warning = said(short_ones(false), "the submitter did not keep up (a busy CPU, a slow engine)").map(|(who, cause)| {
        format!("queue depth fell short by more than {SHORT_WARN_PCT:.0}% ({who}): the target saw less load than asked, because {cause}")
    });
    let note = said(short_ones(true), "").map(|(who, cause)| format!("queue depth below the asked by design ({who}): {cause}"));
    Some(QueueDepth { requested, achieved, short_pct: short(requested as f64, achieved), warning, note })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    #[test]
    fn targets_add_up_and_a_short_worker_is_named() {
        let mut r0 = Recorder::default();
        let mut r1 = Recorder::default();
        let mut t0 = vec![TargetTally::default(), TargetTally::default()];
        let mut t1 = vec![TargetTally::default()];
        for i in 0..10 {
            r0.record(Op::Read, 4096, 1000);
            t0[i % 2].record(Op::Read, 4096, 1000);
        }
        r1.record(Op::Write, 8192, 5000);
        // A trim is an I/O of the worker and its target; a sync is neither.
        r1.record(Op::Trim, 65536, 3000);
        r1.record(Op::Sync, 0, 9000);
        t1[0].take_all_of(&r1);
        let w = [
            WorkerInput {
                index: 0,
                group: "a",
                targets: &[0, 1],
                cpus: &[],
                recorder: &r0,
                per_target: &t0,
                qd_requested: 8,
                qd_achieved: Some(7.9),
                why_short: None,
                by_design: false,
            },
            WorkerInput {
                index: 1,
                group: "a",
                targets: &[1],
                cpus: &[],
                recorder: &r1,
                per_target: &t1,
                qd_requested: 32,
                qd_achieved: Some(1.0),
                why_short: Some("psync does one at a time"),
                by_design: false,
            },
        ];
        let targets = target_figures(&w, &["mem:a".into(), "mem:b".into()], 1.0);
        assert_eq!(targets.iter().map(|t| t.ios).collect::<Vec<_>>(), vec![5, 7]);
        assert_eq!(targets[1].mbps * 1e6, (5 * 4096 + 8192) as f64, "trims move no bytes");
        let w1 = worker_figures(&w[1], 1.0);
        assert_eq!((w1.ios, w1.iops), (2, 2.0));
        assert!((w1.latency_mean_us - 4.0).abs() < 0.01, "{}", w1.latency_mean_us);
        assert_eq!(targets[1].workers, 2);
        let q = queue_depth(&w).unwrap();
        assert_eq!(q.requested, 40);
        let warning = q.warning.unwrap();
        assert!(warning.contains("worker 1 held 1.0 of 32") && !warning.contains("worker 0"), "{warning}");
        assert!(warning.contains("psync does one at a time"), "{warning}");
        assert_eq!(q.note, None);
        // A paced worker (a follower group, a rate) below its depth by design: a note, not a warning.
        let mut paced = w;
        paced[1].why_short = Some("a paced group keeps only the I/Os that are due in flight");
        paced[1].by_design = true;
        let q = queue_depth(&paced).unwrap();
        assert_eq!(q.warning, None);
        assert_eq!(
            q.note.as_deref(),
            Some(
                "queue depth below the asked by design (worker 1 held 1.0 of 32): a paced group keeps only the I/Os that are due in flight"
            )
        );
    }
}
