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

use super::{BufferPool, Capabilities, Completion, Engine, EngineKind, IoRequest};
use crate::workload::polling::{Polling, SqPoll};
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
/// IORING_ENTER_GETEVENTS: an enter that also runs completions' task work.
const ENTER_GETEVENTS: u32 = 1;
/// How a worker's ring is set up: its task-run mode and the polling asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSetup {
    pub taskrun: TaskRun,
    pub polling: Polling,
}

impl RingSetup {
    pub fn new(all_block_devices: bool, polling: Polling) -> RingSetup {
        RingSetup { taskrun: TaskRun::for_devices(all_block_devices), polling }
    }
}

/// How completions' task work runs. Measured on this project's 2-core VM with
/// 4 KiB random reads at QD 32 (lunmark run, 3 s, alternating):
/// - a file on tmpfs (reads punted to io-wq): deferred 623-637K IOPS at
///   2.1 CPU-s per million I/Os, cooperative 557-568K at 2.4;
/// - a loop device: cooperative 410-420K IOPS at 2.2, deferred 367-369K at 2.8.
///
/// So files use deferred task run and block devices cooperative (see `for_devices`).
///
/// Against fio on a loop device (issue 14: lunmark 0.85x fio's IOPS there, at
/// 0.85x its CPU per I/O), traced with `strace -f -e io_uring_enter` over 2 s
/// each: fio 3.33 sets up SINGLE_ISSUER | DEFER_TASKRUN | COOP_TASKRUN with
/// CQSIZE = depth, and makes one io_uring_enter per I/O (to_submit 1,
/// min_complete 0, GETEVENTS: 7,705 enters for 7,705 I/Os, plus 234 waits for
/// one completion). lunmark made 605 enters for 13,369 I/Os (22 per enter; 376
/// of them submitted all 32): it hands the loop driver's worker the whole batch
/// at once and the two take turns, where fio keeps the worker fed one I/O at a
/// time. Submitting every queued I/O at once (and fio's ring flags) could not be
/// told apart from this on the shared, loaded VM (load average 11-15: the same
/// setting moved 3x between runs), so the batch stays; see BENCHMARKS.md.
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
    pub fn new(fds: &[RawFd], pool: BufferPool, setup: RingSetup) -> io::Result<Self> {
        let entries = ring_entries(pool.slots());
        let ring = if setup.polling.is_off() {
            // Each worker creates and uses its own ring on its own thread, as
            // single-issuer requires.
            let preferred = match setup.taskrun {
                TaskRun::Deferred => IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(entries),
                TaskRun::Cooperative => IoUring::builder().setup_single_issuer().setup_coop_taskrun().build(entries),
            };
            preferred.or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries)).or_else(|_| IoUring::new(entries))?
        } else {
            polled_ring(entries, setup.polling)?
        };
        let iovecs = pool.iovecs();
        // SAFETY: the iovecs point into `pool`, which this engine owns and keeps alive
        // (or leaks, see Drop) for as long as the ring exists.
        let fixed_buffers = pool.slots() <= u16::MAX as usize && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        ring.submitter().register_files(fds)?;
        let tick = Box::new(types::Timespec::new().sec(TICK_PERIOD.as_secs()).nsec(TICK_PERIOD.subsec_nanos()));
        let devices = fds.iter().map(|&fd| super::ops::is_block_device(fd)).collect();
        let mut engine = UringEngine { ring, _tick: tick, ticking: false, pool: Some(pool), fixed_buffers, in_flight: 0, devices };
        let entry = opcode::Timeout::new(&*engine._tick).flags(types::TimeoutFlags::MULTISHOT).build().user_data(TICK);
        // A polled-completion ring takes only I/O requests: no tick, per-call timeouts.
        // SAFETY: the timespec is boxed in the engine and outlives the submission;
        // a timeout request references no I/O buffer.
        engine.ticking = !setup.polling.poll && unsafe { engine.ring.submission().push(&entry) }.is_ok() && engine.ring.submit().is_ok();
        Ok(engine)
    }

    /// A worker's slots must fit in one ring; it polls; it reaches files and
    /// devices through descriptors, direct or buffered.
    pub const CAPABILITIES: Capabilities =
        Capabilities { max_in_flight: Some(MAX_ENTRIES), max_qd: None, polling: true, direct_or_buffered: true };

    /// Submits what is queued and collects the completions that are already
    /// done, without sleeping: one io_uring_enter with GETEVENTS and
    /// min_complete 0, as fio's io_uring engine does on every submit. With
    /// deferred task run, completions from io-wq (reads of a tmpfs file are
    /// punted there) are then gathered by this call instead of each waking the
    /// sleeping worker: `perf record` of a 3 s 4 KiB random read at QD 32 on a
    /// /dev/shm file showed 10% of all cycles in `try_to_wake_up` from
    /// `__io_req_task_work_add` for lunmark and 1.8% for fio. With this pass,
    /// 5 alternating pairs (same binary, pass off/on, 3 s each) gave 462-529K
    /// IOPS without it and 486-659K with it, higher in every pair; see BENCHMARKS.md
    /// for the rows against fio.
    fn collect_ready(&mut self) -> io::Result<()> {
        let queued = self.ring.submission().len() as u32;
        // SAFETY: no argument is passed (size 0); the submissions queued refer to
        // buffers of `pool`, registered and alive while the ring lives.
        match unsafe { self.ring.submitter().enter::<libc::sigset_t>(queued, 0, ENTER_GETEVENTS, None) } {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn pool(&self) -> &BufferPool {
        self.pool.as_ref().expect("buffer pool present until drop")
    }
}

/// A ring with the polling asked for, or the kernel's refusal: never a ring
/// without it (the setting would be accepted and ignored).
fn polled_ring(entries: u32, polling: Polling) -> io::Result<IoUring> {
    let mut b = IoUring::builder();
    if let Some(sq) = polling.sqpoll {
        // The poller sleeps after 1 s without submissions (the kernel's default)
        // and is woken by the next submit (io-uring's submit handles the wake-up).
        b.setup_sqpoll(1000);
        if let SqPoll::Cpu(cpu) = sq {
            b.setup_sqpoll_cpu(cpu);
        }
        // No task-run flags: the kernel refuses them with SQPOLL (completions
        // are posted by the poller, no IPI to avoid).
    } else {
        b.setup_single_issuer().setup_defer_taskrun();
    }
    if polling.poll {
        b.setup_iopoll();
    }
    b.build(entries).map_err(|e| io::Error::new(e.kind(), format!("the kernel refused an io_uring ring with {}: {e}", polling.flags())))
}

impl Engine for UringEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::IoUring
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
        let mut min = min.min(self.in_flight);
        if min > 0 && self.ring.completion().is_empty() {
            self.collect_ready()?;
            if !self.ring.completion().is_empty() {
                min = 0;
            }
        }
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
            out.push(Completion { slot: cqe.user_data() as u32, result: cqe.result() as i64 });
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
