//! The NBD engine: each worker opens its own connection(s) to the server
//! through libnbd and keeps its whole queue in flight on them with libnbd's
//! asynchronous API (many requests in flight on one connection; `--connections N`
//! spreads a worker's slots over N connections). Completions are collected by
//! cookie; the worker's poll waits on every connection's socket at once.
//!
//! A connection is opened with a deadline (a server that accepts but never
//! answers is an error, not a hang). A server that goes away mid-run makes the
//! next wait fail, naming the target.
//!
//! Connections come from a run-wide `ConnectionPool` per export (see `pool`):
//! every connection a point uses is opened before it starts, the size probe is
//! one of them, and engines give back what they leave idle for the next point.

pub use crate::transport::nbd::{ffi, pool, Connection, CONNECT_TIMEOUT};

use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{BufferPool, Capabilities, Completion, Engine, EngineKind, IoRequest};
use crate::workload::Op;

pub struct NbdEngine {
    /// conns[target][k]: the worker's connections to each of its targets.
    conns: Vec<Vec<Connection>>,
    /// Where each target's connections came from, and go back to.
    pools: Vec<Arc<pool::ConnectionPool>>,
    pool: Option<BufferPool>,
    /// One per slot, at a fixed address: what a command's completion callback needs.
    tags: Box<[Tag]>,
    /// (slot, errno) of commands whose callback ran; collected at the next reap.
    // Boxed: the callbacks hold a pointer to the Vec itself, which must stay
    // put when the engine moves.
    #[allow(clippy::box_collection)]
    done: Box<Vec<(u32, i32)>>,
    /// Length of the command in flight on each slot.
    lens: Vec<u32>,
    pending: usize,
    /// Reused poll set: no allocation per wait.
    fds: Vec<libc::pollfd>,
}

/// What a completion callback needs: where to record the completion, and which slot it was.
struct Tag {
    done: *mut Vec<(u32, i32)>,
    slot: u32,
}

/// libnbd calls this when a command ends (inside notify_read/write or close).
/// Returning 1 retires the command: no cookie bookkeeping is needed.
unsafe extern "C" fn command_done(user_data: *mut libc::c_void, error: *mut libc::c_int) -> libc::c_int {
    // SAFETY: user_data is the &Tag given with the command; tags and the done
    // list live until after every handle is closed (NbdEngine's Drop), and only
    // the owning worker thread runs libnbd on these handles.
    unsafe {
        let tag = &*(user_data as *const Tag);
        let errno = if error.is_null() { 0 } else { *error };
        (*tag.done).push((tag.slot, errno));
    }
    1
}

impl NbdEngine {
    /// Any depth on its connections; a socket, not a ring, and no page cache on this host.
    pub const CAPABILITIES: Capabilities = Capabilities { max_in_flight: None, max_qd: None, polling: false, direct_or_buffered: false };

    /// Takes `connections` connections to each target from its pool (opened
    /// there before the point started; a new one only if the pool ran dry).
    pub fn connect(pools: &[Arc<pool::ConnectionPool>], connections: u32, pool: BufferPool) -> io::Result<NbdEngine> {
        let mut conns = Vec::new();
        for p in pools {
            let mut per = Vec::new();
            for _ in 0..connections.max(1) {
                per.push(p.take().map_err(io::Error::other)?);
            }
            conns.push(per);
        }
        let slots = pool.slots();
        let mut done = Box::new(Vec::with_capacity(slots));
        let done_ptr: *mut Vec<(u32, i32)> = &mut *done;
        let tags = (0..slots as u32).map(|slot| Tag { done: done_ptr, slot }).collect();
        Ok(NbdEngine { conns, pools: pools.to_vec(), pool: Some(pool), tags, done, lens: vec![0; slots], pending: 0, fds: Vec::new() })
    }

    fn pool(&self) -> &BufferPool {
        self.pool.as_ref().expect("pool present until drop")
    }
}

impl super::Polled for NbdEngine {
    fn in_flight(&self) -> usize {
        self.pending
    }

    fn collect(&mut self, out: &mut Vec<Completion>) -> io::Result<()> {
        for (slot, errno) in self.done.drain(..) {
            self.pending -= 1;
            let len = self.lens[slot as usize];
            let result = if errno == 0 { len as i64 } else { -(errno as i64) };
            out.push(Completion { slot, result });
        }
        Ok(())
    }

    /// Waits for any connection to be ready for its next step, up to `timeout`.
    fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        self.fds.clear();
        for c in self.conns.iter().flatten() {
            // SAFETY: c.h is a live handle owned by this engine.
            let (fd, dir) = unsafe { (ffi::nbd_aio_get_fd(c.h), ffi::nbd_aio_get_direction(c.h)) };
            // SAFETY: as above.
            if fd < 0 || unsafe { ffi::nbd_aio_is_dead(c.h) } == 1 {
                return Err(io::Error::other(format!("{}: the connection to the server was lost: {}", c.uri, ffi::last_error())));
            }
            let mut events = 0;
            if dir as i32 & ffi::AIO_DIRECTION_READ != 0 {
                events |= libc::POLLIN;
            }
            if dir as i32 & ffi::AIO_DIRECTION_WRITE != 0 {
                events |= libc::POLLOUT;
            }
            self.fds.push(libc::pollfd { fd, events, revents: 0 });
        }
        // SAFETY: fds is a valid array of pollfd for the duration of the call.
        let n =
            unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, timeout.as_millis().min(i32::MAX as u128) as i32) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) { Ok(()) } else { Err(e) };
        }
        for (p, c) in self.fds.iter().zip(self.conns.iter().flatten()) {
            // SAFETY: c.h is a live handle; notifying it of readiness runs its
            // state machine, which runs the completion callbacks of what ended.
            let r = unsafe {
                let mut r = 0;
                if p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    r = ffi::nbd_aio_notify_read(c.h);
                }
                if r != -1 && p.revents & libc::POLLOUT != 0 {
                    r = ffi::nbd_aio_notify_write(c.h);
                }
                r
            };
            if r == -1 {
                return Err(io::Error::other(format!("{}: the connection to the NBD server was lost: {}", c.uri, ffi::last_error())));
            }
        }
        Ok(())
    }
}

impl Engine for NbdEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Nbd
    }

    unsafe fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let per = &self.conns[req.target as usize];
        let k = (req.slot as usize) % per.len();
        let h = per[k].h;
        let buf = self.pool().slot_ptr(req.slot) as *mut libc::c_void;
        let done = ffi::CompletionCallback {
            callback: Some(command_done),
            user_data: &self.tags[req.slot as usize] as *const Tag as *mut libc::c_void,
            free: None,
        };
        // The callback can run inside this call (a command that fails at once).
        self.lens[req.slot as usize] = req.len;
        self.pending += 1;
        // SAFETY: buf is the slot's buffer (at least req.len bytes) in our pool; it
        // stays allocated and untouched until this command's completion is reaped
        // (the worker reuses a slot only after that; Drop leaks the pool if
        // commands are still in flight).
        // The tag lives as long as the engine, past every handle.
        let cookie = unsafe {
            match req.op {
                Op::Read => ffi::nbd_aio_pread(h, buf, req.len as usize, req.offset, done, 0),
                Op::Write => ffi::nbd_aio_pwrite(h, buf, req.len as usize, req.offset, done, 0),
                // NBD_CMD_TRIM and NBD_CMD_FLUSH (checked before the run: the server advertises them).
                Op::Trim => ffi::nbd_aio_trim(h, req.len as u64, req.offset, done, 0),
                Op::Sync | Op::DataSync => ffi::nbd_aio_flush(h, done, 0),
            }
        };
        if cookie < 0 {
            self.pending -= 1;
            // SAFETY: h is a live handle owned by this engine.
            let lost = if unsafe { ffi::nbd_aio_is_dead(h) } == 1 { "the connection to the NBD server was lost: " } else { "" };
            return Err(io::Error::other(format!("{}: {lost}{}", per[k].uri, ffi::last_error())));
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        super::reap_polled(self, min, timeout, out)
    }

    fn buffers(&mut self) -> &mut BufferPool {
        self.pool.as_mut().expect("pool present until drop")
    }
}

impl Drop for NbdEngine {
    fn drop(&mut self) {
        // With nothing in flight, the connections go back to their pools for
        // the next point: a server that serves few clients is not asked again.
        if self.pending == self.done.len() {
            for (per, pool) in self.conns.drain(..).zip(&self.pools) {
                for c in per {
                    if c.idle() {
                        pool.give_back(c);
                    }
                }
            }
        }
        // Close the rest first: a command still in flight gets its callback
        // during the close (tags and the done list are still alive then).
        self.conns.clear();
        if self.pending > self.done.len() {
            // libnbd abandoned commands it may still have been writing into:
            // never free memory a command owned.
            std::mem::forget(self.pool.take());
        }
    }
}
