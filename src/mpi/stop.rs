//! Stopping every rank when one fails mid-point (issue 17): before each point
//! every rank posts a receive for a one-byte "stop" message with that point's
//! tag; a rank whose point failed sends it to all the others, which see it at
//! their next wake-up (at most 100 ms: the point's main loop polls it, never
//! the workers) and end the point there. Without it the others would run to
//! their planned end before learning of the failure.

use std::mem::MaybeUninit;
use std::os::raw::c_void;

use mpi::ffi;

/// Tags cycle below MPI_TAG_UB's guaranteed minimum (32767).
const TAG_LIMIT: i32 = 30_000;

pub struct StopSignal {
    pending: Option<ffi::MPI_Request>,
    // Boxed: MPI writes into it after `arm` returns, so it must not move.
    buf: Box<u8>,
    tag: i32,
}

impl StopSignal {
    pub fn new() -> StopSignal {
        StopSignal { pending: None, buf: Box::new(0), tag: 0 }
    }

    /// Posts the receive for the next point's stop message.
    pub fn arm(&mut self, comm: ffi::MPI_Comm) {
        self.disarm();
        self.tag = self.tag % TAG_LIMIT + 1;
        let mut req = MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `buf` is a heap byte that lives (unmoved) in self until the
        // request is completed or cancelled in `disarm`; `req` is written by MPI_Irecv.
        unsafe {
            ffi::MPI_Irecv(
                &mut *self.buf as *mut u8 as *mut c_void,
                1,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                self.tag,
                comm,
                req.as_mut_ptr(),
            );
            self.pending = Some(req.assume_init());
        }
    }

    /// Whether another rank sent this point's stop message.
    pub fn raised(&mut self) -> bool {
        let Some(req) = self.pending.as_mut() else { return false };
        let mut flag = 0;
        let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
        // SAFETY: `req` is an active request from MPI_Irecv; MPI_Test writes flag and status.
        unsafe {
            ffi::MPI_Test(req, &mut flag, status.as_mut_ptr());
        }
        if flag != 0 {
            self.pending = None;
        }
        flag != 0
    }

    /// Tells every other rank to stop this point.
    pub fn raise(&self, comm: ffi::MPI_Comm, me: i32, size: i32) {
        let byte = 1u8;
        for r in (0..size).filter(|&r| r != me) {
            // SAFETY: a one-byte send from a live local; small messages go eagerly, so this does not wait for the receiver.
            unsafe {
                ffi::MPI_Send(&byte as *const u8 as *const c_void, 1, ffi::RSMPI_UINT8_T, r, self.tag, comm);
            }
        }
    }

    /// Cancels the receive when no stop came (the point ended normally).
    pub fn disarm(&mut self) {
        if let Some(mut req) = self.pending.take() {
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: `req` is an active receive request; cancel then wait completes it, after which `buf` is free.
            unsafe {
                ffi::MPI_Cancel(&mut req);
                ffi::MPI_Wait(&mut req, status.as_mut_ptr());
            }
        }
    }
}

impl Default for StopSignal {
    fn default() -> Self {
        StopSignal::new()
    }
}
