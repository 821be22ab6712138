//! Engines move bytes between a worker's buffers and its targets. They follow
//! fio's lifecycle in a smaller shape: `queue` prepares one I/O, `reap` submits
//! everything queued and collects completions. An engine never measures time or
//! formats output: the worker does that around these two calls.
//!
//! Each worker owns one engine instance and one `BufferPool`, with one buffer per
//! in-flight slot; a request names its slot, so completions come back by slot
//! (the io_uring `user_data` is the slot index).

use std::io;
use std::time::Duration;

use crate::workload::Op;

pub mod buffers;
pub mod cache;
pub mod factory;
pub mod iscsi;
pub mod kind;
pub mod mem;
pub mod nbd;
pub mod ops;
pub mod psync;
pub mod uring;

pub use buffers::BufferPool;
pub use kind::{Capabilities, EngineKind};

/// One I/O for an engine: which slot (and so which buffer), which of the
/// worker's targets, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub slot: u32,
    /// Index into the engine's own target list.
    pub target: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
}

/// A finished I/O: bytes transferred, or a negative errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i64,
}

/// Behind a cache tier, what served a completed I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// The cache did, without touching the target.
    Hit,
    /// The target did (a read that missed, a write sent on to the target).
    Miss,
}

pub trait Engine {
    /// Which engine this is (a cache tier answers for the engine behind it).
    fn kind(&self) -> EngineKind;

    /// What it can do: its kind's declared capabilities.
    fn capabilities(&self) -> Capabilities {
        self.kind().capabilities()
    }

    /// Prepares one I/O. Writes take their data from `buffers().slot(req.slot)`;
    /// reads land there. The slot's buffer must not be touched until the
    /// completion for that slot is reaped.
    ///
    /// # Safety
    /// `req.slot` must be free: no I/O queued on it earlier is still in flight
    /// (its completion has been reaped, or it was never used). An engine hands
    /// the slot's buffer to the kernel or a library that reads or writes it
    /// until the I/O completes; a second I/O on the same slot would let two
    /// transfers race on one buffer, and io_uring's would land in memory the
    /// worker is filling. The worker keeps a busy flag per slot and checks it
    /// in debug builds.
    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()>;

    /// Submits everything queued, then waits until at least `min` completions are
    /// ready or `timeout` has passed, and appends the ready ones to `out`.
    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()>;

    /// The worker's buffers, one per slot.
    fn buffers(&mut self) -> &mut BufferPool;

    /// Called once when the worker is done and nothing is in flight: work the
    /// engine still owes the target (a write-back cache's dirty blocks).
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// True for a cache tier: the worker then asks `cache_outcomes` after each reap.
    fn has_cache(&self) -> bool {
        false
    }

    /// Behind a cache tier: what served each completion of the last `reap`,
    /// `outcomes[k]` for `done[k]` (None: an I/O that is no hit or miss, a
    /// trim or a sync). Called once per reap, before any slot is queued again.
    /// `outcomes` is cleared first; it never grows past its capacity when
    /// that holds every slot.
    fn cache_outcomes(&self, done: &[Completion], outcomes: &mut Vec<Option<CacheOutcome>>) {
        let _ = done;
        outcomes.clear();
    }
}

/// Engines that talk to a server over sockets (NBD, iSCSI): they collect what
/// the library has finished, and wait on their sockets for more.
pub trait Polled {
    /// Appends finished commands to `out`.
    fn collect(&mut self, out: &mut Vec<Completion>) -> io::Result<()>;
    /// Commands in flight (not yet collected).
    fn in_flight(&self) -> usize;
    /// Waits up to `timeout` for the sockets and lets the library run.
    fn wait(&mut self, timeout: Duration) -> io::Result<()>;
}

/// `Engine::reap` for a polled engine: until `min` completions (or all that are
/// in flight) are collected, or `timeout` has passed.
pub fn reap_polled(e: &mut impl Polled, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
    let start = out.len();
    let deadline = std::time::Instant::now() + timeout.unwrap_or(Duration::from_secs(3600));
    loop {
        e.collect(out)?;
        let got = out.len() - start;
        if min == 0 || got >= min.min(got + e.in_flight()) {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        e.wait(left)?;
    }
}

/// Turns a completion result into an error when it is negative or short.
pub fn completion_error(result: i64, expected: u32) -> Option<i32> {
    if result < 0 {
        Some((-result) as i32)
    } else if result < expected as i64 {
        // A short transfer: the target ended or shrank under the I/O.
        Some(SHORT_TRANSFER)
    } else {
        None
    }
}

pub use crate::metrics::errno::SHORT_TRANSFER;

pub use crate::metrics::errno::errno_name;
