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
    /// The ring registered with the worker's thread, when the kernel allowed it.
    registered: Option<RegisteredRing>,
}

/// A ring descriptor registered with one thread (IORING_REGISTER_RING_FDS,
/// Linux 5.18): that thread's enters name the ring by `index` and the kernel
/// skips looking the descriptor up (fget/fput) on every call.
struct RegisteredRing {
    index: u32,
    thread: std::thread::ThreadId,
}

/// io_uring's block-device discard (linux/blkdev.h, `_IO(0x12, 0)`, Linux
/// 6.12 and later): an IORING_OP_URING_CMD whose `addr` is the start and
/// `addr3` (the first 8 bytes of the command) the length, both in bytes.
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;
/// IORING_ENTER_GETEVENTS: an enter that also runs completions' task work.
const ENTER_GETEVENTS: u32 = 1;
/// IORING_ENTER_REGISTERED_RING: the descriptor passed is a registered ring's index.
const ENTER_REGISTERED_RING: u32 = 16;
/// IORING_(UN)REGISTER_RING_FDS: (un)registers ring descriptors with the calling thread.
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;
/// Non-blocking passes for completions before a worker sleeps (see `collect_ready`).
const READY_PASSES: usize = 3;
/// Looks at an SQ-polled ring's completion queue before a worker sleeps (see `collect_ready`).
const SQPOLL_SPINS: usize = 100;
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

/// True when this kernel lets us set up a ring (io_uring may be disabled by
/// sysctl). Probed once per process: `--engine auto` asks for every target of
/// every point, and each probe set up and tore down a ring.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| IoUring::new(2).is_ok())
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
        let ring = if setup.polling.is_off() { plain_ring(entries, setup.taskrun)? } else { polled_ring(entries, setup.polling)? };
        let iovecs = pool.iovecs();
        // SAFETY: the iovecs point into `pool`, which this engine owns and keeps alive
        // (or leaks, see Drop) for as long as the ring exists.
        let fixed_buffers = pool.slots() <= u16::MAX as usize && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        ring.submitter().register_files(fds)?;
        let tick = Box::new(types::Timespec::new().sec(TICK_PERIOD.as_secs()).nsec(TICK_PERIOD.subsec_nanos()));
        let devices = fds.iter().map(|&fd| super::ops::is_block_device(fd)).collect();
        // A polled ring keeps the io-uring crate's enters (they handle waking the poller).
        let registered = if setup.polling.is_off() { register_ring(&ring) } else { None };
        let mut engine =
            UringEngine { ring, _tick: tick, ticking: false, pool: Some(pool), fixed_buffers, in_flight: 0, devices, registered };
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
    /// done, without sleeping: up to `READY_PASSES` io_uring_enter calls with
    /// GETEVENTS and min_complete 0 (fio's io_uring engine makes one on every
    /// submit), stopping at the first that finds a completion.
    ///
    /// Why before sleeping: reads of a tmpfs file are punted to io-wq, and a
    /// completion from there wakes a sleeping worker (`try_to_wake_up` from
    /// `__io_req_task_work_add` was 10% of all cycles in a `perf record` of a
    /// 3 s 4 KiB random read at QD 32 on a /dev/shm file; 1.8% for fio). One
    /// pass raised that run from 462-529K IOPS to 486-659K (5 alternating
    /// pairs). Why three: the io-wq worker finishes a read about every 1.7 us
    /// and one pass often comes back empty. 2026-11-24, same binary, 4
    /// alternating 3 s runs each: one pass 475-510K IOPS at 3.35 CPU-s per
    /// million I/Os, three 561-596K at 3.20 (fio 511-553K at 3.45); on a loop
    /// device no difference (280-292K either way).
    ///
    /// An SQ-polled ring needs no enter for this: the poller submits and posts
    /// completions, so the worker looks at the completion queue (`SQPOLL_SPINS`
    /// times) before it sleeps. Same runs with `--sqpoll`: 221-249K IOPS at 8.34
    /// CPU-s per million I/Os with an enter, 250-261K at 7.23 looking (fio
    /// `--sqthread_poll` 177-201K at 11.05).
    fn collect_ready(&mut self) -> io::Result<()> {
        if self.ring.params().is_setup_sqpoll() {
            if self.ring.submission().need_wakeup() {
                self.ring.submit()?;
            }
            for _ in 0..SQPOLL_SPINS {
                if !self.ring.completion().is_empty() {
                    break;
                }
                std::hint::spin_loop();
            }
            return Ok(());
        }
        for _ in 0..READY_PASSES {
            let queued = self.ring.submission().len() as u32;
            match self.enter(queued, 0, ENTER_GETEVENTS) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)) => {}
                Err(e) => return Err(e),
            }
            if !self.ring.completion().is_empty() {
                break;
            }
        }
        Ok(())
    }

    /// io_uring_enter without an argument: by the ring's registered index when
    /// it has one, by its descriptor otherwise. The engine is used only on the
    /// thread that built it (the worker's; single-issuer rings refuse others),
    /// which is the thread the index belongs to.
    fn enter(&mut self, to_submit: u32, min_complete: u32, flags: u32) -> io::Result<usize> {
        let Some(index) = self.registered.as_ref().map(|r| r.index) else {
            // SAFETY: no argument is passed (size 0); the submissions queued refer to
            // buffers of `pool`, registered and alive while the ring lives.
            return unsafe { self.ring.submitter().enter::<libc::sigset_t>(to_submit, min_complete, flags, None) };
        };
        // SAFETY: as above; `index` is this thread's registration of this ring.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                index,
                to_submit,
                min_complete,
                flags | ENTER_REGISTERED_RING,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// Submits what is queued and waits for `want` completions (GETEVENTS even
    /// for none: it also flushes completions that overflowed the queue).
    fn submit_and_wait(&mut self, want: usize) -> io::Result<usize> {
        if self.registered.is_none() {
            return self.ring.submit_and_wait(want);
        }
        let queued = self.ring.submission().len() as u32;
        self.enter(queued, want as u32, ENTER_GETEVENTS)
    }

    fn pool(&self) -> &BufferPool {
        self.pool.as_ref().expect("buffer pool present until drop")
    }
}

/// A ring without polling. Each worker creates and uses its own ring on its
/// own thread, as single-issuer requires. NO_SQARRAY (Linux 6.6) drops the
/// submission index array the kernel would read for every entry; older
/// kernels get the same ring without it, then the plainer ones.
fn plain_ring(entries: u32, taskrun: TaskRun) -> io::Result<IoUring> {
    let build = |no_sqarray: bool| {
        let mut b = IoUring::builder();
        b.setup_single_issuer();
        match taskrun {
            TaskRun::Deferred => b.setup_defer_taskrun(),
            TaskRun::Cooperative => b.setup_coop_taskrun(),
        };
        if no_sqarray {
            b.setup_no_sqarray();
        }
        b.build(entries)
    };
    build(true)
        .or_else(|_| build(false))
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
        .or_else(|_| IoUring::new(entries))
}

/// Registers the ring's descriptor with the calling thread, or None when the
/// kernel refuses (before 5.18, or the thread's 16 registrations are taken).
fn register_ring(ring: &IoUring) -> Option<RegisteredRing> {
    use std::os::fd::AsRawFd;
    let mut update = RingFdUpdate { offset: u32::MAX, resv: 0, data: ring.as_raw_fd() as u64 };
    // SAFETY: one io_uring_rsrc_update, valid for the call; offset u32::MAX asks
    // the kernel to choose the index, which it writes back into `offset`.
    let r =
        unsafe { libc::syscall(libc::SYS_io_uring_register, ring.as_raw_fd(), REGISTER_RING_FDS, &mut update as *mut RingFdUpdate, 1u32) };
    (r == 1).then(|| RegisteredRing { index: update.offset, thread: std::thread::current().id() })
}

/// struct io_uring_rsrc_update, as IORING_(UN)REGISTER_RING_FDS read it.
#[repr(C)]
struct RingFdUpdate {
    offset: u32,
    resv: u32,
    data: u64,
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
    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()> {
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
            Some(t) if self.ticking && t >= TICK_PERIOD => self.submit_and_wait(min),
            Some(t) if min > 0 => {
                let ts = types::Timespec::new().sec(t.as_secs()).nsec(t.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(min, &args)
            }
            _ => self.submit_and_wait(min),
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
        // The registration holds the ring open until the thread ends: drop it
        // now (only the registering thread can name it).
        if let Some(r) = self.registered.take().filter(|r| r.thread == std::thread::current().id()) {
            use std::os::fd::AsRawFd;
            let update = RingFdUpdate { offset: r.index, resv: 0, data: 0 };
            // SAFETY: one io_uring_rsrc_update naming this thread's registration.
            unsafe {
                libc::syscall(libc::SYS_io_uring_register, self.ring.as_raw_fd(), UNREGISTER_RING_FDS, &update as *const RingFdUpdate, 1u32)
            };
        }
        if self.in_flight > 0 {
            // The kernel may still write into these buffers: never free them.
            // Closing the ring (below, when `ring` drops) cancels the requests;
            // the kernel finishes its teardown on its own.
            std::mem::forget(self.pool.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::polling::Polling;
    use std::os::fd::AsRawFd;

    /// A 64 KiB file of known bytes in /dev/shm, opened for buffered reads.
    fn data_file() -> (tempfile::NamedTempFile, std::fs::File) {
        let file = tempfile::Builder::new().prefix("lunmark-uring-").tempfile_in("/dev/shm").unwrap();
        std::fs::write(file.path(), vec![7u8; 65536]).unwrap();
        let read = std::fs::File::open(file.path()).unwrap();
        (file, read)
    }

    /// Each engine registers its ring with the thread and gives the
    /// registration back when dropped: a thread holds at most 16, so 20 engines
    /// one after another each get one only if the ones before let theirs go.
    /// And the enters through the registered index do I/O.
    #[test]
    fn engines_register_their_ring_with_the_thread_and_release_it_when_dropped() {
        let (_keep, read) = data_file();
        for n in 0..20 {
            let setup = RingSetup::new(false, Polling::default());
            let mut engine = UringEngine::new(&[read.as_raw_fd()], BufferPool::new(2, 4096, 1), setup).unwrap();
            assert!(engine.registered.is_some(), "engine {n} got no registered ring");
            // SAFETY: a new engine: slot 0 has never been used.
            unsafe { engine.queue(IoRequest { slot: 0, target: 0, op: Op::Read, offset: 4096, len: 4096 }) }.unwrap();
            let mut out = Vec::new();
            while out.is_empty() {
                engine.reap(1, Some(Duration::from_secs(1)), &mut out).unwrap();
            }
            assert_eq!(out[0].result, 4096, "engine {n}");
            assert!(engine.buffers().slot(0).iter().all(|&b| b == 7), "engine {n} read other bytes");
        }
    }
}
