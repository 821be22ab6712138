//! Trims and syncs on local files and block devices, shared by the engines
//! that reach them through a file descriptor. A trim of a block device is a
//! discard (BLKDISCARD, or io_uring's discard command); of a file, a hole
//! punched with fallocate(PUNCH_HOLE | KEEP_SIZE), so the file keeps its size
//! and the range reads back as zeros. A sync is fsync(2) or fdatasync(2): on a
//! block device fsync also flushes the device's volatile write cache.

use std::io;
use std::os::fd::RawFd;

/// fallocate mode of a trim on a file.
pub const PUNCH_HOLE: i32 = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;

/// `BLKDISCARD` from linux/fs.h: `_IO(0x12, 119)`.
const BLKDISCARD: libc::c_ulong = (0x12 << 8) | 119;

/// True when `fd` is a block device (fstat; called when an engine is built).
pub fn is_block_device(fd: RawFd) -> bool {
    // SAFETY: libc::stat is plain data, for which all-zero bytes are a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes only into `st`, a local of the right type; fd is open.
    unsafe { libc::fstat(fd, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFBLK }
}

/// A trim as a blocking call: 0 or a negative errno.
pub fn trim(fd: RawFd, device: bool, offset: u64, len: u32) -> i64 {
    let r = if device {
        let range: [u64; 2] = [offset, len as u64];
        // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer,
        // which points at a local array of exactly that; fd is open.
        unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) }
    } else {
        // SAFETY: fallocate takes plain integers; fd is open.
        unsafe { libc::fallocate(fd, PUNCH_HOLE, offset as libc::off_t, len as libc::off_t) }
    };
    result(r)
}

/// fsync or fdatasync as a blocking call: 0 or a negative errno.
pub fn sync(fd: RawFd, data_only: bool) -> i64 {
    // SAFETY: both take only the descriptor, which is open.
    result(unsafe {
        if data_only {
            libc::fdatasync(fd)
        } else {
            libc::fsync(fd)
        }
    })
}

fn result(r: libc::c_int) -> i64 {
    if r < 0 {
        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    } else {
        0
    }
}
