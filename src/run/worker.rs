//! One worker thread: owns its engine, its buffers and its recorder. It keeps
//! `qd` I/Os in flight per target, stamps each with its submit time, and records
//! completions that land inside the measured interval. Nothing on this path is
//! shared with other threads except a relaxed stop flag; one-second slices go to
//! the main thread through a channel once per second.
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
use crate::engine::{self, completion_error, BufferPool, Completion, Engine, IoRequest};
use crate::metrics::per_worker::{DepthMeter, TargetTally};
use crate::metrics::{IntervalSlice, IoErrorRecord, Recorder};
use crate::target::{Handle, OpenTarget};
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

/// Builds the engine for a worker's targets: every target of one worker must use
/// the same engine family (checked by the planner).
/// `user_slots` of the pool are the worker's; the rest (see `cache_slots`) the cache tier's.
pub fn build_engine(
    choice: EngineChoice,
    targets: &[&OpenTarget],
    pool: BufferPool,
    connections: u32,
    user_slots: u32,
    polling: crate::workload::polling::Polling,
) -> std::io::Result<Box<dyn Engine>> {
    let inner = build_plain_engine(choice, targets, pool, connections, polling)?;
    match targets.iter().find_map(|t| t.cache.as_ref()) {
        Some((_, mode)) => {
            let caches = targets.iter().map(|t| t.cache.as_ref().map(|(c, _)| c.clone())).collect();
            Ok(Box::new(engine::cache::CacheEngine::new(inner, caches, *mode, user_slots)))
        }
        None => Ok(inner),
    }
}

/// Extra buffer slots a cache tier needs for writing dirty blocks back, given
/// the worker's own slots (none without a cache).
pub fn cache_slots(targets: &[&OpenTarget], user_slots: u32) -> u32 {
    if targets.iter().any(|t| t.cache.is_some()) {
        user_slots.clamp(4, 64)
    } else {
        0
    }
}

fn build_plain_engine(
    choice: EngineChoice,
    targets: &[&OpenTarget],
    pool: BufferPool,
    connections: u32,
    polling: crate::workload::polling::Polling,
) -> std::io::Result<Box<dyn Engine>> {
    if let Some(uris) =
        targets.iter().map(|t| if let Handle::Remote(u) = &t.handle { Some(u.clone()) } else { None }).collect::<Option<Vec<_>>>()
    {
        if uris.iter().all(|u| u.starts_with("iscsi://")) {
            return Ok(Box::new(engine::iscsi::IscsiEngine::connect(&uris, connections, pool)?));
        }
        // The connections were opened before the point (target::open_all).
        let pools: Vec<_> =
            targets.iter().zip(&uris).map(|(t, u)| t.nbd.clone().unwrap_or_else(|| engine::nbd::pool::ConnectionPool::new(u))).collect();
        return Ok(Box::new(engine::nbd::NbdEngine::connect(&pools, connections, pool)?));
    }
    if targets.iter().all(|t| matches!(t.handle, Handle::Null)) {
        return Ok(Box::new(engine::mem::MemEngine::null(pool)));
    }
    if let Some(luns) =
        targets.iter().map(|t| if let Handle::Mem(l) = &t.handle { Some(l.clone()) } else { None }).collect::<Option<Vec<_>>>()
    {
        return Ok(Box::new(engine::mem::MemEngine::new(luns, pool)));
    }
    let fds: Vec<_> = targets.iter().filter_map(|t| t.raw_fd()).collect();
    if fds.len() != targets.len() {
        return Err(std::io::Error::other("one worker's targets mix mem: or null: with files or devices"));
    }
    let ring = engine::uring::RingSetup::new(targets.iter().all(|t| t.facts.kind == crate::target::TargetKind::BlockDevice), polling);
    match choice {
        EngineChoice::Psync => Ok(Box::new(engine::psync::PsyncEngine::new(fds, pool))),
        EngineChoice::IoUring => Ok(Box::new(engine::uring::UringEngine::new(&fds, pool, ring)?)),
        EngineChoice::Auto => {
            if engine::uring::available() {
                Ok(Box::new(engine::uring::UringEngine::new(&fds, pool, ring)?))
            } else {
                Ok(Box::new(engine::psync::PsyncEngine::new(fds, pool)))
            }
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
    };
    // Pinned before the buffers are allocated, so they are first touched on the
    // worker's own CPUs (and so sit on its NUMA node).
    let pinned = plan.cpus.as_deref().map(super::pinning::pin_this_thread).transpose();
    let mine: Vec<&OpenTarget> = plan.targets.iter().map(|&i| &targets[i]).collect();
    let ntargets = mine.len() as u32;
    let nslots = plan.qd * ntargets;
    let max_bs =
        plan.access.iter().map(|l| l.bs.get()).max().unwrap_or(4096).max(plan.replay.as_ref().map_or(0, |r| r.max_len as u64)) as usize;
    let extra = cache_slots(&mine, nslots);
    let pool = BufferPool::new((nslots + extra) as usize, max_bs, plan.seed ^ plan.index as u64);
    let engine = build_engine(plan.engine, &mine, pool, plan.connections, nslots, plan.polling);
    // Every worker reaches the start gate, even a failed one, so nobody waits
    // forever (a panic before this point drops the ticket, which counts too).
    let t0 = ticket.wait_for_start();
    if let Err(e) = pinned {
        outcome.failure = Some(format!("could not pin worker {} to CPUs {:?}: {e}", plan.index, plan.cpus.unwrap_or_default()));
        ctl.fail();
        return outcome;
    }
    let mut engine = match engine {
        Ok(e) => e,
        Err(e) => {
            outcome.failure = Some(format!(
                "could not set up the engine for {}: {e}",
                mine.iter().map(|t| t.facts.uri.as_str()).collect::<Vec<_>>().join(", ")
            ));
            ctl.fail();
            return outcome;
        }
    };
    let regions = mine.iter().map(|t| t.region).collect();
    let mut gen = match &plan.replay {
        Some(r) => OpSource::Replayed(super::replay::ReplayCursor::new(r.clone(), &plan.targets, regions, t0)),
        None => OpSource::Generated(Generator::new(plan.seed, plan.index as u64, &plan.access, regions)),
    };
    let measure_start = t0 + plan.ramp;
    let (end, io_limit) = match plan.run {
        RunLength::Time(d) => (Some(measure_start + d), u64::MAX),
        RunLength::Ios(n) => (None, n),
    };

    let mut slots: Vec<Slot> = Vec::with_capacity(nslots as usize);
    let mut in_flight = 0usize;
    let mut verifier = plan.verify.clone().map(|v| Verifier::new(v, plan.targets.clone(), nslots as usize));
    let mut traced: Vec<TraceRecord> = Vec::with_capacity(if plan.trace.is_some() { trace_sink::BATCH } else { 0 });
    let trace_start = plan.trace.as_ref().map(|t| t.start);
    let global_target: Vec<u16> = plan.targets.iter().map(|&t| t as u16).collect();
    // Only with --compress/--dedupe (never together with --verify, refused before the run).
    let filler = std::cell::RefCell::new(plan.data.clone().map(|d| super::data_fill::DataFill::new(d, plan.seed, plan.index)));
    let mut sync_clock = SyncClock::new(plan.sync, mine.len());
    let issue = |engine: &mut Box<dyn Engine>,
                 gen: &mut OpSource,
                 sync_clock: &mut Option<SyncClock>,
                 verifier: &mut Option<Verifier>,
                 traced: &mut Vec<TraceRecord>,
                 slot: u32,
                 target: u32,
                 due: Instant,
                 now: Instant| {
        if let Some(op) = sync_clock.as_mut().and_then(|c| c.take_due(target as usize)) {
            // A sync has no range and no buffer: the verifier has nothing to
            // take, and the trace records only I/Os on ranges.
            engine.queue(IoRequest { slot, target, op, offset: 0, len: 0 })?;
            return std::io::Result::Ok(Slot { op, offset: 0, len: 0, target, due, submitted: now, busy: true, line: SYNC_LINE });
        }
        // A hot band moves with the time since the point started.
        let elapsed_ns = if gen.moves() { now.saturating_duration_since(t0).as_nanos() as u64 } else { 0 };
        let (mut io, target) = gen.next(target, elapsed_ns);
        if let Some(v) = verifier.as_mut() {
            // Only issue an I/O whose blocks no other I/O has in flight (verify/table.rs).
            let mut draws = 1;
            while !v.take(slot, target, io.op == Op::Write, io.offset, io.len, engine.buffers().slot(slot)) {
                v.stats.conflicts += 1;
                if draws == MAX_DRAWS {
                    io.op = Op::Read;
                    v.force_unchecked(slot);
                    break;
                }
                draws += 1;
                io = gen.next(target, elapsed_ns).0;
            }
        }
        if let Some(start) = trace_start {
            // When the I/O was due: its submission, or its scheduled arrival in a
            // paced run (the time its latency counts from; a worker descheduled
            // on a busy host would otherwise show its arrivals in clumps).
            let t_ns = due.saturating_duration_since(start).as_nanos() as u64;
            traced.push(TraceRecord { t_ns, op: io.op, target: global_target[target as usize], offset: io.offset, len: io.len });
        }
        if io.op == Op::Write {
            if let Some(f) = filler.borrow_mut().as_mut() {
                f.fill(&mut engine.buffers().slot(slot)[..io.len as usize]);
            }
        }
        engine.queue(IoRequest { slot, target, op: io.op, offset: io.offset, len: io.len })?;
        if let Some(c) = sync_clock.as_mut() {
            c.issued(target as usize, io.op);
        }
        std::io::Result::Ok(Slot { op: io.op, offset: io.offset, len: io.len, target, due, submitted: now, busy: true, line: io.line })
    };
    // A completion that is not measured (the stop, or after the run ended) still
    // ends its slot, ends its verification (blocks released, writes recorded for
    // the points that follow) and counts its error, if any.
    let settle = |c: &Completion,
                  slots: &mut [Slot],
                  verifier: &mut Option<Verifier>,
                  rec: &mut Recorder,
                  tallies: &mut [TargetTally],
                  engine: &mut Box<dyn Engine>| {
        let s = slots[c.slot as usize];
        slots[c.slot as usize].busy = false;
        let error = completion_error(c.result, s.expected());
        if let Some(v) = verifier.as_mut() {
            v.complete(c.slot, s.target, s.offset, s.len, error.is_none(), engine.buffers().slot(c.slot));
        }
        if let Some(errno) = error {
            rec.record_error(io_error(&mine[s.target as usize].facts.uri, &s, errno));
            tallies[s.target as usize].errors += 1;
        }
    };
    let mut pacer = Pacer::new(plan.pacing.clone(), t0).with_think(plan.think.clone(), t0);
    let paced = gen.paced(&pacer);
    // Think time alone holds slots back but counts latency from submission.
    let scheduled = gen.scheduled(&pacer);
    if paced {
        // The default 50 us timer slack would make every wait for a due I/O late,
        // and that lateness would count as latency from schedule.
        // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    }
    // Paced workers keep idle slots here until their I/O is due; slot i drives target i % ntargets.
    let mut idle: Vec<u32> = Vec::new();
    let now = Instant::now();
    for slot in 0..nslots {
        let placeholder = Slot { op: Op::Read, offset: 0, len: 0, target: slot % ntargets, due: now, submitted: now, busy: false, line: 0 };
        // --ios N below the depth, no ramp: only N are issued (see `counted` below).
        if paced || (now >= measure_start && u64::from(slot) >= io_limit) {
            slots.push(placeholder);
            idle.push(slot);
            continue;
        }
        match issue(&mut engine, &mut gen, &mut sync_clock, &mut verifier, &mut traced, slot, slot % ntargets, now, now) {
            Ok(s) => slots.push(s),
            Err(e) => {
                outcome.failure = Some(format!("{}: could not submit I/O: {e}", mine[(slot % ntargets) as usize].facts.uri));
                ctl.fail();
                return outcome;
            }
        }
        in_flight += 1;
    }
    idle.reverse();

    let rec = &mut outcome.recorder;
    let tallies = &mut outcome.per_target;
    // With one target its tally is the recorder itself, filled at the end.
    let split_targets = ntargets > 1;
    let mut depth = DepthMeter::new(measure_start, end);
    let mut done: Vec<Completion> = Vec::with_capacity(nslots as usize);
    let mut slice = IntervalSlice::new(0);
    // A second that ended at this wake-up, reported once this batch is handled
    // (so the in-flight figures it carries are current).
    let mut ended: Option<IntervalSlice> = None;
    let report = |slice: IntervalSlice, done_below: u32, slots: &[Slot], now: Instant| {
        let (in_flight, oldest) = in_flight_among(slots, now);
        let _ = reports.send(Report { worker: plan.index, slice, done_below, in_flight, oldest });
    };
    let mut measuring = false;
    let mut measured_ios = 0u64;
    let stopped_at: Instant = 'run: loop {
        done.clear();
        if let Some(Err(e)) = verifier.as_mut().map(|v| v.flush_journal()) {
            outcome.failure = Some(format!("writing the verify journal failed: {e}"));
            ctl.fail();
            break Instant::now();
        }
        let wait = if paced && !idle.is_empty() { gen.wait(&pacer, Instant::now(), WAIT_SLICE).min(WAIT_SLICE) } else { WAIT_SLICE };
        if in_flight == 0 && paced {
            std::thread::sleep(wait);
        } else if let Err(e) = engine.reap(1, Some(wait), &mut done) {
            outcome.failure = Some(format!("{}: waiting for completions failed: {e}", mine[0].facts.uri));
            ctl.fail();
            break Instant::now();
        }
        let now = Instant::now();
        ctl.beat(plan.index as usize, now);
        depth.advance(now, in_flight);
        in_flight -= done.len();
        if ctl.stop.load(Ordering::Relaxed) || end.is_some_and(|e| now >= e) {
            // Completions of this last batch are not measured.
            for c in &done {
                settle(c, &mut slots, &mut verifier, rec, tallies, &mut engine);
            }
            break now;
        }
        if !measuring && now >= measure_start {
            measuring = true;
        }
        if measuring {
            let index = now.duration_since(measure_start).as_secs() as u32;
            if index != slice.index {
                ended = Some(std::mem::replace(&mut slice, IntervalSlice::new(index)));
            }
        }
        // Where this batch stopped being handled, when something ends the run in it.
        let mut stop_at = None;
        for (k, c) in done.iter().enumerate() {
            let s = slots[c.slot as usize];
            slots[c.slot as usize].busy = false;
            let error = completion_error(c.result, s.expected());
            if let Some(v) = verifier.as_mut() {
                if let Some(m) = v.complete(c.slot, s.target, s.offset, s.len, error.is_none(), engine.buffers().slot(c.slot)) {
                    if v.shared.stop_on_mismatch {
                        outcome.failure = Some(format!("{}: data mismatch at offset {}: {} (--verify-stop)", m.target, m.offset, m.what));
                        ctl.fail();
                        stop_at = Some(k + 1);
                        break;
                    }
                }
            }
            if let Some(errno) = error {
                let failed = io_error(&mine[s.target as usize].facts.uri, &s, errno);
                if !plan.continue_on_error {
                    outcome.failure = Some(format!(
                        "{}: {} at offset {} failed: {} (add --continue-on-error to count errors and go on)",
                        failed.target,
                        s.op.name(),
                        s.offset,
                        failed.message
                    ));
                    rec.record_error(failed);
                    tallies[s.target as usize].errors += 1;
                    ctl.fail();
                    stop_at = Some(k + 1);
                    break;
                }
                rec.record_error(failed);
                tallies[s.target as usize].errors += 1;
            } else if measuring {
                let ns = now.duration_since(s.due).as_nanos() as u64;
                rec.record(s.op, s.len, ns);
                if split_targets {
                    tallies[s.target as usize].record(s.op, s.len, ns);
                }
                if let Some(hit) = c.from_cache {
                    rec.record_cache(s.op, hit, ns);
                }
                slice.record(s.op, s.len, ns);
                if scheduled {
                    rec.record_service(s.op, now.duration_since(s.submitted).as_nanos() as u64);
                }
                measured_ios += 1;
                outcome.last_measured = Some(now);
            }
            if measured_ios >= io_limit {
                stop_at = Some(k + 1);
                break;
            }
            // --ios N: the I/O that makes N counted (measured, in flight, or
            // completed in this batch) is the last issued, so --trace holds exactly
            // the I/Os the run counts, none left in flight to abandon.
            let counted = measured_ios + (in_flight + done.len() - k - 1) as u64;
            if paced || (measuring && counted >= io_limit) {
                idle.push(c.slot);
                continue;
            }
            match issue(&mut engine, &mut gen, &mut sync_clock, &mut verifier, &mut traced, c.slot, s.target, now, now) {
                Ok(next) => slots[c.slot as usize] = next,
                Err(e) => {
                    outcome.failure = Some(format!("{}: could not submit I/O: {e}", mine[s.target as usize].facts.uri));
                    ctl.fail();
                    stop_at = Some(k + 1);
                    break;
                }
            }
            in_flight += 1;
        }
        if let Some(k) = stop_at {
            for c in &done[k..] {
                settle(c, &mut slots, &mut verifier, rec, tallies, &mut engine);
            }
            break now;
        }
        if let Some(s) = ended.take() {
            report(s, slice.index, &slots, now);
        }
        if traced.len() >= trace_sink::BATCH {
            if let Some(t) = &plan.trace {
                t.write(&mut traced);
            }
        }
        if let Some(counter) = &plan.publish {
            counter.fetch_add(done.len() as u64, Ordering::Relaxed);
        }
        while paced && !idle.is_empty() && !(measuring && measured_ios + in_flight as u64 >= io_limit) {
            let Some(due) = gen.take_due(&mut pacer, now) else { break };
            let slot = idle.pop().expect("checked non-empty");
            let target = slots[slot as usize].target;
            match issue(&mut engine, &mut gen, &mut sync_clock, &mut verifier, &mut traced, slot, target, due, now) {
                Ok(next) => {
                    // A sync is not one of the access lines' I/Os: think time counts those.
                    if next.line != SYNC_LINE {
                        pacer.issued(next.line, now);
                    }
                    slots[slot as usize] = next
                }
                Err(e) => {
                    outcome.failure = Some(format!("{}: could not submit I/O: {e}", mine[target as usize].facts.uri));
                    ctl.fail();
                    break 'run now;
                }
            }
            in_flight += 1;
        }
        if in_flight == 0 && gen.exhausted() {
            // A replay whose last record has completed.
            break now;
        }
    };
    // What was in flight when the measured interval ended (I/Os issued in the
    // moments between the planned end and this worker seeing it do not count).
    let cutoff = end.map_or(stopped_at, |e| e.min(stopped_at));
    let (n, oldest) = in_flight_among(&slots, cutoff);
    outcome.in_flight_at_end = n as u64;
    outcome.oldest_in_flight = oldest;
    outcome.depth_mean = if measuring { depth.mean(cutoff) } else { None };
    if let Some(s) = ended.take() {
        report(s, slice.index, &slots, stopped_at);
    }
    if measuring {
        report(slice, u32::MAX, &slots, stopped_at);
    } else {
        report(IntervalSlice::new(0), u32::MAX, &slots, stopped_at);
    }
    let left = drain(&mut engine, in_flight, &ctl, plan.index as usize, |engine, c| {
        settle(c, &mut slots, &mut verifier, &mut outcome.recorder, &mut outcome.per_target, engine)
    });
    outcome.abandoned = left as u64;
    outcome.replay = gen.tally();
    ctl.drained[plan.index as usize].store(true, Ordering::SeqCst);
    if let Some(t) = &plan.trace {
        t.write(&mut traced);
    }
    // What the engine still owes the target (a write-back cache's dirty blocks)
    // is done before the worker reports: the run's data is then on the target.
    // Not when I/Os were abandoned: the target does not answer, and the engine
    // may not be used while they are outstanding.
    if left == 0 {
        if let Err(e) = engine.finish() {
            if outcome.failure.is_none() {
                outcome.failure = Some(format!("{}: {e}", mine[0].facts.uri));
                ctl.fail();
            }
        }
    }
    if let Some(mut v) = verifier {
        let _ = v.flush_journal();
        outcome.recorder.verify += &v.stats;
    }
    if ntargets == 1 {
        outcome.per_target[0].take_all_of(&outcome.recorder);
    }
    // Dropping the engine with I/Os still in flight is safe: each engine keeps
    // (leaks) the buffers the kernel or its library may still write into, and
    // closes its ring or connections, which cancels what the target holds.
    outcome
}

/// The error record of a failed I/O.
fn io_error(uri: &str, s: &Slot, errno: i32) -> IoErrorRecord {
    IoErrorRecord { target: uri.to_string(), offset: s.offset, op: s.op, errno, message: engine::errno_name(errno) }
}

/// Waits for I/Os still in flight, handing each completion to `done`, for at
/// most `DRAIN_BUDGET` (none after a second Ctrl-C). Returns how many are
/// still in flight: those are abandoned.
fn drain(
    engine: &mut Box<dyn Engine>,
    mut in_flight: usize,
    ctl: &Control,
    worker: usize,
    mut done: impl FnMut(&mut Box<dyn Engine>, &Completion),
) -> usize {
    let deadline = Instant::now() + DRAIN_BUDGET;
    let mut sink = Vec::new();
    while in_flight > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || ctl.hurry.load(Ordering::Relaxed) {
            break;
        }
        sink.clear();
        if engine.reap(in_flight, Some(left.min(WAIT_SLICE)), &mut sink).is_err() {
            break;
        }
        ctl.beat(worker, Instant::now());
        for c in &sink {
            done(engine, c);
        }
        in_flight -= sink.len().min(in_flight);
    }
    in_flight
}
