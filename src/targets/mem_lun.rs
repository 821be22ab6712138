//! The RAM LUN behind `mem:` targets: anonymous memory shared by every worker
//! that drives the same target, living for the whole run. The target layer
//! creates it; the `mem:` engine copies to and from it.

use std::io;

use super::host_memory::HostMemory;

/// How much of a LUN is filled between two looks at the memory available: a
/// read of /proc/meminfo per 256 MiB costs nothing beside the filling.
const POPULATE_CHUNK: usize = 256 << 20;

/// Bytes in GiB, for the one message here.
fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

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
        Self::filled_watching(len, HostMemory::read)
    }

    /// `new`, filled while `memory` says the rest still fits.
    fn filled_watching(len: u64, memory: impl Fn() -> Option<HostMemory>) -> io::Result<Self> {
        let len = usize::try_from(len).map_err(|_| io::Error::other("mem: size too large"))?;
        // SAFETY: an anonymous private mapping with no address hint; the result is
        // checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let lun = MemLun { ptr: ptr as *mut u8, len };
        lun.back_with_huge_pages();
        // On an error the LUN is dropped here, and its memory unmapped.
        lun.populate(memory)?;
        Ok(lun)
    }

    /// Asks for transparent huge pages (where the kernel offers them only on
    /// request, as Debian's default `madvise` mode does). A RAM disk in a
    /// storage target sits in the kernel's direct map, which uses large pages;
    /// with 4 KiB pages every random I/O on a large `mem:` LUN would also pay a
    /// TLB miss that no such disk pays. A kernel that refuses leaves 4 KiB pages.
    /// 2026-11-24, `mem:1g`, 4 KiB random reads at QD 32, 4 alternating 3 s
    /// runs: 1.74-1.95M IOPS at 0.67 CPU-s per million I/Os on 4 KiB pages,
    /// 2.14-2.27M at 0.58 on huge pages.
    fn back_with_huge_pages(&self) {
        // SAFETY: advice on our own mapping, before any page of it is touched.
        unsafe { libc::madvise(self.ptr as *mut libc::c_void, self.len, libc::MADV_HUGEPAGE) };
    }

    /// Faults every page in now, so the first measured second does not pay for
    /// page faults: MADV_POPULATE_WRITE (Linux 5.14), else a write per page.
    /// A chunk at a time, each after `memory` says the rest still fits beside
    /// the reserve: the run's check was a snapshot, and a LUN of many GiB takes
    /// seconds to fill while other processes may grow. Stopping here is an
    /// error the run reports; filling on would make the kernel's OOM killer end
    /// lunmark (the largest process) with nothing said.
    fn populate(&self, memory: impl Fn() -> Option<HostMemory>) -> io::Result<()> {
        let mut done = 0usize;
        while done < self.len {
            let chunk = (self.len - done).min(POPULATE_CHUNK);
            if let Some(m) = memory() {
                let rest = (self.len - done) as u64;
                if rest > m.usable() {
                    return Err(io::Error::other(format!(
                        "filling this RAM LUN of {} stopped at {}: the memory available fell to {} (MemAvailable in /proc/meminfo), \
                         and the remaining {} would leave less than the {} lunmark leaves to the rest of the system; \
                         other processes took memory since the run was checked. Use a smaller mem: size, or run when the host is quieter",
                        gib(self.len as u64),
                        gib(done as u64),
                        gib(m.available),
                        gib(rest),
                        gib(m.reserve())
                    )));
                }
            }
            // SAFETY: the chunk [done, done + chunk) lies inside our own writable mapping.
            let at = unsafe { self.ptr.add(done) };
            // SAFETY: populating part of our own writable mapping changes no byte of it.
            if unsafe { libc::madvise(at as *mut libc::c_void, chunk, libc::MADV_POPULATE_WRITE) } != 0 {
                for offset in (0..chunk).step_by(4096) {
                    // SAFETY: offset < chunk: inside the mapping, which is writable; zero is
                    // what an untouched anonymous page holds already.
                    unsafe { at.add(offset).write_volatile(0) };
                }
            }
            done += chunk;
        }
        Ok(())
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

    /// Another process takes memory while a LUN fills: the filling stops
    /// with the figures instead of growing into the OOM killer.
    #[test]
    fn filling_stops_when_the_memory_available_falls() {
        let looks = std::cell::Cell::new(0);
        let memory = || {
            looks.set(looks.get() + 1);
            let available = if looks.get() == 1 { 8u64 << 30 } else { 1 << 30 };
            Some(HostMemory { available, total: 16 << 30 })
        };
        let e = MemLun::filled_watching(300 << 20, memory).err().expect("refused part way").to_string();
        assert_eq!(looks.get(), 2, "looked before each 256 MiB: {e}");
        assert!(e.contains("of 0.3 GiB stopped at 0.2 GiB") && e.contains("fell to 1.0 GiB") && e.contains("MemAvailable"), "{e}");
        assert!(e.contains("smaller mem: size"), "{e}");
        // With room to spare the whole LUN fills.
        let lun = MemLun::filled_watching(1 << 20, || Some(HostMemory { available: 8 << 30, total: 16 << 30 })).unwrap();
        assert_eq!(lun.len(), 1 << 20);
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
