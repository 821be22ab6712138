//! The seeded offset/size generator of one worker. For each I/O it draws an
//! access line by its share, then read or write by the line's read %, then
//! random or sequential by its random %. Random offsets are uniform over the
//! aligned positions of the region, or follow the line's distribution
//! (src/workload/dist.rs); sequential I/Os continue where the previous
//! sequential I/O to that target ended and wrap at the region's end.

use super::dist::Sampler;
use super::rng::Rng;
use super::spec::AccessLine;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Read,
    Write,
    /// Discard the range (BLKDISCARD, fallocate PUNCH_HOLE, NBD_CMD_TRIM, SCSI UNMAP).
    Trim,
    /// Make the target's writes durable: fsync on a file, a cache flush on a
    /// device (fsync of a block device, NBD_CMD_FLUSH, SYNCHRONIZE CACHE).
    /// Never drawn by the generator: the worker issues it every N writes.
    Sync,
    /// As `Sync`, but only the data and what is needed to read it back (fdatasync).
    DataSync,
}

impl Op {
    /// The name results and messages use.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Sync => "fsync",
            Op::DataSync => "fdatasync",
        }
    }

    /// True for syncs and flushes: no range, no bytes moved.
    pub fn is_sync(self) -> bool {
        matches!(self, Op::Sync | Op::DataSync)
    }
}

/// One generated I/O (before it is bound to a slot and buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoShape {
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    pub random: bool,
    /// Index of the access line that produced it.
    pub line: u16,
}

/// The part of a target this worker uses: [start, start + len).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
}

#[derive(Clone, Debug)]
struct Line {
    /// Cumulative share threshold in [0, 1].
    until: f64,
    len: u32,
    read: f64,
    /// Share of trims (the part above `read` of the draw), 0 for most lines.
    trim: f64,
    random: f64,
    align: u64,
    /// How far a sequential I/O moves the cursor: bs plus the line's skip.
    step: u64,
    /// Random I/Os per drawn offset (1: each drawn afresh).
    run: u32,
    /// How far each I/O of a random run moves on: `step`, or 0 to repeat the offset.
    run_step: u64,
}

/// Where a random run of a target goes on: I/Os left in it, and the next offset
/// relative to the region start.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    left: u32,
    next: u64,
}

#[derive(Clone, Debug)]
pub struct Generator {
    rng: Rng,
    lines: Vec<Line>,
    regions: Vec<Region>,
    /// Next sequential offset, relative to the region start, per target.
    cursors: Vec<u64>,
    /// Per target: the random run under way (never one for lines without `random_run`).
    runs: Vec<Run>,
    /// Per (line, target), line-major: the sampler of a line with a
    /// non-uniform distribution. Empty when every line is uniform.
    samplers: Vec<Option<Sampler>>,
    /// Whether a line's distribution moves with time (a hot band).
    moves: bool,
}

impl Generator {
    /// `regions[t]` is the region of the worker's t-th target. Each region must be
    /// at least as long as the largest transfer (checked when targets are opened).
    pub fn new(seed: u64, stream: u64, access: &[AccessLine], regions: Vec<Region>) -> Self {
        let total: f64 = access.iter().map(|l| l.share).sum();
        let mut acc = 0.0;
        let lines = access
            .iter()
            .map(|l| {
                acc += l.share / total;
                let step = l.bs.get() + l.skip.map_or(0, |s| s.get());
                Line {
                    until: acc,
                    len: l.bs.get() as u32,
                    read: l.read / 100.0,
                    trim: l.trim / 100.0,
                    random: l.random / 100.0,
                    align: l.alignment(),
                    step,
                    run: l.random_run.unwrap_or(1),
                    run_step: if l.random_run_same { 0 } else { step },
                }
            })
            .collect();
        let cursors = vec![0; regions.len()];
        let runs = vec![Run::default(); regions.len()];
        // Keyed by the run's seed, not the stream: every worker has the same hot blocks.
        let samplers = if access.iter().all(|l| l.dist.as_ref().is_none_or(|d| d.is_uniform())) {
            Vec::new()
        } else {
            access
                .iter()
                .flat_map(|l| {
                    regions.iter().map(move |r| {
                        let d = l.dist.as_ref().filter(|d| !d.is_uniform())?;
                        let positions = r.len.saturating_sub(l.bs.get()) / l.alignment() + 1;
                        Some(Sampler::new(d, positions, seed))
                    })
                })
                .collect()
        };
        let moves = access.iter().any(|l| l.dist.as_ref().is_some_and(|d| d.moves()));
        Generator { rng: Rng::for_stream(seed, stream), lines, regions, cursors, runs, samplers, moves }
    }

    /// Whether `next_at` needs the time (a hot band); the caller skips reading it otherwise.
    pub fn moves(&self) -> bool {
        self.moves
    }

    /// The next I/O to the worker's `target`-th target.
    #[inline]
    pub fn next(&mut self, target: usize) -> IoShape {
        self.next_at(target, 0)
    }

    /// The next I/O, `elapsed_ns` after the point started (a hot band moves with it).
    #[inline]
    pub fn next_at(&mut self, target: usize, elapsed_ns: u64) -> IoShape {
        let line_index = if self.lines.len() == 1 {
            0
        } else {
            let u = self.rng.unit();
            self.lines.iter().position(|l| u < l.until).unwrap_or(self.lines.len() - 1)
        };
        let line = &self.lines[line_index];
        let op = if line.trim > 0.0 {
            // One draw splits read / trim / write; lines without trims keep the
            // draws (and so the stream) they always had.
            let u = self.rng.unit();
            if u < line.read {
                Op::Read
            } else if u < line.read + line.trim {
                Op::Trim
            } else {
                Op::Write
            }
        } else if line.read >= 1.0 || (line.read > 0.0 && self.rng.unit() < line.read) {
            Op::Read
        } else {
            Op::Write
        };
        let mut random = line.random >= 1.0 || (line.random > 0.0 && self.rng.unit() < line.random);
        let region = self.regions[target];
        let len = line.len as u64;
        let offset = if random {
            // Lines without a run keep `left` at 0: the same draws as always.
            let run = &mut self.runs[target];
            let at = if run.left > 0 && run.next + len <= region.len {
                run.left -= 1;
                random = false;
                run.next
            } else {
                run.left = line.run - 1;
                let positions = (region.len - len) / line.align + 1;
                let pick = match self.samplers.get(line_index * self.regions.len() + target) {
                    Some(Some(sampler)) => sampler.draw(&mut self.rng, elapsed_ns),
                    _ => self.rng.below(positions),
                };
                pick * line.align
            };
            run.next = at + line.run_step;
            region.start + at
        } else {
            let cursor = &mut self.cursors[target];
            if *cursor + len > region.len {
                *cursor = 0;
            }
            let at = *cursor;
            *cursor += line.step;
            region.start + at
        };
        IoShape { op, offset, len: line.len, random, line: line_index as u16 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    fn line(share: f64, bs: u64, read: f64, random: f64) -> AccessLine {
        AccessLine { share, bs: Bytes(bs), read, random, align: None, ..Default::default() }
    }

    #[test]
    fn sequential_continues_and_wraps_at_region_end() {
        let region = Region { start: 8192, len: 3 * 4096 };
        let mut g = Generator::new(1, 0, &[line(100.0, 4096, 100.0, 0.0)], vec![region]);
        let offs: Vec<u64> = (0..5).map(|_| g.next(0).offset).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192, 12288]);
    }

    #[test]
    fn a_skewed_line_keeps_offsets_aligned_and_its_hot_blocks_across_workers() {
        let region = Region { start: 4096, len: 1 << 24 };
        let skewed = AccessLine { dist: Some("zipf:1.2".parse().unwrap()), ..line(100.0, 8192, 100.0, 100.0) };
        let hottest = |stream: u64| {
            let mut g = Generator::new(5, stream, std::slice::from_ref(&skewed), vec![region]);
            let mut counts = std::collections::HashMap::new();
            for _ in 0..20_000 {
                let io = g.next(0);
                assert_eq!((io.offset - 4096) % 8192, 0);
                assert!(io.offset >= 4096 && io.offset + 8192 <= 4096 + (1 << 24));
                *counts.entry(io.offset).or_insert(0u32) += 1;
            }
            counts.into_iter().max_by_key(|(_, c)| *c).unwrap().0
        };
        assert_eq!(hottest(0), hottest(1), "two workers of one run share the hottest block");
        // A uniform line beside it keeps the old stream.
        let plain = [line(100.0, 4096, 100.0, 100.0)];
        let uniform = AccessLine { dist: Some("uniform".parse().unwrap()), ..plain[0].clone() };
        let a: Vec<u64> = (0..32).scan(Generator::new(9, 0, &plain, vec![region]), |g, _| Some(g.next(0).offset)).collect();
        let b: Vec<u64> = (0..32).scan(Generator::new(9, 0, &[uniform], vec![region]), |g, _| Some(g.next(0).offset)).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn a_skip_leaves_a_hole_after_each_sequential_io() {
        // fio 3.33, rw=read:8k bs=4k: reads at 0, 12288, 24576, ... (its write_iolog).
        let region = Region { start: 4096, len: 40960 };
        let skipping = AccessLine { skip: Some(Bytes(8192)), ..line(100.0, 4096, 100.0, 0.0) };
        let mut g = Generator::new(1, 0, &[skipping], vec![region]);
        let offs: Vec<u64> = (0..5).map(|_| g.next(0).offset - 4096).collect();
        assert_eq!(offs, vec![0, 12288, 24576, 36864, 0], "a hole of 8k after each 4k read, wrapping at the end");
    }

    #[test]
    fn a_random_run_draws_an_offset_every_n_ios() {
        let region = Region { start: 0, len: 1 << 30 };
        let run = AccessLine { random_run: Some(4), ..line(100.0, 4096, 100.0, 100.0) };
        let mut g = Generator::new(7, 0, std::slice::from_ref(&run), vec![region]);
        let ios: Vec<IoShape> = (0..12).map(|_| g.next(0)).collect();
        for chunk in ios.chunks(4) {
            assert!(chunk[0].random, "each run starts at a drawn offset");
            for (k, io) in chunk.iter().enumerate().skip(1) {
                assert!(!io.random);
                assert_eq!(io.offset, chunk[0].offset + 4096 * k as u64, "fio's rw=randread:4: sequential I/Os between draws");
            }
        }
        assert_ne!(ios[0].offset + 4 * 4096, ios[4].offset, "a new offset after 4 I/Os");
        let same = AccessLine { random_run_same: true, ..run };
        let mut g = Generator::new(7, 0, &[same], vec![region]);
        let offs: Vec<u64> = (0..8).map(|_| g.next(0).offset).collect();
        assert!(offs[..4].iter().all(|o| *o == offs[0]) && offs[4..].iter().all(|o| *o == offs[4]), "rw_sequencer=identical: {offs:?}");
    }

    #[test]
    fn random_offsets_are_aligned_and_inside_the_region() {
        let region = Region { start: 4096, len: 1 << 20 };
        let mut g = Generator::new(3, 0, &[line(100.0, 8192, 50.0, 100.0)], vec![region]);
        for _ in 0..10_000 {
            let io = g.next(0);
            assert_eq!((io.offset - 4096) % 8192, 0);
            assert!(io.offset >= 4096 && io.offset + 8192 <= 4096 + (1 << 20));
        }
    }
}

/// Statistical and golden tests of the stream. The golden file holds cases in the
/// raft-rs style: a header line naming the seed and the access lines, `----`, then
/// the first I/Os. Run with LUNMARK_BLESS=1 to rewrite it after a deliberate change.
#[cfg(test)]
mod stream_tests {
    use super::*;
    use crate::units::Bytes;
    use std::fmt::Write;

    fn mixed() -> Vec<AccessLine> {
        vec![
            AccessLine { share: 50.0, bs: Bytes(4096), read: 70.0, random: 100.0, align: None, ..Default::default() },
            AccessLine { share: 30.0, bs: Bytes(8192), read: 35.0, random: 50.0, align: Some(Bytes(4096)), ..Default::default() },
            AccessLine { share: 20.0, bs: Bytes(65536), read: 0.0, random: 0.0, align: None, ..Default::default() },
        ]
    }

    #[test]
    fn observed_shares_match_the_spec_within_one_point() {
        let access = mixed();
        let mut g = Generator::new(1234, 0, &access, vec![Region { start: 0, len: 1 << 30 }]);
        let n = 200_000;
        let mut per_line = [(0u64, 0u64, 0u64); 3]; // (count, reads, randoms)
        for _ in 0..n {
            let io = g.next(0);
            let l = &mut per_line[io.line as usize];
            l.0 += 1;
            l.1 += (io.op == Op::Read) as u64;
            l.2 += io.random as u64;
            assert_eq!(io.len as u64, access[io.line as usize].bs.get());
        }
        for (spec, (count, reads, randoms)) in access.iter().zip(per_line) {
            let pct = |a: u64, b: u64| a as f64 * 100.0 / b as f64;
            assert!((pct(count, n) - spec.share).abs() < 1.0, "share {} vs {}", pct(count, n), spec.share);
            assert!((pct(reads, count) - spec.read).abs() < 1.0, "read {} vs {}", pct(reads, count), spec.read);
            assert!((pct(randoms, count) - spec.random).abs() < 1.0, "random {} vs {}", pct(randoms, count), spec.random);
        }
    }

    fn render(seed: u64, n: usize) -> String {
        let mut g = Generator::new(seed, 0, &mixed(), vec![Region { start: 0, len: 16 << 20 }]);
        let mut out = format!("seed={seed} lines=50%:4k:r70:rand100,30%:8k:r35:rand50:align4k,20%:64k:r0:rand0 region=0+16m\n----\n");
        for _ in 0..n {
            let io = g.next(0);
            let _ = writeln!(
                out,
                "{} {} {} {}",
                if io.op == Op::Read { "R" } else { "W" },
                io.offset,
                io.len,
                if io.random { "rand" } else { "seq" }
            );
        }
        out
    }

    #[test]
    fn same_seed_gives_the_golden_stream() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/generator.txt");
        let got = render(42, 40);
        if std::env::var_os("LUNMARK_BLESS").is_some() {
            std::fs::write(path, &got).unwrap();
        }
        let want = std::fs::read_to_string(path).expect("golden file (LUNMARK_BLESS=1 creates it)");
        assert_eq!(got, want, "the stream for seed 42 changed: journals and comparisons across versions depend on it");
        assert_eq!(render(42, 40), got, "same seed, same stream");
        assert_ne!(render(43, 40), got, "another seed, another stream");
    }
}
