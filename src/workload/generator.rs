//! The seeded offset/size generator of one worker. For each I/O it draws an
//! access line by its share, then read or write by the line's read %, then
//! random or sequential by its random %. Random offsets are uniform over the
//! aligned positions of the region; sequential I/Os continue where the previous
//! sequential I/O to that target ended and wrap at the region's end.

use super::rng::Rng;
use super::spec::AccessLine;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Read,
    Write,
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
    random: f64,
    align: u64,
}

#[derive(Clone, Debug)]
pub struct Generator {
    rng: Rng,
    lines: Vec<Line>,
    regions: Vec<Region>,
    /// Next sequential offset, relative to the region start, per target.
    cursors: Vec<u64>,
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
                Line { until: acc, len: l.bs.get() as u32, read: l.read / 100.0, random: l.random / 100.0, align: l.alignment() }
            })
            .collect();
        let cursors = vec![0; regions.len()];
        Generator { rng: Rng::for_stream(seed, stream), lines, regions, cursors }
    }

    /// The next I/O to the worker's `target`-th target.
    #[inline]
    pub fn next(&mut self, target: usize) -> IoShape {
        let line_index = if self.lines.len() == 1 {
            0
        } else {
            let u = self.rng.unit();
            self.lines.iter().position(|l| u < l.until).unwrap_or(self.lines.len() - 1)
        };
        let line = &self.lines[line_index];
        let op = if line.read >= 1.0 || (line.read > 0.0 && self.rng.unit() < line.read) { Op::Read } else { Op::Write };
        let random = line.random >= 1.0 || (line.random > 0.0 && self.rng.unit() < line.random);
        let region = self.regions[target];
        let len = line.len as u64;
        let offset = if random {
            let positions = (region.len - len) / line.align + 1;
            region.start + self.rng.below(positions) * line.align
        } else {
            let cursor = &mut self.cursors[target];
            if *cursor + len > region.len {
                *cursor = 0;
            }
            let at = *cursor;
            *cursor += len;
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
        AccessLine { share, bs: Bytes(bs), read, random, align: None }
    }

    #[test]
    fn sequential_continues_and_wraps_at_region_end() {
        let region = Region { start: 8192, len: 3 * 4096 };
        let mut g = Generator::new(1, 0, &[line(100.0, 4096, 100.0, 0.0)], vec![region]);
        let offs: Vec<u64> = (0..5).map(|_| g.next(0).offset).collect();
        assert_eq!(offs, vec![8192, 12288, 16384, 8192, 12288]);
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
