//! The `psync` engine: one blocking pread/pwrite at a time per thread. The run
//! planner limits its workers to one outstanding I/O per target and warns when
//! more were asked for (fio's psync silently ignores iodepth).

use std::collections::VecDeque;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use super::{BufferPool, Capabilities, Completion, Engine, EngineKind, IoRequest};
use crate::workload::Op;

pub struct PsyncEngine {
    fds: Vec<RawFd>,
    /// Per target: a block device (trims are discards) or a file (holes).
    devices: Vec<bool>,
    pool: BufferPool,
    queued: VecDeque<IoRequest>,
}

impl PsyncEngine {
    /// `fds` must stay open for the engine's lifetime (the targets own them).
    pub fn new(fds: Vec<RawFd>, pool: BufferPool) -> Self {
        let devices = fds.iter().map(|&fd| super::ops::is_block_device(fd)).collect();
        PsyncEngine { fds, devices, pool, queued: VecDeque::new() }
    }

    /// One blocking call at a time per target; files and devices through
    /// descriptors, direct or buffered; no ring to poll.
    pub const CAPABILITIES: Capabilities = Capabilities { max_in_flight: None, max_qd: Some(1), polling: false, direct_or_buffered: true };
}

impl Engine for PsyncEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Psync
    }

    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        self.queued.push_back(req);
        Ok(())
    }

    fn reap(&mut self, _min: usize, _timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        while let Some(req) = self.queued.pop_front() {
            let fd = self.fds[req.target as usize];
            let buf = self.pool.slot_ptr(req.slot) as *mut libc::c_void;
            // SAFETY: the slot buffer is valid for slot_size >= req.len bytes and no
            // reference to it exists while the call runs; fd is open (owned by the target).
            let n = unsafe {
                match req.op {
                    Op::Read => libc::pread(fd, buf, req.len as usize, req.offset as libc::off_t),
                    Op::Write => libc::pwrite(fd, buf, req.len as usize, req.offset as libc::off_t),
                    Op::Trim => {
                        let r = super::ops::trim(fd, self.devices[req.target as usize], req.offset, req.len);
                        out.push(Completion { slot: req.slot, result: r });
                        continue;
                    }
                    Op::Sync | Op::DataSync => {
                        out.push(Completion { slot: req.slot, result: super::ops::sync(fd, req.op == Op::DataSync) });
                        continue;
                    }
                }
            };
            let result = if n < 0 { -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64) } else { n as i64 };
            out.push(Completion { slot: req.slot, result });
        }
        Ok(())
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.pool
    }
}
