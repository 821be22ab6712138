//! The part of libnbd's C API (libnbd.h, 1.14) the NBD engine uses.

use std::ffi::{c_char, c_int, c_void};

#[repr(C)]
pub struct NbdHandle {
    _private: [u8; 0],
}

/// libnbd's `nbd_completion_callback`, passed by value.
#[repr(C)]
pub struct CompletionCallback {
    pub callback: Option<unsafe extern "C" fn(*mut c_void, *mut c_int) -> c_int>,
    pub user_data: *mut c_void,
    pub free: Option<unsafe extern "C" fn(*mut c_void)>,
}

pub const AIO_DIRECTION_READ: c_int = 1;
pub const AIO_DIRECTION_WRITE: c_int = 2;

extern "C" {
    pub fn nbd_create() -> *mut NbdHandle;
    pub fn nbd_close(h: *mut NbdHandle);
    pub fn nbd_get_error() -> *const c_char;
    pub fn nbd_aio_connect_uri(h: *mut NbdHandle, uri: *const c_char) -> c_int;
    pub fn nbd_aio_is_ready(h: *mut NbdHandle) -> c_int;
    pub fn nbd_aio_is_dead(h: *mut NbdHandle) -> c_int;
    pub fn nbd_aio_is_closed(h: *mut NbdHandle) -> c_int;
    pub fn nbd_aio_in_flight(h: *mut NbdHandle) -> c_int;
    pub fn nbd_poll(h: *mut NbdHandle, timeout: c_int) -> c_int;
    pub fn nbd_get_size(h: *mut NbdHandle) -> i64;
    pub fn nbd_aio_pread(h: *mut NbdHandle, buf: *mut c_void, count: usize, offset: u64, completion: CompletionCallback, flags: u32)
        -> i64;
    pub fn nbd_aio_pwrite(
        h: *mut NbdHandle,
        buf: *const c_void,
        count: usize,
        offset: u64,
        completion: CompletionCallback,
        flags: u32,
    ) -> i64;
    pub fn nbd_aio_trim(h: *mut NbdHandle, count: u64, offset: u64, completion: CompletionCallback, flags: u32) -> i64;
    pub fn nbd_aio_flush(h: *mut NbdHandle, completion: CompletionCallback, flags: u32) -> i64;
    pub fn nbd_can_trim(h: *mut NbdHandle) -> c_int;
    pub fn nbd_can_flush(h: *mut NbdHandle) -> c_int;
    pub fn nbd_aio_get_fd(h: *mut NbdHandle) -> c_int;
    pub fn nbd_aio_get_direction(h: *mut NbdHandle) -> u32;
    pub fn nbd_aio_notify_read(h: *mut NbdHandle) -> c_int;
    pub fn nbd_aio_notify_write(h: *mut NbdHandle) -> c_int;
}

/// libnbd's last error message on this thread.
pub fn last_error() -> String {
    // SAFETY: nbd_get_error returns a thread-local NUL-terminated string owned by
    // libnbd, valid until the next libnbd call on this thread; it is copied at once.
    unsafe {
        let p = nbd_get_error();
        if p.is_null() {
            "unknown libnbd error".into()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}
