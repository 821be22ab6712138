//! The blocks of a host-side cache for one target: which target blocks are held,
//! in which frame, in LRU order, and which are dirty (written to the cache but
//! not yet to the target). Frames live in RAM or in a file or device
//! (`--cache-dev`, a real SSD in practice). All workers of a run share one
//! `TargetCache` per target, as an adapter's cache is shared by its host.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// How writes treat the cache (`--cache-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// Reads and writes go into the cache; writes also reach the target before they complete (the paper's "read-write-through").
    #[default]
    Writethrough,
    /// Writes complete in the cache and reach the target when pushed out or at the end of the run.
    Writeback,
    /// Only reads fill the cache; writes go to the target and drop the blocks they cover.
    Readonly,
}

impl std::fmt::Display for CacheMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CacheMode::Writethrough => "writethrough",
            CacheMode::Writeback => "writeback",
            CacheMode::Readonly => "readonly",
        })
    }
}

/// No frame (end of the LRU list).
const NONE: u32 = u32::MAX;

/// Where the frames are.
enum Frames {
    Ram(Vec<u8>),
    Dev(File),
}

impl Frames {
    fn read(&self, frame: u32, bs: usize, out: &mut [u8]) -> io::Result<()> {
        let at = frame as usize * bs;
        match self {
            Frames::Ram(v) => {
                out.copy_from_slice(&v[at..at + bs]);
                Ok(())
            }
            Frames::Dev(f) => f.read_exact_at(out, at as u64),
        }
    }

    fn write(&mut self, frame: u32, bs: usize, data: &[u8]) -> io::Result<()> {
        let at = frame as usize * bs;
        match self {
            Frames::Ram(v) => {
                v[at..at + bs].copy_from_slice(data);
                Ok(())
            }
            Frames::Dev(f) => f.write_all_at(data, at as u64),
        }
    }
}

/// A dirty block pushed out of the cache: it must reach the target.
pub struct Evicted {
    pub block: u64,
    pub data: Vec<u8>,
}

/// What the cache did, counted for tests and the result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreCounters {
    pub evictions: u64,
    pub dirty_evictions: u64,
}

struct Inner {
    frames: Frames,
    map: HashMap<u64, u32>,
    block_of: Vec<u64>,
    dirty: Vec<bool>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most and least recently used frames.
    head: u32,
    tail: u32,
    /// Frames never used yet.
    unused: u32,
    /// Blocks on their way to the target: a read miss of one must wait for it.
    writing_back: HashSet<u64>,
    /// Blocks whose write-back failed (and that no later write-back put right).
    failed: HashSet<u64>,
    counters: StoreCounters,
}

pub struct TargetCache {
    pub block_bytes: u32,
    pub frames: u32,
    inner: Mutex<Inner>,
}

impl TargetCache {
    /// A cache of `frames` blocks of `block_bytes`, in RAM or in `dev`.
    pub fn new(frames: u32, block_bytes: u32, dev: Option<&Path>) -> io::Result<TargetCache> {
        let n = frames as usize;
        let frames_store = match dev {
            None => Frames::Ram(vec![0u8; n * block_bytes as usize]),
            Some(path) => {
                // Without access-time updates, as the run's targets: the user only benchmarks this file.
                let mut options = std::fs::OpenOptions::new();
                options.read(true).write(true).create(true).truncate(false);
                let f = super::no_atime::open(options, 0, path)?;
                let need = n as u64 * block_bytes as u64;
                if f.metadata()?.is_file() && f.metadata()?.len() < need {
                    f.set_len(need)?;
                }
                Frames::Dev(f)
            }
        };
        let inner = Inner {
            frames: frames_store,
            map: HashMap::with_capacity(n),
            block_of: vec![0; n],
            dirty: vec![false; n],
            prev: vec![NONE; n],
            next: vec![NONE; n],
            head: NONE,
            tail: NONE,
            unused: 0,
            writing_back: HashSet::new(),
            failed: HashSet::new(),
            counters: StoreCounters::default(),
        };
        Ok(TargetCache { block_bytes, frames, inner: Mutex::new(inner) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn blocks(&self, offset: u64, len: u32) -> std::ops::Range<u64> {
        let bs = self.block_bytes as u64;
        offset / bs..(offset + len as u64).div_ceil(bs)
    }

    /// A read hit: when every block of [offset, offset+len) is held (and none
    /// is being written back), copies them into `out` and returns true.
    pub fn read_hit(&self, offset: u64, len: u32, out: &mut [u8]) -> io::Result<bool> {
        if self.frames == 0 {
            return Ok(false);
        }
        let mut g = self.lock();
        let blocks = self.blocks(offset, len);
        if !blocks.clone().all(|b| g.map.contains_key(&b)) {
            return Ok(false);
        }
        let bs = self.block_bytes as usize;
        for (i, b) in blocks.enumerate() {
            let f = g.map[&b];
            g.frames.read(f, bs, &mut out[i * bs..(i + 1) * bs])?;
            g.touch(f);
        }
        Ok(true)
    }

    /// Puts `data` (the blocks of [offset, offset+len)) in the cache, most
    /// recently used, dirty or clean; returns the dirty blocks it pushed out.
    pub fn fill(&self, offset: u64, len: u32, data: &[u8], dirty: bool) -> io::Result<Vec<Evicted>> {
        let mut out = Vec::new();
        if self.frames == 0 {
            return Ok(out);
        }
        let bs = self.block_bytes as usize;
        let mut g = self.lock();
        for (i, b) in self.blocks(offset, len).enumerate() {
            let f = match g.map.get(&b) {
                Some(&f) => f,
                None => {
                    let f = g.free_frame(bs, &mut out)?;
                    g.map.insert(b, f);
                    g.block_of[f as usize] = b;
                    f
                }
            };
            g.frames.write(f, bs, &data[i * bs..(i + 1) * bs])?;
            // A clean fill of a dirty block (a read that raced a write-back) keeps it dirty.
            g.dirty[f as usize] |= dirty;
            g.touch(f);
        }
        for e in &out {
            g.writing_back.insert(e.block);
        }
        Ok(out)
    }

    /// Drops the blocks of [offset, offset+len) (readonly mode: a write makes them stale).
    pub fn invalidate(&self, offset: u64, len: u32) {
        let mut g = self.lock();
        for b in self.blocks(offset, len) {
            if let Some(f) = g.map.remove(&b) {
                g.unlink(f);
                g.dirty[f as usize] = false;
                g.block_of[f as usize] = u64::MAX;
                // Freed frames join the LRU tail unmapped; free_frame reuses them first.
                g.push_tail(f);
            }
        }
    }

    /// True when cache block `block` lies in [offset, offset+len).
    pub fn covers(&self, offset: u64, len: u32, block: u64) -> bool {
        self.blocks(offset, len).contains(&block)
    }

    /// True when any block of [offset, offset+len) is still on its way to the target.
    pub fn writing_back(&self, offset: u64, len: u32) -> bool {
        let g = self.lock();
        !g.writing_back.is_empty() && self.blocks(offset, len).any(|b| g.writing_back.contains(&b))
    }

    /// A write-back of `block` ended; `ok` when its data reached the target.
    pub fn written_back(&self, block: u64, ok: bool) {
        let mut g = self.lock();
        g.writing_back.remove(&block);
        if !ok {
            g.failed.insert(block);
        } else if !g.failed.is_empty() {
            g.failed.remove(&block);
        }
    }

    /// Dirty blocks that have not reached the target: still dirty in the cache,
    /// on their way with no answer yet, or whose write-back failed. After a run
    /// whose final flush succeeded this is 0; after a target that went away, it
    /// is the data an application trusting this cache would have lost.
    /// Counted once each, at the end of a point (not on the I/O path).
    pub fn unwritten_blocks(&self) -> u64 {
        let g = self.lock();
        let mut blocks: HashSet<u64> = g.writing_back.union(&g.failed).copied().collect();
        blocks.extend(g.dirty.iter().zip(&g.block_of).filter(|(d, _)| **d).map(|(_, b)| *b));
        blocks.len() as u64
    }

    /// Takes every dirty block (marking it clean and on its way): the final flush.
    pub fn take_dirty(&self) -> io::Result<Vec<Evicted>> {
        let bs = self.block_bytes as usize;
        let mut g = self.lock();
        let mut out = Vec::new();
        for f in 0..g.dirty.len() {
            if g.dirty[f] {
                g.dirty[f] = false;
                let mut data = vec![0u8; bs];
                g.frames.read(f as u32, bs, &mut data)?;
                out.push(Evicted { block: g.block_of[f], data });
            }
        }
        for e in &out {
            g.writing_back.insert(e.block);
        }
        Ok(out)
    }

    pub fn counters(&self) -> StoreCounters {
        self.lock().counters
    }
}

impl Inner {
    fn unlink(&mut self, f: u32) {
        let (p, n) = (self.prev[f as usize], self.next[f as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else if self.head == f {
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else if self.tail == f {
            self.tail = p;
        }
        self.prev[f as usize] = NONE;
        self.next[f as usize] = NONE;
    }

    fn push_head(&mut self, f: u32) {
        self.next[f as usize] = self.head;
        self.prev[f as usize] = NONE;
        if self.head != NONE {
            self.prev[self.head as usize] = f;
        }
        self.head = f;
        if self.tail == NONE {
            self.tail = f;
        }
    }

    fn push_tail(&mut self, f: u32) {
        self.prev[f as usize] = self.tail;
        self.next[f as usize] = NONE;
        if self.tail != NONE {
            self.next[self.tail as usize] = f;
        }
        self.tail = f;
        if self.head == NONE {
            self.head = f;
        }
    }

    fn touch(&mut self, f: u32) {
        if self.head != f {
            self.unlink(f);
            self.push_head(f);
        }
    }

    /// A frame for a new block: a never-used one, else the least recently used
    /// (its block leaves the cache; a dirty one goes to `evicted`).
    fn free_frame(&mut self, bs: usize, evicted: &mut Vec<Evicted>) -> io::Result<u32> {
        if (self.unused as usize) < self.block_of.len() {
            let f = self.unused;
            self.unused += 1;
            self.push_head(f);
            return Ok(f);
        }
        let f = self.tail;
        let old = self.block_of[f as usize];
        if old != u64::MAX && self.map.get(&old) == Some(&f) {
            self.map.remove(&old);
            self.counters.evictions += 1;
            if self.dirty[f as usize] {
                self.counters.dirty_evictions += 1;
                let mut data = vec![0u8; bs];
                self.frames.read(f, bs, &mut data)?;
                evicted.push(Evicted { block: old, data });
            }
        }
        self.dirty[f as usize] = false;
        self.touch(f);
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: u8) -> Vec<u8> {
        vec![v; 512]
    }

    #[test]
    fn lru_keeps_the_most_recent_blocks_and_returns_dirty_evictions() {
        let c = TargetCache::new(2, 512, None).unwrap();
        let mut out = vec![0u8; 512];
        assert!(c.fill(0, 512, &block(1), false).unwrap().is_empty());
        assert!(c.fill(512, 512, &block(2), true).unwrap().is_empty());
        assert!(c.read_hit(0, 512, &mut out).unwrap()); // block 0 is now the most recent
        assert_eq!(out, block(1));
        let ev = c.fill(1024, 512, &block(3), false).unwrap(); // evicts block 1 (dirty)
        assert_eq!(ev.len(), 1);
        assert_eq!((ev[0].block, ev[0].data[0]), (1, 2));
        assert!(c.writing_back(512, 512));
        c.written_back(1, true);
        assert!(!c.read_hit(512, 512, &mut out).unwrap());
        assert!(c.read_hit(1024, 512, &mut out).unwrap() && out == block(3));
        c.invalidate(0, 512);
        assert!(!c.read_hit(0, 512, &mut out).unwrap());
        assert_eq!(c.counters(), StoreCounters { evictions: 1, dirty_evictions: 1 });
        // A multi-block read hits only when every block is held.
        assert!(!c.read_hit(512, 1024, &mut vec![0u8; 1024]).unwrap());
    }

    #[test]
    fn a_cache_on_a_file_keeps_its_frames_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache");
        let c = TargetCache::new(4, 512, Some(&path)).unwrap();
        c.fill(4096, 1024, &[block(7), block(8)].concat(), true).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 2048);
        let mut out = vec![0u8; 1024];
        assert!(c.read_hit(4096, 1024, &mut out).unwrap());
        assert_eq!(out, [block(7), block(8)].concat());
        let dirty = c.take_dirty().unwrap();
        assert_eq!(dirty.iter().map(|e| e.block).collect::<Vec<_>>(), vec![8, 9]);
        assert!(c.take_dirty().unwrap().is_empty());
    }

    #[test]
    fn dirty_blocks_count_as_unwritten_until_their_write_back_succeeds() {
        let c = TargetCache::new(2, 512, None).unwrap();
        c.fill(0, 512, &block(1), false).unwrap();
        assert_eq!(c.unwritten_blocks(), 0, "a clean block is on the target");
        c.fill(512, 1024, &[block(2), block(3)].concat(), true).unwrap(); // blocks 1, 2 dirty; block 0 leaves clean
        assert_eq!(c.unwritten_blocks(), 2);
        let ev = c.fill(2048, 512, &block(4), false).unwrap(); // pushes dirty block 1 out
        assert_eq!(ev.iter().map(|e| e.block).collect::<Vec<_>>(), vec![1]);
        assert_eq!(c.unwritten_blocks(), 2, "on its way is not yet written");
        c.written_back(1, false);
        assert_eq!(c.unwritten_blocks(), 2, "a failed write-back is lost");
        let flushed = c.take_dirty().unwrap();
        assert_eq!(flushed.iter().map(|e| e.block).collect::<Vec<_>>(), vec![2]);
        assert_eq!(c.unwritten_blocks(), 2);
        c.written_back(2, true);
        assert_eq!(c.unwritten_blocks(), 1, "only the failed one is left");
        c.fill(512, 512, &block(5), true).unwrap();
        c.written_back(1, true); // written again later, successfully
        let _ = c.take_dirty().unwrap();
        c.written_back(1, true);
        assert_eq!(c.unwritten_blocks(), 0);
    }
}
