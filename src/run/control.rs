//! What the main thread and the workers of one point share: a start gate that
//! hands every worker the same start instant, and the stop flags.
//!
//! The gate is not a `std::sync::Barrier`: a worker that panics before reaching
//! a barrier leaves everyone else waiting forever. Each worker holds a
//! `StartTicket` instead; a ticket dropped unused (the worker failed or
//! panicked during set-up) still counts its worker as arrived, and fails the point.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a worker may keep waiting for its I/Os once it has seen the stop:
/// what is still in flight then is abandoned (a stalled target must not hold
/// the run past its planned end). A second Ctrl-C abandons at once.
pub const DRAIN_BUDGET: Duration = Duration::from_millis(500);

/// How long the main thread waits, after the stop, for every worker to end
/// (they give up on what is in flight after `DRAIN_BUDGET`). After it, a
/// worker that still shows signs of life is waited for; one that does not is
/// left behind (stuck in a system call on a stalled target).
pub const STOP_BUDGET: Duration = Duration::from_millis(1000);

/// A worker whose last heartbeat is at most this old is alive: merely
/// descheduled on a busy machine, not stuck. It beats at least every
/// `WAIT_SLICE` (50 ms) while it can run.
pub const HEARTBEAT_FRESH: Duration = Duration::from_millis(250);

/// The longest the main thread waits, after the stop, for a live worker that
/// has not drained its I/Os.
pub const STOP_CAP: Duration = Duration::from_secs(10);

pub struct Control {
    workers: usize,
    gate: Mutex<Gate>,
    opened: Condvar,
    /// Set by the main thread (time is up, Ctrl-C) or by a failing worker.
    pub stop: AtomicBool,
    /// Set when a worker failed.
    pub failed: AtomicBool,
    /// Set on a second Ctrl-C or SIGTERM: stop waiting for anything in flight.
    pub hurry: AtomicBool,
    /// Per worker: done with its I/Os (completed or abandoned). What it does
    /// after that (writing a write-back cache's dirty blocks to a target that
    /// answers) may take longer than the stop budget, and is waited for.
    pub drained: Vec<AtomicBool>,
    /// Per worker: when its loop last woke up, in nanoseconds since `born`
    /// (0: never). Tells a worker that is slow to end from one that is stuck.
    /// Each on a cache line of its own: every worker stores its own once per
    /// wake-up, and neighbours sharing a line would bounce it between cores.
    heartbeat: Vec<OwnLine<AtomicU64>>,
    born: Instant,
}

/// A value alone on its cache line (128 bytes: two 64-byte lines, as
/// adjacent-line prefetchers pull pairs).
#[repr(align(128))]
struct OwnLine<T>(T);

struct Gate {
    arrived: usize,
    start: Option<Instant>,
}

/// A worker's place at the start gate: used once (`wait_for_start`), or counted
/// as arrived-and-failed when dropped unused.
pub struct StartTicket {
    ctl: Arc<Control>,
    used: bool,
}

impl Control {
    /// For `workers` worker threads plus the main thread.
    pub fn new(workers: usize) -> Self {
        Control {
            workers,
            gate: Mutex::new(Gate { arrived: 0, start: None }),
            opened: Condvar::new(),
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            hurry: AtomicBool::new(false),
            drained: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            heartbeat: (0..workers).map(|_| OwnLine(AtomicU64::new(0))).collect(),
            born: Instant::now(),
        }
    }

    /// One ticket per worker.
    pub fn ticket(self: &Arc<Self>) -> StartTicket {
        StartTicket { ctl: self.clone(), used: false }
    }

    /// Main thread: waits until every worker is set up (or gone), fixes the
    /// start instant, then releases them all at once.
    pub fn start(&self) -> Instant {
        let mut gate = self.lock();
        while gate.arrived < self.workers {
            gate = self.opened.wait(gate).unwrap_or_else(|p| p.into_inner());
        }
        let t0 = *gate.start.get_or_insert_with(Instant::now);
        self.opened.notify_all();
        t0
    }

    fn arrive(&self) {
        let mut gate = self.lock();
        gate.arrived += 1;
        self.opened.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Gate> {
        // A poisoned gate only means a thread panicked while holding it; the
        // counts inside are still right (they are plain additions).
        self.gate.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Worker `w`: its loop woke up at `now`. Once per wake-up (a reap batch
    /// or a wait slice), never per I/O.
    pub fn beat(&self, w: usize, now: Instant) {
        let nanos = now.saturating_duration_since(self.born).as_nanos().max(1) as u64;
        self.heartbeat[w].0.store(nanos, Ordering::Relaxed);
    }

    /// Worker `w` beat within `HEARTBEAT_FRESH` before `now`.
    fn alive(&self, w: usize, now: Instant) -> bool {
        let last = self.heartbeat[w].0.load(Ordering::Relaxed);
        last != 0 && now.saturating_duration_since(self.born + Duration::from_nanos(last)) <= HEARTBEAT_FRESH
    }

    /// Main thread, after the stop at `stopped`: whether to keep waiting for
    /// the workers in `waiting`, which have not ended yet. Within
    /// `STOP_BUDGET` always; after it, while every one has drained its I/Os
    /// (writing a cache back may take long), or up to `STOP_CAP` while one is
    /// alive. Never after a second signal.
    pub fn keep_waiting(&self, waiting: &[usize], stopped: Instant, now: Instant) -> bool {
        let since = now.saturating_duration_since(stopped);
        if since < STOP_BUDGET {
            return true;
        }
        if self.hurry.load(Ordering::Relaxed) {
            return false;
        }
        let drained = |w: usize| self.drained[w].load(Ordering::SeqCst);
        waiting.iter().all(|&w| drained(w)) || (since < STOP_CAP && waiting.iter().any(|&w| !drained(w) && self.alive(w, now)))
    }

    pub fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl StartTicket {
    /// Worker: reports ready, waits for the go, and returns the common start.
    pub fn wait_for_start(mut self) -> Instant {
        self.used = true;
        self.ctl.arrive();
        let mut gate = self.ctl.lock();
        loop {
            if let Some(t0) = gate.start {
                return t0;
            }
            gate = self.ctl.opened.wait(gate).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for StartTicket {
    fn drop(&mut self) {
        if !self.used {
            // The worker never reached the gate (it panicked while setting up):
            // the point cannot run as planned, and nobody may wait for it.
            self.ctl.fail();
            self.ctl.arrive();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each heartbeat has its cache lines to itself.
    #[test]
    fn heartbeats_do_not_share_cache_lines() {
        let ctl = Control::new(2);
        let (a, b) = (&ctl.heartbeat[0].0 as *const _ as usize, &ctl.heartbeat[1].0 as *const _ as usize);
        assert!(b - a >= 128 && a % 128 == 0, "{a:#x} {b:#x}");
    }

    #[test]
    fn a_worker_that_dies_before_the_gate_does_not_block_the_start() {
        let ctl = Arc::new(Control::new(2));
        let (a, b) = (ctl.ticket(), ctl.ticket());
        let waiting = std::thread::spawn(move || a.wait_for_start());
        let dying = std::thread::spawn(move || {
            let _ticket = b;
            panic!("set-up failed");
        });
        assert!(dying.join().is_err());
        let t0 = ctl.start();
        assert_eq!(waiting.join().unwrap(), t0);
        assert!(ctl.failed.load(Ordering::SeqCst) && ctl.stop.load(Ordering::SeqCst));
    }

    /// The main thread's wait after the stop, as `run_point` does it: until
    /// the worker ends or `keep_waiting` says no. Returns whether it ended, and when.
    fn wait_after_stop(ctl: &Control, worker: std::thread::JoinHandle<()>) -> (bool, Duration) {
        let stopped = Instant::now();
        ctl.stop.store(true, Ordering::SeqCst);
        while ctl.keep_waiting(&[0], stopped, Instant::now()) {
            if worker.is_finished() {
                return (true, stopped.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        (worker.is_finished(), stopped.elapsed())
    }

    #[test]
    fn a_slow_worker_that_beats_is_waited_for_past_the_stop_budget() {
        let ctl = Arc::new(Control::new(1));
        let c = ctl.clone();
        // Like a worker descheduled on a busy machine: it takes 2 s to end
        // after the stop, but its loop keeps waking up.
        let worker = std::thread::spawn(move || {
            while !c.stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            let end = Instant::now() + Duration::from_secs(2);
            while Instant::now() < end {
                c.beat(0, Instant::now());
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let (ended, waited) = wait_after_stop(&ctl, worker);
        assert!(ended, "waited {waited:?} only");
        assert!(waited >= Duration::from_secs(2) && waited < STOP_CAP, "{waited:?}");
    }

    #[test]
    fn a_worker_that_stops_beating_is_left_after_the_stop_budget() {
        let ctl = Arc::new(Control::new(1));
        let c = ctl.clone();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        // Like a worker blocked in a system call on a stalled target: it beat
        // while it ran, then nothing until it is released.
        let worker = std::thread::spawn(move || {
            c.beat(0, Instant::now());
            let _ = release_rx.recv();
        });
        let (ended, waited) = wait_after_stop(&ctl, worker);
        assert!(!ended);
        assert!(waited >= STOP_BUDGET && waited < STOP_BUDGET + Duration::from_millis(500), "{waited:?}");
        release_tx.send(()).unwrap();
    }

    #[test]
    fn no_waiting_past_the_cap_or_after_a_second_signal() {
        let ctl = Control::new(1);
        let stopped = Instant::now();
        let later = stopped + STOP_BUDGET + Duration::from_millis(100);
        ctl.beat(0, later);
        assert!(ctl.keep_waiting(&[0], stopped, later), "alive");
        assert!(!ctl.keep_waiting(&[0], stopped, later + HEARTBEAT_FRESH + Duration::from_millis(1)), "silent too long");
        ctl.beat(0, stopped + STOP_CAP);
        assert!(!ctl.keep_waiting(&[0], stopped, stopped + STOP_CAP), "alive, but at the cap");
        ctl.beat(0, later);
        ctl.hurry.store(true, Ordering::SeqCst);
        assert!(!ctl.keep_waiting(&[0], stopped, later), "second signal");
    }
}
