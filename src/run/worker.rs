//! One worker thread: owns its engine, its buffers and its recorder. It keeps
//! `qd` I/Os in flight per target, stamps each with its submit time, and records
//! completions that land inside the measured interval. Nothing on this path is
//! shared with other threads except a relaxed stop flag; one-second slices go to
//! the main thread through a channel once per second.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::control::Control;
use super::pacing::{Pacer, Pacing};
use super::trace_sink;
use crate::cache::trace::TraceRecord;
use crate::engine::{self, completion_error, BufferPool, Completion, Engine, IoRequest};
use crate::metrics::{IntervalSlice, IoErrorRecord, Recorder};
use crate::target::{Handle, OpenTarget};
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
}

/// What a worker hands back when it ends.
pub struct WorkerOutcome {
    pub group: usize,
    pub recorder: Recorder,
    /// Completion time of the last measured I/O.
    pub last_measured: Option<Instant>,
    /// The error that ended this worker, if any.
    pub failure: Option<String>,
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
) -> std::io::Result<Box<dyn Engine>> {
    let inner = build_plain_engine(choice, targets, pool, connections)?;
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
    let taskrun = engine::uring::TaskRun::for_devices(targets.iter().all(|t| t.facts.kind == crate::target::TargetKind::BlockDevice));
    match choice {
        EngineChoice::Psync => Ok(Box::new(engine::psync::PsyncEngine::new(fds, pool))),
        EngineChoice::IoUring => Ok(Box::new(engine::uring::UringEngine::new(&fds, pool, taskrun)?)),
        EngineChoice::Auto => {
            if engine::uring::available() {
                Ok(Box::new(engine::uring::UringEngine::new(&fds, pool, taskrun)?))
            } else {
                Ok(Box::new(engine::psync::PsyncEngine::new(fds, pool)))
            }
        }
    }
}

/// How long one wait for completions may block before the worker looks at the
/// stop flag and the clock again: bounds how late Ctrl-C or the end is noticed.
const WAIT_SLICE: Duration = Duration::from_millis(50);

pub fn run_worker(plan: WorkerPlan, targets: Arc<Vec<OpenTarget>>, ctl: Arc<Control>, slices: Sender<IntervalSlice>) -> WorkerOutcome {
    let mut outcome = WorkerOutcome { group: plan.group, recorder: Recorder::default(), last_measured: None, failure: None };
    let mine: Vec<&OpenTarget> = plan.targets.iter().map(|&i| &targets[i]).collect();
    let ntargets = mine.len() as u32;
    let nslots = plan.qd * ntargets;
    let max_bs = plan.access.iter().map(|l| l.bs.get()).max().unwrap_or(4096) as usize;
    let extra = cache_slots(&mine, nslots);
    let pool = BufferPool::new((nslots + extra) as usize, max_bs, plan.seed ^ plan.index as u64);
    let engine = build_engine(plan.engine, &mine, pool, plan.connections, nslots);
    // Every worker reaches the barrier, even a failed one, so nobody waits forever.
    let t0 = ctl.wait_for_start();
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
    let mut gen = Generator::new(plan.seed, plan.index as u64, &plan.access, regions);
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
    let issue = |engine: &mut Box<dyn Engine>,
                 gen: &mut Generator,
                 verifier: &mut Option<Verifier>,
                 traced: &mut Vec<TraceRecord>,
                 slot: u32,
                 target: u32,
                 due: Instant,
                 now: Instant| {
        let mut io = gen.next(target as usize);
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
                io = gen.next(target as usize);
            }
        }
        if let Some(start) = trace_start {
            let t_ns = now.saturating_duration_since(start).as_nanos() as u64;
            traced.push(TraceRecord { t_ns, op: io.op, target: global_target[target as usize], offset: io.offset, len: io.len });
        }
        engine.queue(IoRequest { slot, target, op: io.op, offset: io.offset, len: io.len })?;
        std::io::Result::Ok(Slot { op: io.op, offset: io.offset, len: io.len, target, due, submitted: now })
    };
    let mut pacer = Pacer::new(plan.pacing.clone(), t0);
    let paced = pacer.paced();
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
        let placeholder = Slot { op: Op::Read, offset: 0, len: 0, target: slot % ntargets, due: now, submitted: now };
        if paced {
            slots.push(placeholder);
            idle.push(slot);
            continue;
        }
        match issue(&mut engine, &mut gen, &mut verifier, &mut traced, slot, slot % ntargets, now, now) {
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
    let mut done: Vec<Completion> = Vec::with_capacity(nslots as usize);
    let mut slice = IntervalSlice::new(0);
    let mut measuring = false;
    let mut measured_ios = 0u64;
    'run: loop {
        done.clear();
        if let Some(Err(e)) = verifier.as_mut().map(|v| v.flush_journal()) {
            outcome.failure = Some(format!("writing the verify journal failed: {e}"));
            ctl.fail();
            break;
        }
        let wait = if paced && !idle.is_empty() { pacer.wait(Instant::now()).min(WAIT_SLICE) } else { WAIT_SLICE };
        if in_flight == 0 && paced {
            std::thread::sleep(wait);
        } else if let Err(e) = engine.reap(1, Some(wait), &mut done) {
            outcome.failure = Some(format!("{}: waiting for completions failed: {e}", mine[0].facts.uri));
            ctl.fail();
            break;
        }
        let now = Instant::now();
        in_flight -= done.len();
        if ctl.stop.load(Ordering::Relaxed) || end.is_some_and(|e| now >= e) {
            // Completions of this last batch are not measured, but verification
            // must still see them end (their blocks are released, writes recorded).
            if let Some(v) = verifier.as_mut() {
                for c in &done {
                    let s = slots[c.slot as usize];
                    v.complete(
                        c.slot,
                        s.target,
                        s.offset,
                        s.len,
                        completion_error(c.result, s.len).is_none(),
                        engine.buffers().slot(c.slot),
                    );
                }
            }
            break;
        }
        if !measuring && now >= measure_start {
            measuring = true;
        }
        if measuring {
            let index = now.duration_since(measure_start).as_secs() as u32;
            if index != slice.index {
                let _ = slices.send(std::mem::replace(&mut slice, IntervalSlice::new(index)));
            }
        }
        for c in &done {
            let s = slots[c.slot as usize];
            if let Some(v) = verifier.as_mut() {
                let ok = completion_error(c.result, s.len).is_none();
                if let Some(m) = v.complete(c.slot, s.target, s.offset, s.len, ok, engine.buffers().slot(c.slot)) {
                    if v.shared.stop_on_mismatch {
                        outcome.failure = Some(format!("{}: data mismatch at offset {}: {} (--verify-stop)", m.target, m.offset, m.what));
                        ctl.fail();
                        break 'run;
                    }
                }
            }
            if let Some(errno) = completion_error(c.result, s.len) {
                let uri = &mine[s.target as usize].facts.uri;
                let message = engine::errno_name(errno);
                outcome.failure =
                    Some(format!("{uri}: {} at offset {} failed: {message}", if s.op == Op::Read { "read" } else { "write" }, s.offset));
                rec.record_error(IoErrorRecord { target: uri.clone(), offset: s.offset, op: s.op, errno, message });
                ctl.fail();
                break 'run;
            }
            if measuring {
                let ns = now.duration_since(s.due).as_nanos() as u64;
                rec.record(s.op, s.len, ns);
                if let Some(hit) = c.from_cache {
                    rec.record_cache(s.op, hit, ns);
                }
                slice.record(s.op, s.len, ns);
                if paced {
                    rec.record_service(s.op, now.duration_since(s.submitted).as_nanos() as u64);
                }
                measured_ios += 1;
                outcome.last_measured = Some(now);
            }
            if measured_ios >= io_limit {
                break 'run;
            }
            if paced {
                idle.push(c.slot);
                continue;
            }
            match issue(&mut engine, &mut gen, &mut verifier, &mut traced, c.slot, s.target, now, now) {
                Ok(next) => slots[c.slot as usize] = next,
                Err(e) => {
                    outcome.failure = Some(format!("{}: could not submit I/O: {e}", mine[s.target as usize].facts.uri));
                    ctl.fail();
                    break 'run;
                }
            }
            in_flight += 1;
        }
        if traced.len() >= trace_sink::BATCH {
            if let Some(t) = &plan.trace {
                t.write(&mut traced);
            }
        }
        if let Some(counter) = &plan.publish {
            counter.fetch_add(done.len() as u64, Ordering::Relaxed);
        }
        while paced && !idle.is_empty() {
            let Some(due) = pacer.take_due(now) else { break };
            let slot = idle.pop().expect("checked non-empty");
            let target = slots[slot as usize].target;
            match issue(&mut engine, &mut gen, &mut verifier, &mut traced, slot, target, due, now) {
                Ok(next) => slots[slot as usize] = next,
                Err(e) => {
                    outcome.failure = Some(format!("{}: could not submit I/O: {e}", mine[target as usize].facts.uri));
                    ctl.fail();
                    break 'run;
                }
            }
            in_flight += 1;
        }
    }
    if measuring {
        let _ = slices.send(slice);
    }
    drain(&mut engine, in_flight, |engine, c| {
        // Drained I/Os still end their verification: their blocks are released
        // (and written generations recorded) for the points that follow.
        if let Some(v) = verifier.as_mut() {
            let s = slots[c.slot as usize];
            let ok = completion_error(c.result, s.len).is_none();
            v.complete(c.slot, s.target, s.offset, s.len, ok, engine.buffers().slot(c.slot));
        }
    });
    if let Some(t) = &plan.trace {
        t.write(&mut traced);
    }
    // What the engine still owes the target (a write-back cache's dirty blocks)
    // is done before the worker reports: the run's data is then on the target.
    if let Err(e) = engine.finish() {
        if outcome.failure.is_none() {
            outcome.failure = Some(format!("{}: {e}", mine[0].facts.uri));
            ctl.fail();
        }
    }
    if let Some(mut v) = verifier {
        let _ = v.flush_journal();
        outcome.recorder.verify += &v.stats;
    }
    outcome
}

/// Waits (bounded) for I/Os still in flight so their buffers can be released,
/// handing each completion to `done`.
fn drain(engine: &mut Box<dyn Engine>, mut in_flight: usize, mut done: impl FnMut(&mut Box<dyn Engine>, &Completion)) {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut sink = Vec::new();
    while in_flight > 0 && Instant::now() < deadline {
        sink.clear();
        if engine.reap(in_flight, Some(WAIT_SLICE), &mut sink).is_err() {
            return;
        }
        for c in &sink {
            done(engine, c);
        }
        in_flight -= sink.len().min(in_flight);
    }
}
