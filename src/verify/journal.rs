//! The verify journal: the generation of every block lunmark writes, so the
//! whole region can be checked later (`lunmark verify`), also after the run or
//! the host was killed (vdbench's journal recovery).
//!
//! Format: one JSON line (the header: run stamp, block size, targets and
//! regions), then fixed 24-byte little-endian records
//! `kind u32 | target u32 | block u64 | generation u32 | reserved u32`,
//! kind 1 = write submitted, 2 = write completed, 3 = write failed.
//!
//! Ordering: a worker appends the "submitted" records of its writes before it
//! submits them (one write(2) per batch), and "completed" records after they
//! complete. A record that reached the file survives the process being killed
//! (kill -9); surviving a host crash would also need an fdatasync per batch,
//! which lunmark does not do. A block whose last record is "submitted" was in
//! flight at the kill: its content is old or new and it is reported as
//! uncertain, never as corrupt.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

pub const SUBMITTED: u32 = 1;
pub const COMPLETED: u32 = 2;
pub const FAILED: u32 = 3;
const RECORD: usize = 24;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JournalHeader {
    pub magic: String,
    pub version: u32,
    pub stamp: u32,
    pub block: u64,
    pub targets: Vec<JournalTarget>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JournalTarget {
    pub uri: String,
    pub start: u64,
    pub len: u64,
}

pub fn record(kind: u32, target: u32, block: u64, generation: u32) -> [u8; RECORD] {
    let mut r = [0u8; RECORD];
    r[0..4].copy_from_slice(&kind.to_le_bytes());
    r[4..8].copy_from_slice(&target.to_le_bytes());
    r[8..16].copy_from_slice(&block.to_le_bytes());
    r[16..20].copy_from_slice(&generation.to_le_bytes());
    r
}

pub fn create(path: &Path, header: &JournalHeader) -> Result<File> {
    // Through the guard of every output: a device, FIFO or directory is refused, a regular file emptied only after the check.
    let mut f = crate::output_path::check("--journal", path, crate::output_path::Mode::Stream)?.create_stream()?;
    f.write_all((serde_json::to_string(header)? + "\n").as_bytes())
        .and_then(|_| f.sync_data())
        .map_err(|e| anyhow::anyhow!("--journal {}: writing the header failed: {}", path.display(), crate::output_path::describe_io(&e)))?;
    Ok(f)
}

/// What the journal says of each block: (last completed generation, a write in flight, failed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockRecord {
    pub generation: u32,
    pub in_flight: Option<u32>,
    pub failed: bool,
}

pub struct Replay {
    pub header: JournalHeader,
    /// (target, block index) -> state.
    pub blocks: HashMap<(u32, u64), BlockRecord>,
    /// Bytes of a record cut short at the end (a kill in the middle of a write(2)).
    pub torn_tail: usize,
}

pub fn replay(path: &Path) -> Result<Replay> {
    let f = File::open(path).with_context(|| format!("opening the journal {}", path.display()))?;
    let mut r = BufReader::new(f);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let header: JournalHeader = serde_json::from_str(line.trim())
        .with_context(|| format!("{} is not a lunmark journal (its first line is not a journal header)", path.display()))?;
    if header.magic != "lunmark-journal" || header.version != 1 {
        bail!("{}: unsupported journal (magic {}, version {})", path.display(), header.magic, header.version);
    }
    let mut rest = Vec::new();
    r.read_to_end(&mut rest)?;
    let mut blocks: HashMap<(u32, u64), BlockRecord> = HashMap::new();
    for rec in rest.chunks_exact(RECORD) {
        let u32_at = |i: usize| u32::from_le_bytes(rec[i..i + 4].try_into().expect("4 bytes"));
        let (kind, target, generation) = (u32_at(0), u32_at(4), u32_at(16));
        let block = u64::from_le_bytes(rec[8..16].try_into().expect("8 bytes"));
        let e = blocks.entry((target, block)).or_default();
        match kind {
            SUBMITTED => e.in_flight = Some(generation),
            COMPLETED => {
                e.generation = generation;
                e.in_flight = None;
                e.failed = false;
            }
            FAILED => {
                e.in_flight = None;
                e.failed = true;
            }
            other => bail!("{}: a record of unknown kind {other}: the journal is damaged", path.display()),
        }
    }
    Ok(Replay { header, blocks, torn_tail: rest.len() % RECORD })
}
