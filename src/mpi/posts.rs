//! Seconds a rank posts to rank 0 for live telemetry under MPI (issue 29):
//! non-blocking sends (MPI_Isend) whose buffers are kept until MPI says each
//! is sent, so the watch that posts them never waits for rank 0 (which may be
//! busy in its own watch or in the point's reduction). Bounded: past
//! `MAX_PENDING` unsent seconds (rank 0 not taking them) a new one is dropped.

use std::mem::MaybeUninit;
use std::os::raw::c_void;
use std::time::{Duration, Instant};

use mpi::ffi;

/// The tag of a posted second: above the stop messages' tags (below 30,000),
/// below MPI_TAG_UB's guaranteed minimum (32,767).
pub const TAG: i32 = 32_000;

/// Unsent seconds kept at most: two minutes of a point's seconds.
const MAX_PENDING: usize = 120;

/// How long the end of the run waits for rank 0 to take the last seconds.
const FINAL_WAIT: Duration = Duration::from_secs(2);

#[derive(Default)]
pub struct Posts {
    // Boxed buffers: MPI reads them after `post` returns, so they must not move or go.
    pending: Vec<(Box<[u8]>, ffi::MPI_Request)>,
    pub dropped: u64,
}

impl Posts {
    /// Sends `bytes` to rank 0 without waiting; forgets the sends that completed.
    pub fn post(&mut self, bytes: Vec<u8>, comm: ffi::MPI_Comm) {
        self.reap();
        if self.pending.len() >= MAX_PENDING {
            self.dropped += 1;
            return;
        }
        let buf = bytes.into_boxed_slice();
        let mut req = MaybeUninit::<ffi::MPI_Request>::uninit();
        // SAFETY: `buf` is a heap buffer kept (unmoved) in `pending` until
        // MPI_Test or MPI_Wait says the send completed, or it is cancelled;
        // `req` is written by MPI_Isend.
        unsafe {
            ffi::MPI_Isend(buf.as_ptr() as *const c_void, buf.len() as i32, ffi::RSMPI_UINT8_T, 0, TAG, comm, req.as_mut_ptr());
            self.pending.push((buf, req.assume_init()));
        }
    }

    /// Drops the buffers of the sends MPI has completed.
    fn reap(&mut self) {
        self.pending.retain_mut(|(_, req)| {
            let mut flag = 0;
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: `req` is an active send request; MPI_Test writes flag and status.
            unsafe { ffi::MPI_Test(req, &mut flag, status.as_mut_ptr()) };
            flag == 0
        });
    }

    /// At the end of the run: waits up to FINAL_WAIT for the sends, then cancels the rest.
    pub fn finish(&mut self) {
        let until = Instant::now() + FINAL_WAIT;
        while !self.pending.is_empty() && Instant::now() < until {
            self.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
        for (_, mut req) in self.pending.drain(..) {
            let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: an active send request: cancelled, then completed by MPI_Wait, after which its buffer is free.
            unsafe {
                ffi::MPI_Cancel(&mut req);
                ffi::MPI_Wait(&mut req, status.as_mut_ptr());
            }
        }
    }
}
