//! The `mem:` engine: an in-process RAM LUN with no kernel in the path. Each I/O
//! is a memcpy between the slot buffer and the LUN, completed at once. It gives
//! the ceiling of lunmark itself, as fio's null engine does for fio.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use super::{BufferPool, Completion, Engine, IoRequest};
use crate::workload::Op;

/// Anonymous memory shared by every worker that drives the same `mem:` target.
pub struct MemLun {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping lives as long as the MemLun and is only accessed through
// raw-pointer copies (never through Rust references), so sharing it between
// threads is sound in the same way a block device is: concurrent writes to the
// same bytes give torn data, never memory unsafety on the Rust side.
unsafe impl Send for MemLun {}
unsafe impl Sync for MemLun {}

impl MemLun {
    pub fn new(len: u64) -> io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| io::Error::other("mem: size too large"))?;
        // SAFETY: an anonymous private mapping with no address hint; the result is
        // checked against MAP_FAILED. MAP_POPULATE faults the pages in now, so the
        // first measured second does not pay for page faults.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(MemLun { ptr: ptr as *mut u8, len })
    }

    pub fn len(&self) -> u64 {
        self.len as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when `len` bytes at `offset` lie inside the LUN. Checked arithmetic:
    /// an offset near 2^64 must not wrap around to a small address.
    #[inline]
    fn holds(&self, offset: u64, len: usize) -> bool {
        usize::try_from(offset).ok().and_then(|o| o.checked_add(len)).is_some_and(|end| end <= self.len)
    }

    /// Copies `len` bytes at `offset` of the LUN into `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes and not overlap the LUN.
    pub unsafe fn read_into(&self, offset: u64, dst: *mut u8, len: usize) -> bool {
        if !self.holds(offset, len) {
            return false;
        }
        std::ptr::copy_nonoverlapping(self.ptr.add(offset as usize), dst, len);
        true
    }

    /// Copies `len` bytes from `src` to `offset` of the LUN.
    ///
    /// # Safety
    /// `src` must be valid for `len` bytes and not overlap the LUN.
    pub unsafe fn write_from(&self, offset: u64, src: *const u8, len: usize) -> bool {
        if !self.holds(offset, len) {
            return false;
        }
        std::ptr::copy_nonoverlapping(src, self.ptr.add(offset as usize), len);
        true
    }
}

impl MemLun {
    /// Zeroes `len` bytes at `offset`: a trim of a RAM LUN. A thin LUN that
    /// reads zeros after a discard (SCSI LBPRZ, NVMe DLFEAT) behaves the same,
    /// and the cost is a memset, as a discard's is the device's own work.
    pub fn zero(&self, offset: u64, len: usize) -> bool {
        if !self.holds(offset, len) {
            return false;
        }
        // SAFETY: the range lies inside the mapping (checked above).
        unsafe { std::ptr::write_bytes(self.ptr.add(offset as usize), 0, len) };
        true
    }
}

impl Drop for MemLun {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping created in `new`.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

pub struct MemEngine {
    /// None: a null: target, which completes every I/O without moving data.
    luns: Option<Vec<Arc<MemLun>>>,
    pool: BufferPool,
    done: VecDeque<Completion>,
}

impl MemEngine {
    pub fn new(luns: Vec<Arc<MemLun>>, pool: BufferPool) -> Self {
        let done = VecDeque::with_capacity(pool.slots());
        MemEngine { luns: Some(luns), pool, done }
    }

    /// The engine of null: targets: every I/O completes at once, no bytes move.
    pub fn null(pool: BufferPool) -> Self {
        let done = VecDeque::with_capacity(pool.slots());
        MemEngine { luns: None, pool, done }
    }
}

impl Engine for MemEngine {
    fn name(&self) -> &'static str {
        if self.luns.is_some() {
            "mem"
        } else {
            "null"
        }
    }

    #[inline]
    fn queue(&mut self, req: IoRequest) -> io::Result<()> {
        let Some(luns) = &self.luns else {
            self.done.push_back(Completion { slot: req.slot, result: req.len as i64, from_cache: None });
            return Ok(());
        };
        let lun = &luns[req.target as usize];
        let buf = self.pool.slot_ptr(req.slot);
        let len = req.len as usize;
        assert!(len <= self.pool.slot_size());
        // SAFETY: the slot buffer holds at least `len` bytes (asserted) and lies in the
        // pool's own allocation, which never overlaps the LUN mapping.
        let ok = unsafe {
            match req.op {
                Op::Read => lun.read_into(req.offset, buf, len),
                Op::Write => lun.write_from(req.offset, buf, len),
                Op::Trim => lun.zero(req.offset, len),
                // Nothing volatile to flush: the data is in the LUN already.
                Op::Sync | Op::DataSync => true,
            }
        };
        let result = match (ok, req.op) {
            (false, _) => -(libc::EINVAL as i64),
            (true, Op::Read | Op::Write) => req.len as i64,
            (true, _) => 0,
        };
        self.done.push_back(Completion { slot: req.slot, result, from_cache: None });
        Ok(())
    }

    fn reap(&mut self, _min: usize, _timeout: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        out.extend(self.done.drain(..));
        Ok(())
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_that_would_wrap_is_refused() {
        let lun = MemLun::new(1 << 20).unwrap();
        let mut buf = vec![7u8; 8192];
        // SAFETY: buf holds 8192 bytes and is not part of the LUN.
        unsafe {
            assert!(!lun.write_from(u64::MAX - 511, buf.as_ptr(), 8192));
            assert!(!lun.read_into(u64::MAX - 511, buf.as_mut_ptr(), 8192));
            assert!(!lun.write_from((1 << 20) - 4096, buf.as_ptr(), 8192));
            assert!(lun.write_from((1 << 20) - 8192, buf.as_ptr(), 8192));
            assert!(lun.read_into(0, buf.as_mut_ptr(), 8192));
        }
        assert!(buf.iter().all(|&b| b == 0), "the wrapped write did not land at the start");
    }

    #[test]
    fn a_trim_zeroes_its_range_and_nothing_else() {
        let lun = MemLun::new(1 << 16).unwrap();
        let ones = vec![1u8; 1 << 16];
        let mut back = vec![9u8; 1 << 16];
        // SAFETY: both buffers hold 64 KiB and are not part of the LUN.
        unsafe {
            assert!(lun.write_from(0, ones.as_ptr(), 1 << 16));
            assert!(lun.zero(4096, 8192));
            assert!(!lun.zero(u64::MAX - 10, 4096));
            assert!(lun.read_into(0, back.as_mut_ptr(), 1 << 16));
        }
        assert!(back[..4096].iter().chain(&back[12288..]).all(|&b| b == 1));
        assert!(back[4096..12288].iter().all(|&b| b == 0));
    }
}
