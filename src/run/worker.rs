//! One worker thread: owns its engine, its buffers and its recorder. It keeps
//! `qd` I/Os in flight per target, stamps each with its submit time, and records
//! completions that land inside the measured interval. Nothing on this path is
//! shared with other threads except a relaxed stop flag; one-second slices go to
//! the main thread through a channel once per second.
//!
//! The loop (`WorkerLoop`) does the same at each wake-up: reap, `complete`
//! each completion (verify, record, `issue` the slot's next I/O), report a
//! second that ended, issue what is due when paced. `fail` is the one way a
//! failure ends it. The engine is built by `engine::factory` for the kind of
//! the worker's targets.
//!
//! At the end it waits a bounded time (`DRAIN_BUDGET`) for what is still in
//! flight, then abandons it and says how many: a target that never answers
//! cannot hold the run past its planned end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::control::{Control, StartTicket, DRAIN_BUDGET};
use super::op_source::OpSource;
use super::pacing::{Pacer, Pacing};
use super::sync_clock::SyncClock;
use super::trace_sink;
use crate::engine::{self, completion_error, factory, BufferPool, CacheOutcome, Completion, Engine, EngineKind, IoRequest};
use crate::metrics::per_worker::{DepthMeter, TargetTally};
use crate::metrics::{IntervalSlice, IoErrorRecord, Recorder};
use crate::targets::OpenTarget;
use crate::trace::TraceRecord;
use crate::verify::{Verifier, VerifyShared, MAX_DRAWS};
use crate::workload::{AccessLine, EngineChoice, Generator, Op, RunLength};

/// What one worker is to do.
#[derive(Clone, Debug)]
pub struct WorkerPlan {
    pub group: usize,
    /// Position among all workers (seeds its generator stream).
    pub index: u32,
    /// Indexes into the run's open targets.
    pub targets: Vec<usize>,
    pub qd: u32,
    pub access: Vec<AccessLine>,
    pub seed: u64,
    pub engine: EngineChoice,
    /// How long after the point's start this worker starts (its group's start
    /// delay): its ramp and run count from then.
    pub delay: Duration,
    pub ramp: Duration,
    pub run: RunLength,
    pub pacing: Pacing,
    /// Where this worker adds its completions when another group follows its group.
    pub publish: Option<Arc<AtomicU64>>,
    /// Shared verification state, with --verify.
    pub verify: Option<Arc<VerifyShared>>,
    /// Where issued I/Os are recorded, with --trace.
    pub trace: Option<Arc<super::trace_sink::TraceSink>>,
    /// Connections per network target.
    pub connections: u32,
    /// Count I/O errors and go on, instead of ending the run at the first.
    pub continue_on_error: bool,
    /// Think time: pauses after bursts (src/workload/timing.rs); empty: none.
    pub think: Vec<crate::workload::timing::ThinkRule>,
    /// With --cpus: the CPUs this worker's thread is pinned to, before it allocates its buffers.
    pub cpus: Option<Vec<u32>>,
    /// With --replay: the trace this worker issues instead of generating I/Os.
    pub replay: Option<Arc<super::replay::ReplayPlan>>,
    /// With --compress/--dedupe: the point's shared source of written data.
    pub data: Option<Arc<super::data_fill::DataSource>>,
    /// A sync every N writes to each target (--fsync, --fdatasync, --flush).
    pub sync: Option<crate::workload::SyncEvery>,
    /// io_uring polling (--sqpoll, --poll).
    pub polling: crate::workload::polling::Polling,
    /// With the group's offset_increment: how far this worker's part starts
    /// into each target's region, and how much shorter than the region it is.
    pub part: Option<(u64, u64)>,
}

/// The access-line index of a sync's slot: no line's, so think time never counts it.
const SYNC_LINE: u16 = u16::MAX;

/// What a worker hands back when it ends.
pub struct WorkerOutcome {
    pub group: usize,
    pub recorder: Recorder,
    /// Completion time of the last measured I/O.
    pub last_measured: Option<Instant>,
    /// The error that ended this worker, if any.
    pub failure: Option<String>,
    /// I/Os in flight when the measured interval ended, and when the oldest of
    /// them was submitted.
    pub in_flight_at_end: u64,
    pub oldest_in_flight: Option<Instant>,
    /// I/Os that had still not completed when the worker stopped waiting for them.
    pub abandoned: u64,
    /// Each of its targets' part, in the order of `WorkerPlan::targets`.
    pub per_target: Vec<TargetTally>,
    /// The mean I/Os it held in flight over the measured interval.
    pub depth_mean: Option<f64>,
    /// With --replay: what the replay did.
    pub replay: Option<super::replay::ReplayTally>,
    /// It measured its whole I/O count (--ios): a stop that came after that cut nothing short.
    pub counted_all: bool,
}

impl WorkerOutcome {
    /// A worker that ended before measuring anything.
    pub fn failed(group: usize, failure: String) -> Self {
        WorkerOutcome {
            group,
            recorder: Recorder::default(),
            last_measured: None,
            failure: Some(failure),
            in_flight_at_end: 0,
            oldest_in_flight: None,
            abandoned: 0,
            per_target: Vec::new(),
            depth_mean: None,
            replay: None,
            counted_all: false,
        }
    }
}

#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    offset: u64,
    len: u32,
    target: u32,
    /// When the I/O was due: its submission, or its scheduled time when paced.
    due: Instant,
    submitted: Instant,
    /// Issued and not yet reaped.
    busy: bool,
    /// The access line that drew it (think time counts bursts per line).
    line: u16,
}

impl Slot {
    /// Bytes a successful completion reports: trims and syncs report none
    /// (engines return 0 for them, as fallocate, ioctl and fsync do).
    #[inline]
    fn expected(&self) -> u32 {
        match self.op {
            Op::Read | Op::Write => self.len,
            Op::Trim | Op::Sync | Op::DataSync => 0,
        }
    }
}

/// How long one wait for completions may block before the worker looks at the
/// stop flag and the clock again: bounds how late Ctrl-C or the end is noticed.
const WAIT_SLICE: Duration = Duration::from_millis(50);

/// What a worker tells the main thread each time a second of the measured
/// interval ends for it (a stalled worker still wakes every `WAIT_SLICE` and
/// reports its empty seconds), and once more when it stops.
pub struct Report {
    /// The worker's position among all workers.
    pub worker: u32,
    /// Its I/O in the second that just ended.
    pub slice: IntervalSlice,
    /// The same second split by the worker's targets (in the order of its
    /// plan's `targets`) when it drives several; empty when it drives one (its
    /// `slice` is that target's).
    pub targets: Vec<IntervalSlice>,
    /// Every second before this index is finished for this worker: nothing it
    /// reaps from now on can land there. `u32::MAX` in the worker's last report.
    pub done_below: u32,
    /// I/Os it had in flight when it reported, and when the oldest was submitted.
    pub in_flight: u32,
    pub oldest: Option<Instant>,
}

/// I/Os in flight in `slots`, and the submission time of the oldest one
/// submitted no later than `cutoff`: (count, oldest). O(slots): called once a
/// second and at the end, never per I/O.
fn in_flight_among(slots: &[Slot], cutoff: Instant) -> (u32, Option<Instant>) {
    let mut n = 0;
    let mut oldest: Option<Instant> = None;
    for s in slots.iter().filter(|s| s.busy && s.submitted <= cutoff) {
        n += 1;
        oldest = Some(oldest.map_or(s.submitted, |o| o.min(s.submitted)));
    }
    (n, oldest)
}

pub fn run_worker(
    plan: WorkerPlan,
    targets: Arc<Vec<OpenTarget>>,
    ctl: Arc<Control>,
    ticket: StartTicket,
    reports: Sender<Report>,
) -> WorkerOutcome {
    let mut outcome = WorkerOutcome {
        group: plan.group,
        recorder: Recorder::default(),
        last_measured: None,
        failure: None,
        in_flight_at_end: 0,
        oldest_in_flight: None,
        abandoned: 0,
        per_target: vec![TargetTally::default(); plan.targets.len()],
        depth_mean: None,
        replay: None,
        counted_all: false,
    };
    // Pinned before the buffers are allocated, so they are first touched on the
    // worker's own CPUs (and so sit on its NUMA node).
    let pinned = plan.cpus.as_deref().map(super::pinning::pin_this_thread).transpose();
    let mine: Vec<&OpenTarget> = plan.targets.iter().map(|&i| &targets[i]).collect();
    let nslots = plan.qd * mine.len() as u32;
    let max_bs =
        plan.access.iter().map(|l| l.bs.get()).max().unwrap_or(4096).max(plan.replay.as_ref().map_or(0, |r| r.max_len as u64)) as usize;
    let extra = factory::cache_slots(&mine, nslots);
    let pool = BufferPool::new((nslots + extra) as usize, max_bs, plan.seed ^ plan.index as u64);
    let engine = factory::kind_of(&mine, plan.engine).and_then(|kind| {
        if kind == EngineKind::Psync {
            super::fd_table::make_private()?;
        }
        factory::build(kind, &mine, pool, plan.connections, nslots, plan.polling)
    });
    // Every worker reaches the start gate, even a failed one, so nobody waits
    // forever (a panic before this point drops the ticket, which counts too).
    let t0 = ticket.wait_for_start();
    if let Err(e) = pinned {
        let why = format!("could not pin worker {} to CPUs {:?}: {e}", plan.index, plan.cpus.clone().unwrap_or_default());
        fail(&mut outcome, &ctl, why);
        return outcome;
    }
    let engine = match engine {
        Ok(e) => e,
        Err(e) => {
            let uris = mine.iter().map(|t| t.facts.uri.as_str()).collect::<Vec<_>>().join(", ");
            fail(&mut outcome, &ctl, format!("could not set up the engine for {uris}: {e}"));
            return outcome;
        }
    };
    let mut w = WorkerLoop::new(&plan, mine, &ctl, reports, engine, t0, outcome);
    if let Err(End(at)) = w.await_own_start() {
        return w.finish(at);
    }
    if w.fill().is_err() {
        // Nothing was measured: the failure is all there is to report.
        return w.outcome;
    }
    let stopped_at = loop {
        if let Err(End(at)) = w.turn() {
            break at;
        }
    };
    // Dropping the engine (in `finish`) with I/Os still in flight is safe: each
    // engine keeps (leaks) the buffers the kernel or its library may still write
    // into, and closes its ring or connections, which cancels what the target holds.
    w.finish(stopped_at)
}

/// Records why a worker failed and stops every worker: the one place a
/// failure is set.
#[cold]
fn fail(outcome: &mut WorkerOutcome, ctl: &Control, why: String) {
    outcome.failure = Some(why);
    ctl.fail();
}

/// The loop ends, at this time: the run is over, or it failed (the failure
/// is in the outcome).
struct End(Instant);

/// One worker's I/O loop: its state, and the steps each wake-up takes.
/// `issue` draws a slot's next I/O and queues it, `complete` handles one
/// completion (verify, record, issue the next), `settle` ends a completion that
/// is not measured, and `fail` ends the loop with a failure. Everything here is
/// the worker's own: no lock, and no allocation once it is built.
struct WorkerLoop<'a> {
    plan: &'a WorkerPlan,
    mine: Vec<&'a OpenTarget>,
    ctl: &'a Control,
    reports: Sender<Report>,
    engine: Box<dyn Engine>,
    gen: OpSource,
    pacer: Pacer,
    /// Slots wait for their I/O's due time (a rate, arrivals, think time, a replay's clock).
    paced: bool,
    /// Latency counts from the due time; service time from the submission.
    scheduled: bool,
    slots: Vec<Slot>,
    /// Paced: free slots waiting for their next I/O, by target (slot i drives
    /// target i % targets, as unpaced), and how many there are in all.
    idle: Vec<Vec<u32>>,
    idle_count: usize,
    /// Paced: the target whose turn it is to get the next due I/O. The turn goes
    /// round the targets, so each gets its share as each gets its slots unpaced.
    turn: usize,
    in_flight: usize,
    /// This wake-up's completions.
    done: Vec<Completion>,
    /// Behind a cache tier: what served each of `done` (hit or miss).
    cached: bool,
    outcomes: Vec<Option<CacheOutcome>>,
    verifier: Option<Verifier>,
    /// With --trace: issued I/Os not yet handed to the trace sink, and its start.
    traced: Vec<TraceRecord>,
    trace_start: Option<Instant>,
    /// Run-level index of each of the worker's targets.
    global_target: Vec<u16>,
    /// Only with --compress/--dedupe (never together with --verify, refused before the run).
    filler: Option<super::data_fill::DataFill>,
    sync_clock: Option<SyncClock>,
    /// When this worker starts: the point's start plus its group's delay.
    t0: Instant,
    measure_start: Instant,
    /// The point's measured start, which its seconds are counted from (the
    /// worker's own measured start unless its group starts late).
    seconds_from: Instant,
    end: Option<Instant>,
    io_limit: u64,
    /// With one target its tally is the recorder itself, filled at the end.
    split_targets: bool,
    measuring: bool,
    measured_ios: u64,
    depth: DepthMeter,
    slice: IntervalSlice,
    /// With several targets, the current second per target (indexed like
    /// `mine`): completions are recorded here and not in `slice`, which gets
    /// their sum when the second ends, so a completion costs one record either way.
    target_slices: Vec<IntervalSlice>,
    /// A second that ended at this wake-up (whole, per target), reported once
    /// this batch is handled (so the in-flight figures it carries are current).
    ended: Option<(IntervalSlice, Vec<IntervalSlice>)>,
    outcome: WorkerOutcome,
}

impl<'a> WorkerLoop<'a> {
    fn new(
        plan: &'a WorkerPlan,
        mine: Vec<&'a OpenTarget>,
        ctl: &'a Control,
        reports: Sender<Report>,
        engine: Box<dyn Engine>,
        t0: Instant,
        outcome: WorkerOutcome,
    ) -> Self {
        let ntargets = mine.len() as u32;
        let nslots = (plan.qd * ntargets) as usize;
        // Set up once per worker: the loop only ever sees its own regions.
        let regions = mine
            .iter()
            .map(|t| match plan.part {
                Some((shift, less)) => crate::workload::Region { start: t.region.start + shift, len: t.region.len.saturating_sub(less) },
                None => t.region,
            })
            .collect();
        // A group that starts late starts everything then: its pacing, its
        // moving distributions, its ramp and its run.
        let (t0, seconds_from) = (t0 + plan.delay, t0 + plan.ramp);
        let gen = match &plan.replay {
            Some(r) => OpSource::Replayed(super::replay::ReplayCursor::new(r.clone(), &plan.targets, regions, t0)),
            None => OpSource::Generated(Generator::new(plan.seed, plan.index as u64, &plan.access, regions)),
        };
        let measure_start = t0 + plan.ramp;
        let (end, io_limit) = match plan.run {
            RunLength::Time(d) => (Some(measure_start + d), u64::MAX),
            RunLength::Ios(n) => (None, n),
        };
        let pacer = Pacer::new(plan.pacing.clone(), t0).with_think(plan.think.clone(), t0);
        let paced = gen.paced(&pacer);
        // Think time alone holds slots back but counts latency from submission.
        let scheduled = gen.scheduled(&pacer);
        if paced {
            // The default 50 us timer slack would make every wait for a due I/O late,
            // and that lateness would count as latency from schedule.
            // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        }
        let now = Instant::now();
        let slots = (0..nslots as u32)
            .map(|slot| Slot { op: Op::Read, offset: 0, len: 0, target: slot % ntargets, due: now, submitted: now, busy: false, line: 0 })
            .collect();
        let cached = engine.has_cache();
        WorkerLoop {
            plan,
            ctl,
            reports,
            gen,
            pacer,
            paced,
            scheduled,
            slots,
            // Paced, room for every slot in each list: a replay's slot returns to
            // the list of the target it last served, and no push may allocate.
            // (Unpaced, slots rest here only at the end of an --ios run.)
            idle: vec![Vec::with_capacity(if paced { nslots } else { 0 }); ntargets as usize],
            idle_count: 0,
            // Workers sharing targets start at different ones: small totals spread too.
            turn: plan.index as usize % ntargets as usize,
            in_flight: 0,
            done: Vec::with_capacity(nslots),
            cached,
            outcomes: Vec::with_capacity(if cached { nslots } else { 0 }),
            verifier: plan.verify.clone().map(|v| Verifier::new(v, plan.targets.clone(), nslots)),
            traced: Vec::with_capacity(if plan.trace.is_some() { trace_sink::BATCH } else { 0 }),
            trace_start: plan.trace.as_ref().map(|t| t.start),
            global_target: plan.targets.iter().map(|&t| t as u16).collect(),
            filler: plan.data.clone().map(|d| super::data_fill::DataFill::new(d, plan.seed, plan.index)),
            sync_clock: SyncClock::new(plan.sync, mine.len()),
            t0,
            measure_start,
            seconds_from,
            end,
            io_limit,
            split_targets: ntargets > 1,
            measuring: false,
            measured_ios: 0,
            depth: DepthMeter::new(measure_start, end),
            slice: IntervalSlice::new(0),
            target_slices: if ntargets > 1 { vec![IntervalSlice::new(0); ntargets as usize] } else { Vec::new() },
            ended: None,
            outcome,
            engine,
            mine,
        }
    }

    /// Ends the loop with a failure (see the free `fail`).
    #[cold]
    fn fail(&mut self, why: String, at: Instant) -> End {
        fail(&mut self.outcome, self.ctl, why);
        End(at)
    }

    /// A worker whose group starts late waits here (fio's startdelay) before
    /// its first I/O. The point's seconds that pass meanwhile are reported
    /// empty, so this worker holds back neither the live view nor its stall watch.
    fn await_own_start(&mut self) -> Result<(), End> {
        loop {
            let now = Instant::now();
            if self.ctl.stop.load(Ordering::Relaxed) {
                return Err(End(now));
            }
            if now >= self.t0 {
                return Ok(());
            }
            self.ctl.beat(self.plan.index as usize, now);
            self.tick(now);
            if let Some((s, each)) = self.ended.take() {
                self.report(s, each, self.slice.index, now);
            }
            std::thread::sleep((self.t0 - now).min(WAIT_SLICE));
        }
    }

    /// Fills every slot before the first wait: an I/O each, or (paced) the idle
    /// list they are issued from when due.
    fn fill(&mut self) -> Result<(), End> {
        let now = Instant::now();
        let ntargets = self.mine.len() as u32;
        for slot in 0..self.slots.len() as u32 {
            // --ios N below the depth, no ramp: only N are issued (see `complete`).
            if self.paced || (now >= self.measure_start && u64::from(slot) >= self.io_limit) {
                self.idle[(slot % ntargets) as usize].push(slot);
                self.idle_count += 1;
            } else {
                self.submit(slot, slot % ntargets, now, now)?;
            }
        }
        self.idle.iter_mut().for_each(|slots| slots.reverse());
        Ok(())
    }

    /// One wake-up: wait for completions (or a paced I/O's due time), handle
    /// them, report a second that ended, issue what is due.
    fn turn(&mut self) -> Result<(), End> {
        self.done.clear();
        if let Some(Err(e)) = self.verifier.as_mut().map(|v| v.flush_journal()) {
            return Err(self.fail(format!("writing the verify journal failed: {e}"), Instant::now()));
        }
        let wait = if self.paced && self.idle_count > 0 {
            self.gen.wait(&self.pacer, Instant::now(), WAIT_SLICE).min(WAIT_SLICE)
        } else {
            WAIT_SLICE
        };
        if self.in_flight == 0 && self.paced {
            std::thread::sleep(wait);
        } else if let Err(e) = self.engine.reap(1, Some(wait), &mut self.done) {
            return Err(self.fail(named_once(&self.mine[0].facts.uri, "waiting for completions failed", &e), Instant::now()));
        }
        let now = Instant::now();
        self.ctl.beat(self.plan.index as usize, now);
        self.depth.advance(now, self.in_flight);
        self.in_flight -= self.done.len();
        if self.ctl.stop.load(Ordering::Relaxed) || self.end.is_some_and(|e| now >= e) {
            // Completions of this last batch are not measured.
            self.settle_from(0);
            return Err(End(now));
        }
        self.tick(now);
        if self.cached {
            self.engine.cache_outcomes(&self.done, &mut self.outcomes);
        }
        for k in 0..self.done.len() {
            if let Err(end) = self.complete(k, now) {
                self.settle_from(k + 1);
                return Err(end);
            }
        }
        if let Some((s, each)) = self.ended.take() {
            self.report(s, each, self.slice.index, now);
        }
        if self.traced.len() >= trace_sink::BATCH {
            if let Some(t) = &self.plan.trace {
                t.write(&mut self.traced);
            }
        }
        if let Some(counter) = &self.plan.publish {
            counter.fetch_add(self.done.len() as u64, Ordering::Relaxed);
        }
        self.issue_due(now)?;
        if self.in_flight == 0 && self.gen.exhausted() {
            // A replay whose last record has completed.
            return Err(End(now));
        }
        Ok(())
    }

    /// Starts measuring at the end of the ramp, and opens a new one-second
    /// slice when a second ended (`ended` keeps the old one until it is reported).
    #[inline]
    fn tick(&mut self, now: Instant) {
        if !self.measuring && now >= self.measure_start {
            self.measuring = true;
        }
        // A group that starts late ramps during the point's measured seconds,
        // and reports them (empty) as they pass.
        if now >= self.seconds_from {
            let index = now.duration_since(self.seconds_from).as_secs() as u32;
            if index != self.slice.index {
                self.ended = Some(self.take_second(index));
            }
        }
    }

    /// Ends the current second and opens second `next`: the ended one whole
    /// and per target. Once a second, never per I/O.
    fn take_second(&mut self, next: u32) -> (IntervalSlice, Vec<IntervalSlice>) {
        let mut whole = std::mem::replace(&mut self.slice, IntervalSlice::new(next));
        let each: Vec<IntervalSlice> = self.target_slices.iter_mut().map(|t| std::mem::replace(t, IntervalSlice::new(next))).collect();
        each.iter().for_each(|t| whole.merge(t));
        (whole, each)
    }

    /// Handles `done[k]`: ends its verification, records it (or its error), and
    /// issues the slot's next I/O. Err: the loop ends after this completion.
    #[inline]
    fn complete(&mut self, k: usize, now: Instant) -> Result<(), End> {
        let c = self.done[k];
        let s = self.release(c.slot);
        let error = completion_error(c.result, s.expected());
        if let Some(v) = self.verifier.as_mut() {
            if let Some(m) = v.complete(c.slot, s.target, s.offset, s.len, error.is_none(), self.engine.buffers().slot(c.slot)) {
                if v.shared.stop_on_mismatch {
                    let why = format!("{}: data mismatch at offset {}: {} (--verify-stop)", m.target, m.offset, m.what);
                    return Err(self.fail(why, now));
                }
            }
        }
        if let Some(errno) = error {
            self.record_error(&s, errno, now)?;
        } else if self.measuring {
            self.measure(k, &s, now);
        }
        if self.measured_ios >= self.io_limit {
            return Err(End(now));
        }
        // --ios N: the I/O that makes N counted (measured, in flight, or
        // completed in this batch) is the last issued, so --trace holds exactly
        // the I/Os the run counts, none left in flight to abandon.
        let counted = self.measured_ios + (self.in_flight + self.done.len() - k - 1) as u64;
        if self.paced || (self.measuring && counted >= self.io_limit) {
            self.idle[s.target as usize].push(c.slot);
            self.idle_count += 1;
            return Ok(());
        }
        self.submit(c.slot, s.target, now, now).map(|_| ())
    }

    /// Records a measured completion: latency (from its due time), per target,
    /// hit or miss behind a cache, the current second, service time.
    #[inline]
    fn measure(&mut self, k: usize, s: &Slot, now: Instant) {
        let ns = now.duration_since(s.due).as_nanos() as u64;
        let rec = &mut self.outcome.recorder;
        rec.record(s.op, s.len, ns);
        if self.split_targets {
            self.outcome.per_target[s.target as usize].record(s.op, s.len, ns);
        }
        if self.cached {
            if let Some(served) = self.outcomes[k] {
                rec.record_cache(s.op, served == CacheOutcome::Hit, ns);
            }
        }
        // An index into the worker's own small array: no lookup, no allocation.
        match self.target_slices.get_mut(s.target as usize) {
            Some(t) => t.record(s.op, s.len, ns),
            None => self.slice.record(s.op, s.len, ns),
        }
        if self.scheduled {
            rec.record_service(s.op, now.duration_since(s.submitted).as_nanos() as u64);
        }
        self.measured_ios += 1;
        self.outcome.last_measured = Some(now);
    }

    /// Counts a failed I/O. Err (the loop ends) unless --continue-on-error.
    fn record_error(&mut self, s: &Slot, errno: i32, now: Instant) -> Result<(), End> {
        let uri = &self.mine[s.target as usize].facts.uri;
        let why = (!self.plan.continue_on_error).then(|| {
            // A lost connection is no I/O error to count and go on from: no later
            // I/O reaches the target, so --continue-on-error is not offered then.
            let advice = if connection_lost(errno) {
                "the connection to the target was lost: check that its server is up, then run again"
            } else {
                "add --continue-on-error to count errors and go on"
            };
            format!("{uri}: {} at offset {} failed: {} ({advice})", s.op.name(), s.offset, engine::errno_name(errno))
        });
        self.outcome.recorder.record_error(errno, || io_error(uri, s, errno));
        self.outcome.per_target[s.target as usize].errors += 1;
        match why {
            Some(why) => Err(self.fail(why, now)),
            None => Ok(()),
        }
    }

    /// A completion that is not measured (the stop, or after the run ended) still
    /// ends its slot, ends its verification (blocks released, writes recorded for
    /// the points that follow) and counts its error, if any.
    fn settle(&mut self, c: Completion) {
        let s = self.release(c.slot);
        let error = completion_error(c.result, s.expected());
        if let Some(v) = self.verifier.as_mut() {
            v.complete(c.slot, s.target, s.offset, s.len, error.is_none(), self.engine.buffers().slot(c.slot));
        }
        if let Some(errno) = error {
            let uri = &self.mine[s.target as usize].facts.uri;
            self.outcome.recorder.record_error(errno, || io_error(uri, &s, errno));
            self.outcome.per_target[s.target as usize].errors += 1;
        }
    }

    /// Settles `done[k..]`: the rest of a batch the loop stopped handling.
    fn settle_from(&mut self, k: usize) {
        for j in k..self.done.len() {
            let c = self.done[j];
            self.settle(c);
        }
    }

    /// The slot's I/O as it was issued; the slot is free from now on.
    #[inline]
    fn release(&mut self, slot: u32) -> Slot {
        let s = self.slots[slot as usize];
        self.slots[slot as usize].busy = false;
        s
    }

    /// Issues the next I/O on `slot` and counts it in flight; returns its access
    /// line. A submission that fails ends the loop.
    #[inline]
    fn submit(&mut self, slot: u32, target: u32, due: Instant, now: Instant) -> Result<u16, End> {
        match self.issue(slot, target, due, now) {
            Ok(next) => {
                self.slots[slot as usize] = next;
                self.in_flight += 1;
                Ok(next.line)
            }
            Err(e) => Err(self.fail(named_once(&self.mine[target as usize].facts.uri, "could not submit I/O", &e), now)),
        }
    }

    /// Paced: issues every I/O due by `now` on the idle slots.
    fn issue_due(&mut self, now: Instant) -> Result<(), End> {
        while self.paced && self.idle_count > 0 && !(self.measuring && self.measured_ios + self.in_flight as u64 >= self.io_limit) {
            let Some(due) = self.gen.take_due(&mut self.pacer, now) else { break };
            let slot = self.take_idle();
            let target = self.slots[slot as usize].target;
            let line = self.submit(slot, target, due, now)?;
            // A sync is not one of the access lines' I/Os: think time counts those.
            if line != SYNC_LINE {
                self.pacer.issued(line, now);
            }
        }
        Ok(())
    }

    /// Paced: an idle slot of the target whose turn it is, or (all of that
    /// target's slots in flight) of the next in turn that has one; the turn
    /// passes to the target after it. Without this, the slot freed last was
    /// reused first: a rate the targets keep up with sent every I/O to the
    /// first target. Needs `idle_count > 0`.
    #[inline]
    fn take_idle(&mut self) -> u32 {
        let n = self.idle.len();
        let mut t = self.turn;
        while self.idle[t].is_empty() {
            t = if t + 1 == n { 0 } else { t + 1 };
        }
        self.turn = if t + 1 == n { 0 } else { t + 1 };
        self.idle_count -= 1;
        self.idle[t].pop().expect("a non-empty idle list")
    }

    /// Draws the next I/O for `slot` (a due sync first), takes its blocks for
    /// verification, traces it, fills a write's data, and queues it.
    fn issue(&mut self, slot: u32, target: u32, due: Instant, now: Instant) -> std::io::Result<Slot> {
        debug_assert!(!self.slots[slot as usize].busy, "slot {slot} issued while its I/O is in flight");
        if let Some(op) = self.sync_clock.as_mut().and_then(|c| c.take_due(target as usize)) {
            // A sync has no range and no buffer: the verifier has nothing to
            // take, and the trace records only I/Os on ranges.
            // SAFETY: `slot` is free: it comes from the idle list or a reaped
            // completion (`release` cleared its busy flag; checked above).
            unsafe { self.engine.queue(IoRequest { slot, target, op, offset: 0, len: 0 })? };
            return Ok(Slot { op, offset: 0, len: 0, target, due, submitted: now, busy: true, line: SYNC_LINE });
        }
        // A hot band moves with the time since the point started.
        let elapsed_ns = if self.gen.moves() { now.saturating_duration_since(self.t0).as_nanos() as u64 } else { 0 };
        let (mut io, target) = self.gen.next(target, elapsed_ns);
        if let Some(v) = self.verifier.as_mut() {
            // Only issue an I/O whose blocks no other I/O has in flight (verify/table.rs).
            let mut draws = 1;
            while !v.take(slot, target, io.op == Op::Write, io.offset, io.len, self.engine.buffers().slot(slot)) {
                v.stats.conflicts += 1;
                if draws == MAX_DRAWS {
                    io.op = Op::Read;
                    v.force_unchecked(slot);
                    break;
                }
                draws += 1;
                // The op drawn first stays: a write needs its blocks alone where a
                // read shares them with other reads, so redrawing the op too would
                // turn busy writes into reads and shift the mix asked for.
                let op = io.op;
                io = self.gen.next(target, elapsed_ns).0;
                io.op = op;
            }
        }
        if let Some(start) = self.trace_start {
            // When the I/O was due: its submission, or its scheduled arrival in a
            // paced run (the time its latency counts from; a worker descheduled
            // on a busy host would otherwise show its arrivals in clumps).
            let t_ns = due.saturating_duration_since(start).as_nanos() as u64;
            self.traced.push(TraceRecord { t_ns, op: io.op, target: self.global_target[target as usize], offset: io.offset, len: io.len });
        }
        if io.op == Op::Write {
            if let Some(f) = self.filler.as_mut() {
                f.fill(&mut self.engine.buffers().slot(slot)[..io.len as usize]);
            }
        }
        // SAFETY: as for the sync above, `slot` is free.
        unsafe { self.engine.queue(IoRequest { slot, target, op: io.op, offset: io.offset, len: io.len })? };
        if let Some(c) = self.sync_clock.as_mut() {
            c.issued(target as usize, io.op);
        }
        Ok(Slot { op: io.op, offset: io.offset, len: io.len, target, due, submitted: now, busy: true, line: io.line })
    }

    /// Sends a second's slice, with the I/Os in flight at `now`.
    fn report(&self, slice: IntervalSlice, targets: Vec<IntervalSlice>, done_below: u32, now: Instant) {
        let (in_flight, oldest) = in_flight_among(&self.slots, now);
        let _ = self.reports.send(Report { worker: self.plan.index, slice, targets, done_below, in_flight, oldest });
    }

    /// After the loop: what was in flight at the end, the last reports, the
    /// drain, the trace's last batch, what the engine still owes the target,
    /// and the verifier's figures.
    fn finish(mut self, stopped_at: Instant) -> WorkerOutcome {
        // What was in flight when the measured interval ended (I/Os issued in the
        // moments between the planned end and this worker seeing it do not count).
        let cutoff = self.end.map_or(stopped_at, |e| e.min(stopped_at));
        let (n, oldest) = in_flight_among(&self.slots, cutoff);
        self.outcome.in_flight_at_end = n as u64;
        self.outcome.oldest_in_flight = oldest;
        self.outcome.depth_mean = if self.measuring { self.depth.mean(cutoff) } else { None };
        if let Some((s, each)) = self.ended.take() {
            self.report(s, each, self.slice.index, stopped_at);
        }
        let (last, each) = if self.measuring { self.take_second(0) } else { (IntervalSlice::new(0), Vec::new()) };
        self.report(last, each, u32::MAX, stopped_at);
        let left = self.drain();
        self.outcome.abandoned = left as u64;
        self.outcome.counted_all = self.measured_ios >= self.io_limit;
        self.outcome.replay = self.gen.tally();
        self.ctl.drained[self.plan.index as usize].store(true, Ordering::SeqCst);
        if let Some(t) = &self.plan.trace {
            t.write(&mut self.traced);
        }
        // What the engine still owes the target (a write-back cache's dirty blocks)
        // is done before the worker reports: the run's data is then on the target.
        // Not when I/Os were abandoned: the target does not answer, and the engine
        // may not be used while they are outstanding.
        if left == 0 {
            if let Err(e) = self.engine.finish() {
                if self.outcome.failure.is_none() {
                    let why = format!("{}: {e}", self.mine[0].facts.uri);
                    self.fail(why, stopped_at);
                }
            }
        }
        if let Some(mut v) = self.verifier.take() {
            let _ = v.flush_journal();
            self.outcome.recorder.verify += &v.stats;
        }
        if self.mine.len() == 1 {
            self.outcome.per_target[0].take_all_of(&self.outcome.recorder);
        }
        self.outcome
    }

    /// Waits for I/Os still in flight, settling each completion, for at most
    /// `DRAIN_BUDGET` (none after a second Ctrl-C). Returns how many are
    /// still in flight: those are abandoned.
    fn drain(&mut self) -> usize {
        let deadline = Instant::now() + DRAIN_BUDGET;
        let mut sink = std::mem::take(&mut self.done);
        let mut in_flight = self.in_flight;
        while in_flight > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.ctl.hurry.load(Ordering::Relaxed) {
                break;
            }
            sink.clear();
            if self.engine.reap(in_flight, Some(left.min(WAIT_SLICE)), &mut sink).is_err() {
                break;
            }
            self.ctl.beat(self.plan.index as usize, Instant::now());
            for &c in &sink {
                self.settle(c);
            }
            in_flight -= sink.len().min(in_flight);
        }
        in_flight
    }
}

/// The error record of a failed I/O.
/// "URI: WHAT: ERROR", the target named once: an engine's error may name it
/// already (a network connection's does).
fn named_once(uri: &str, what: &str, e: &std::io::Error) -> String {
    let e = e.to_string();
    let e = e.strip_prefix(uri).and_then(|r| r.strip_prefix(": ")).unwrap_or(&e);
    format!("{uri}: {what}: {e}")
}

/// An errno that says the connection to a network target is gone (not an I/O error of the target).
fn connection_lost(errno: i32) -> bool {
    matches!(errno, libc::ENOTCONN | libc::ECONNRESET | libc::ECONNABORTED | libc::EPIPE | libc::ESHUTDOWN)
}

fn io_error(uri: &str, s: &Slot, errno: i32) -> IoErrorRecord {
    IoErrorRecord { target: uri.to_string(), offset: s.offset, op: s.op, errno, message: engine::errno_name(errno) }
}
