//! What one worker measured: counts, bytes, latency histograms per direction,
//! errors by errno with the first few listed, and one-second slices for the live
//! view and the per-second series. Recorders merge with `+=`.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use super::LatencyHistogram;
use crate::workload::Op;

/// How many individual errors a recorder keeps (the rest are only counted).
pub const FIRST_ERRORS_KEPT: usize = 8;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoErrorRecord {
    pub target: String,
    pub offset: u64,
    pub op: Op,
    pub errno: i32,
    pub message: String,
}

#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Latency per I/O: from submission, or from the scheduled time when paced.
    pub read: LatencyHistogram,
    pub write: LatencyHistogram,
    /// Trims (discards) and syncs (fsync, fdatasync, device flushes), apart.
    pub trim: LatencyHistogram,
    pub sync: LatencyHistogram,
    /// Service time from actual submission, recorded only for paced I/O (where
    /// the latency above is counted from the schedule).
    pub service_read: LatencyHistogram,
    pub service_write: LatencyHistogram,
    pub ios_read: u64,
    pub ios_written: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub ios_trimmed: u64,
    pub bytes_trimmed: u64,
    pub ios_synced: u64,
    pub errors: BTreeMap<i32, u64>,
    pub first_errors: Vec<IoErrorRecord>,
    pub verify: crate::verify::VerifyStats,
    /// Behind a cache tier (--cache): hits and misses apart.
    pub cache: Option<Box<CacheCounters>>,
}

/// I/Os a cache tier served (hits) or passed to the target (misses), and the
/// latency of each kind.
#[derive(Clone, Debug, Default)]
pub struct CacheCounters {
    pub hit: LatencyHistogram,
    pub miss: LatencyHistogram,
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub write_misses: u64,
}

impl CacheCounters {
    fn add(&mut self, o: &CacheCounters) {
        self.hit.add(&o.hit);
        self.miss.add(&o.miss);
        self.read_hits += o.read_hits;
        self.read_misses += o.read_misses;
        self.write_hits += o.write_hits;
        self.write_misses += o.write_misses;
    }
}

impl Recorder {
    /// Whether the cache tier served a measured I/O (its latency also goes through `record`).
    #[inline]
    pub fn record_cache(&mut self, op: Op, hit: bool, latency_ns: u64) {
        let c = self.cache.get_or_insert_with(Default::default);
        let n = match (op, hit) {
            (Op::Read, true) => &mut c.read_hits,
            (Op::Read, false) => &mut c.read_misses,
            (Op::Write, true) => &mut c.write_hits,
            (Op::Write, false) => &mut c.write_misses,
            // Trims and syncs always go to the target; they are no hit or miss.
            (Op::Trim | Op::Sync | Op::DataSync, _) => return,
        };
        *n += 1;
        if hit {
            c.hit.record(latency_ns);
        } else {
            c.miss.record(latency_ns);
        }
    }

    #[inline]
    pub fn record(&mut self, op: Op, bytes: u32, latency_ns: u64) {
        match op {
            Op::Read => {
                self.ios_read += 1;
                self.bytes_read += bytes as u64;
                self.read.record(latency_ns);
            }
            Op::Write => {
                self.ios_written += 1;
                self.bytes_written += bytes as u64;
                self.write.record(latency_ns);
            }
            Op::Trim => {
                self.ios_trimmed += 1;
                self.bytes_trimmed += bytes as u64;
                self.trim.record(latency_ns);
            }
            Op::Sync | Op::DataSync => {
                self.ios_synced += 1;
                self.sync.record(latency_ns);
            }
        }
    }

    /// Service time of a paced I/O (its latency from schedule goes through `record`).
    #[inline]
    pub fn record_service(&mut self, op: Op, latency_ns: u64) {
        match op {
            Op::Read => self.service_read.record(latency_ns),
            Op::Write => self.service_write.record(latency_ns),
            // Paced points report service time of reads and writes; trims and
            // syncs have their own latency histograms above.
            Op::Trim | Op::Sync | Op::DataSync => {}
        }
    }

    /// Counts an I/O that failed with `errno`. Its record (target, offset,
    /// message: strings) is made only while fewer than FIRST_ERRORS_KEPT are
    /// kept: a run with --continue-on-error against a failing target may count
    /// millions, and must not allocate for each.
    pub fn record_error(&mut self, errno: i32, record: impl FnOnce() -> IoErrorRecord) {
        *self.errors.entry(errno).or_default() += 1;
        if self.first_errors.len() < FIRST_ERRORS_KEPT {
            self.first_errors.push(record());
        }
    }

    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Reads, writes and trims together (the I/Os on ranges; syncs apart).
    pub fn all(&self) -> LatencyHistogram {
        let mut all = self.read.clone();
        all.add(&self.write);
        if self.ios_trimmed > 0 {
            all.add(&self.trim);
        }
        all
    }

    /// Reads, writes and trims: the I/Os counted in IOPS.
    pub fn ios(&self) -> u64 {
        self.ios_read + self.ios_written + self.ios_trimmed
    }
}

impl AddAssign<&Recorder> for Recorder {
    fn add_assign(&mut self, other: &Recorder) {
        self.read.add(&other.read);
        self.write.add(&other.write);
        self.trim.add(&other.trim);
        self.sync.add(&other.sync);
        self.service_read.add(&other.service_read);
        self.service_write.add(&other.service_write);
        self.ios_read += other.ios_read;
        self.ios_written += other.ios_written;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.ios_trimmed += other.ios_trimmed;
        self.bytes_trimmed += other.bytes_trimmed;
        self.ios_synced += other.ios_synced;
        for (errno, n) in &other.errors {
            *self.errors.entry(*errno).or_default() += n;
        }
        let room = FIRST_ERRORS_KEPT.saturating_sub(self.first_errors.len());
        self.first_errors.extend(other.first_errors.iter().take(room).cloned());
        self.verify += &other.verify;
        if let Some(o) = &other.cache {
            self.cache.get_or_insert_with(Default::default).add(o);
        }
    }
}

/// One worker's I/O in one second of the measured interval.
#[derive(Clone, Debug)]
pub struct IntervalSlice {
    /// Second index from the start of the measured interval.
    pub index: u32,
    pub ios_read: u64,
    pub ios_written: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Trims are I/Os of the second (in its IOPS); syncs are not.
    pub ios_trimmed: u64,
    /// Latency per operation, made on the first I/O of that kind in the
    /// second: a read-only workload holds one histogram per second, not three.
    /// Kept apart so that each second's percentiles can be told per operation
    /// (`--hdr-log`, `results percentiles`); `latency()` is their sum.
    pub read: Option<LatencyHistogram>,
    pub write: Option<LatencyHistogram>,
    pub trim: Option<LatencyHistogram>,
}

/// Significant digits of a one-second slice's histograms (values within 1%).
pub const SLICE_DIGITS: u8 = 2;

fn add_into(to: &mut Option<LatencyHistogram>, from: &Option<LatencyHistogram>) {
    if let Some(f) = from {
        to.get_or_insert_with(|| LatencyHistogram::with_digits(SLICE_DIGITS)).add(f);
    }
}

impl IntervalSlice {
    pub fn new(index: u32) -> Self {
        IntervalSlice {
            index,
            ios_read: 0,
            ios_written: 0,
            bytes_read: 0,
            bytes_written: 0,
            ios_trimmed: 0,
            read: None,
            write: None,
            trim: None,
        }
    }

    #[inline]
    pub fn record(&mut self, op: Op, bytes: u32, latency_ns: u64) {
        let h = match op {
            Op::Read => {
                self.ios_read += 1;
                self.bytes_read += bytes as u64;
                &mut self.read
            }
            Op::Write => {
                self.ios_written += 1;
                self.bytes_written += bytes as u64;
                &mut self.write
            }
            Op::Trim => {
                self.ios_trimmed += 1;
                &mut self.trim
            }
            // A sync is no I/O of the second's IOPS, nor of its latency.
            Op::Sync | Op::DataSync => return,
        };
        h.get_or_insert_with(|| LatencyHistogram::with_digits(SLICE_DIGITS)).record(latency_ns);
    }

    pub fn merge(&mut self, other: &IntervalSlice) {
        self.ios_read += other.ios_read;
        self.ios_written += other.ios_written;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.ios_trimmed += other.ios_trimmed;
        add_into(&mut self.read, &other.read);
        add_into(&mut self.write, &other.write);
        add_into(&mut self.trim, &other.trim);
    }

    /// The latency of every I/O of the second (reads, writes and trims).
    pub fn latency(&self) -> LatencyHistogram {
        let mut all = LatencyHistogram::with_digits(SLICE_DIGITS);
        for h in [&self.read, &self.write, &self.trim].into_iter().flatten() {
            all.add(h);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every failed I/O is counted; only the first few are described, and the
    /// description (strings) is made for those only.
    #[test]
    fn errors_past_the_first_kept_are_counted_without_a_record() {
        let mut r = Recorder::default();
        let mut made = 0;
        for n in 0..1000u64 {
            r.record_error(5, || {
                made += 1;
                IoErrorRecord { target: "t".into(), offset: n, op: Op::Read, errno: 5, message: "EIO".into() }
            });
        }
        assert_eq!((r.error_count(), r.first_errors.len(), made), (1000, FIRST_ERRORS_KEPT, FIRST_ERRORS_KEPT));
    }

    #[test]
    fn recorders_merge_by_addition() {
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        a.record(Op::Read, 4096, 1000);
        b.record(Op::Write, 8192, 3000);
        b.record(Op::Read, 4096, 2000);
        a += &b;
        assert_eq!((a.ios_read, a.ios_written, a.bytes_read, a.bytes_written), (2, 1, 8192, 8192));
        assert_eq!(a.all().count(), 3);
    }

    #[test]
    fn trims_and_syncs_are_counted_apart_and_syncs_stay_out_of_the_ios() {
        let mut a = Recorder::default();
        a.record(Op::Read, 4096, 1000);
        a.record(Op::Trim, 65536, 5000);
        a.record(Op::Sync, 0, 9000);
        a.record(Op::DataSync, 0, 7000);
        let mut b = Recorder::default();
        b += &a;
        assert_eq!((b.ios_trimmed, b.bytes_trimmed, b.ios_synced), (1, 65536, 2));
        assert_eq!((b.trim.count(), b.sync.count(), b.ios(), b.all().count()), (1, 2, 2, 2));
        let mut s = IntervalSlice::new(0);
        s.record(Op::Trim, 4096, 10);
        s.record(Op::Sync, 0, 10);
        assert_eq!((s.ios_trimmed, s.latency().count(), s.trim.as_ref().map(|h| h.count())), (1, 1, Some(1)));
        assert!(s.read.is_none() && s.write.is_none(), "no histogram is made for an operation that did not happen");
    }
}
