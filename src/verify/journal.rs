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
//!
//! Reading a journal trusts nothing in it: a damaged header (a block size
//! lunmark never writes, a region that wraps past 2^64) or a damaged record
//! (an unknown kind, a target the header does not list, a block beyond its
//! target's region) is an error naming the file and the line or record.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::units::counted;

pub const SUBMITTED: u32 = 1;
pub const COMPLETED: u32 = 2;
pub const FAILED: u32 = 3;
pub const RECORD: usize = 24;
/// The verified block lies between the smallest transfer lunmark verifies
/// and the largest transfer it issues.
pub const MIN_BLOCK: u64 = 512;
pub const MAX_BLOCK: u64 = 64 << 20;
/// A header longer than this is not one lunmark wrote.
const MAX_HEADER: u64 = 1 << 20;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JournalHeader {
    pub magic: String,
    pub version: u32,
    pub stamp: u32,
    pub block: u64,
    pub targets: Vec<JournalTarget>,
    /// The working directory of the run, against which relative target paths
    /// are resolved by `lunmark verify` (absent in journals of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
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

/// What the journal says of each block: the highest generation whose write
/// ended (and whether that write failed), and a later write still in flight.
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
    /// Bytes of a record cut short at the end (a kill in the middle of a
    /// write(2), or a journal truncated later).
    pub torn_tail: usize,
    /// Where that partial record starts in the file.
    pub torn_at: u64,
    /// The (target, block) the partial record names, when enough of it is
    /// left to say (16 bytes) and it names a block of the header's regions.
    pub torn_block: Option<(u32, u64)>,
}

impl Replay {
    /// The byte offset on target `t` of block `b` (both checked when read).
    pub fn offset(&self, t: usize, b: u64) -> u64 {
        self.header.targets[t].start + b * self.header.block
    }
}

pub fn replay(path: &Path) -> Result<Replay> {
    let f = crate::input_path::open(path, &crate::input_path::JOURNAL).context("the journal")?;
    read(BufReader::new(f), &path.display().to_string())
}

/// Reads a journal from `r`; `name` (the file) prefixes every error.
pub fn read(mut r: impl BufRead, name: &str) -> Result<Replay> {
    let mut line = Vec::new();
    (&mut r).take(MAX_HEADER).read_until(b'\n', &mut line).with_context(|| format!("reading the journal {name}"))?;
    if line.len() as u64 >= MAX_HEADER && !line.ends_with(b"\n") {
        bail!("{name}: line 1 (the header) is longer than {MAX_HEADER} bytes: this is not a lunmark journal");
    }
    let header: JournalHeader = std::str::from_utf8(&line)
        .map_err(anyhow::Error::from)
        .and_then(|text| Ok(serde_json::from_str(text.trim())?))
        .with_context(|| format!("{name}: line 1 is not a lunmark journal header"))?;
    check_header(&header, name)?;
    let blocks_of: Vec<u64> = header.targets.iter().map(|t| t.len / header.block).collect();
    let mut blocks: HashMap<(u32, u64), BlockRecord> = HashMap::new();
    let mut rec = [0u8; RECORD];
    let mut n = 0u64;
    let mut torn_block = None;
    let torn_tail = loop {
        let got = read_up_to(&mut r, &mut rec).with_context(|| format!("reading the journal {name}"))?;
        if got < RECORD {
            if got >= 16 {
                let target = u32::from_le_bytes([rec[4], rec[5], rec[6], rec[7]]);
                let mut b8 = [0u8; 8];
                b8.copy_from_slice(&rec[8..16]);
                let block = u64::from_le_bytes(b8);
                if blocks_of.get(target as usize).is_some_and(|&count| block < count) {
                    torn_block = Some((target, block));
                }
            }
            break got;
        }
        n += 1;
        let at = line.len() as u64 + (n - 1) * RECORD as u64;
        let damaged = |what: String| anyhow::anyhow!("{name}: record {n} (byte {at}): {what}: the journal is damaged");
        let u32_at = |i: usize| u32::from_le_bytes([rec[i], rec[i + 1], rec[i + 2], rec[i + 3]]);
        let (kind, target, generation) = (u32_at(0), u32_at(4), u32_at(16));
        let mut b8 = [0u8; 8];
        b8.copy_from_slice(&rec[8..16]);
        let block = u64::from_le_bytes(b8);
        let Some(&count) = blocks_of.get(target as usize) else {
            return Err(damaged(format!("target {target}, but the header lists {}", counted(header.targets.len() as u64, "target"))));
        };
        if block >= count {
            let t = &header.targets[target as usize];
            return Err(damaged(format!(
                "block {block} of target {target}, beyond its region ({count} blocks of {} bytes from offset {})",
                header.block, t.start
            )));
        }
        let e = blocks.entry((target, block)).or_default();
        // Records of one block can reach the file out of order: worker A
        // completes generation 24 and releases the block, worker B takes it,
        // and B's "submitted 25" is written before A's "completed 24". So a
        // record only moves a block forward: the highest generation decides.
        match kind {
            SUBMITTED => {
                if generation > e.generation && e.in_flight.is_none_or(|f| generation > f) {
                    e.in_flight = Some(generation);
                }
            }
            COMPLETED | FAILED => {
                if generation >= e.generation {
                    e.generation = generation;
                    e.failed = kind == FAILED;
                }
                if e.in_flight.is_some_and(|f| f <= generation) {
                    e.in_flight = None;
                }
            }
            other => return Err(damaged(format!("unknown kind {other} (1 submitted, 2 completed, 3 failed)"))),
        }
    };
    let torn_at = line.len() as u64 + n * RECORD as u64;
    Ok(Replay { header, blocks, torn_tail, torn_at, torn_block })
}

/// Refuses a header lunmark could not have written: every later offset is
/// computed from it, so nothing in it may wrap or be out of range.
fn check_header(h: &JournalHeader, name: &str) -> Result<()> {
    let bad = |what: String| anyhow::anyhow!("{name}: line 1 (the header): {what}");
    if h.magic != "lunmark-journal" {
        return Err(bad(format!("magic '{}' instead of 'lunmark-journal': this is not a lunmark journal", h.magic)));
    }
    if h.version != 1 {
        return Err(bad(format!("journal version {} (this lunmark reads version 1): check it with the lunmark that wrote it", h.version)));
    }
    if !(MIN_BLOCK..=MAX_BLOCK).contains(&h.block) {
        return Err(bad(format!(
            "block size {} is not one lunmark writes ({MIN_BLOCK} bytes to {MAX_BLOCK}): the journal is damaged",
            h.block
        )));
    }
    if h.targets.is_empty() {
        return Err(bad("no targets are listed: the journal is damaged".into()));
    }
    for (i, t) in h.targets.iter().enumerate() {
        if t.start.checked_add(t.len).is_none() {
            return Err(bad(format!(
                "target {i} ({}): region offset {} plus length {} wraps past 2^64: the journal is damaged",
                t.uri, t.start, t.len
            )));
        }
    }
    Ok(())
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A journal's bytes: a header with these (start, len) regions, then the records.
    pub(crate) fn journal(block: u64, targets: &[(u64, u64)], records: &[[u8; RECORD]]) -> Vec<u8> {
        let header = JournalHeader {
            magic: "lunmark-journal".into(),
            version: 1,
            stamp: 7,
            block,
            targets: targets.iter().map(|&(start, len)| JournalTarget { uri: "lun".into(), start, len }).collect(),
            cwd: None,
        };
        let mut out = (serde_json::to_string(&header).unwrap() + "\n").into_bytes();
        for r in records {
            out.extend_from_slice(r);
        }
        out
    }

    fn err(bytes: &[u8]) -> String {
        match read(bytes, "j") {
            Ok(_) => panic!("accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn a_good_journal_replays() {
        let j = journal(4096, &[(8192, 1 << 20)], &[record(SUBMITTED, 0, 3, 1), record(COMPLETED, 0, 3, 1), record(SUBMITTED, 0, 255, 1)]);
        let r = read(&j[..], "j").unwrap();
        assert_eq!(r.blocks[&(0, 3)], BlockRecord { generation: 1, in_flight: None, failed: false });
        assert_eq!(r.blocks[&(0, 255)].in_flight, Some(1));
        assert_eq!(r.offset(0, 3), 8192 + 3 * 4096);
        assert_eq!(r.torn_tail, 0);
        let mut torn = j.clone();
        torn.extend_from_slice(&[1, 0, 0]);
        let r = read(&torn[..], "j").unwrap();
        assert_eq!((r.torn_tail, r.torn_at, r.torn_block), (3, j.len() as u64, None));
        let mut torn = j.clone();
        torn.extend_from_slice(&record(SUBMITTED, 0, 9, 4)[..16]);
        assert_eq!(read(&torn[..], "j").unwrap().torn_block, Some((0, 9)));
    }

    /// Another worker's "submitted 25" written before this worker's
    /// "completed 24" (seen under load after kill -9): 25 is in flight, not a
    /// lost write; and a late "completed 24" never undoes a "completed 25".
    #[test]
    fn records_of_two_workers_out_of_order_keep_the_highest_generation() {
        let j = journal(4096, &[(0, 1 << 20)], &[record(SUBMITTED, 0, 1, 24), record(SUBMITTED, 0, 1, 25), record(COMPLETED, 0, 1, 24)]);
        let r = read(&j[..], "j").unwrap();
        assert_eq!(r.blocks[&(0, 1)], BlockRecord { generation: 24, in_flight: Some(25), failed: false });
        let j = journal(
            4096,
            &[(0, 1 << 20)],
            &[record(SUBMITTED, 0, 1, 24), record(SUBMITTED, 0, 1, 25), record(COMPLETED, 0, 1, 25), record(COMPLETED, 0, 1, 24)],
        );
        assert_eq!(read(&j[..], "j").unwrap().blocks[&(0, 1)], BlockRecord { generation: 25, in_flight: None, failed: false });
        let j = journal(4096, &[(0, 1 << 20)], &[record(SUBMITTED, 0, 1, 3), record(FAILED, 0, 1, 3), record(SUBMITTED, 0, 1, 4)]);
        assert_eq!(read(&j[..], "j").unwrap().blocks[&(0, 1)], BlockRecord { generation: 3, in_flight: Some(4), failed: true });
        let j = journal(4096, &[(0, 1 << 20)], &[record(SUBMITTED, 0, 1, 4), record(COMPLETED, 0, 1, 4), record(FAILED, 0, 1, 3)]);
        assert_eq!(read(&j[..], "j").unwrap().blocks[&(0, 1)], BlockRecord { generation: 4, in_flight: None, failed: false });
    }

    #[test]
    fn block_sizes_lunmark_never_writes_are_refused_on_line_1() {
        for block in [0, 3, 1 << 40] {
            let e = err(&journal(block, &[(0, 1 << 20)], &[record(COMPLETED, 0, 0, 1)]));
            assert!(e.contains("j: line 1 (the header): block size") && e.contains(&block.to_string()), "{e}");
        }
    }

    #[test]
    fn damaged_records_are_refused_naming_the_record() {
        let e = err(&journal(4096, &[(0, 1 << 20)], &[record(COMPLETED, 0, 1, 1), record(COMPLETED, 5, 0, 1)]));
        assert!(e.contains("j: record 2 (byte") && e.contains("target 5") && e.contains("lists 1 target: the journal is damaged"), "{e}");
        let e = err(&journal(4096, &[(0, 1 << 20)], &[record(COMPLETED, 0, 1 << 40, 1)]));
        assert!(e.contains("record 1") && e.contains("block 1099511627776") && e.contains("beyond its region"), "{e}");
        let e = err(&journal(4096, &[(0, 1 << 20)], &[record(COMPLETED, 0, u64::MAX, 1)]));
        assert!(e.contains("beyond its region"), "{e}");
        let e = err(&journal(4096, &[(0, 1 << 20)], &[record(9, 0, 1, 1)]));
        assert!(e.contains("unknown kind 9"), "{e}");
    }

    #[test]
    fn regions_that_wrap_and_headers_that_are_not_journals_are_refused() {
        let e = err(&journal(4096, &[(u64::MAX - 4095, 8192)], &[]));
        assert!(e.contains("line 1") && e.contains("wraps past 2^64"), "{e}");
        assert!(err(b"").contains("line 1 is not a lunmark journal header"));
        assert!(err(b"\xff\xfe\n").contains("line 1 is not a lunmark journal header"));
        assert!(err(&journal(4096, &[], &[])).contains("no targets"));
        let long = vec![b'x'; (MAX_HEADER + 10) as usize];
        assert!(err(&long).contains("longer than"));
    }
}
