//! Miss-ratio curves: for every cache size at once, the fraction of accesses
//! an LRU cache of that size would hit. One pass over a trace gives the LRU
//! stack distance of each access; an LRU cache of c blocks hits exactly the
//! accesses whose distance is below c, so the histogram of distances is the
//! whole curve.
//!
//! The cache works on fixed blocks (`block_size`, 4 KiB by default): an I/O of
//! `len` bytes at `offset` touches blocks `offset / bs ..= (offset + len - 1) / bs`,
//! and each is one access. Blocks of different targets are different blocks.
//!
//! Writes: the modelled cache is write-through with write-allocate, as the
//! read-write-through cache of METHODOLOGY.md ("Cache acceleration"). A write
//! goes to the backing store and also puts the block in the cache (or makes it
//! most recent), so it is an access like a read and changes what later reads
//! hit. A write never completes from the cache, which is why the read hit ratio
//! (reads found in the cache, over reads) is reported beside the ratio over all
//! accesses, and why latency predictions use [`MissRatioCurve::served_ratio`].
//!
//! Two methods:
//! - exact ([`MissRatioCurve::exact`]): every access, O(log M) each, memory O(M)
//!   for M distinct blocks;
//! - SHARDS ([`MissRatioCurve::sampled`]; Waldspurger et al., FAST '15), fixed
//!   rate: a block is kept when a hash of its id falls below R·2^24, so each kept
//!   block keeps all its accesses. Distances on the sampled stream are scaled by
//!   1/R, and the difference between the expected and the actual number of
//!   samples is put at distance 0 (the paper's SHARDS_adj). Error: see
//!   [`shards_error_bound`].
//!
//! [`MissRatioCurve::auto`] is exact up to [`AUTO_EXACT_LIMIT`] accesses and SHARDS
//! at [`AUTO_SAMPLE_RATE`] above.

use serde::Serialize;

use super::stack::{mix64, StackDistances};
use crate::trace::TraceRecord;
use crate::workload::Op;

/// `auto` computes exact curves up to this many block accesses.
pub const AUTO_EXACT_LIMIT: u64 = 20_000_000;
/// The SHARDS sampling rate `auto` uses above the limit.
pub const AUTO_SAMPLE_RATE: f64 = 0.01;

/// The sampling modulus P: a block is sampled when hash % P < R·P.
const SAMPLE_MODULUS: u64 = 1 << 24;
/// Salt for the sampling hash, so that it is independent of the hash map's hash.
const SAMPLE_SALT: u64 = 0x5851_F42D_4C95_7F2D;
/// Bits of the block number in a block id; the target is in the 16 bits above.
const BLOCK_BITS: u32 = 48;

/// One access to one cache block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockAccess {
    /// The block id: target in the top 16 bits, block number below (see [`block_id`]).
    pub block: u64,
    pub op: Op,
}

/// The id of block number `block` of `target`. Block numbers are kept to 48
/// bits: 1 EiB at 4 KiB blocks.
pub fn block_id(target: u16, block: u64) -> u64 {
    ((target as u64) << BLOCK_BITS) | (block & ((1 << BLOCK_BITS) - 1))
}

/// The blocks touched by one I/O: first and last block number (inclusive), or
/// None for a zero-length I/O.
pub fn block_span(offset: u64, len: u32, block_size: u64) -> Option<(u64, u64)> {
    (len > 0).then(|| (offset / block_size, offset.saturating_add(len as u64 - 1) / block_size))
}

/// The block accesses of a trace, in order.
pub fn block_accesses(records: &[TraceRecord], block_size: u64) -> impl Iterator<Item = BlockAccess> + '_ {
    assert!(block_size > 0, "the cache block size must be above 0");
    records.iter().flat_map(move |r| {
        let (first, last) = block_span(r.offset, r.len, block_size).unwrap_or((1, 0));
        (first..=last).map(move |b| BlockAccess { block: block_id(r.target, b), op: r.op })
    })
}

/// The number of block accesses of a trace (without making them).
pub fn count_block_accesses(records: &[TraceRecord], block_size: u64) -> u64 {
    records.iter().filter_map(|r| block_span(r.offset, r.len, block_size)).map(|(f, l)| l - f + 1).sum()
}

/// The hash that decides whether a block is sampled. Mixed twice: one round of
/// the mixer on block ids that differ only in their high bits sampled 11% more
/// blocks than the rate in a test (3.5 standard deviations); two rounds follow
/// the binomial spread.
#[inline]
fn sample_hash(block: u64) -> u64 {
    mix64(mix64(block ^ SAMPLE_SALT))
}

/// How a curve was computed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Method {
    Exact,
    /// SHARDS at the effective rate (the requested one rounded to a multiple of 2^-24).
    Shards {
        rate: f64,
    },
}

/// The error to expect from SHARDS, given the number of distinct blocks the
/// sample holds: the mean absolute error of the hit ratios (all accesses and
/// reads) over cache sizes of 5%, 10%, ..., 100% of the distinct blocks stays
/// below 3 / sqrt(sampled blocks): 0.095 with 1,000 sampled blocks (100k
/// distinct blocks at R = 0.01), 0.03 with 10,000, 0.0095 with 100,000.
///
/// Measured, not derived (`measure_shards_error` in mrc_tests.rs; asserted by
/// `shards_is_within_its_stated_error`): 1M accesses of uniform, Zipf-like
/// (s = 0.9), mixed (70% Zipf-like, 30% a loop) and pure-loop streams, 8
/// sample sets each, at R = 0.01, 0.03 and 0.1. Mean error, at most: uniform
/// 0.71, Zipf 0.21, mix 0.40 of the bound.
///
/// The error comes mostly from the sample holding more or fewer blocks than R
/// times the distinct blocks (binomial spread, about 1/sqrt(sampled blocks)
/// relative), which stretches the curve sideways. So single sizes: on smooth
/// curves (uniform, Zipf) every size was within the bound (at most 0.85 of
/// it); next to a knee they are not: on the mix, up to 2.6 times the bound
/// at the loop's knee; on a pure loop over W blocks the step at W lands at
/// W ± 2·W/sqrt(sampled loop blocks), and a size in between is off by the
/// whole step (0.95 measured; the mean over 20 sizes then reaches 0.0475,
/// above the bound at R = 0.1). Use `--exact` when sizes near a knee matter.
pub fn shards_error_bound(sampled_distinct_blocks: u64) -> f64 {
    3.0 / (sampled_distinct_blocks.max(1) as f64).sqrt()
}

/// The stack-distance histogram of a trace and the hit ratios it gives.
#[derive(Clone, Debug)]
pub struct MissRatioCurve {
    pub method: Method,
    /// Block accesses in the trace (all of them, also when sampled).
    pub total_accesses: u64,
    pub read_accesses: u64,
    /// Accesses the curve was computed from (all of them when exact).
    pub sampled_accesses: u64,
    /// Distinct blocks in the sample (all of them when exact).
    pub sampled_blocks: u64,
    /// First accesses to a block (estimated when sampled): misses at any size.
    pub cold_misses: f64,
    /// `hist[d]`: accesses with stack distance d (estimated when sampled; the
    /// sampling correction can make `hist[0]` negative).
    pub hist: Vec<f64>,
    /// The same for reads only.
    pub read_hist: Vec<f64>,
}

/// Accumulates a histogram while a stream goes by.
struct Builder {
    distances: StackDistances,
    total: u64,
    reads: u64,
    sampled: u64,
    sampled_reads: u64,
    cold: f64,
    hist: Vec<f64>,
    read_hist: Vec<f64>,
}

fn bump(hist: &mut Vec<f64>, at: usize, weight: f64) {
    if at >= hist.len() {
        hist.resize(at + 1, 0.0);
    }
    hist[at] += weight;
}

impl Builder {
    fn new() -> Self {
        Builder {
            distances: StackDistances::new(),
            total: 0,
            reads: 0,
            sampled: 0,
            sampled_reads: 0,
            cold: 0.0,
            hist: Vec::new(),
            read_hist: Vec::new(),
        }
    }

    /// Counts an access of the full stream.
    #[inline]
    fn seen(&mut self, a: BlockAccess) {
        self.total += 1;
        self.reads += (a.op == Op::Read) as u64;
    }

    /// Adds a (sampled) access; distances are multiplied by `scale` and each
    /// access weighs `scale`.
    #[inline]
    fn add(&mut self, a: BlockAccess, scale: f64) {
        self.sampled += 1;
        let read = a.op == Op::Read;
        self.sampled_reads += read as u64;
        match self.distances.access(a.block) {
            Some(d) => {
                let at = if scale == 1.0 { d as usize } else { (d as f64 * scale).round() as usize };
                bump(&mut self.hist, at, scale);
                if read {
                    bump(&mut self.read_hist, at, scale);
                }
            }
            None => self.cold += scale,
        }
    }

    fn finish(mut self, method: Method, scale: f64) -> MissRatioCurve {
        if scale != 1.0 {
            // SHARDS_adj: the sample is larger or smaller than expected, mostly
            // because of whether hot blocks were drawn; the difference goes to
            // the smallest distance so that the estimates sum to the true total.
            bump(&mut self.hist, 0, self.total as f64 - self.sampled as f64 * scale);
            bump(&mut self.read_hist, 0, self.reads as f64 - self.sampled_reads as f64 * scale);
        }
        MissRatioCurve {
            method,
            total_accesses: self.total,
            read_accesses: self.reads,
            sampled_accesses: self.sampled,
            sampled_blocks: self.distances.distinct(),
            cold_misses: self.cold,
            hist: self.hist,
            read_hist: self.read_hist,
        }
    }
}

/// Fraction of `total` accesses in `hist[..blocks]`, within [0, 1].
fn ratio_below(hist: &[f64], blocks: u64, total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let upto = (blocks.min(hist.len() as u64)) as usize;
    // A fold from +0.0: an empty f64 sum is -0.0, which would print as "-0.0%".
    (hist[..upto].iter().fold(0.0, |a, b| a + b) / total as f64).clamp(0.0, 1.0)
}

impl MissRatioCurve {
    /// The exact curve of a stream of block accesses.
    pub fn exact(accesses: impl IntoIterator<Item = BlockAccess>) -> Self {
        let mut b = Builder::new();
        for a in accesses {
            b.seen(a);
            b.add(a, 1.0);
        }
        b.finish(Method::Exact, 1.0)
    }

    /// The SHARDS estimate at sampling `rate` (0 < rate <= 1; rounded to a
    /// multiple of 2^-24, at least 2^-24).
    pub fn sampled(accesses: impl IntoIterator<Item = BlockAccess>, rate: f64) -> Self {
        assert!(rate > 0.0 && rate <= 1.0, "the SHARDS rate must be in (0, 1], not {rate}");
        let threshold = ((rate * SAMPLE_MODULUS as f64).round() as u64).clamp(1, SAMPLE_MODULUS);
        let effective = threshold as f64 / SAMPLE_MODULUS as f64;
        let scale = 1.0 / effective;
        let mut b = Builder::new();
        for a in accesses {
            b.seen(a);
            if sample_hash(a.block) % SAMPLE_MODULUS < threshold {
                b.add(a, scale);
            }
        }
        b.finish(Method::Shards { rate: effective }, scale)
    }

    /// Exact up to [`AUTO_EXACT_LIMIT`] block accesses, SHARDS at
    /// [`AUTO_SAMPLE_RATE`] above; `method` and `error_bound` tell which.
    pub fn auto(records: &[TraceRecord], block_size: u64) -> Self {
        if count_block_accesses(records, block_size) <= AUTO_EXACT_LIMIT {
            Self::exact(block_accesses(records, block_size))
        } else {
            Self::sampled(block_accesses(records, block_size), AUTO_SAMPLE_RATE)
        }
    }

    /// Distinct blocks in the trace (estimated when sampled).
    pub fn distinct_blocks(&self) -> f64 {
        self.cold_misses
    }

    /// The expected mean absolute error of the hit ratios: 0 when exact, else
    /// [`shards_error_bound`] of the sample.
    pub fn error_bound(&self) -> f64 {
        match self.method {
            Method::Exact => 0.0,
            Method::Shards { .. } => shards_error_bound(self.sampled_blocks),
        }
    }

    /// Fraction of all accesses an LRU cache of `cache_blocks` blocks hits.
    pub fn hit_ratio(&self, cache_blocks: u64) -> f64 {
        ratio_below(&self.hist, cache_blocks, self.total_accesses)
    }

    /// Fraction of reads that find their block in a cache of `cache_blocks` (0 when there are no reads).
    pub fn read_hit_ratio(&self, cache_blocks: u64) -> f64 {
        ratio_below(&self.read_hist, cache_blocks, self.read_accesses)
    }

    /// Fraction of all accesses completed from the cache: read hits over all
    /// accesses (writes are written through, so they always reach the backing store).
    pub fn served_ratio(&self, cache_blocks: u64) -> f64 {
        ratio_below(&self.read_hist, cache_blocks, self.total_accesses)
    }

    /// The number of whole blocks in `fraction` (0..=1) of `region_blocks`.
    pub fn blocks_at_fraction(fraction: f64, region_blocks: u64) -> u64 {
        (fraction.clamp(0.0, 1.0) * region_blocks as f64 + 1e-9).floor() as u64
    }

    /// `hit_ratio` for a cache of `fraction` (0..=1) of a region of `region_blocks`.
    pub fn hit_ratio_at_fraction(&self, fraction: f64, region_blocks: u64) -> f64 {
        self.hit_ratio(Self::blocks_at_fraction(fraction, region_blocks))
    }
}

/// Short name.
pub type Mrc = MissRatioCurve;
