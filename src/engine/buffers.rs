//! Page-aligned I/O buffers, one per in-flight slot, in one allocation so that
//! io_uring can register them once. Alignment to 4 KiB satisfies O_DIRECT on
//! every logical block size Linux supports.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use crate::workload::rng::Rng;

pub const ALIGN: usize = 4096;

pub struct BufferPool {
    ptr: *mut u8,
    layout: Layout,
    slot_size: usize,
    slots: usize,
}

// SAFETY: the pool owns its allocation exclusively; moving it to another thread
// moves that ownership with it.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// `slots` buffers of at least `slot_size` bytes, filled with incompressible data.
    pub fn new(slots: usize, slot_size: usize, seed: u64) -> Self {
        let slot_size = slot_size.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(slot_size * slots.max(1), ALIGN).expect("buffer pool layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating {} bytes of I/O buffers", layout.size());
        let mut pool = BufferPool { ptr, layout, slot_size, slots };
        let mut rng = Rng::for_stream(seed, 0xB0FF);
        // SAFETY: ptr is valid for layout.size() bytes and no other reference exists.
        rng.fill(unsafe { std::slice::from_raw_parts_mut(pool.ptr, pool.layout.size()) });
        pool.slots = slots;
        pool
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub fn slot_size(&self) -> usize {
        self.slot_size
    }

    /// Raw pointer to a slot's buffer, for engines that hand it to the kernel or a library.
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        assert!((slot as usize) < self.slots);
        // SAFETY: slot < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.add(slot as usize * self.slot_size) }
    }

    /// A slot's buffer. Callers must not hold it while the slot's I/O is in flight.
    pub fn slot(&mut self, slot: u32) -> &mut [u8] {
        // SAFETY: slot_ptr is in bounds for slot_size bytes, and &mut self means no
        // other Rust reference to the pool's memory exists.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(slot), self.slot_size) }
    }

    /// (pointer, length) of every slot, for registering with io_uring.
    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.slots as u32).map(|s| libc::iovec { iov_base: self.slot_ptr(s) as *mut libc::c_void, iov_len: self.slot_size }).collect()
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout. Engines that may still have
        // I/O in flight on drop leak their pool instead (see uring.rs).
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
