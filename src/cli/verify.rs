//! `lunmark verify TARGET --journal FILE`: checks every block the journal says
//! was written, also after the run (or the host) was killed. Blocks whose write
//! was in flight at the kill are reported as uncertain, not corrupt.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use super::exit;
use crate::targets::TargetUri;
use crate::verify::block::{self, Expect};
use crate::verify::journal::{self, JournalHeader};

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
    let Some(ti) = find_target(h, &args.target) else {
        bail!(
            "{} is not a target of this journal ({}); it recorded: {}",
            args.target,
            args.journal.display(),
            h.targets.iter().map(|t| t.uri.as_str()).collect::<Vec<_>>().join(", ")
        );
    };
    let path = match &args.from {
        Some(p) => p.clone(),
        None => local_path(h, &h.targets[ti].uri),
    };
    // Checked before the open: a FIFO would block it, a character device (/dev/zero) holds no copy.
    {
        use std::os::unix::fs::FileTypeExt;
        let m = std::fs::metadata(&path).with_context(|| format!("{} to verify", path.display()))?;
        if !m.is_file() && !m.file_type().is_block_device() {
            let flag = if args.from.is_some() { "--from " } else { "" };
            bail!("{flag}{} is neither a regular file nor a block device: verify reads the target, or an image of it taken with dd or nbdcopy", path.display());
        }
    }
    let path = path.display().to_string();
    let path = path.as_str();
    // Without access-time updates, as the run opened it: checking a file is no use of it.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    let file = crate::targets::no_atime::open(options, 0, Path::new(path)).with_context(|| format!("opening {path} to verify it"))?;
    check_region(&args.journal, h, ti, &file, path)?;
    let mut buf = vec![0u8; h.block as usize];
    let (mut checked, mut corrupt, mut uncertain, mut unknown) = (0u64, Vec::new(), Vec::new(), 0u64);
    let mut blocks: Vec<_> = replay.blocks.iter().filter(|((t, _), _)| *t as usize == ti).collect();
    blocks.sort_by_key(|((_, b), _)| *b);
    for ((_, b), rec) in blocks {
        let offset = replay.offset(ti, *b);
        // The partial record at the end of a cut-short journal may describe a
        // later write of this block: what the block should hold is unknown.
        if rec.in_flight.is_some() || replay.torn_block == Some((ti as u32, *b)) {
            uncertain.push(offset);
            continue;
        }
        if rec.failed || rec.generation == 0 {
            unknown += 1;
            continue;
        }
        file.read_exact_at(&mut buf, offset).with_context(|| format!("reading {path} at offset {offset}"))?;
        let expect = Expect { stamp: h.stamp, target: ti as u32, offset, generation: rec.generation };
        // Each block is counted once: checked (sound or corrupt), uncertain or not checked.
        match block::check(&buf, expect, &args.target) {
            None => checked += 1,
            Some(m) => {
                // A cut-short journal is a prefix of the run's records: the block
                // may hold a later write the lost records described. A newer
                // generation of this very block is that, not corruption; an older
                // one is still a lost write.
                let newer = m
                    .found
                    .is_some_and(|f| f.stamp == h.stamp && f.target == ti as u32 && f.offset == offset && f.generation > rec.generation);
                if replay.torn_tail > 0 && newer {
                    uncertain.push(offset);
                } else {
                    checked += 1;
                    corrupt.push(m);
                }
            }
        }
    }
    let journal_shown = args.journal.display().to_string();
    let outcome = crate::report::terminal::verify_text::VerifyOutcome {
        target: &args.target,
        journal: &journal_shown,
        checked,
        corrupt: &corrupt,
        uncertain: &uncertain,
        not_checked: unknown,
        torn: (replay.torn_tail > 0).then_some(crate::report::terminal::verify_text::TornJournal {
            at: replay.torn_at,
            tail: replay.torn_tail,
            record: journal::RECORD,
        }),
    };
    crate::tprint!("{}", crate::report::terminal::verify_text::render(&outcome));
    Ok(if corrupt.is_empty() { exit::OK } else { exit::CORRUPT })
}

/// Refuses a journal whose region for target `ti` does not fit in the file
/// or device being checked: every offset read comes from that region, so a
/// damaged length would otherwise pass unchecked (reads past the end, or only
/// the blocks the records name).
fn check_region(journal: &Path, h: &JournalHeader, ti: usize, file: &std::fs::File, path: &str) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    // Seeking to the end gives the size of a regular file and of a block device alike.
    let size = (&*file).seek(SeekFrom::End(0)).with_context(|| format!("finding the size of {path}"))?;
    let t = &h.targets[ti];
    let end = t.start.checked_add(t.len);
    if end.is_none_or(|end| end > size) {
        bail!(
            "{}: the journal's region for {} (offset {} length {}{}) does not fit in {path}, which is {size} bytes: the journal is damaged or is not the journal of this target",
            journal.display(),
            t.uri,
            t.start,
            t.len,
            end.map(|e| format!(", ending at byte {e}")).unwrap_or_else(|| ", which wraps past 2^64".into())
        );
    }
    Ok(())
}

/// Where a journal's target is on this host. A relative path is relative to
/// the working directory of the run that wrote the journal (recorded in it),
/// not to wherever `lunmark verify` is started; journals of older versions
/// did not record it, so their relative paths stay relative to here.
fn local_path(h: &JournalHeader, uri: &str) -> PathBuf {
    let p = match crate::targets::parse(uri) {
        Ok(TargetUri::File(p)) | Ok(TargetUri::Device(p)) => p,
        _ => PathBuf::from(uri),
    };
    match &h.cwd {
        Some(cwd) if p.is_relative() => Path::new(cwd).join(p),
        _ => p,
    }
}

/// The journal's target the user named: the same text, or the same file
/// named another way (absolute, relative to here, with or without `file:`).
fn find_target(h: &JournalHeader, given: &str) -> Option<usize> {
    if let Some(i) = h.targets.iter().position(|t| t.uri == given) {
        return Some(i);
    }
    let Ok(TargetUri::File(given) | TargetUri::Device(given)) = crate::targets::parse(given) else { return None };
    let given = std::path::absolute(&given).ok()?;
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    h.targets.iter().position(|t| {
        matches!(crate::targets::parse(&t.uri), Ok(TargetUri::File(_) | TargetUri::Device(_)))
            && std::path::absolute(local_path(h, &t.uri)).is_ok_and(|p| same(&p, &given))
    })
}
