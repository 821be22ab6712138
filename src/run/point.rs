//! Runs one point: spawns the workers, releases them together, takes CPU
//! snapshots at the edges of the measured interval, tells the observer each
//! one-second slice (`tick`: the live view), and merges the recorders into the
//! point's summary.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use std::{panic, thread};

use super::control::Control;
use super::live::{LiveFigures, MeasuredSecond, SecondFigures};
use super::observer::RunObserver;
use super::pacing::Pacing;
use super::progress::{Progress, WorkerSecond};
use super::worker::{run_worker, Report, WorkerOutcome, WorkerPlan};
use crate::metrics::{cpu, IntervalSlice};
use crate::results::model::{Interval, Status};
use crate::results::stall::InFlightAtEnd;
use crate::results::summarize::SHORTEST_ROW_S;
use crate::targets::OpenTarget;
use crate::workload::WorkloadSpec;

pub use super::outcome::{Measured, PointOutcome};

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
    /// With --continue-on-error: count I/O errors and go on.
    pub continue_on_error: bool,
    /// Under MPI: the processes whose points start together (a barrier before the workers are released).
    pub cluster: Option<super::cluster::ClusterRef>,
    /// With --cpus: the CPUs workers are pinned to, and how.
    pub pinning: Option<crate::workload::cpus::Pinning>,
    /// The queue depth asked for per group, before an engine limited it (the
    /// depth each worker's achieved depth is compared with); empty: the spec's.
    pub asked_qd: Vec<u32>,
    /// With --replay: the trace the (one) worker issues.
    pub replay: Option<Arc<super::replay::ReplayPlan>>,
}

pub fn worker_plans(spec: &WorkloadSpec, shared: &PointShared) -> Vec<WorkerPlan> {
    let mut plans = Vec::new();
    // One completion counter per group that another group follows.
    let counters: Vec<Option<Arc<AtomicU64>>> = spec
        .groups
        .iter()
        .map(|g| spec.groups.iter().any(|o| o.follow.as_ref().is_some_and(|f| f.group == g.name)).then(|| Arc::new(AtomicU64::new(0))))
        .collect();
    let data = super::data_fill::DataSource::for_spec(spec);
    for (gi, g) in spec.groups.iter().enumerate() {
        let targets = spec.group_targets(g);
        let workers = spec.group_workers(g);
        let pacing = match (g.rate, &g.follow) {
            (Some(rate), _) if g.arrivals == crate::workload::timing::Arrivals::Poisson => {
                Pacing::Poisson { mean: Duration::from_secs_f64(workers as f64 / rate), seed: spec.seed, stream: 0 }
            }
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
                delay: spec.group_start(g),
                ramp: spec.ramp,
                run: spec.group_run(g),
                // Each worker draws its own Poisson gaps.
                pacing: match &pacing {
                    Pacing::Poisson { mean, seed, .. } => Pacing::Poisson { mean: *mean, seed: *seed, stream: plans.len() as u64 },
                    p => p.clone(),
                },
                publish: counters[gi].clone(),
                verify: shared.verify.clone(),
                trace: shared.trace.clone(),
                connections: spec.connections,
                continue_on_error: shared.continue_on_error,
                think: crate::workload::spec::think_rules(g),
                cpus: super::pinning::worker_cpus(shared.pinning.as_ref(), plans.len()),
                replay: shared.replay.clone(),
                data: data.clone(),
                sync: spec.sync,
                polling: spec.polling,
                part: spec.worker_part(g, w),
            });
        }
    }
    plans
}

/// Runs the point on its opened targets and returns what it measured;
/// `assemble::point` builds its result from that.
pub fn run_point(
    spec: &WorkloadSpec,
    params: BTreeMap<String, serde_json::Value>,
    targets: Vec<OpenTarget>,
    position: PointPosition,
    observer: &mut dyn RunObserver,
    interrupt: &AtomicBool,
    shared: &PointShared,
) -> Ran {
    let mut crew = Crew::spawn(spec, shared, targets);
    if let Some(c) = &shared.cluster {
        c.get().barrier();
    }
    let t0 = crew.ctl.start();
    let edges = Edges::of(spec, t0);
    let mut watch = Watch::new(spec, edges, crew.outcomes.len(), interrupt, shared);
    let worker_targets = crew.shapes.iter().map(|(_, targets, _)| targets.clone()).collect();
    let mut view = PointView { observer, position: &position, spec, worker_targets };
    // The watch reads no clock itself: each pass is given its time, so its
    // decisions can be driven from a test.
    let t_end = loop {
        let now = Instant::now();
        if let Some(end) = watch.check(&crew, now) {
            break end;
        }
        let wait = watch.wait(now);
        crew.receive(&mut watch.progress, wait);
        if let Some(end) = watch.seen(&mut crew, &mut view, Instant::now()) {
            break end;
        }
    };
    crew.ctl.stop.store(true, Ordering::SeqCst);
    let cpu_end = cpu::snapshot();
    let stopped = Instant::now();
    crew.drain(&mut watch.progress, stopped);
    let mut ended = Ended::of(crew, watch, t_end, stopped);
    ended.show_last_seconds(&mut view);
    ended.into_ran(params, cpu_end)
}

/// The workers of a point, spawned and waiting at the start gate, and what each yields.
struct Crew {
    ctl: Arc<Control>,
    targets: Arc<Vec<OpenTarget>>,
    rx: mpsc::Receiver<Report>,
    done_rx: mpsc::Receiver<(u32, WorkerOutcome)>,
    outcomes: Vec<Option<WorkerOutcome>>,
    /// What the per-worker figures need of each plan once the plans have moved into their threads.
    shapes: Vec<(usize, Vec<usize>, Vec<u32>)>,
}

impl Crew {
    fn spawn(spec: &WorkloadSpec, shared: &PointShared, targets: Vec<OpenTarget>) -> Crew {
        let plans = worker_plans(spec, shared);
        let shapes = plans.iter().map(|p| (p.group, p.targets.clone(), p.cpus.clone().unwrap_or_default())).collect();
        let (tx, rx) = mpsc::channel::<Report>();
        let (done_tx, done_rx) = mpsc::channel::<(u32, WorkerOutcome)>();
        let mut crew = Crew {
            ctl: Arc::new(Control::new(plans.len())),
            targets: Arc::new(targets),
            rx,
            done_rx,
            outcomes: (0..plans.len()).map(|_| None).collect(),
            shapes,
        };
        for plan in plans {
            let (index, group) = (plan.index, plan.group);
            let (targets, ctl2, tx, done_tx) = (crew.targets.clone(), crew.ctl.clone(), tx.clone(), done_tx.clone());
            let ticket = crew.ctl.ticket();
            let spawned = thread::Builder::new().name(format!("lunmark-w{index}")).spawn(move || {
                // A panic fails the point with its message instead of leaving the
                // main thread waiting for a worker that is gone.
                let outcome = panic::catch_unwind(panic::AssertUnwindSafe(|| run_worker(plan, targets, ctl2.clone(), ticket, tx)))
                    .unwrap_or_else(|payload| {
                        ctl2.fail();
                        WorkerOutcome::failed(group, format!("worker {index} failed: {}", panic_text(payload.as_ref())))
                    });
                let _ = done_tx.send((index, outcome));
            });
            // A thread that could not start dropped its ticket: the start gate counts it as gone.
            if let Err(e) = spawned {
                crew.ctl.fail();
                crew.outcomes[index as usize] = Some(WorkerOutcome::failed(group, format!("could not start worker thread {index}: {e}")));
            }
        }
        crew
    }

    /// Collects the workers that ended (with an I/O count they end on their own).
    /// Takes the workers' reports: waits up to `wait` for the first, then
    /// takes what else has come.
    fn receive(&mut self, progress: &mut Progress, wait: Duration) {
        if let Ok(r) = self.rx.recv_timeout(wait) {
            progress.add(r);
        }
        while let Ok(r) = self.rx.try_recv() {
            progress.add(r);
        }
    }

    fn collect_ended(&mut self, progress: &mut Progress) {
        while let Ok((w, o)) = self.done_rx.try_recv() {
            progress.worker_ended(w);
            self.outcomes[w as usize] = Some(o);
        }
    }

    /// Waits for the stopped workers. They see the stop within a wait slice,
    /// wait at most DRAIN_BUDGET for what is in flight, and end. After
    /// STOP_BUDGET, one that has not drained and shows no heartbeat (stuck in a
    /// system call on a stalled device) is left behind, so the run still ends
    /// on time; one that still beats (only descheduled on a busy machine) is
    /// waited for up to STOP_CAP; one that drained and is still writing a cache
    /// back is waited for. A second signal stops all waiting.
    fn drain(&mut self, progress: &mut Progress, stopped: Instant) {
        let hurry = super::signals::hurry_flag();
        loop {
            let waiting: Vec<usize> = (0..self.outcomes.len()).filter(|&w| self.outcomes[w].is_none()).collect();
            if waiting.is_empty() {
                break;
            }
            if hurry.load(Ordering::Relaxed) {
                self.ctl.hurry.store(true, Ordering::SeqCst);
            }
            if !self.ctl.keep_waiting(&waiting, stopped, Instant::now()) {
                break;
            }
            if let Ok((w, o)) = self.done_rx.recv_timeout(Duration::from_millis(20)) {
                progress.worker_ended(w);
                self.outcomes[w as usize] = Some(o);
            }
        }
        for r in self.rx.try_iter() {
            progress.add(r);
        }
    }
}

/// The point's edges in time: when measuring starts and (for a time) ends.
#[derive(Clone, Copy)]
struct Edges {
    t0: Instant,
    measure_start: Instant,
    end: Option<Instant>,
    /// Whole seconds planned (u32::MAX for an I/O count).
    planned_seconds: u32,
}

impl Edges {
    fn of(spec: &WorkloadSpec, t0: Instant) -> Edges {
        let measure_start = t0 + spec.ramp;
        // Groups that start late end that much later: the point measures until the last one ends.
        match spec.planned_span() {
            Some(d) => Edges { t0, measure_start, end: Some(measure_start + d), planned_seconds: d.as_secs_f64().ceil() as u32 },
            None => Edges { t0, measure_start, end: None, planned_seconds: u32::MAX },
        }
    }
}

/// The main thread's watch over a running point: it takes the CPU snapshot
/// at the measured start, shows each second, and decides when the point ends
/// (its plan, a stop, a failure, steady state). Time is passed in.
struct Watch<'a> {
    spec: &'a WorkloadSpec,
    edges: Edges,
    interrupt: &'a AtomicBool,
    shared: &'a PointShared,
    /// A stop that came while the workers set up (a large file filled, a LUN
    /// allocated) leaves nothing to measure, ramp or not: the point measures
    /// nothing and is dropped, not kept as a few microseconds of figures.
    stopped_in_set_up: bool,
    cpu_start: Option<cpu::CpuSnapshot>,
    progress: Progress,
    ramp_shown: Option<u64>,
    silence_shown: Option<u64>,
    status: Status,
    ran_out: bool,
    /// With --steady: the point ends once the last window of rounds is steady.
    steady: Option<super::steady::SteadyTracker>,
}

impl<'a> Watch<'a> {
    fn new(spec: &'a WorkloadSpec, edges: Edges, workers: usize, interrupt: &'a AtomicBool, shared: &'a PointShared) -> Watch<'a> {
        Watch {
            spec,
            edges,
            interrupt,
            shared,
            stopped_in_set_up: interrupt.load(Ordering::SeqCst),
            cpu_start: None,
            progress: Progress::new(workers),
            ramp_shown: None,
            silence_shown: None,
            status: Status::Completed,
            ran_out: false,
            steady: spec.steady.as_ref().map(super::steady::SteadyTracker::new),
        }
    }

    /// The watch at `now`, before waiting: the CPU snapshot once the
    /// measured interval starts; Some(the measured end) when the point ends.
    fn check(&mut self, crew: &Crew, now: Instant) -> Option<Instant> {
        if self.cpu_start.is_none() && now >= self.edges.measure_start {
            self.cpu_start = Some(cpu::snapshot());
        }
        self.ends(crew, now)
    }

    /// How long to wait for the workers' reports at `now`: until the next
    /// edge (measure start, end), or 100 ms for the live view.
    fn wait(&self, now: Instant) -> Duration {
        let Edges { measure_start, end, .. } = self.edges;
        let next_edge = if now < measure_start { Some(measure_start) } else { end };
        next_edge
            .map(|e| e.saturating_duration_since(now))
            .unwrap_or(Duration::MAX)
            .min(Duration::from_millis(100))
            .max(Duration::from_millis(1))
    }

    /// The reports received up to `now`, seen: each second shown, steady
    /// state judged; Some(now) when the point is steady.
    fn seen(&mut self, crew: &mut Crew, view: &mut PointView, now: Instant) -> Option<Instant> {
        crew.collect_ended(&mut self.progress);
        self.show(view, now, crew.outcomes.len());
        self.steady.as_ref().is_some_and(|t| t.reached()).then_some(now)
    }

    /// Whether the point ends at `now`, and its measured end if so.
    fn ends(&mut self, crew: &Crew, now: Instant) -> Option<Instant> {
        // Past the planned end the point has run its whole time: a signal the
        // loop sees only now (it came during the last wait, or this thread was
        // descheduled past the end) cuts nothing short, and the measured
        // window ends at the plan, as the workers' own does.
        if let Some(e) = self.edges.end.filter(|&e| now >= e && !crew.ctl.failed.load(Ordering::SeqCst)) {
            return Some(e);
        }
        if self.interrupt.load(Ordering::Relaxed) {
            self.status = Status::Interrupted;
            crew.ctl.stop.store(true, Ordering::SeqCst);
            return Some(if self.stopped_in_set_up { self.edges.measure_start.min(now) } else { now });
        }
        if crew.ctl.failed.load(Ordering::SeqCst) {
            self.status = Status::Failed;
            return Some(now);
        }
        // Under MPI: another rank's point failed, and the cluster's result will say which; this one ends here.
        if self.shared.cluster.as_ref().is_some_and(|c| c.get().stop_requested()) {
            crew.ctl.stop.store(true, Ordering::SeqCst);
            return Some(now);
        }
        // With an I/O count workers end on their own; so does a replay that ran out of records.
        if crew.outcomes.iter().all(Option::is_some) {
            self.ran_out = self.edges.end.is_some();
            return Some(now);
        }
        None
    }

    /// The live view at `now`: the ramp's seconds, each measured second that
    /// every worker has reported, and workers gone silent.
    fn show(&mut self, view: &mut PointView, now: Instant, workers: usize) {
        let Edges { t0, measure_start, planned_seconds, .. } = self.edges;
        // The ramp counts the seconds it completed, from 1, as the run does ("ramp 1s/2s, 2s/2s").
        let ramp_done = now.min(measure_start).saturating_duration_since(t0).as_secs();
        if ramp_done > 0 && self.ramp_shown.is_none_or(|shown| shown < ramp_done) {
            self.ramp_shown = Some(ramp_done);
            view.ramp(Duration::from_secs(ramp_done));
        }
        // Only seconds that have ended can be complete (an --ios run has no planned end).
        let ended = now.saturating_duration_since(measure_start).as_secs().min(u32::MAX as u64) as u32;
        for slice in self.progress.complete(planned_seconds.min(ended)) {
            if let Some(t) = self.steady.as_mut() {
                t.add(&slice);
            }
            let workers = self.progress.take_workers(slice.index);
            view.second(&slice, &workers, planned_duration(self.spec), self.progress.in_flight(), now);
        }
        // A worker blocked inside a system call cannot report its seconds, which
        // holds every line back: say so rather than show nothing.
        if now >= measure_start + SILENCE {
            let second = (now - measure_start).as_secs();
            let silent = self.progress.silent(measure_start, now - SILENCE);
            if silent > 0 && self.silence_shown != Some(second) {
                self.silence_shown = Some(second);
                view.silent(Duration::from_secs(second), silent, workers);
            }
        }
    }
}

/// What a point's run measured, before any figure is derived from it: the
/// workers' outcomes, the one-second slices, the CPU snapshots at the edges of
/// the measured interval, how it ended. `assemble::point` builds the result.
pub struct Ran {
    pub params: BTreeMap<String, serde_json::Value>,
    pub outcomes: Vec<WorkerOutcome>,
    /// The point's targets, as the workers drove them.
    pub targets: Arc<Vec<OpenTarget>>,
    /// Per worker: its group, its targets and its CPUs.
    pub shapes: Vec<(usize, Vec<usize>, Vec<u32>)>,
    /// The workers that ended (`present[k]` is the index of `outcomes[k]`).
    pub present: Vec<usize>,
    pub status: Status,
    pub reason: Option<String>,
    pub in_flight: InFlightAtEnd,
    /// With --steady: what the tracker saw.
    pub steady: Option<super::steady::SteadyTracker>,
    /// One per second of the measured interval (a second without a completion is a zero slice).
    pub slices: Vec<IntervalSlice>,
    /// CPU at the measured start (None: the point never reached it) and at its end.
    pub cpu_start: Option<cpu::CpuSnapshot>,
    pub cpu_end: cpu::CpuSnapshot,
    pub measure_start: Instant,
    pub duration_s: f64,
}

/// A point whose workers have ended (or were left behind): what it measured.
struct Ended<'a> {
    watch: Watch<'a>,
    crew_targets: Arc<Vec<OpenTarget>>,
    shapes: Vec<(usize, Vec<usize>, Vec<u32>)>,
    /// Workers that did not stop in time (left behind), and those that ended.
    missing: Vec<usize>,
    present: Vec<usize>,
    outcomes: Vec<WorkerOutcome>,
    t_end: Instant,
    duration_s: f64,
    /// When the workers were told to stop.
    stopped: Instant,
}

impl<'a> Ended<'a> {
    fn of(crew: Crew, mut watch: Watch<'a>, t_end: Instant, stopped: Instant) -> Ended<'a> {
        let missing: Vec<usize> = crew.outcomes.iter().enumerate().filter(|(_, o)| o.is_none()).map(|(i, _)| i).collect();
        let present: Vec<usize> = crew.outcomes.iter().enumerate().filter(|(_, o)| o.is_some()).map(|(i, _)| i).collect();
        let outcomes: Vec<WorkerOutcome> = crew.outcomes.into_iter().flatten().collect();
        // With an I/O count: every worker had measured all of its I/Os before the
        // stop was seen (the loop notices ended workers only between waits), so
        // the point ran its whole plan.
        if watch.status == Status::Interrupted && missing.is_empty() && !outcomes.is_empty() && outcomes.iter().all(|o| o.counted_all) {
            watch.status = Status::Completed;
        }
        // With an I/O count the interval ends at the last measured completion.
        let t_end = if watch.edges.end.is_none() || watch.ran_out {
            outcomes.iter().filter_map(|o| o.last_measured).max().unwrap_or(t_end)
        } else {
            t_end
        };
        let duration_s = t_end.saturating_duration_since(watch.edges.measure_start).as_secs_f64();
        Ended { watch, crew_targets: crew.targets, shapes: crew.shapes, missing, present, outcomes, t_end, duration_s, stopped }
    }

    /// The seconds not shown yet (the last ones end only when the workers stop);
    /// with a worker left behind they would be incomplete, so they are not shown.
    fn show_last_seconds(&mut self, view: &mut PointView) {
        if !self.missing.is_empty() {
            return;
        }
        let duration_s = self.duration_s;
        for slice in self.watch.progress.complete(duration_s.ceil() as u32) {
            // A whole second that ended with the point still counts for steady state.
            if let Some(t) = self.watch.steady.as_mut().filter(|_| (slice.index + 1) as f64 <= duration_s + 1e-6) {
                t.add(&slice);
            }
            // A last second shorter than a row is stored folded into the one before, already shown.
            let folded = slice.index > 0 && crate::results::summarize::row_length(&slice, duration_s) < SHORTEST_ROW_S;
            let workers = self.watch.progress.take_workers(slice.index);
            if !folded {
                view.second(&slice, &workers, duration_s, self.watch.progress.in_flight(), self.t_end);
            }
        }
    }

    /// I/Os still in flight at the end; a worker left behind counts with what
    /// it last reported in flight, all abandoned.
    fn in_flight_at_end(&self) -> InFlightAtEnd {
        let stuck: Vec<(u32, Option<Instant>)> = self.missing.iter().map(|&w| self.watch.progress.last_in_flight(w)).collect();
        let outcomes: Vec<&WorkerOutcome> =
            self.outcomes.iter().enumerate().filter(|(k, _)| !self.ended_before_the_point(*k)).map(|(_, o)| o).collect();
        InFlightAtEnd {
            ios: outcomes.iter().map(|o| o.in_flight_at_end).chain(stuck.iter().map(|s| s.0 as u64)).sum(),
            oldest_s: outcomes
                .iter()
                .filter_map(|o| o.oldest_in_flight)
                .chain(stuck.iter().filter_map(|s| s.1))
                .min()
                .map(|o| self.t_end.saturating_duration_since(o).as_secs_f64()),
            abandoned: outcomes.iter().map(|o| o.abandoned).chain(stuck.iter().map(|s| s.0 as u64)).sum(),
        }
    }

    /// Whether `outcomes[k]`'s group ran its whole time and ended before the
    /// point did (it started earlier than a group that starts late): what it
    /// had in flight at its own end was not outstanding at the point's.
    fn ended_before_the_point(&self, k: usize) -> bool {
        let spec = self.watch.spec;
        let group = &spec.groups[self.shapes[self.present[k]].0];
        spec.planned_window(group).is_some_and(|(_, end)| end.as_secs_f64() < self.duration_s - 1e-3)
    }

    /// What the point measured, for the assembler: a failure's or a stop's
    /// reason fails or interrupts it, the slices fill every second.
    fn into_ran(mut self, params: BTreeMap<String, serde_json::Value>, cpu_end: cpu::CpuSnapshot) -> Ran {
        let reason = self.reason();
        let mut status = self.watch.status;
        if reason.is_some() && status == Status::Completed {
            status = Status::Failed;
        }
        let in_flight = self.in_flight_at_end();
        let slices = fill_gaps(std::mem::replace(&mut self.watch.progress, Progress::new(0)).into_slices(), self.duration_s);
        Ran {
            params,
            outcomes: self.outcomes,
            targets: self.crew_targets,
            shapes: self.shapes,
            present: self.present,
            status,
            reason,
            in_flight,
            steady: self.watch.steady.take(),
            slices,
            cpu_start: self.watch.cpu_start.take(),
            cpu_end,
            measure_start: self.watch.edges.measure_start,
            duration_s: self.duration_s,
        }
    }

    /// Why the point did not complete: a worker's failure, workers left behind, or the stop.
    fn reason(&self) -> Option<String> {
        let left_behind = (!self.missing.is_empty()).then(|| {
            format!(
                "{} of {} workers did not stop within {:.1} s of the end (stuck in a system call on a stalled target?): their figures are missing",
                self.missing.len(),
                self.missing.len() + self.present.len(),
                self.stopped.elapsed().as_secs_f64()
            )
        });
        self.outcomes
            .iter()
            .find_map(|o| o.failure.clone())
            .or(left_behind)
            .or_else(|| (self.watch.status == Status::Interrupted).then(super::signals::reason))
    }
}

/// How long a worker may go without reporting before the live view says so
/// (it reports at least once a second while it can).
const SILENCE: Duration = Duration::from_millis(2000);

/// The planned measured span (infinite for an I/O count).
fn planned_duration(spec: &WorkloadSpec) -> f64 {
    spec.planned_span().map_or(f64::INFINITY, |d| d.as_secs_f64())
}

/// What a panic said, for the failure reason.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Turns the point's progress into live-view figures for the observer.
struct PointView<'a, 'o> {
    observer: &'a mut (dyn RunObserver + 'o),
    position: &'a PointPosition<'a>,
    spec: &'a WorkloadSpec,
    /// Each worker's targets (indices into the spec's), to tell each target's share of a second.
    worker_targets: Vec<Vec<usize>>,
}

impl PointView<'_, '_> {
    fn ramp(&mut self, elapsed: Duration) {
        self.observer.tick(&LiveFigures {
            point: self.position.index + 1,
            points: self.position.count,
            label: self.position.label,
            phase: "ramp",
            elapsed,
            total: Some(self.spec.ramp),
            second: None,
            stall: None,
            measured: None,
        });
    }

    fn silent(&mut self, elapsed: Duration, silent: usize, workers: usize) {
        self.observer.tick(&LiveFigures {
            point: self.position.index + 1,
            points: self.position.count,
            label: self.position.label,
            phase: "run",
            elapsed,
            total: self.spec.planned_span(),
            second: None,
            stall: Some(format!(
                "STALLED: {silent} of {workers} workers silent for over {:.1} s (blocked in the kernel on the target)",
                SILENCE.as_secs_f64()
            )),
            measured: None,
        });
    }

    /// A second every worker has reported, with the figures the result stores for it.
    fn second(
        &mut self,
        slice: &IntervalSlice,
        workers: &[WorkerSecond],
        duration_s: f64,
        in_flight: (u64, Option<Instant>),
        now: Instant,
    ) {
        let figures = crate::results::summarize::interval(slice, duration_s);
        let measured = MeasuredSecond {
            interval: figures.clone(),
            slice: slice.clone(),
            workers: workers.iter().map(|w| (w.worker, crate::results::summarize::interval(&w.slice, duration_s))).collect(),
            in_flight: in_flight.0,
            targets: self.spec.targets.clone(),
            per_target: self.per_target(workers, duration_s),
            ranks: Vec::new(),
            ranks_missing: Vec::new(),
        };
        let (n, oldest) = in_flight;
        let age = oldest.map(|o| now.saturating_duration_since(o).as_secs_f64()).unwrap_or(0.0);
        // An I/O outstanding for a second or more.
        let stall = (n > 0 && age >= 1.0).then(|| format!("STALLED: {} in flight, oldest {age:.1} s", crate::units::counted(n, "I/O")));
        self.observer.tick(&LiveFigures {
            point: self.position.index + 1,
            points: self.position.count,
            label: self.position.label,
            phase: "run",
            elapsed: Duration::from_secs_f64(figures.t_s + figures.duration_s),
            total: self.spec.planned_span(),
            second: Some(SecondFigures { iops: figures.iops, mbps: figures.mbps, p99_us: figures.lat_p99_us }),
            stall,
            measured: Some(&measured),
        });
    }
}

impl PointView<'_, '_> {
    /// Each target's share of a second, in the order of the spec's targets: a
    /// worker with one target gives it its whole slice, one with several its
    /// per-target slices. A target on which nothing completed in the second is
    /// told too, with zeros: each target is at its own index.
    fn per_target(&self, workers: &[WorkerSecond], duration_s: f64) -> Vec<(String, Interval, IntervalSlice)> {
        let index = workers.first().map_or(0, |w| w.slice.index);
        let mut slices: BTreeMap<usize, IntervalSlice> = (0..self.spec.targets.len()).map(|t| (t, IntervalSlice::new(index))).collect();
        for w in workers {
            let Some(mine) = self.worker_targets.get(w.worker as usize) else { continue };
            let each: Vec<(&usize, &IntervalSlice)> = match mine.as_slice() {
                [one] => vec![(one, &w.slice)],
                _ => mine.iter().zip(&w.targets).collect(),
            };
            for (t, s) in each {
                slices.entry(*t).or_insert_with(|| IntervalSlice::new(index)).merge(s);
            }
        }
        let each = slices.into_iter().map(|(t, slice)| {
            let uri = self.spec.targets.get(t).cloned().unwrap_or_default();
            (uri, crate::results::summarize::interval(&slice, duration_s), slice)
        });
        each.collect()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The point's own figures, as the assembler builds them from what it measured.
    fn figures(spec: &WorkloadSpec, ran: Ran) -> PointOutcome {
        super::super::assemble::measured_figures(spec, &PointShared::default(), ran)
    }

    /// One group of workers runs on mem:, the other cannot allocate its buffers
    /// (1 TiB) and panics before the start gate: the point fails with the panic's
    /// message instead of leaving the main thread waiting for a worker that is gone.
    #[test]
    fn a_worker_that_panics_fails_the_point_with_its_message() {
        let spec: WorkloadSpec = serde_json::from_value(serde_json::json!({
            "targets": ["mem:1m"], "ramp": "0s", "run": {"time": "1s"}, "seed": 1,
            "groups": [
                {"name": "fine", "workers": 1, "qd": 1, "access": [{"share": 100.0, "bs": "4k", "read": 100.0, "random": 100.0}]},
                {"name": "huge", "workers": 1, "qd": 1048576, "access": [{"share": 100.0, "bs": "1m", "read": 100.0, "random": 100.0}]}
            ]
        }))
        .unwrap();
        let targets = crate::targets::open_all(&spec, Default::default(), &mut Default::default()).unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let position = PointPosition { index: 0, count: 1, label: "" };
            let o = figures(
                &spec,
                run_point(
                    &spec,
                    BTreeMap::new(),
                    targets,
                    position,
                    &mut crate::run::NoObserver,
                    &AtomicBool::new(false),
                    &PointShared::default(),
                ),
            );
            let _ = tx.send((o.status, o.reason));
        });
        let (status, reason) = rx.recv_timeout(Duration::from_secs(20)).expect("the point ends despite the panic");
        assert_eq!(status, Status::Failed);
        let reason = reason.unwrap();
        assert!(reason.contains("worker 1 failed") && reason.contains("out of memory allocating"), "{reason}");
    }

    /// The watch waits for reports until the next edge of the point (the
    /// measured start, the planned end), never more than 100 ms (the live
    /// view) nor less than 1 ms: driven with made-up times, no clock read.
    #[test]
    fn the_watch_waits_until_the_next_edge_of_the_point() {
        let spec = mem_spec("1s", "2s");
        let (interrupt, shared) = (AtomicBool::new(false), PointShared::default());
        let t0 = Instant::now();
        let watch = Watch::new(&spec, Edges::of(&spec, t0), 1, &interrupt, &shared);
        let ms = Duration::from_millis;
        assert_eq!(watch.wait(t0), ms(100), "in the ramp, far from its end: the live view's 100 ms");
        assert_eq!(watch.wait(t0 + ms(970)), ms(30), "the measured start");
        assert_eq!(watch.wait(t0 + ms(2990)), ms(10), "the planned end");
        assert_eq!(watch.wait(t0 + ms(3000)), ms(1), "at the end: a pass without waiting");
    }

    /// What the live view was told: each tick's phase and elapsed time.
    #[derive(Default)]
    struct Ticks(Vec<(String, Duration, bool)>);
    impl RunObserver for Ticks {
        fn tick(&mut self, f: &LiveFigures<'_>) {
            self.0.push((f.phase.to_string(), f.elapsed, f.second.is_some()));
        }
    }

    fn mem_spec(ramp: &str, time: &str) -> WorkloadSpec {
        serde_json::from_value(serde_json::json!({
            "targets": ["mem:1m"], "ramp": ramp, "run": {"time": time}, "seed": 1,
            "groups": [{"name": "g", "workers": 1, "qd": 1, "access": [{"share": 100.0, "bs": "4k", "read": 100.0, "random": 100.0}]}]
        }))
        .unwrap()
    }

    /// Runs `spec` on mem:, setting the interrupt flag after `stop_after` if given.
    fn run_mem(spec: &WorkloadSpec, stop_after: Option<Duration>) -> (PointOutcome, Ticks) {
        let targets = crate::targets::open_all(spec, Default::default(), &mut Default::default()).unwrap();
        let interrupt = Arc::new(AtomicBool::new(false));
        if let Some(d) = stop_after {
            let flag = interrupt.clone();
            thread::spawn(move || {
                thread::sleep(d);
                flag.store(true, Ordering::SeqCst);
            });
        }
        let mut ticks = Ticks::default();
        let position = PointPosition { index: 0, count: 1, label: "" };
        let ran = run_point(spec, BTreeMap::new(), targets, position, &mut ticks, &interrupt, &PointShared::default());
        (figures(spec, ran), ticks)
    }

    /// The ramp counts the seconds it completed from 1, as the run does: a 2 s
    /// ramp says 1s, 2s (it said 0s, 1s), and the 1 s run says 1s.
    #[test]
    fn the_ramp_counts_completed_seconds_like_the_run() {
        let (_, ticks) = run_mem(&mem_spec("2s", "1s"), None);
        let seen: Vec<(&str, u64)> = ticks.0.iter().map(|(p, e, _)| (p.as_str(), e.as_secs())).collect();
        assert_eq!(seen, vec![("ramp", 1), ("ramp", 2), ("run", 1)]);
    }

    /// A live view that holds the main thread at its first measured second
    /// for `hold`, then sets the interrupt flag: as a thread descheduled on a
    /// busy host sees a Ctrl-C only after the point's plan was done.
    struct LateStop {
        hold: Duration,
        flag: Arc<AtomicBool>,
    }
    impl RunObserver for LateStop {
        fn tick(&mut self, f: &LiveFigures<'_>) {
            if f.second.is_some() && !self.flag.load(Ordering::SeqCst) {
                thread::sleep(self.hold);
                self.flag.store(true, Ordering::SeqCst);
            }
        }
    }

    fn run_late_stop(spec: &WorkloadSpec, hold: Duration) -> PointOutcome {
        let targets = crate::targets::open_all(spec, Default::default(), &mut Default::default()).unwrap();
        let flag = Arc::new(AtomicBool::new(false));
        let mut view = LateStop { hold, flag: flag.clone() };
        let position = PointPosition { index: 0, count: 1, label: "" };
        figures(spec, run_point(spec, BTreeMap::new(), targets, position, &mut view, &flag, &PointShared::default()))
    }

    /// The stop is seen 0.6 s past the planned 1.5 s: the point ran its whole
    /// time, so it is not cut short, and its measured window ends at the plan.
    #[test]
    fn a_stop_seen_after_the_planned_end_cuts_nothing_short() {
        let o = run_late_stop(&mem_spec("0s", "1500ms"), Duration::from_millis(1100));
        assert_eq!(o.status, Status::Completed, "{:?}", o.reason);
        assert!(o.point.cut_short.is_none() && o.reason.is_none(), "{:?}", o.point.cut_short);
        let s = &o.point.summary;
        assert_eq!(s.duration_s, 1.5);
        let last = s.intervals.last().unwrap();
        assert!((last.t_s + last.duration_s - 1.5).abs() < 1e-9, "{:?}", s.intervals);
    }

    /// An I/O count (150 at 100 IOPS: 1.5 s) measured whole before the stop
    /// was seen: not cut short either.
    #[test]
    fn a_stop_seen_after_the_whole_io_count_cuts_nothing_short() {
        let spec: WorkloadSpec = serde_json::from_value(serde_json::json!({
            "targets": ["mem:1m"], "ramp": "0s", "run": {"ios": 150}, "seed": 1,
            "groups": [{"name": "g", "workers": 1, "qd": 1, "rate": 100.0,
                "access": [{"share": 100.0, "bs": "4k", "read": 100.0, "random": 100.0}]}]
        }))
        .unwrap();
        let o = run_late_stop(&spec, Duration::from_millis(1100));
        assert_eq!(o.status, Status::Completed, "{:?}", o.reason);
        assert!(o.point.cut_short.is_none(), "{:?}", o.point.cut_short);
        assert_eq!(o.point.summary.ios_read, 150);
    }

    /// Stopped just after a second's edge: no stored row shorter than the
    /// threshold, the rows add up to the point's I/Os, and no measured second
    /// is shown twice with the same label.
    #[test]
    fn a_stop_just_after_a_second_leaves_no_short_row_and_no_repeated_line() {
        let (o, ticks) = run_mem(&mem_spec("0s", "10s"), Some(Duration::from_millis(1010)));
        assert_eq!(o.status, Status::Interrupted);
        let s = &o.point.summary;
        assert!(s.intervals.iter().all(|i| i.duration_s >= SHORTEST_ROW_S), "{:?}", s.intervals);
        let ios: f64 = s.intervals.iter().map(|i| i.iops * i.duration_s).sum();
        let total = (s.ios_read + s.ios_written) as f64;
        assert!((ios - total).abs() <= 1e-6 * total.max(1.0), "rows {ios} vs total {total}");
        // The live line shows a partial second's tenths: lines at least a row apart never share a label.
        let shown: Vec<f64> = ticks.0.iter().filter(|t| t.2).map(|t| t.1.as_secs_f64()).collect();
        assert!(shown.windows(2).all(|w| w[1] - w[0] >= SHORTEST_ROW_S), "each second is shown once: {shown:?}");
    }
}
