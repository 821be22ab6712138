//! The iSCSI engine: each worker logs in to the target through libiscsi (one
//! session per connection, `--connections N` to open several) and keeps its
//! whole queue in flight with READ16/WRITE16 tasks. Data moves straight between
//! the slot buffers and the socket (the `_iov_` task forms), so the engine copies
//! nothing. Completions arrive as libiscsi callbacks while the engine services
//! the sockets; each callback records (slot, status) in a list the engine owns.
//!
//! Sessions never reconnect on their own: a target that goes away ends the run
//! with an error naming it, rather than stalling it. Login has a deadline
//! (`CONNECT_TIMEOUT`), and every command one (`COMMAND_TIMEOUT`).

pub use crate::transport::iscsi::{ffi, Session, CONNECT_TIMEOUT};

use std::ffi::{c_int, c_void};
use std::io;
use std::time::Duration;

use super::{BufferPool, Capabilities, Completion, Engine, EngineKind, IoRequest};
use crate::transport::credentials;
use crate::workload::Op;
use ffi::IscsiContext;

/// What a command's callback needs: where to record the completion, and which
/// slot it was. One per slot, at a fixed address for the engine's lifetime.
struct Tag {
    done: *mut Vec<(u32, c_int)>,
    slot: u32,
}

/// Called by libiscsi inside iscsi_service (or iscsi_destroy_context) when a
/// command ends.
unsafe extern "C" fn command_done(_ctx: *mut IscsiContext, status: c_int, command_data: *mut c_void, private: *mut c_void) {
    // SAFETY: private is the &Tag given when the task was queued; tags and the
    // completion list outlive every session (IscsiEngine's Drop order).
    let tag = unsafe { &*(private as *const Tag) };
    // SAFETY: done points at the engine's boxed list; only this thread touches it.
    unsafe { (*tag.done).push((tag.slot, status)) };
    if !command_data.is_null() {
        // SAFETY: for SCSI commands command_data is the task, now ours to free.
        unsafe { ffi::scsi_free_scsi_task(command_data as *mut ffi::ScsiTask) };
    }
}

pub struct IscsiEngine {
    /// sessions[target][k]: the worker's sessions to each of its targets.
    sessions: Vec<Vec<Session>>,
    tags: Box<[Tag]>,
    iovs: Box<[ffi::ScsiIovec]>,
    // Boxed: the callbacks hold a pointer to the Vec itself, which must stay
    // put when the engine moves.
    #[allow(clippy::box_collection)]
    done: Box<Vec<(u32, c_int)>>,
    /// Length of the command in flight on each slot (0: none).
    in_flight: Vec<u32>,
    pending: usize,
    pool: BufferPool,
    /// Reused poll set: no allocation per wait.
    fds: Vec<libc::pollfd>,
    /// When libiscsi last scanned for timed-out commands.
    last_scan: std::time::Instant,
}

impl IscsiEngine {
    /// Any depth on its sessions; a socket, not a ring, and no page cache on this host.
    pub const CAPABILITIES: Capabilities = Capabilities { max_in_flight: None, max_qd: None, polling: false, direct_or_buffered: false };

    pub fn connect(uris: &[String], connections: u32, pool: BufferPool) -> io::Result<IscsiEngine> {
        let mut sessions = Vec::new();
        for uri in uris {
            let mut per = Vec::new();
            for _ in 0..connections.max(1) {
                per.push(Session::open(uri).map_err(io::Error::other)?);
            }
            sessions.push(per);
        }
        let slots = pool.slots();
        let mut done = Box::new(Vec::with_capacity(slots));
        let done_ptr: *mut Vec<(u32, c_int)> = &mut *done;
        let tags = (0..slots as u32).map(|slot| Tag { done: done_ptr, slot }).collect();
        let iovs = vec![ffi::ScsiIovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; slots].into_boxed_slice();
        Ok(IscsiEngine {
            sessions,
            tags,
            iovs,
            done,
            in_flight: vec![0; slots],
            pending: 0,
            pool,
            fds: Vec::new(),
            last_scan: std::time::Instant::now(),
        })
    }
}

impl super::Polled for IscsiEngine {
    fn in_flight(&self) -> usize {
        self.pending
    }

    fn collect(&mut self, out: &mut Vec<Completion>) -> io::Result<()> {
        for (slot, status) in self.done.drain(..) {
            let len = std::mem::take(&mut self.in_flight[slot as usize]);
            self.pending -= 1;
            let result = match status {
                ffi::SCSI_STATUS_GOOD => len as i64,
                ffi::SCSI_STATUS_TIMEOUT => -libc::ETIMEDOUT as i64,
                ffi::SCSI_STATUS_CANCELLED => -libc::ECANCELED as i64,
                _ => -libc::EIO as i64,
            };
            out.push(Completion { slot, result });
        }
        Ok(())
    }

    /// Waits up to `timeout` for any session's socket, then lets libiscsi do its
    /// work (which runs the completion callbacks).
    fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        self.fds.clear();
        for s in self.sessions.iter().flatten() {
            // SAFETY: s.ctx is a live, logged-in context owned by this engine.
            let (fd, events) = unsafe { (ffi::iscsi_get_fd(s.ctx), ffi::iscsi_which_events(s.ctx)) };
            if fd < 0 {
                return Err(lost(s));
            }
            self.fds.push(libc::pollfd { fd, events: events as i16, revents: 0 });
        }
        // libiscsi asks for no events while it has nothing to say: poll anyway,
        // briefly, so its timeouts are still serviced.
        let ms = timeout.as_millis().min(100) as i32;
        // SAFETY: fds is a valid array of pollfd for the duration of the call.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) { Ok(()) } else { Err(e) };
        }
        // Servicing a session with no events only scans its commands for
        // timeouts: a few times a second is enough, not on every wait.
        let scan = self.last_scan.elapsed() >= Duration::from_millis(250);
        if scan {
            self.last_scan = std::time::Instant::now();
        }
        for (s, p) in self.sessions.iter().flatten().zip(&self.fds) {
            if p.revents == 0 && !scan {
                continue;
            }
            // SAFETY: s.ctx is live; libiscsi reads and writes what the socket allows.
            if unsafe { ffi::iscsi_service(s.ctx, p.revents as c_int) } < 0 {
                return Err(lost(s));
            }
        }
        Ok(())
    }
}

fn lost(s: &Session) -> io::Error {
    io::Error::other(format!("{}: the connection to the iSCSI target was lost: {}", s.uri, credentials::scrub(&ffi::last_error(s.ctx))))
}

impl Engine for IscsiEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Iscsi
    }

    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let per = &self.sessions[req.target as usize];
        let s = &per[(req.slot as usize) % per.len()];
        let i = req.slot as usize;
        self.iovs[i] = ffi::ScsiIovec { iov_base: self.pool.slot_ptr(req.slot) as *mut c_void, iov_len: req.len as usize };
        let lba = req.offset / s.block_size as u64;
        let bs = s.block_size as c_int;
        let iov: *mut ffi::ScsiIovec = &mut self.iovs[i];
        let tag = &self.tags[i] as *const Tag as *mut c_void;
        // SAFETY: s.ctx is a live session. The iovec and the slot buffer it names
        // stay in place and untouched until this slot's completion is collected
        // (the worker reuses a slot only then; Drop ends every session before
        // freeing them). The tag lives as long as the engine.
        let task = unsafe {
            match req.op {
                Op::Read => ffi::iscsi_read16_iov_task(s.ctx, s.lun, lba, req.len, bs, 0, 0, 0, 0, 0, command_done, tag, iov, 1),
                // UNMAP of the range (a thin LUN, checked before the run); libiscsi
                // copies the list into the command's data when it builds the task.
                Op::Trim => {
                    let mut range = ffi::UnmapList { lba, num: req.len / s.block_size };
                    ffi::iscsi_unmap_task(s.ctx, s.lun, 0, 0, &mut range, 1, command_done, tag)
                }
                // SYNCHRONIZE CACHE (16) of the whole LUN (0 blocks: to the end).
                Op::Sync | Op::DataSync => ffi::iscsi_synchronizecache16_task(s.ctx, s.lun, 0, 0, 0, 0, command_done, tag),
                Op::Write => ffi::iscsi_write16_iov_task(
                    s.ctx,
                    s.lun,
                    lba,
                    std::ptr::null_mut(),
                    req.len,
                    bs,
                    0,
                    0,
                    0,
                    0,
                    0,
                    command_done,
                    tag,
                    iov,
                    1,
                ),
            }
        };
        if task.is_null() {
            return Err(io::Error::other(format!("{}: cannot queue the command: {}", s.uri, credentials::scrub(&ffi::last_error(s.ctx)))));
        }
        self.in_flight[i] = req.len;
        self.pending += 1;
        Ok(())
    }

    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        // Queued commands go out in the first wait (libiscsi asks for POLLOUT
        // then); a reap that will not wait still hands them to the socket.
        if min == 0 {
            super::Polled::wait(self, Duration::ZERO)?;
        }
        super::reap_polled(self, min, timeout, out)
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.pool
    }
}

impl Drop for IscsiEngine {
    fn drop(&mut self) {
        // Sessions first: destroying a context cancels its commands, whose
        // callbacks still write to `done` through the tags and may still hold the
        // slot buffers. Only then may the other fields go.
        self.sessions.clear();
    }
}
