//! The `mem:` engine: an in-process RAM LUN with no kernel in the path. Each I/O
//! is a memcpy between the slot buffer and the LUN, completed at once. It gives
//! the ceiling of lunmark itself, as fio's null engine does for fio.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{BufferPool, Capabilities, Completion, Engine, EngineKind, IoRequest};
use crate::workload::Op;

pub use crate::targets::mem_lun::MemLun;

pub struct MemEngine {
    /// None: a null: target, which completes every I/O without moving data.
    luns: Option<Vec<Arc<MemLun>>>,
    pool: BufferPool,
    done: VecDeque<Completion>,
}

impl MemEngine {
    pub fn new(luns: Vec<Arc<MemLun>>, pool: BufferPool) -> Self {
        let done = VecDeque::with_capacity(pool.slots());
        MemEngine { luns: Some(luns), pool, done }
    }

    /// Every I/O completes at queue time: no depth limit, nothing to poll, no page cache.
    pub const CAPABILITIES: Capabilities = Capabilities { max_in_flight: None, max_qd: None, polling: false, direct_or_buffered: false };

    /// The engine of null: targets: every I/O completes at once, no bytes move.
    pub fn null(pool: BufferPool) -> Self {
        let done = VecDeque::with_capacity(pool.slots());
        MemEngine { luns: None, pool, done }
    }
}

impl Engine for MemEngine {
    fn kind(&self) -> EngineKind {
        if self.luns.is_some() {
            EngineKind::Mem
        } else {
            EngineKind::Null
        }
    }

    #[inline]
    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let Some(luns) = &self.luns else {
            self.done.push_back(Completion { slot: req.slot, result: req.len as i64 });
            return Ok(());
        };
        let lun = &luns[req.target as usize];
        let buf = self.pool.slot_ptr(req.slot);
        let len = req.len as usize;
        assert!(len <= self.pool.slot_size());
        // SAFETY: the slot buffer holds at least `len` bytes (asserted) and lies in the
        // pool's own allocation, which never overlaps the LUN mapping.
        let ok = unsafe {
            match req.op {
                Op::Read => lun.read_into(req.offset, buf, len),
                Op::Write => lun.write_from(req.offset, buf, len),
                Op::Trim => lun.zero(req.offset, len),
                // Nothing volatile to flush: the data is in the LUN already.
                Op::Sync | Op::DataSync => true,
            }
        };
        let result = match (ok, req.op) {
            (false, _) => -(libc::EINVAL as i64),
            (true, Op::Read | Op::Write) => req.len as i64,
            (true, _) => 0,
        };
        self.done.push_back(Completion { slot: req.slot, result });
        Ok(())
    }

    fn reap(&mut self, _min: usize, _timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        out.extend(self.done.drain(..));
        Ok(())
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.pool
    }
}
