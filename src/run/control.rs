//! What the main thread and the workers of one point share: a start barrier that
//! hands every worker the same start instant, and a stop flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::Instant;

pub struct Control {
    barrier: Barrier,
    start: OnceLock<Instant>,
    /// Set by the main thread (time is up, Ctrl-C) or by a failing worker.
    pub stop: AtomicBool,
    /// Set when a worker failed.
    pub failed: AtomicBool,
}

impl Control {
    /// For `workers` worker threads plus the main thread.
    pub fn new(workers: usize) -> Self {
        Control { barrier: Barrier::new(workers + 1), start: OnceLock::new(), stop: AtomicBool::new(false), failed: AtomicBool::new(false) }
    }

    /// Main thread: waits until every worker is set up, fixes the start instant,
    /// then releases them all at once (two barrier rounds: ready, go).
    pub fn start(&self) -> Instant {
        self.barrier.wait();
        let t0 = *self.start.get_or_init(Instant::now);
        self.barrier.wait();
        t0
    }

    /// Worker: reports ready, waits for the go, and returns the common start.
    pub fn wait_for_start(&self) -> Instant {
        self.barrier.wait();
        self.barrier.wait();
        *self.start.get().expect("start is set before the second barrier opens")
    }

    pub fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
        self.stop.store(true, Ordering::SeqCst);
    }
}
