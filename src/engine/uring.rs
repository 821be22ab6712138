//! The io_uring engine: registered buffers (one per slot) and registered files,
//! batched submission (every queued I/O goes in with the next wait, one syscall)
//! and batched reaping. `user_data` is the slot index.
//!
//! Waits must be bounded (so a stalled device cannot keep a worker from seeing
//! Ctrl-C or the end of the run), but a timeout on every io_uring_enter arms a
//! kernel timer per call. Instead one multishot timeout request ticks every
//! `TICK_PERIOD` and wakes any wait; older kernels fall back to per-call timeouts.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{opcode, types, IoUring};

use super::{BufferPool, Completion, Engine, IoRequest};
use crate::workload::Op;

/// `user_data` of the tick request (slots are u32, so it never collides).
const TICK: u64 = u64::MAX;
const TICK_PERIOD: Duration = Duration::from_millis(50);

pub struct UringEngine {
    ring: IoUring,
    /// The tick's timespec; the kernel copies it when the request is prepared,
    /// it is kept here only so its address stays valid until then.
    _tick: Box<types::Timespec>,
    /// The kernel accepted the multishot tick (false: use per-call timeouts).
    ticking: bool,
    pool: Option<BufferPool>,
    /// Buffers registered with the ring (ReadFixed/WriteFixed) or not (Read/Write).
    fixed_buffers: bool,
    in_flight: usize,
    /// Per target: a block device (trims are discards) or a file (trims punch holes).
    devices: Vec<bool>,
}

/// io_uring's block-device discard (linux/blkdev.h, `_IO(0x12, 0)`, Linux
/// 6.12 and later): an IORING_OP_URING_CMD whose `addr` is the start and
/// `addr3` (the first 8 bytes of the command) the length, both in bytes.
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// How completions' task work runs. Measured on this project's 2-core VM with
/// 4 KiB random reads at QD 32 (lunmark run, 3 s, alternating):
/// - a file on tmpfs (reads punted to io-wq): deferred 623-637K IOPS at
///   2.1 CPU-s per million I/Os, cooperative 557-568K at 2.4;
/// - a loop device: cooperative 410-420K IOPS at 2.2, deferred 367-369K at 2.8.
///
/// So files use deferred task run and block devices cooperative (see `for_devices`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskRun {
    /// IORING_SETUP_DEFER_TASKRUN: completions are processed only when we wait.
    Deferred,
    /// IORING_SETUP_COOP_TASKRUN: processed at the next kernel entry, without an IPI.
    Cooperative,
}

impl TaskRun {
    pub fn for_devices(all_block_devices: bool) -> TaskRun {
        if all_block_devices {
            TaskRun::Cooperative
        } else {
            TaskRun::Deferred
        }
    }
}

/// The most submission-queue entries a ring may have (the kernel's
/// IORING_MAX_ENTRIES): a worker's slots (outstanding I/Os over all its
/// targets) must fit in one ring.
pub const MAX_ENTRIES: u32 = 32_768;

/// The ring size for a pool of `slots` buffers: a power of two, at least 8.
pub fn ring_entries(slots: usize) -> u32 {
    (slots.max(8) as u32).next_power_of_two()
}

/// Memory the kernel allocates for a ring of `entries`: 64-byte submission
/// entries and their index array, and twice as many 16-byte completions.
pub fn ring_bytes(entries: u32) -> u64 {
    entries as u64 * (64 + 4) + 2 * entries as u64 * 16
}

/// True when this kernel lets us set up a ring (io_uring may be disabled by sysctl).
pub fn available() -> bool {
    IoUring::new(2).is_ok()
}

/// The 16 command bytes of a discard: the length in `addr3`, the rest zero.
#[inline]
fn discard_len(len: u32) -> [u8; 16] {
    let mut cmd = [0u8; 16];
    cmd[..8].copy_from_slice(&(len as u64).to_le_bytes());
    cmd
}

impl UringEngine {
    /// `fds` must stay open while the engine lives (the targets own them).
    pub fn new(fds: &[RawFd], pool: BufferPool, taskrun: TaskRun) -> io::Result<Self> {
        let entries = ring_entries(pool.slots());
        // Each worker creates and uses its own ring on its own thread, as
        // single-issuer requires.
        let preferred = match taskrun {
            TaskRun::Deferred => IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(entries),
            TaskRun::Cooperative => IoUring::builder().setup_single_issuer().setup_coop_taskrun().build(entries),
        };
        let ring = preferred.or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries)).or_else(|_| IoUring::new(entries))?;
        let iovecs = pool.iovecs();
        // SAFETY: the iovecs point into `pool`, which this engine owns and keeps alive
        // (or leaks, see Drop) for as long as the ring exists.
        let fixed_buffers = pool.slots() <= u16::MAX as usize && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        ring.submitter().register_files(fds)?;
        let tick = Box::new(types::Timespec::new().sec(TICK_PERIOD.as_secs()).nsec(TICK_PERIOD.subsec_nanos()));
        let devices = fds.iter().map(|&fd| super::ops::is_block_device(fd)).collect();
        let mut engine = UringEngine { ring, _tick: tick, ticking: false, pool: Some(pool), fixed_buffers, in_flight: 0, devices };
        let entry = opcode::Timeout::new(&*engine._tick).flags(types::TimeoutFlags::MULTISHOT).build().user_data(TICK);
        // SAFETY: the timespec is boxed in the engine and outlives the submission;
        // a timeout request references no I/O buffer.
        engine.ticking = unsafe { engine.ring.submission().push(&entry) }.is_ok() && engine.ring.submit().is_ok();
        Ok(engine)
    }

    fn pool(&self) -> &BufferPool {
        self.pool.as_ref().expect("buffer pool present until drop")
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    #[inline]
    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let ptr = self.pool().slot_ptr(req.slot);
        let file = types::Fixed(req.target);
        let entry = match (req.op, self.fixed_buffers) {
            (Op::Read, true) => opcode::ReadFixed::new(file, ptr, req.len, req.slot as u16).offset(req.offset).build(),
            (Op::Write, true) => opcode::WriteFixed::new(file, ptr, req.len, req.slot as u16).offset(req.offset).build(),
            (Op::Read, false) => opcode::Read::new(file, ptr, req.len).offset(req.offset).build(),
            (Op::Write, false) => opcode::Write::new(file, ptr, req.len).offset(req.offset).build(),
            (Op::Trim, _) if self.devices[req.target as usize] => {
                opcode::UringCmd16::new(file, BLOCK_URING_CMD_DISCARD).addr(Some(req.offset)).cmd(discard_len(req.len)).build()
            }
            (Op::Trim, _) => opcode::Fallocate::new(file, req.len as u64).offset(req.offset).mode(super::ops::PUNCH_HOLE).build(),
            (Op::Sync, _) => opcode::Fsync::new(file).build(),
            (Op::DataSync, _) => opcode::Fsync::new(file).flags(types::FsyncFlags::DATASYNC).build(),
        }
        .user_data(req.slot as u64);
        loop {
            // SAFETY: the entry's buffer is the slot's buffer in our pool, which stays
            // allocated until the completion for this slot is reaped (the worker does
            // not reuse a slot before that, and Drop drains or leaks).
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                break;
            }
            // Submission queue full: hand the batch to the kernel and retry.
            self.ring.submit()?;
        }
        self.in_flight += 1;
        Ok(())
    }

    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        let min = min.min(self.in_flight);
        let result = match timeout {
            // The tick bounds the wait: at most TICK_PERIOD when nothing completes.
            // Shorter waits (paced workers waiting for the next due I/O) use a timeout.
            Some(t) if self.ticking && t >= TICK_PERIOD => self.ring.submit_and_wait(min),
            Some(t) if min > 0 => {
                let ts = types::Timespec::new().sec(t.as_secs()).nsec(t.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(min, &args)
            }
            _ => self.ring.submit_and_wait(min),
        };
        match result {
            Ok(_) => {}
            // A signal (Ctrl-C) or the timeout: return what is ready; the caller decides.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::ETIME) | Some(libc::EBUSY)) => {}
            Err(e) => return Err(e),
        }
        let before = out.len();
        for cqe in self.ring.completion() {
            if cqe.user_data() == TICK {
                // -ETIME is a normal tick; anything else (-EINVAL on kernels without
                // multishot timeouts) means there is no tick: use per-call timeouts.
                if cqe.result() != -libc::ETIME {
                    self.ticking = false;
                }
                continue;
            }
            out.push(Completion { slot: cqe.user_data() as u32, result: cqe.result() as i64, from_cache: None });
        }
        self.in_flight -= out.len() - before;
        Ok(())
    }

    fn buffers(&mut self) -> &mut BufferPool {
        self.pool.as_mut().expect("buffer pool present until drop")
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // The worker already waited (a bounded time) for what was in flight; what
        // is left belongs to a target that does not answer, and waiting here
        // would hold the run past its end. Take what is ready, no more.
        let mut sink = Vec::new();
        let _ = self.reap(0, None, &mut sink);
        if self.in_flight > 0 {
            // The kernel may still write into these buffers: never free them.
            // Closing the ring (below, when `ring` drops) cancels the requests;
            // the kernel finishes its teardown on its own.
            std::mem::forget(self.pool.take());
        }
    }
}
