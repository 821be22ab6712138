//! Exact LRU stack distances in O(log M) per access (Bennett–Kruskal, as
//! refined by Olken): every access gets a timestamp; a Fenwick tree over the
//! timestamps holds a 1 at the latest access of each block. The stack distance
//! of an access is the number of 1s after the block's previous access: the
//! number of distinct other blocks touched since. When the timestamps run out,
//! the live ones (one per block) are renumbered in order, so memory stays
//! O(M) in the number of distinct blocks M, not in the length of the trace.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const MIN_CAPACITY: usize = 1 << 12;

/// The splitmix64 finaliser: a fast bijective 64-bit mixer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes block ids with `mix64` (SipHash is several times slower and the keys
/// are not attacker-chosen).
#[derive(Default)]
pub struct BlockHasher(u64);

impl Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix64(self.0 ^ b as u64);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = mix64(self.0 ^ n);
    }
}

pub type BlockMap<V> = HashMap<u64, V, BuildHasherDefault<BlockHasher>>;

/// Stack distances of a stream of block accesses, one access at a time.
pub struct StackDistances {
    /// Fenwick tree, 1-based: `tree[i]` sums the marks of a range ending at timestamp i - 1.
    tree: Vec<u32>,
    /// Block -> timestamp of its latest access.
    last: BlockMap<u32>,
    /// The next timestamp.
    now: u32,
}

impl Default for StackDistances {
    fn default() -> Self {
        Self::new()
    }
}

impl StackDistances {
    pub fn new() -> Self {
        StackDistances { tree: vec![0; MIN_CAPACITY + 1], last: BlockMap::default(), now: 0 }
    }

    /// The number of distinct blocks seen.
    pub fn distinct(&self) -> u64 {
        self.last.len() as u64
    }

    /// Records an access to `block`: the number of distinct other blocks accessed
    /// since its previous access, or None for its first access (a cold miss).
    #[inline]
    pub fn access(&mut self, block: u64) -> Option<u64> {
        if self.now as usize + 1 >= self.tree.len() {
            self.renumber();
        }
        let now = self.now;
        self.now += 1;
        let previous = self.last.insert(block, now);
        let distance = previous.map(|p| {
            // Marks at or before p (p's own included), subtracted from all marks
            // (one per distinct block, this one included): the marks after p.
            let through_p = self.prefix(p);
            self.add(p, false);
            (self.last.len() as u64) - through_p
        });
        self.add(now, true);
        distance
    }

    /// Marks in timestamps 0..=t.
    #[inline]
    fn prefix(&self, t: u32) -> u64 {
        let mut i = t as usize + 1;
        let mut sum = 0u64;
        while i > 0 {
            sum += self.tree[i] as u64;
            i &= i - 1;
        }
        sum
    }

    #[inline]
    fn add(&mut self, t: u32, set: bool) {
        let mut i = t as usize + 1;
        while i < self.tree.len() {
            if set {
                self.tree[i] += 1;
            } else {
                self.tree[i] -= 1;
            }
            i += i & i.wrapping_neg();
        }
    }

    /// Gives the live timestamps the numbers 0..M in their order and makes room
    /// for at least as many new ones.
    fn renumber(&mut self) {
        let mut live: Vec<(u32, u64)> = self.last.iter().map(|(&b, &t)| (t, b)).collect();
        live.sort_unstable();
        for (i, &(_, block)) in live.iter().enumerate() {
            self.last.insert(block, i as u32);
        }
        let m = live.len();
        let capacity = (2 * m).max(MIN_CAPACITY);
        assert!(capacity < u32::MAX as usize, "more than 2^31 distinct blocks: use a larger --block-size or --sampled");
        self.tree = vec![0; capacity + 1];
        self.tree[1..=m].fill(1);
        for i in 1..=capacity {
            let parent = i + (i & i.wrapping_neg());
            if parent <= capacity {
                self.tree[parent] += self.tree[i];
            }
        }
        self.now = m as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_of_a_small_stream() {
        let mut s = StackDistances::new();
        let got: Vec<Option<u64>> = [1, 2, 3, 1, 1, 3, 2, 9, 1].iter().map(|&b| s.access(b)).collect();
        assert_eq!(got, vec![None, None, None, Some(2), Some(0), Some(1), Some(2), None, Some(3)]);
        assert_eq!(s.distinct(), 4);
    }

    #[test]
    fn renumbering_keeps_distances() {
        // A loop over 100 blocks, long enough to renumber many times.
        let mut s = StackDistances::new();
        for i in 0..100_000u64 {
            let d = s.access(i % 100);
            assert_eq!(d, if i < 100 { None } else { Some(99) }, "access {i}");
        }
        assert!(s.tree.len() <= MIN_CAPACITY + 1, "memory follows the distinct blocks, not the trace length");
    }
}
