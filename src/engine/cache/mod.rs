//! The host-side cache tier (`--cache`): an engine in front of any other
//! engine, like the flash cache the QLogic adapter keeps in front of an array.
//! It is transparent to the workload: the worker queues and reaps as usual.
//!
//! - A read whose blocks are all held is a hit: it is copied from the cache and
//!   completes without touching the target. Any other read is a miss: it goes to
//!   the target through the inner engine (as many misses in flight as the worker
//!   has I/Os: nothing is serialized), and its blocks join the cache when it ends.
//! - Writes, by mode: `writethrough` sends them to the target and keeps the data
//!   in the cache when they end; `readonly` sends them to the target and drops
//!   the blocks from the cache; `writeback` keeps them in the cache only
//!   (dirty) and completes at once; a dirty block pushed out of the cache, and
//!   every dirty block at the end of the run (`finish`), is written to the
//!   target through the inner engine on slots of its own.
//!
//! The tier keeps what served each slot's I/O (hit or miss); the worker asks
//! for it once after each reap (`cache_outcomes`), so hits and misses are
//! measured apart without a field on every engine's completions.

pub mod config;
pub use crate::targets::cache_store as store;

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{BufferPool, CacheOutcome, Completion, Engine, EngineKind, IoRequest};
use crate::workload::Op;
pub use store::{CacheMode, TargetCache};

/// What a slot's I/O in the inner engine is for.
#[derive(Clone, Copy)]
enum Pending {
    /// A worker I/O to a target without a cache.
    Direct,
    /// A worker read that missed; its blocks fill the cache when it ends.
    ReadMiss { target: u32, offset: u64, len: u32 },
    /// A worker write that goes to the target (writethrough, readonly).
    Write { target: u32, offset: u64, len: u32 },
    /// The cache writing a dirty block back (an internal slot).
    WriteBack { target: u32, block: u64 },
}

pub struct CacheEngine {
    inner: Box<dyn Engine>,
    /// The cache of each of the engine's targets (None: that target has no cache).
    caches: Vec<Option<Arc<TargetCache>>>,
    mode: CacheMode,
    /// Slots below this are the worker's; the rest are for write-backs.
    user_slots: u32,
    pending: Vec<Option<Pending>>,
    /// Per slot: what served the worker's I/O on it (set when it is queued,
    /// read after it is reaped and before the slot is queued again).
    outcomes: Vec<Option<CacheOutcome>>,
    free_internal: Vec<u32>,
    /// Dirty blocks waiting for an internal slot: (target, block, data).
    backlog: VecDeque<(u32, u64, Vec<u8>)>,
    /// Hits, completed at queue time, handed out at the next reap.
    ready: Vec<Completion>,
    scratch: Vec<Completion>,
    /// The first write-back that failed: the run fails with it.
    failed: Option<String>,
}

impl CacheEngine {
    /// `inner` must have been built over a pool of `user_slots` + some internal slots.
    pub fn new(inner: Box<dyn Engine>, caches: Vec<Option<Arc<TargetCache>>>, mode: CacheMode, user_slots: u32) -> CacheEngine {
        let mut inner = inner;
        let total = inner.buffers().slots() as u32;
        CacheEngine {
            inner,
            caches,
            mode,
            user_slots,
            pending: vec![None; total as usize],
            outcomes: vec![None; total as usize],
            free_internal: (user_slots..total).rev().collect(),
            backlog: VecDeque::new(),
            ready: Vec::new(),
            scratch: Vec::new(),
            failed: None,
        }
    }

    fn cache(&self, target: u32) -> Option<Arc<TargetCache>> {
        self.caches.get(target as usize).cloned().flatten()
    }

    /// Starts as many queued write-backs as there are free internal slots.
    fn start_write_backs(&mut self) -> io::Result<()> {
        while let (Some(&slot), false) = (self.free_internal.last(), self.backlog.is_empty()) {
            let (target, block, data) = self.backlog.pop_front().expect("checked non-empty");
            self.free_internal.pop();
            self.inner.buffers().slot(slot)[..data.len()].copy_from_slice(&data);
            let offset = block * data.len() as u64;
            self.pending[slot as usize] = Some(Pending::WriteBack { target, block });
            // SAFETY: `slot` was just taken from `free_internal`: an internal
            // slot (above the worker's) whose last write-back has been absorbed.
            unsafe { self.inner.queue(IoRequest { slot, target, op: Op::Write, offset, len: data.len() as u32 })? };
        }
        Ok(())
    }

    /// Handles completions from the inner engine: cache fills, write-backs
    /// retired, and the worker's completions passed on (marked hit or miss).
    fn absorb(&mut self, done: &mut Vec<Completion>, out: &mut Vec<Completion>) -> io::Result<()> {
        for c in done.drain(..) {
            let Some(p) = self.pending[c.slot as usize].take() else { continue };
            let ok = super::completion_error(c.result, 1).is_none();
            match p {
                Pending::Direct => out.push(c),
                Pending::ReadMiss { target, offset, len } | Pending::Write { target, offset, len } => {
                    let cache = self.cache(target).expect("pending cache I/O has a cache");
                    let fills = matches!(p, Pending::ReadMiss { .. }) || self.mode == CacheMode::Writethrough;
                    if ok && fills {
                        let evicted = cache.fill(offset, len, &self.inner.buffers().slot(c.slot)[..len as usize], false)?;
                        self.backlog.extend(evicted.into_iter().map(|e| (target, e.block, e.data)));
                    }
                    out.push(c);
                }
                Pending::WriteBack { target, block } => {
                    self.free_internal.push(c.slot);
                    if let Some(cache) = self.cache(target) {
                        cache.written_back(block, ok);
                    }
                    if !ok && self.failed.is_none() {
                        let errno = super::completion_error(c.result, 1).unwrap_or(libc::EIO);
                        self.failed = Some(format!("writing a dirty cache block back to the target failed: {}", super::errno_name(errno)));
                    }
                }
            }
        }
        self.start_write_backs()
    }

    /// Waits for the inner engine once, keeping worker completions in `ready`.
    fn step(&mut self) -> io::Result<()> {
        let mut done = std::mem::take(&mut self.scratch);
        let mut ready = std::mem::take(&mut self.ready);
        let r = self.inner.reap(1, Some(Duration::from_millis(50)), &mut done).and_then(|_| self.absorb(&mut done, &mut ready));
        self.scratch = done;
        self.ready = ready;
        r
    }

    fn internal_busy(&self) -> bool {
        self.free_internal.len() < self.pending.len() - self.user_slots as usize
    }
}

impl Engine for CacheEngine {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }

    fn has_cache(&self) -> bool {
        true
    }

    fn cache_outcomes(&self, done: &[Completion], outcomes: &mut Vec<Option<CacheOutcome>>) {
        outcomes.clear();
        outcomes.extend(done.iter().map(|c| self.outcomes[c.slot as usize]));
    }

    // Every `self.inner.queue(req)` below passes on the worker's request for
    // the same slot: free by this function's own contract, and never one of
    // the internal slots the write-backs use.
    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        // No hit or miss unless a branch below says so (trims, syncs, targets without a cache).
        self.outcomes[req.slot as usize] = None;
        let Some(cache) = self.cache(req.target) else {
            self.pending[req.slot as usize] = Some(Pending::Direct);
            return self.inner.queue(req);
        };
        let (target, offset, len) = (req.target, req.offset, req.len);
        match req.op {
            Op::Trim => {
                // The trimmed blocks leave the cache, dirty ones too (their data
                // is discarded, not owed to the target); a block on its way
                // back must land first, or it would undo the trim.
                while cache.writing_back(offset, len) || self.backlog.iter().any(|(t, b, _)| *t == target && cache.covers(offset, len, *b))
                {
                    self.start_write_backs()?;
                    self.step()?;
                }
                cache.invalidate(offset, len);
                self.pending[req.slot as usize] = Some(Pending::Direct);
                self.inner.queue(req)
            }
            // A sync goes to the target. A write-back cache's dirty blocks are
            // not written back by it: the cache stands for an array's
            // battery-backed cache, which a flush does not empty either.
            Op::Sync | Op::DataSync => {
                self.pending[req.slot as usize] = Some(Pending::Direct);
                self.inner.queue(req)
            }
            Op::Read => {
                // A block on its way back to the target must land before the target is read.
                while cache.writing_back(offset, len) {
                    self.start_write_backs()?;
                    self.step()?;
                }
                if cache.read_hit(offset, len, &mut self.inner.buffers().slot(req.slot)[..len as usize])? {
                    self.outcomes[req.slot as usize] = Some(CacheOutcome::Hit);
                    self.ready.push(Completion { slot: req.slot, result: len as i64 });
                    return Ok(());
                }
                self.outcomes[req.slot as usize] = Some(CacheOutcome::Miss);
                self.pending[req.slot as usize] = Some(Pending::ReadMiss { target, offset, len });
                self.inner.queue(req)
            }
            Op::Write if self.mode == CacheMode::Writeback => {
                // Bound the dirty blocks still owed to the target: when they pile
                // up, the worker waits for the target, as a real cache does.
                while self.backlog.len() > self.user_slots as usize {
                    self.step()?;
                }
                let evicted = cache.fill(offset, len, &self.inner.buffers().slot(req.slot)[..len as usize], true)?;
                self.backlog.extend(evicted.into_iter().map(|e| (target, e.block, e.data)));
                self.start_write_backs()?;
                self.outcomes[req.slot as usize] = Some(CacheOutcome::Hit);
                self.ready.push(Completion { slot: req.slot, result: len as i64 });
                Ok(())
            }
            Op::Write => {
                if self.mode == CacheMode::Readonly {
                    cache.invalidate(offset, len);
                }
                self.outcomes[req.slot as usize] = Some(CacheOutcome::Miss);
                self.pending[req.slot as usize] = Some(Pending::Write { target, offset, len });
                self.inner.queue(req)
            }
        }
    }

    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        if let Some(why) = self.failed.take() {
            return Err(io::Error::other(why));
        }
        let mut done = std::mem::take(&mut self.scratch);
        let r = if self.ready.is_empty() {
            self.inner.reap(min, timeout, &mut done)
        } else {
            // Hits are ready now: only collect what the target has already finished.
            out.append(&mut self.ready);
            self.inner.reap(0, Some(Duration::ZERO), &mut done)
        };
        let r = r.and_then(|_| self.absorb(&mut done, out));
        self.scratch = done;
        out.append(&mut self.ready);
        r
    }

    fn buffers(&mut self) -> &mut BufferPool {
        self.inner.buffers()
    }

    fn finish(&mut self) -> io::Result<()> {
        for cache in self.caches.iter().enumerate().filter_map(|(t, c)| c.clone().map(|c| (t as u32, c))).collect::<Vec<_>>() {
            let (target, cache) = cache;
            let dirty = cache.take_dirty()?;
            self.backlog.extend(dirty.into_iter().map(|e| (target, e.block, e.data)));
        }
        self.start_write_backs()?;
        while !self.backlog.is_empty() || self.internal_busy() {
            self.step()?;
        }
        match self.failed.take() {
            Some(why) => Err(io::Error::other(why)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mem::{MemEngine, MemLun};

    /// A writethrough cache over a mem: LUN says, after each reap, what served
    /// each completion: the figures the worker splits latency by.
    #[test]
    fn the_tier_says_what_served_each_completion() {
        let user = 2;
        let lun = Arc::new(MemLun::new(1 << 20).unwrap());
        let inner = Box::new(MemEngine::new(vec![lun], BufferPool::new(user + 4, 4096, 1)));
        let cache = Arc::new(TargetCache::new(64, 4096, None).unwrap());
        let mut e = CacheEngine::new(inner, vec![Some(cache)], CacheMode::Writethrough, user as u32);
        assert!(e.has_cache());
        let mut outcomes = Vec::with_capacity(user);
        let mut run = |e: &mut CacheEngine, req: IoRequest| {
            // SAFETY: each request is reaped below before the next is queued.
            unsafe { e.queue(req) }.unwrap();
            let mut done = Vec::new();
            e.reap(1, Some(Duration::from_secs(1)), &mut done).unwrap();
            assert_eq!((done.len(), done[0].slot), (1, req.slot));
            assert!(done[0].result >= 0, "{:?} failed: {}", req.op, done[0].result);
            e.cache_outcomes(&done, &mut outcomes);
            assert_eq!(outcomes.capacity(), user, "no allocation");
            outcomes[0]
        };
        let read = IoRequest { slot: 0, target: 0, op: Op::Read, offset: 8192, len: 4096 };
        assert_eq!(run(&mut e, read), Some(CacheOutcome::Miss), "a cold read goes to the target");
        assert_eq!(run(&mut e, IoRequest { slot: 1, ..read }), Some(CacheOutcome::Hit), "its block is held now");
        let write = IoRequest { op: Op::Write, offset: 0, ..read };
        assert_eq!(run(&mut e, write), Some(CacheOutcome::Miss), "writethrough sends a write on to the target");
        assert_eq!(run(&mut e, IoRequest { op: Op::Read, ..write }), Some(CacheOutcome::Hit), "and keeps its data");
        assert_eq!(run(&mut e, IoRequest { op: Op::Trim, ..read }), None, "a trim is no hit or miss");
        assert_eq!(run(&mut e, IoRequest { op: Op::Sync, offset: 0, len: 0, ..read }), None, "nor is a sync");
        e.finish().unwrap();
    }
}
