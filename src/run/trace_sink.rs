//! `--trace FILE`: every I/O a run issues (ramp included, in issue order), in
//! the compact format of trace/lunmark.rs, for `lunmark cache-curve` later.
//! With `--ios N` a worker issues no I/O past the N-th it counts (run/worker.rs),
//! so the trace holds exactly the I/Os the run counted, plus the ramp's (syncs
//! count as I/Os but have no range, and are not recorded). With `--time` it
//! also holds the I/Os still in flight when the time ran out (not counted).
//! Workers collect records in a local batch and hand whole batches over, so
//! the shared writer is locked once per few thousand I/Os, not per I/O.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use crate::trace::{TraceRecord, TraceWriter};

/// Records a worker keeps before handing them over.
pub const BATCH: usize = 4096;

impl std::fmt::Debug for TraceSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceSink")
    }
}

pub struct TraceSink {
    writer: Mutex<Option<TraceWriter<BufWriter<File>>>>,
    /// Time zero of the trace: the start of the run.
    pub start: Instant,
    error: Mutex<Option<String>>,
}

impl TraceSink {
    pub fn create(path: &Path) -> io::Result<TraceSink> {
        Ok(TraceSink { writer: Mutex::new(Some(TraceWriter::create(path)?)), start: Instant::now(), error: Mutex::new(None) })
    }

    /// Appends a worker's batch (and empties it). A write error is kept for
    /// `finish`: tracing never stops the measurement.
    pub fn write(&self, batch: &mut Vec<TraceRecord>) {
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = w.as_mut() {
            for r in batch.iter() {
                if let Err(e) = w.record(r.op, r.target, r.offset, r.len, r.t_ns) {
                    self.error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.to_string());
                    break;
                }
            }
        }
        batch.clear();
    }

    /// Flushes the file; the number of I/Os recorded.
    pub fn finish(&self) -> io::Result<u64> {
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(io::Error::other(e));
        }
        match self.writer.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(w) => {
                let n = w.records();
                w.finish()?;
                Ok(n)
            }
            None => Ok(0),
        }
    }
}
