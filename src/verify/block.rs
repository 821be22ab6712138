//! The on-disk format of a verified block. Every `vbs` bytes written carry a
//! 32-byte header and a pattern derived from it:
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic "LMVB" |
//! | 4..8 | run stamp (random per run: data of another run never passes) |
//! | 8..12 | target index |
//! | 12..16 | block length (vbs) |
//! | 16..24 | byte offset of the block on the target |
//! | 24..28 | write generation of the block (1, 2, ...) |
//! | 28..32 | CRC-32C of the pattern (bytes 32..vbs) |
//!
//! The pattern is xorshift64* output seeded from (stamp, target, offset,
//! generation): cheap to make at write time. A read is checked by comparing the
//! header and the CRC; only on a mismatch is the pattern made again, to report
//! the first differing byte.

use serde::{Deserialize, Serialize};

pub const HEADER: usize = 32;
const MAGIC: &[u8; 4] = b"LMVB";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub stamp: u32,
    pub target: u32,
    pub len: u32,
    pub offset: u64,
    pub generation: u32,
    pub crc: u32,
}

impl Header {
    pub fn read(block: &[u8]) -> Option<Header> {
        if &block[0..4] != MAGIC {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(block[i..i + 4].try_into().expect("4 bytes"));
        Some(Header {
            stamp: u32_at(4),
            target: u32_at(8),
            len: u32_at(12),
            offset: u64::from_le_bytes(block[16..24].try_into().expect("8 bytes")),
            generation: u32_at(24),
            crc: u32_at(28),
        })
    }

    fn write(&self, block: &mut [u8]) {
        block[0..4].copy_from_slice(MAGIC);
        block[4..8].copy_from_slice(&self.stamp.to_le_bytes());
        block[8..12].copy_from_slice(&self.target.to_le_bytes());
        block[12..16].copy_from_slice(&self.len.to_le_bytes());
        block[16..24].copy_from_slice(&self.offset.to_le_bytes());
        block[24..28].copy_from_slice(&self.generation.to_le_bytes());
        block[28..32].copy_from_slice(&self.crc.to_le_bytes());
    }
}

fn pattern(stamp: u32, target: u32, offset: u64, generation: u32, out: &mut [u8]) {
    let mut x = (stamp as u64) << 32 ^ (target as u64) << 48 ^ offset.rotate_left(17) ^ (generation as u64) ^ 0x9E37_79B9_7F4A_7C15;
    if x == 0 {
        x = 1;
    }
    let mut chunks = out.chunks_exact_mut(8);
    for c in &mut chunks {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        c.copy_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let last = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

/// Fills one block with its header and pattern.
pub fn fill(block: &mut [u8], stamp: u32, target: u32, offset: u64, generation: u32) {
    let (head, body) = block.split_at_mut(HEADER);
    pattern(stamp, target, offset, generation, body);
    let h = Header { stamp, target, len: (body.len() + HEADER) as u32, offset, generation, crc: crc32c::crc32c(body) };
    h.write(head);
}

/// What a check expects of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expect {
    pub stamp: u32,
    pub target: u32,
    pub offset: u64,
    pub generation: u32,
}

/// A block that is not what was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    pub target: String,
    pub offset: u64,
    pub expected: Expect,
    /// The header found, if the block has one.
    pub found: Option<Header>,
    /// Offset on the target of the first byte that differs from what was written.
    pub first_bad_byte: Option<u64>,
    pub what: String,
}

/// Checks one block. None when it is exactly what was written.
pub fn check(block: &[u8], expect: Expect, target_name: &str) -> Option<Mismatch> {
    let found = Header::read(block);
    let body = &block[HEADER..];
    let good_header = found.is_some_and(|h| {
        h.stamp == expect.stamp
            && h.target == expect.target
            && h.offset == expect.offset
            && h.generation == expect.generation
            && h.len as usize == block.len()
    });
    if good_header && found.is_some_and(|h| h.crc == crc32c::crc32c(body)) {
        return None;
    }
    // Slow path: make the expected block again and find the first difference.
    let mut want = vec![0u8; block.len()];
    fill(&mut want, expect.stamp, expect.target, expect.offset, expect.generation);
    let first = block.iter().zip(&want).position(|(a, b)| a != b).map(|i| expect.offset + i as u64);
    let what = match found {
        None => "no lunmark header: the block holds other data (never written by this run, or overwritten)".to_string(),
        Some(h) if h.stamp != expect.stamp => "the header is from another run".to_string(),
        Some(h) if h.offset != expect.offset || h.target != expect.target => {
            format!("the header belongs to target {} offset {} (a misdirected write or read)", h.target, h.offset)
        }
        Some(h) if h.generation != expect.generation => {
            format!("stale data: generation {} found, {} was written last (a lost write)", h.generation, expect.generation)
        }
        Some(_) => "the data does not match its checksum (corrupted in place)".to_string(),
    };
    Some(Mismatch { target: target_name.to_string(), offset: expect.offset, expected: expect, found, first_bad_byte: first, what })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_block_checks_and_a_flipped_byte_is_found() {
        let mut b = vec![0u8; 4096];
        let e = Expect { stamp: 7, target: 1, offset: 8192, generation: 3 };
        fill(&mut b, 7, 1, 8192, 3);
        assert!(check(&b, e, "t").is_none());
        b[1000] ^= 0x40;
        let m = check(&b, e, "t").unwrap();
        assert_eq!(m.first_bad_byte, Some(8192 + 1000));
        assert!(m.what.contains("checksum"));
        fill(&mut b, 7, 1, 8192, 2);
        assert!(check(&b, e, "t").unwrap().what.contains("stale data: generation 2"));
        assert!(check(&[0u8; 4096], e, "t").unwrap().what.contains("no lunmark header"));
    }
}
