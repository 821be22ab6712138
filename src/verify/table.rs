//! The shared state of every verified block of one target, one atomic word per
//! block, used by all workers that drive the target. It is how lunmark avoids
//! false failures with many I/Os in flight:
//!
//! - a write takes its blocks exclusively: it is issued only when no other I/O
//!   (read or write, from any worker) is in flight on any of them;
//! - a read takes its blocks shared: many reads may overlap, never with a write;
//! - an I/O that cannot take its blocks is not issued: the worker draws another
//!   offset (up to `MAX_DRAWS` times) and counts the conflict;
//! - a completed write sets the block's generation; a failed one marks the
//!   block unknown (its content is unpredictable and never checked again).
//!
//! Word layout: generation (32 bits) | unknown (1) | writing (1) | readers (30).

use std::sync::atomic::{AtomicU64, Ordering};

const READERS: u64 = (1 << 30) - 1;
const WRITING: u64 = 1 << 30;
const UNKNOWN: u64 = 1 << 31;

pub struct BlockTable {
    words: Vec<AtomicU64>,
    pub block: u64,
    /// Region start on the target.
    pub start: u64,
}

/// The generation of a block when a read took it (0: never written in this run).
pub type Generation = u32;

impl BlockTable {
    pub fn new(start: u64, len: u64, block: u64) -> BlockTable {
        let n = (len / block) as usize;
        BlockTable { words: (0..n).map(|_| AtomicU64::new(0)).collect(), block, start }
    }

    /// True when the table is the one `BlockTable::new(start, len, block)` makes.
    pub fn is_for(&self, start: u64, len: u64) -> bool {
        self.start == start && self.words.len() as u64 == len / self.block
    }

    fn range(&self, offset: u64, len: u32) -> std::ops::Range<usize> {
        let first = ((offset - self.start) / self.block) as usize;
        first..first + (len as u64 / self.block) as usize
    }

    /// Takes the blocks of a write; on success `gens` holds the generations to
    /// write (it is the slot's own buffer, cleared and refilled: no allocation
    /// per I/O once it has grown to the largest transfer).
    pub fn take_for_write(&self, offset: u64, len: u32, gens: &mut Vec<Generation>) -> bool {
        let range = self.range(offset, len);
        gens.clear();
        for (k, i) in range.clone().enumerate() {
            let w = &self.words[i];
            let cur = w.load(Ordering::Acquire);
            if cur & (WRITING | READERS) != 0 || w.compare_exchange(cur, cur | WRITING, Ordering::AcqRel, Ordering::Acquire).is_err() {
                // Give back what this write took so far.
                for j in range.start..range.start + k {
                    self.words[j].fetch_and(!WRITING, Ordering::AcqRel);
                }
                gens.clear();
                return false;
            }
            gens.push(((cur >> 32) as u32).wrapping_add(1).max(1));
        }
        true
    }

    /// Ends a write: the new generations stand, or the blocks become unknown.
    pub fn end_write(&self, offset: u64, len: u32, gens: &[Generation], ok: bool) {
        for (i, g) in self.range(offset, len).zip(gens) {
            let word = if ok { (*g as u64) << 32 } else { UNKNOWN };
            self.words[i].store(word, Ordering::Release);
        }
    }

    /// Takes the blocks of a read; on success `gens` (the slot's own buffer,
    /// refilled) holds each block's generation, or None (the block is unknown)
    /// when it cannot be checked.
    pub fn take_for_read(&self, offset: u64, len: u32, gens: &mut Vec<Option<Generation>>) -> bool {
        let range = self.range(offset, len);
        gens.clear();
        for (k, i) in range.clone().enumerate() {
            let w = &self.words[i];
            let mut cur = w.load(Ordering::Acquire);
            loop {
                if cur & WRITING != 0 {
                    for j in range.start..range.start + k {
                        self.words[j].fetch_sub(1, Ordering::AcqRel);
                    }
                    gens.clear();
                    return false;
                }
                match w.compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(now) => cur = now,
                }
            }
            gens.push(if cur & UNKNOWN != 0 { None } else { Some((cur >> 32) as u32) });
        }
        true
    }

    pub fn end_read(&self, offset: u64, len: u32) {
        for i in self.range(offset, len) {
            self.words[i].fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generations a take filled, or None when it was refused.
    fn write(t: &BlockTable, offset: u64, len: u32) -> Option<Vec<Generation>> {
        let mut gens = vec![7; 3];
        t.take_for_write(offset, len, &mut gens).then_some(gens)
    }

    fn read(t: &BlockTable, offset: u64, len: u32) -> Option<Vec<Option<Generation>>> {
        let mut gens = vec![Some(7); 3];
        t.take_for_read(offset, len, &mut gens).then_some(gens)
    }

    #[test]
    fn writes_exclude_everything_reads_share() {
        let t = BlockTable::new(0, 16 * 4096, 4096);
        let g = write(&t, 0, 8192).unwrap();
        assert_eq!(g, vec![1, 1], "the slot's buffer is refilled, not appended to");
        assert!(read(&t, 4096, 4096).is_none(), "no read beside a write in flight");
        assert!(write(&t, 4096, 8192).is_none(), "no overlapping write");
        assert!(write(&t, 8192, 4096).is_some(), "a disjoint write is fine");
        t.end_write(0, 8192, &g, true);
        let r1 = read(&t, 0, 4096).unwrap();
        let r2 = read(&t, 0, 8192).unwrap();
        assert_eq!((r1, r2), (vec![Some(1)], vec![Some(1), Some(1)]));
        assert!(write(&t, 0, 4096).is_none(), "no write under readers");
        t.end_read(0, 4096);
        t.end_read(0, 8192);
        assert_eq!(write(&t, 0, 4096).unwrap(), vec![2]);
        t.end_write(0, 4096, &[2], false);
        assert_eq!(read(&t, 0, 4096).unwrap(), vec![None], "a failed write leaves the block unknown");
    }

    /// A refused take gives back the blocks it took before the busy one, and
    /// leaves the slot's buffer empty.
    #[test]
    fn a_refused_take_gives_back_what_it_took() {
        let t = BlockTable::new(0, 4 * 4096, 4096);
        let g = write(&t, 8192, 4096).unwrap();
        let mut gens = vec![9; 2];
        assert!(!t.take_for_write(0, 3 * 4096, &mut gens), "block 2 is being written");
        assert!(gens.is_empty());
        assert_eq!(write(&t, 0, 8192).unwrap(), vec![1, 1], "blocks 0 and 1 were given back");
        t.end_write(8192, 4096, &g, true);
    }
}
