//! `lunmark verify TARGET --journal FILE`: checks every block the journal says
//! was written, also after the run (or the host) was killed. Blocks whose write
//! was in flight at the kill are reported as uncertain, not corrupt.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::exit;
use crate::verify::block::{self, Expect};
use crate::verify::journal;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The target to check (a file or device named in the journal).
    pub target: String,
    /// The journal written by `lunmark run --verify --journal FILE`.
    #[arg(long, value_name = "FILE")]
    pub journal: PathBuf,
    /// Read the data from this copy of the target instead (an image taken with
    /// nbdcopy or dd): how a network LUN is checked through the server's own tools.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
}

pub fn execute(args: VerifyArgs) -> Result<i32> {
    let replay = journal::replay(&args.journal)?;
    let h = &replay.header;
    let Some(ti) = h.targets.iter().position(|t| t.uri == args.target) else {
        bail!(
            "{} is not a target of this journal; it recorded: {}",
            args.target,
            h.targets.iter().map(|t| t.uri.as_str()).collect::<Vec<_>>().join(", ")
        );
    };
    let path = match &args.from {
        Some(p) => p.to_str().unwrap_or_default().to_string(),
        None => args.target.strip_prefix("file:").unwrap_or(&args.target).to_string(),
    };
    let path = path.as_str();
    let file = std::fs::File::open(path).with_context(|| format!("opening {path} to verify it"))?;
    let region = &h.targets[ti];
    let mut buf = vec![0u8; h.block as usize];
    let (mut checked, mut corrupt, mut uncertain, mut unknown) = (0u64, Vec::new(), Vec::new(), 0u64);
    let mut blocks: Vec<_> = replay.blocks.iter().filter(|((t, _), _)| *t as usize == ti).collect();
    blocks.sort_by_key(|((_, b), _)| *b);
    for ((_, b), rec) in blocks {
        let offset = region.start + b * h.block;
        if rec.in_flight.is_some() {
            uncertain.push(offset);
            continue;
        }
        if rec.failed || rec.generation == 0 {
            unknown += 1;
            continue;
        }
        file.read_exact_at(&mut buf, offset).with_context(|| format!("reading {path} at offset {offset}"))?;
        checked += 1;
        let expect = Expect { stamp: h.stamp, target: ti as u32, offset, generation: rec.generation };
        if let Some(m) = block::check(&buf, expect, &args.target) {
            corrupt.push(m);
        }
    }
    println!("{}: {checked} blocks checked against {}, {} corrupt, {} uncertain (a write was in flight when the run ended), {unknown} not checked (a write failed)", args.target, args.journal.display(), corrupt.len(), uncertain.len());
    if replay.torn_tail > 0 {
        println!(
            "the journal ends in a partial record ({} bytes): the run was killed while writing it; that record is ignored",
            replay.torn_tail
        );
    }
    for o in uncertain.iter().take(8) {
        println!("  uncertain: offset {o}");
    }
    for m in corrupt.iter().take(16) {
        println!(
            "  CORRUPT: offset {}: {}; expected generation {}; first differing byte at {}",
            m.offset,
            m.what,
            m.expected.generation,
            m.first_bad_byte.map(|b| b.to_string()).unwrap_or_else(|| "-".into())
        );
    }
    Ok(if corrupt.is_empty() { exit::OK } else { exit::CORRUPT })
}
