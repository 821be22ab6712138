//! An NBD client connection through libnbd: opened with a deadline, sized, and
//! pooled per export for the run (`pool`). The NBD engine drives I/O on these
//! connections; the target layer opens them to probe an export's size.

pub mod ffi;
pub mod pool;

use std::ffi::CString;
use std::time::{Duration, Instant};

use ffi::NbdHandle;

/// How long opening a connection may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// One open NBD connection; closed on drop.
pub struct Connection {
    pub(crate) h: *mut NbdHandle,
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

    /// What the server said it accepts, in the handshake: (trim, flush).
    pub fn can_trim_and_flush(&self) -> (bool, bool) {
        // SAFETY: self.h is a live, connected handle.
        unsafe { (ffi::nbd_can_trim(self.h) == 1, ffi::nbd_can_flush(self.h) == 1) }
    }

    /// Connected, with no command in flight: fit to be handed to another engine.
    pub(crate) fn idle(&self) -> bool {
        // SAFETY: self.h is a live handle owned by this Connection.
        unsafe { ffi::nbd_aio_is_ready(self.h) == 1 && ffi::nbd_aio_in_flight(self.h) == 0 }
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
