//! Data integrity at benchmark speed (`--verify`): every written block carries a
//! header and a pattern (block.rs), every read is checked, a shared block table
//! keeps reads from being checked against writes in flight (table.rs), and an
//! optional journal lets `lunmark verify` check the region later (journal.rs).
//! docs/verify.md explains the rules.

pub mod block;
pub mod journal;
pub mod table;

use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use block::{Expect, Mismatch};
use table::{BlockTable, Generation};

/// How many times a worker draws a new offset when the blocks of an I/O are busy.
pub const MAX_DRAWS: usize = 16;
/// Mismatches kept in full (the rest are counted).
pub const MISMATCHES_KEPT: usize = 8;

/// What verification needs across all workers of a run.
pub struct VerifyShared {
    pub stamp: u32,
    pub block: u64,
    /// One per run-level target.
    pub tables: Vec<BlockTable>,
    pub uris: Vec<String>,
    pub journal: Option<Mutex<File>>,
    /// End the run at the first mismatch.
    pub stop_on_mismatch: bool,
}

impl std::fmt::Debug for VerifyShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VerifyShared(stamp {:08x}, {}-byte blocks, {} targets)", self.stamp, self.block, self.tables.len())
    }
}

/// What the user asked for with --verify, --verify-stop and --journal.
#[derive(Clone, Debug, Default)]
pub struct VerifyOptions {
    pub stop_on_mismatch: bool,
    pub journal: Option<std::path::PathBuf>,
}

impl VerifyShared {
    /// Sets up verification for a run's targets (as opened for its first point):
    /// each one's URI and region.
    /// `block` is the run's block (`run_block_size`).
    pub fn new(opts: &VerifyOptions, block: u64, targets: &[(String, crate::workload::Region)]) -> anyhow::Result<VerifyShared> {
        let stamp = {
            let id = crate::workload::rng::new_id();
            u32::from_str_radix(&id[..8], 16).unwrap_or(0x5eed) | 1
        };
        let uris: Vec<String> = targets.iter().map(|(uri, _)| uri.clone()).collect();
        let tables = targets.iter().map(|(_, r)| table::BlockTable::new(r.start, r.len, block)).collect();
        let journal = match &opts.journal {
            Some(path) => {
                let header = journal::JournalHeader {
                    magic: "lunmark-journal".into(),
                    version: 1,
                    stamp,
                    block,
                    targets: targets
                        .iter()
                        .map(|(uri, r)| journal::JournalTarget { uri: uri.clone(), start: r.start, len: r.len })
                        .collect(),
                    cwd: std::env::current_dir().ok().map(|d| d.display().to_string()),
                };
                Some(Mutex::new(journal::create(path, &header)?))
            }
            None => None,
        };
        Ok(VerifyShared { stamp, block, tables, uris, journal, stop_on_mismatch: opts.stop_on_mismatch })
    }
}

impl VerifyShared {
    /// True when a point drives exactly the targets and regions the tables were
    /// made for, in the same order (the workers index the tables by position).
    pub fn covers(&self, targets: &[(String, crate::workload::Region)]) -> bool {
        self.uris.len() == targets.len()
            && self.uris.iter().zip(&self.tables).zip(targets).all(|((uri, t), (u, r))| uri == u && t.is_for(r.start, r.len))
    }
}

/// Per-worker verification counters; merged with `+=`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyStats {
    /// Blocks whose content was checked.
    pub blocks_checked: u64,
    /// Blocks read that had not been written in this run (pre-filled data) or whose write failed: not checked.
    pub blocks_unchecked: u64,
    pub blocks_written: u64,
    /// I/Os that had to be drawn again because their blocks were busy.
    pub conflicts: u64,
    /// I/Os issued as unchecked reads after MAX_DRAWS busy draws.
    pub forced_unchecked_reads: u64,
    pub mismatches: u64,
    pub first: Vec<Mismatch>,
}

impl std::ops::AddAssign<&VerifyStats> for VerifyStats {
    fn add_assign(&mut self, o: &VerifyStats) {
        self.blocks_checked += o.blocks_checked;
        self.blocks_unchecked += o.blocks_unchecked;
        self.blocks_written += o.blocks_written;
        self.conflicts += o.conflicts;
        self.forced_unchecked_reads += o.forced_unchecked_reads;
        self.mismatches += o.mismatches;
        let room = MISMATCHES_KEPT.saturating_sub(self.first.len());
        self.first.extend(o.first.iter().take(room).cloned());
    }
}

/// What a slot's I/O took from the block table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Taken {
    #[default]
    Nothing,
    Write,
    Read,
}

/// A slot's blocks: what its I/O took, and the generations, in buffers that
/// live as long as the slot (refilled per I/O, never allocated per I/O once
/// they hold the largest transfer's blocks).
#[derive(Clone, Debug, Default)]
pub struct SlotBlocks {
    pub taken: Taken,
    /// A write's new generations, one per block.
    written: Vec<Generation>,
    /// A read's generations as it took them (None: the block is unknown).
    read: Vec<Option<Generation>>,
}

/// A worker's side of verification.
pub struct Verifier {
    pub shared: Arc<VerifyShared>,
    /// Run-level index of each of the worker's targets.
    pub targets: Vec<usize>,
    pub slots: Vec<SlotBlocks>,
    pub stats: VerifyStats,
    pending: Vec<u8>,
}

impl Verifier {
    pub fn new(shared: Arc<VerifyShared>, targets: Vec<usize>, slots: usize) -> Verifier {
        Verifier { shared, targets, slots: vec![SlotBlocks::default(); slots], stats: VerifyStats::default(), pending: Vec::new() }
    }

    /// Tries to take the blocks of an I/O for `slot`. For a write, fills `buf`.
    pub fn take(&mut self, slot: u32, target: u32, write: bool, offset: u64, len: u32, buf: &mut [u8]) -> bool {
        let table = &self.shared.tables[self.targets[target as usize]];
        let blocks = &mut self.slots[slot as usize];
        if !write {
            let took = table.take_for_read(offset, len, &mut blocks.read);
            blocks.taken = if took { Taken::Read } else { Taken::Nothing };
            return took;
        }
        if !table.take_for_write(offset, len, &mut blocks.written) {
            blocks.taken = Taken::Nothing;
            return false;
        }
        blocks.taken = Taken::Write;
        let (b, stamp, run_target) = (self.shared.block, self.shared.stamp, self.targets[target as usize] as u32);
        for (i, g) in blocks.written.iter().enumerate() {
            let at = i * b as usize;
            block::fill(&mut buf[at..at + b as usize], stamp, run_target, offset + i as u64 * b, *g);
        }
        if self.shared.journal.is_some() {
            let first = (offset - table.start) / b;
            for (i, g) in blocks.written.iter().enumerate() {
                self.pending.extend_from_slice(&journal::record(journal::SUBMITTED, run_target, first + i as u64, *g));
            }
        }
        self.stats.blocks_written += blocks.written.len() as u64;
        true
    }

    /// Marks a slot's I/O as an unchecked read (after too many busy draws).
    pub fn force_unchecked(&mut self, slot: u32) {
        self.stats.forced_unchecked_reads += 1;
        self.slots[slot as usize].taken = Taken::Nothing;
    }

    /// Appends the journal records gathered since the last flush: called before
    /// the engine submits, so "submitted" records precede the writes.
    pub fn flush_journal(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if let Some(j) = &self.shared.journal {
            j.lock().expect("journal lock").write_all(&self.pending)?;
        }
        self.pending.clear();
        Ok(())
    }

    /// Ends a slot's I/O: releases its blocks and checks what a read returned.
    /// Returns the first mismatch found, if any.
    pub fn complete(&mut self, slot: u32, target: u32, offset: u64, len: u32, ok: bool, buf: &[u8]) -> Option<Mismatch> {
        let run_target = self.targets[target as usize];
        let table = &self.shared.tables[run_target];
        let blocks = &mut self.slots[slot as usize];
        match std::mem::take(&mut blocks.taken) {
            Taken::Nothing => None,
            Taken::Write => {
                table.end_write(offset, len, &blocks.written, ok);
                if self.shared.journal.is_some() {
                    let first = (offset - table.start) / self.shared.block;
                    let kind = if ok { journal::COMPLETED } else { journal::FAILED };
                    for (i, g) in blocks.written.iter().enumerate() {
                        self.pending.extend_from_slice(&journal::record(kind, run_target as u32, first + i as u64, *g));
                    }
                }
                None
            }
            Taken::Read => {
                let found = if ok { check_read(&self.shared, run_target, offset, &blocks.read, buf, &mut self.stats) } else { None };
                table.end_read(offset, len);
                found
            }
        }
    }
}

/// Checks each block a read returned against the generation it had when the
/// read took it; counts checked, unchecked and mismatched blocks. Returns the first mismatch.
fn check_read(
    shared: &VerifyShared,
    run_target: usize,
    offset: u64,
    gens: &[Option<Generation>],
    buf: &[u8],
    stats: &mut VerifyStats,
) -> Option<Mismatch> {
    let b = shared.block;
    let mut found = None;
    for (i, g) in gens.iter().enumerate() {
        let Some(g) = g.filter(|g| *g > 0) else {
            stats.blocks_unchecked += 1;
            continue;
        };
        let at = i * b as usize;
        let expect = Expect { stamp: shared.stamp, target: run_target as u32, offset: offset + i as u64 * b, generation: g };
        stats.blocks_checked += 1;
        if let Some(m) = block::check(&buf[at..at + b as usize], expect, &shared.uris[run_target]) {
            stats.mismatches += 1;
            if stats.first.len() < MISMATCHES_KEPT {
                stats.first.push(m.clone());
            }
            found.get_or_insert(m);
        }
    }
    found
}

/// The block size verification uses: the smallest transfer of the workload.
/// Every transfer, alignment and the region start must be multiples of it.
/// The block of a whole run: its tables live across the points, so the block
/// is the smallest transfer of any point (a sweep of `bs=8k,4k` checks 4 KiB
/// blocks at both points, not 8 KiB ones that a 4 KiB I/O could not fill),
/// and every point's transfers must be whole blocks.
pub fn run_block_size(specs: &[&crate::workload::WorkloadSpec]) -> Result<u64, String> {
    let block = specs.iter().map(|s| block_size(s)).collect::<Result<Vec<u64>, String>>()?.into_iter().min().unwrap_or(4096);
    for spec in specs {
        check_block(spec, block)?;
    }
    Ok(block)
}

pub fn block_size(spec: &crate::workload::WorkloadSpec) -> Result<u64, String> {
    let block = spec.groups.iter().flat_map(|g| g.access.iter()).map(|l| l.bs.get()).min().unwrap_or(4096);
    if block < 512 {
        return Err(format!("--verify needs transfers of at least 512 bytes (the smallest here is {block})"));
    }
    check_block(spec, block)?;
    Ok(block)
}

/// Every transfer size, alignment and the region offset of `spec` are whole `block`s.
fn check_block(spec: &crate::workload::WorkloadSpec, block: u64) -> Result<(), String> {
    for l in spec.groups.iter().flat_map(|g| g.access.iter()) {
        if l.bs.get() % block != 0 || l.alignment() % block != 0 {
            return Err(format!(
                "--verify checks {block}-byte blocks (the smallest transfer), so every transfer size and alignment must be a multiple of it; {} aligned to {} is not",
                l.bs,
                crate::units::Bytes(l.alignment())
            ));
        }
    }
    if !spec.offset.get().is_multiple_of(block) {
        return Err(format!("--verify: the region offset {} is not a multiple of the {block}-byte block", spec.offset));
    }
    Ok(())
}
