//! What the main thread and the workers of one point share: a start gate that
//! hands every worker the same start instant, and the stop flags.
//!
//! The gate is not a `std::sync::Barrier`: a worker that panics before reaching
//! a barrier leaves everyone else waiting forever. Each worker holds a
//! `StartTicket` instead; a ticket dropped unused (the worker failed or
//! panicked during set-up) still counts its worker as arrived, and fails the point.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a worker may keep waiting for its I/Os once it has seen the stop:
/// what is still in flight then is abandoned (a stalled target must not hold
/// the run past its planned end). A second Ctrl-C abandons at once.
pub const DRAIN_BUDGET: Duration = Duration::from_millis(500);

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
}

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
}
