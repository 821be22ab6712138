//! The NBD engine: each worker opens its own connection(s) to the server
//! through libnbd and keeps its whole queue in flight on them with libnbd's
//! asynchronous API (many requests in flight on one connection; `--connections N`
//! spreads a worker's slots over N connections). Completions are collected by
//! cookie; the worker's poll waits on every connection's socket at once.
//!
//! A connection is opened with a deadline (a server that accepts but never
//! answers is an error, not a hang). A server that goes away mid-run makes the
//! next wait fail, naming the target.

pub mod ffi;

use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::time::{Duration, Instant};

use super::{BufferPool, Completion, Engine, IoRequest};
use crate::workload::Op;
use ffi::NbdHandle;

/// How long opening a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// One open NBD connection; closed on drop.
pub struct Connection {
    h: *mut NbdHandle,
    pub uri: String,
}

// SAFETY: a libnbd handle may be used from any thread, one at a time; lunmark
// uses each handle from the one worker thread that owns it.
unsafe impl Send for Connection {}

impl Connection {
    /// Connects within `timeout`; the error says what the server or libnbd said.
    pub fn open(uri: &str, timeout: Duration) -> Result<Connection, String> {
        let c_uri = CString::new(uri).map_err(|_| format!("{uri}: the URI contains a NUL byte"))?;
        // SAFETY: nbd_create returns a new handle or null; it is owned by the
        // Connection from here on and closed exactly once in Drop.
        let h = unsafe { ffi::nbd_create() };
        if h.is_null() {
            return Err(format!("{uri}: libnbd could not create a handle: {}", ffi::last_error()));
        }
        let conn = Connection { h, uri: uri.to_string() };
        // SAFETY: h is a live handle and c_uri a NUL-terminated string that outlives the call.
        if unsafe { ffi::nbd_aio_connect_uri(h, c_uri.as_ptr()) } == -1 {
            return Err(format!("{uri}: cannot connect: {}", ffi::last_error()));
        }
        let deadline = Instant::now() + timeout;
        loop {
            // SAFETY: h is a live handle owned by `conn`.
            unsafe {
                if ffi::nbd_aio_is_ready(h) == 1 {
                    return Ok(conn);
                }
                if ffi::nbd_aio_is_dead(h) == 1 || ffi::nbd_aio_is_closed(h) == 1 {
                    return Err(format!("{uri}: the connection failed: {}", ffi::last_error()));
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("{uri}: no answer from the server within {}s (connect timeout)", timeout.as_secs()));
            }
            // SAFETY: as above.
            if unsafe { ffi::nbd_poll(h, left.as_millis().min(100) as i32) } == -1 {
                return Err(format!("{uri}: cannot connect: {}", ffi::last_error()));
            }
        }
    }

    /// The export's size in bytes.
    pub fn size(&self) -> Result<u64, String> {
        // SAFETY: self.h is a live, connected handle.
        let n = unsafe { ffi::nbd_get_size(self.h) };
        if n < 0 {
            Err(format!("{}: cannot read the export size: {}", self.uri, ffi::last_error()))
        } else {
            Ok(n as u64)
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: the handle was created by nbd_create and is closed once. libnbd
        // waits for nothing here; commands still in flight are abandoned, which is
        // why NbdEngine's Drop keeps its buffers if any are (see below).
        unsafe { ffi::nbd_close(self.h) };
    }
}

pub struct NbdEngine {
    /// conns[target][k]: the worker's connections to each of its targets.
    conns: Vec<Vec<Connection>>,
    pool: Option<BufferPool>,
    /// (target, connection, cookie) -> (slot, length) of each command in flight.
    pending: HashMap<(u32, u32, u64), (u32, u32)>,
}

impl NbdEngine {
    pub fn connect(uris: &[String], connections: u32, pool: BufferPool) -> io::Result<NbdEngine> {
        let mut conns = Vec::new();
        for uri in uris {
            let mut per = Vec::new();
            for _ in 0..connections.max(1) {
                per.push(Connection::open(uri, CONNECT_TIMEOUT).map_err(io::Error::other)?);
            }
            conns.push(per);
        }
        Ok(NbdEngine { conns, pool: Some(pool), pending: HashMap::new() })
    }

    fn pool(&self) -> &BufferPool {
        self.pool.as_ref().expect("pool present until drop")
    }

    fn collect(&mut self, out: &mut Vec<Completion>) -> io::Result<()> {
        for (t, per) in self.conns.iter().enumerate() {
            for (k, c) in per.iter().enumerate() {
                loop {
                    // SAFETY: c.h is a live handle owned by this engine.
                    let cookie = unsafe { ffi::nbd_aio_peek_command_completed(c.h) };
                    if cookie <= 0 {
                        break;
                    }
                    // SAFETY: as above; retiring a cookie the handle just reported.
                    let r = unsafe { ffi::nbd_aio_command_completed(c.h, cookie as u64) };
                    let Some((slot, len)) = self.pending.remove(&(t as u32, k as u32, cookie as u64)) else { continue };
                    let result = if r == 1 {
                        len as i64
                    } else {
                        // SAFETY: reads libnbd's thread-local errno of the failed command.
                        let e = unsafe { ffi::nbd_get_errno() };
                        -(if e > 0 { e } else { libc::EIO }) as i64
                    };
                    out.push(Completion { slot, result, from_cache: None });
                }
            }
        }
        Ok(())
    }

    /// Waits for any connection to be ready for its next step, up to `timeout`.
    fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        let mut fds = Vec::new();
        let mut owners = Vec::new();
        for per in &self.conns {
            for c in per {
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
                fds.push(libc::pollfd { fd, events, revents: 0 });
                owners.push(c.h);
            }
        }
        // SAFETY: fds is a valid array of pollfd for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout.as_millis().min(i32::MAX as u128) as i32) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::EINTR) { Ok(()) } else { Err(e) };
        }
        for (p, h) in fds.iter().zip(owners) {
            // SAFETY: h is a live handle; notifying it of readiness runs its state machine.
            let r = unsafe {
                let mut r = 0;
                if p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    r = ffi::nbd_aio_notify_read(h);
                }
                if r != -1 && p.revents & libc::POLLOUT != 0 {
                    r = ffi::nbd_aio_notify_write(h);
                }
                r
            };
            if r == -1 {
                return Err(io::Error::other(format!("the connection to the NBD server was lost: {}", ffi::last_error())));
            }
        }
        Ok(())
    }
}

impl Engine for NbdEngine {
    fn name(&self) -> &'static str {
        "nbd"
    }

    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let per = &self.conns[req.target as usize];
        let k = (req.slot as usize) % per.len();
        let h = per[k].h;
        let buf = self.pool().slot_ptr(req.slot) as *mut libc::c_void;
        // SAFETY: buf is the slot's buffer (at least req.len bytes) in our pool; it
        // stays allocated and untouched until this command's completion is reaped
        // (the worker reuses a slot only after that; Drop leaks the pool if
        // commands are still in flight).
        let cookie = unsafe {
            match req.op {
                Op::Read => ffi::nbd_aio_pread(h, buf, req.len as usize, req.offset, ffi::NULL_COMPLETION, 0),
                Op::Write => ffi::nbd_aio_pwrite(h, buf, req.len as usize, req.offset, ffi::NULL_COMPLETION, 0),
            }
        };
        if cookie < 0 {
            return Err(io::Error::other(format!("{}: {}", per[k].uri, ffi::last_error())));
        }
        self.pending.insert((req.target, k as u32, cookie as u64), (req.slot, req.len));
        Ok(())
    }

    fn reap(&mut self, min: usize, timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        let start = out.len();
        let deadline = Instant::now() + timeout.unwrap_or(Duration::from_secs(3600));
        loop {
            self.collect(out)?;
            if out.len() - start >= min.min(self.pending.len() + out.len() - start) || min == 0 {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            self.wait(left)?;
        }
    }

    fn buffers(&mut self) -> &mut BufferPool {
        self.pool.as_mut().expect("pool present until drop")
    }
}

impl Drop for NbdEngine {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            // libnbd may still write into these buffers until the handles close:
            // close them first (field order), and never free memory a command owns.
            self.conns.clear();
            std::mem::forget(self.pool.take());
        }
    }
}
