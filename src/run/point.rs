//! Runs one point: spawns the workers, releases them together, takes CPU
//! snapshots at the edges of the measured interval, feeds the live view from
//! the one-second slices, and merges the recorders into the point's summary.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use super::control::Control;
use super::live::{Live, LiveFigures};
use super::pacing::Pacing;
use super::worker::{run_worker, WorkerOutcome, WorkerPlan};
use crate::metrics::{cpu, IntervalSlice, Recorder};
use crate::results::model::{Point, Status};
use crate::results::summarize::{group_summary, summarize};
use crate::target::OpenTarget;
use crate::workload::{RunLength, WorkloadSpec};

pub struct PointOutcome {
    pub point: Point,
    pub status: Status,
    pub reason: Option<String>,
    /// The measured interval in Unix seconds, for matching power readings.
    pub span: (f64, f64),
}

/// Where this point sits in the run, for the live line.
pub struct PointPosition<'a> {
    pub index: usize,
    pub count: usize,
    pub label: &'a str,
}

/// State every worker of a point shares, besides the targets.
#[derive(Clone, Default)]
pub struct PointShared {
    /// With --verify.
    pub verify: Option<Arc<crate::verify::VerifyShared>>,
    /// With --trace.
    pub trace: Option<Arc<super::trace_sink::TraceSink>>,
}

pub fn worker_plans(spec: &WorkloadSpec, shared: &PointShared) -> Vec<WorkerPlan> {
    let mut plans = Vec::new();
    // One completion counter per group that another group follows.
    let counters: Vec<Option<Arc<AtomicU64>>> = spec
        .groups
        .iter()
        .map(|g| spec.groups.iter().any(|o| o.follow.as_ref().is_some_and(|f| f.group == g.name)).then(|| Arc::new(AtomicU64::new(0))))
        .collect();
    for (gi, g) in spec.groups.iter().enumerate() {
        let targets = spec.group_targets(g);
        let workers = spec.group_workers(g);
        let pacing = match (g.rate, &g.follow) {
            (Some(rate), _) => Pacing::Rate { interval: Duration::from_secs_f64(workers as f64 / rate) },
            (None, Some(f)) => {
                let leader = spec.groups.iter().position(|o| o.name == f.group).expect("validated: the leader exists");
                Pacing::Follow {
                    leader: counters[leader].clone().expect("a counter for every followed group"),
                    ratio: f.ratio / workers as f64,
                    allowance: g.qd as u64 * spec.targets_per_worker(g) as u64,
                }
            }
            (None, None) => Pacing::Unpaced,
        };
        for w in 0..workers {
            plans.push(WorkerPlan {
                group: gi,
                index: plans.len() as u32,
                targets: if g.worker_per_target { vec![targets[w as usize]] } else { targets.clone() },
                qd: g.qd,
                access: g.access.clone(),
                seed: spec.seed,
                engine: spec.engine,
                ramp: spec.ramp,
                run: spec.run,
                pacing: pacing.clone(),
                publish: counters[gi].clone(),
                verify: shared.verify.clone(),
                trace: shared.trace.clone(),
                connections: spec.connections,
            });
        }
    }
    plans
}

pub fn run_point(
    spec: &WorkloadSpec,
    params: BTreeMap<String, serde_json::Value>,
    targets: Vec<OpenTarget>,
    position: PointPosition,
    live: &mut Live,
    interrupt: &AtomicBool,
    shared: &PointShared,
) -> PointOutcome {
    let plans = worker_plans(spec, shared);
    let nworkers = plans.len();
    let ctl = Arc::new(Control::new(nworkers));
    let targets = Arc::new(targets);
    let (tx, rx) = mpsc::channel::<IntervalSlice>();
    let handles: Vec<thread::JoinHandle<WorkerOutcome>> = plans
        .into_iter()
        .map(|plan| {
            let (targets, ctl, tx) = (targets.clone(), ctl.clone(), tx.clone());
            thread::Builder::new()
                .name(format!("lunmark-w{}", plan.index))
                .spawn(move || run_worker(plan, targets, ctl, tx))
                .expect("spawn worker thread")
        })
        .collect();
    drop(tx);

    let t0 = ctl.start();
    let measure_start = t0 + spec.ramp;
    let end = match spec.run {
        RunLength::Time(d) => Some(measure_start + d),
        RunLength::Ios(_) => None,
    };
    let mut cpu_start = None;
    let mut slices: BTreeMap<u32, IntervalSlice> = BTreeMap::new();
    let mut shown = None;
    let mut status = Status::Completed;
    let t_end: Instant = loop {
        let now = Instant::now();
        if cpu_start.is_none() && now >= measure_start {
            cpu_start = Some(cpu::snapshot());
        }
        if interrupt.load(Ordering::Relaxed) {
            status = Status::Interrupted;
            ctl.stop.store(true, Ordering::SeqCst);
            break now;
        }
        if ctl.failed.load(Ordering::SeqCst) {
            status = Status::Failed;
            break now;
        }
        if let Some(e) = end {
            if now >= e {
                break e;
            }
        } else if handles.iter().all(|h| h.is_finished()) {
            break now;
        }
        // Wake at the next edge (measure start, end) or every 100 ms for the live view.
        let next_edge = if now < measure_start { Some(measure_start) } else { end };
        let wait = next_edge.map(|e| e.saturating_duration_since(now)).unwrap_or(Duration::MAX).min(Duration::from_millis(100));
        if let Ok(slice) = rx.recv_timeout(wait.max(Duration::from_millis(1))) {
            merge_slice(&mut slices, slice);
        }
        while let Ok(slice) = rx.try_recv() {
            merge_slice(&mut slices, slice);
        }
        let now = Instant::now();
        let (phase, elapsed, total) = if now < measure_start {
            ("ramp", now - t0, Some(spec.ramp))
        } else {
            ("run", now - measure_start, if let RunLength::Time(d) = spec.run { Some(d) } else { None })
        };
        let last_done = (now.saturating_duration_since(measure_start).as_secs() as u32).checked_sub(1);
        let figures = last_done
            .and_then(|i| slices.get(&i))
            .map(|s| (s.ios_read + s.ios_written, s.bytes_read + s.bytes_written, s.latency.quantile_ns(0.99)));
        if shown != Some((phase, elapsed.as_secs())) {
            shown = Some((phase, elapsed.as_secs()));
            let (ios, bytes, p99) = figures.unwrap_or((0, 0, 0));
            live.update(&LiveFigures {
                point: position.index + 1,
                points: position.count,
                label: position.label,
                phase,
                elapsed,
                total,
                iops: ios as f64,
                mbps: bytes as f64 / 1e6,
                p99_us: p99 as f64 / 1e3,
            });
        }
    };
    ctl.stop.store(true, Ordering::SeqCst);
    let cpu_end = cpu::snapshot();
    let outcomes: Vec<WorkerOutcome> = handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect();
    for slice in rx.try_iter() {
        merge_slice(&mut slices, slice);
    }

    // With an I/O count the interval ends at the last measured completion.
    let t_end = if end.is_none() { outcomes.iter().filter_map(|o| o.last_measured).max().unwrap_or(t_end) } else { t_end };
    let duration_s = t_end.saturating_duration_since(measure_start).as_secs_f64();
    let unix_start = crate::metrics::power::unix_now() - Instant::now().saturating_duration_since(measure_start).as_secs_f64();
    let usage = cpu_start.map(|a| cpu::usage_between(&a, &cpu_end)).unwrap_or_default();

    let mut total = Recorder::default();
    let mut by_group = vec![Recorder::default(); spec.groups.len()];
    for o in &outcomes {
        total += &o.recorder;
        by_group[o.group] += &o.recorder;
    }
    let reason = outcomes
        .iter()
        .find_map(|o| o.failure.clone())
        .or_else(|| (status == Status::Interrupted).then(|| "interrupted by a signal (Ctrl-C)".to_string()));
    if reason.is_some() && status == Status::Completed {
        status = Status::Failed;
    }
    let slices = fill_gaps(slices, duration_s);
    let mut summary = summarize(&total, &slices, &usage, duration_s);
    if shared.verify.is_some() {
        summary.verify = Some(total.verify.clone());
    }
    summary.intervals.retain(|i| i.t_s < duration_s);
    let groups = if spec.groups.len() > 1 {
        spec.groups.iter().zip(&by_group).map(|(g, r)| group_summary(&g.name, spec.group_workers(g), r, duration_s)).collect()
    } else {
        Vec::new()
    };
    super::paced_outcome::add(spec, &total, &by_group, &mut summary, &groups);
    let mut groups = groups;
    super::paced_outcome::add_follow_ratios(spec, &mut groups);
    PointOutcome {
        point: Point { params, summary, groups, repeats: None, verdict: None, workload: Some(spec.clone()) },
        status,
        reason,
        span: (unix_start, unix_start + duration_s),
    }
}

fn merge_slice(slices: &mut BTreeMap<u32, IntervalSlice>, slice: IntervalSlice) {
    slices.entry(slice.index).or_insert_with(|| IntervalSlice::new(slice.index)).merge(&slice);
}

/// Every second of the measured interval gets an entry: a second in which no
/// I/O completed (a stalled device) shows as zero, not as a missing row.
fn fill_gaps(mut slices: BTreeMap<u32, IntervalSlice>, duration_s: f64) -> Vec<IntervalSlice> {
    let seconds = duration_s.ceil() as u32;
    for i in 0..seconds {
        slices.entry(i).or_insert_with(|| IntervalSlice::new(i));
    }
    slices.into_values().collect()
}
