//! Operations beyond reads and writes that a workload asks for as a whole:
//! a sync every N writes (`--fsync N`, `--fdatasync N` on files, `--flush N`
//! on devices and network LUNs). Trims are a share of each access line
//! (`AccessLine::trim`); this module holds the sync setting and its check.

use serde::{Deserialize, Serialize};

use super::Op;

/// Which sync the worker issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncKind {
    /// fsync(2) on a file target (fio's `fsync=N`).
    Fsync,
    /// fdatasync(2) on a file target (fio's `fdatasync=N`).
    Fdatasync,
    /// A device cache flush: fsync of a block device, NBD_CMD_FLUSH, SCSI
    /// SYNCHRONIZE CACHE; a no-op on `mem:` and `null:` (no cache to flush).
    Flush,
}

impl SyncKind {
    /// The flag that sets it.
    pub fn flag(self) -> &'static str {
        match self {
            SyncKind::Fsync => "--fsync",
            SyncKind::Fdatasync => "--fdatasync",
            SyncKind::Flush => "--flush",
        }
    }

    /// The operation the engines see.
    pub fn op(self) -> Op {
        match self {
            SyncKind::Fdatasync => Op::DataSync,
            SyncKind::Fsync | SyncKind::Flush => Op::Sync,
        }
    }
}

/// A sync after every `every` writes a worker issues to one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncEvery {
    pub kind: SyncKind,
    pub every: u64,
}

impl std::fmt::Display for SyncEvery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.kind {
            SyncKind::Fsync => "fsync",
            SyncKind::Fdatasync => "fdatasync",
            SyncKind::Flush => "cache flush",
        };
        write!(f, "{what} after every {} per worker and target", crate::units::counted(self.every, "write"))
    }
}

/// The sync asked by `--fsync`, `--fdatasync` and `--flush` (at most one), or
/// by a profile's `fsync`, `fdatasync` or `flush` keys.
pub fn sync_of(fsync: Option<u64>, fdatasync: Option<u64>, flush: Option<u64>) -> Result<Option<SyncEvery>, String> {
    let given: Vec<SyncEvery> = [(SyncKind::Fsync, fsync), (SyncKind::Fdatasync, fdatasync), (SyncKind::Flush, flush)]
        .into_iter()
        .filter_map(|(kind, n)| n.map(|every| SyncEvery { kind, every }))
        .collect();
    match given.as_slice() {
        [] => Ok(None),
        [one] if one.every == 0 => {
            Err(format!("{} 0: give the number of writes between syncs, at least 1 (for example {} 8)", one.kind.flag(), one.kind.flag()))
        }
        [one] => Ok(Some(*one)),
        _ => Err(format!(
            "{}: give only one of --fsync, --fdatasync and --flush (fsync and fdatasync are for files, flush for devices)",
            given.iter().map(|g| g.kind.flag()).collect::<Vec<_>>().join(" and ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sync_kind_at_a_time_and_never_every_zero_writes() {
        assert_eq!(sync_of(None, None, None), Ok(None));
        assert_eq!(sync_of(Some(4), None, None), Ok(Some(SyncEvery { kind: SyncKind::Fsync, every: 4 })));
        let e = sync_of(Some(4), None, Some(2)).unwrap_err();
        assert!(e.contains("--fsync and --flush") && e.contains("only one"), "{e}");
        let e = sync_of(None, Some(0), None).unwrap_err();
        assert!(e.contains("--fdatasync 0") && e.contains("at least 1"), "{e}");
    }
}
