//! Tests of the miss-ratio curves against independent oracles: a plain LRU
//! cache simulated at every size (property test), known shapes (uniform
//! random), and the exact curve for the SHARDS estimate.

use proptest::prelude::*;

use super::mrc::{block_accesses, count_block_accesses, shards_error_bound, BlockAccess, Method, MissRatioCurve};
use super::stack::StackDistances;
use crate::trace::TraceRecord;
use crate::workload::rng::Rng;
use crate::workload::Op;

/// Hits of a real LRU cache of `capacity` blocks (most recent first), and the hits among reads.
fn simulate_lru(accesses: &[BlockAccess], capacity: usize) -> (u64, u64) {
    let mut cache: Vec<u64> = Vec::new();
    let (mut hits, mut read_hits) = (0, 0);
    for a in accesses {
        if let Some(p) = cache.iter().position(|&b| b == a.block) {
            cache.remove(p);
            hits += 1;
            read_hits += (a.op == Op::Read) as u64;
        } else if cache.len() == capacity {
            cache.pop();
        }
        if capacity > 0 {
            cache.insert(0, a.block);
        }
    }
    (hits, read_hits)
}

fn access(block: u64, write: bool) -> BlockAccess {
    BlockAccess { block, op: if write { Op::Write } else { Op::Read } }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn exact_hit_ratios_equal_an_lru_simulation_at_every_size(
        stream in prop::collection::vec((0u64..24, any::<bool>()), 0..200)
    ) {
        let accesses: Vec<BlockAccess> = stream.iter().map(|&(b, w)| access(b, w)).collect();
        let curve = MissRatioCurve::exact(accesses.iter().copied());
        let distinct = accesses.iter().map(|a| a.block).collect::<std::collections::HashSet<_>>().len();
        let reads = accesses.iter().filter(|a| a.op == Op::Read).count() as u64;
        prop_assert_eq!(curve.total_accesses, accesses.len() as u64);
        prop_assert_eq!(curve.distinct_blocks(), distinct as f64);
        for c in 0..=distinct + 1 {
            let (hits, read_hits) = simulate_lru(&accesses, c);
            let n = accesses.len().max(1) as f64;
            prop_assert!((curve.hit_ratio(c as u64) - hits as f64 / n).abs() < 1e-12, "size {}", c);
            prop_assert!((curve.served_ratio(c as u64) - read_hits as f64 / n).abs() < 1e-12, "size {}", c);
            let read_ratio = if reads == 0 { 0.0 } else { read_hits as f64 / reads as f64 };
            prop_assert!((curve.read_hit_ratio(c as u64) - read_ratio).abs() < 1e-12, "size {}", c);
        }
    }
}

/// Stack distances by moving blocks in a list: slow and obviously right.
fn brute_distances(blocks: &[u64]) -> Vec<Option<u64>> {
    let mut stack: Vec<u64> = Vec::new();
    blocks
        .iter()
        .map(|&b| {
            let d = stack.iter().position(|&x| x == b).map(|p| {
                stack.remove(p);
                p as u64
            });
            stack.insert(0, b);
            d
        })
        .collect()
}

#[test]
fn distances_stay_exact_across_renumbering() {
    // 30k accesses over 3000 blocks: the 4096-slot tree is renumbered many times.
    let mut rng = Rng::new(7);
    let blocks: Vec<u64> = (0..30_000).map(|i| if i % 3 == 0 { i % 2000 } else { rng.below(3000) }).collect();
    let mut s = StackDistances::new();
    let got: Vec<Option<u64>> = blocks.iter().map(|&b| s.access(b)).collect();
    assert_eq!(got, brute_distances(&blocks));
}

#[test]
fn blocks_of_an_io_are_the_ones_it_touches() {
    let r = |target, offset, len| TraceRecord { t_ns: 0, op: Op::Read, target, offset, len };
    let records = [r(0, 4095, 2), r(1, 8192, 4096), r(0, 0, 0), r(2, u64::MAX - 10, 100)];
    let blocks: Vec<u64> = block_accesses(&records, 4096).map(|a| a.block).collect();
    let max_block = (u64::MAX / 4096) & ((1 << 48) - 1);
    assert_eq!(blocks, vec![0, 1, (1 << 48) | 2, (2 << 48) | max_block]);
    assert_eq!(count_block_accesses(&records, 4096), 4);
}

#[test]
fn uniform_random_hits_in_proportion_to_the_cache() {
    let n = 10_000u64;
    let mut rng = Rng::new(11);
    let stream: Vec<BlockAccess> = (0..2_000_000).map(|_| access(rng.below(n), rng.unit() < 0.3)).collect();
    let curve = MissRatioCurve::exact(stream.iter().copied());
    for pct in [25, 50, 75] {
        let c = n * pct / 100;
        let h = curve.hit_ratio(c);
        assert!((h - pct as f64 / 100.0).abs() < 0.02, "{pct}%: hit ratio {h}");
        assert!((curve.read_hit_ratio(c) - pct as f64 / 100.0).abs() < 0.02, "{pct}%: read hit ratio {}", curve.read_hit_ratio(c));
    }
    assert!((curve.hit_ratio(n) - 0.995).abs() < 1e-9, "all but the 10k cold misses hit at 100%");
}

/// Zipf-like ranks over `n` by inverse CDF, exponent `s`.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|i| {
                acc += 1.0 / (i as f64).powf(s);
                acc
            })
            .collect();
        cdf.iter_mut().for_each(|x| *x /= acc);
        Zipf { cdf }
    }

    fn draw(&self, rng: &mut Rng) -> u64 {
        let u = rng.unit();
        self.cdf.partition_point(|&x| x < u) as u64
    }
}

/// The 1M-access workloads the SHARDS bound is measured on. The seed also moves
/// the block ids, so that each seed samples a different set of blocks.
fn workload(name: &str, seed: u64) -> Vec<BlockAccess> {
    let base = seed << 32;
    let mut rng = Rng::new(seed);
    let zipf = Zipf::new(100_000, 0.9);
    let n = 1_000_000u64;
    let mut loop_at = 0u64;
    (0..n)
        .map(|i| {
            let write = rng.unit() < 0.3;
            let block = match name {
                "uniform" => rng.below(100_000),
                "zipf" => zipf.draw(&mut rng),
                "loop" => i % 50_000,
                // 70% Zipf-like over 100k blocks, 30% a sequential loop over 20k others.
                _ => {
                    if rng.unit() < 0.7 {
                        zipf.draw(&mut rng)
                    } else {
                        loop_at = (loop_at + 1) % 20_000;
                        1_000_000 + loop_at
                    }
                }
            };
            access(base + block, write)
        })
        .collect()
}

/// Worst absolute difference of the hit ratios at 5%, 10%, ..., 100% of the distinct blocks.
fn worst_error(exact: &MissRatioCurve, sampled: &MissRatioCurve) -> (f64, f64) {
    let distinct = exact.distinct_blocks();
    let (mut worst, mut sum) = (0.0f64, 0.0);
    for pct in (5..=100).step_by(5) {
        let c = (distinct * pct as f64 / 100.0) as u64;
        let e = (exact.hit_ratio(c) - sampled.hit_ratio(c)).abs().max((exact.read_hit_ratio(c) - sampled.read_hit_ratio(c)).abs());
        worst = worst.max(e);
        sum += e;
    }
    (worst, sum / 20.0)
}

#[test]
fn shards_is_within_its_stated_error() {
    for (name, seed) in [("mix", 1), ("mix", 2), ("uniform", 3), ("zipf", 4)] {
        let stream = workload(name, seed);
        let exact = MissRatioCurve::exact(stream.iter().copied());
        let sampled = MissRatioCurve::sampled(stream.iter().copied(), 0.01);
        assert_eq!(sampled.method, Method::Shards { rate: (0.01f64 * (1 << 24) as f64).round() / (1 << 24) as f64 });
        assert_eq!(sampled.total_accesses, 1_000_000);
        assert!(sampled.sampled_accesses > 5_000 && sampled.sampled_accesses < 20_000, "{}", sampled.sampled_accesses);
        let (worst, mean) = worst_error(&exact, &sampled);
        let bound = sampled.error_bound();
        eprintln!("SHARDS R=0.01, 1M accesses, {name} seed {seed}: mean error {mean:.4}, worst {worst:.4}, bound {bound:.4}");
        assert!(mean <= bound, "{name} seed {seed}: mean error {mean} above the stated bound {bound}");
        if name != "mix" {
            assert!(worst <= bound, "{name} seed {seed}: a smooth curve, yet one size is off by {worst}, above {bound}");
        }
        assert!(bound < 0.1, "a bound too loose to be of use: {bound}");
        let distinct_error = (sampled.distinct_blocks() - exact.distinct_blocks()).abs() / exact.distinct_blocks();
        assert!(distinct_error < 0.1, "{name}: distinct blocks off by {distinct_error}");
    }
}

/// The measurement behind `shards_error_bound` (run with --ignored --nocapture).
#[test]
#[ignore]
fn measure_shards_error() {
    for name in ["uniform", "zipf", "mix", "loop"] {
        for seed in 1..=8 {
            let stream = workload(name, seed);
            let exact = MissRatioCurve::exact(stream.iter().copied());
            for rate in [0.01, 0.03, 0.1] {
                let sampled = MissRatioCurve::sampled(stream.iter().copied(), rate);
                let (worst, mean) = worst_error(&exact, &sampled);
                let bound = shards_error_bound(sampled.sampled_blocks);
                eprintln!(
                    "{name:8} seed {seed} R={rate:<5} sampled blocks {:6}: worst {worst:.4} mean {mean:.4} bound {bound:.4} \
                     mean/bound {:.2} mean*sqrt(blocks) {:.2} worst*sqrt(blocks) {:.2}",
                    sampled.sampled_blocks,
                    mean / bound,
                    mean * (sampled.sampled_blocks as f64).sqrt(),
                    worst * (sampled.sampled_blocks as f64).sqrt()
                );
            }
        }
    }
}

#[test]
fn auto_is_exact_up_to_the_limit_and_sampled_above() {
    let r = |offset, len| TraceRecord { t_ns: 0, op: Op::Read, target: 0, offset, len };
    let small = [r(0, 8192), r(0, 4096)];
    let curve = MissRatioCurve::auto(&small, 4096);
    // Blocks 0, 1, 0: the re-access has distance 1, so it hits from 2 blocks on.
    assert_eq!((curve.method, curve.error_bound(), curve.hit_ratio(1), curve.hit_ratio(2)), (Method::Exact, 0.0, 0.0, 1.0 / 3.0));
    // One 4 GiB - 1 I/O in 128-byte blocks: 33.5M accesses, above the 20M limit.
    let big = [r(0, u32::MAX)];
    assert!(count_block_accesses(&big, 128) > super::mrc::AUTO_EXACT_LIMIT);
    let curve = MissRatioCurve::auto(&big, 128);
    assert!(matches!(curve.method, Method::Shards { rate } if (rate - 0.01).abs() < 1e-6), "{:?}", curve.method);
    assert_eq!(curve.total_accesses, 1 << 25);
    assert!(curve.error_bound() > 0.0 && curve.error_bound() < 0.01);
    assert_eq!(curve.hit_ratio(u64::MAX), 0.0, "all cold");
}
