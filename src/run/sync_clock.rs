//! When a worker owes a target a sync: after every N writes it issues to that
//! target (`--fsync N`, `--fdatasync N`, `--flush N`), the next I/O it starts
//! there is the sync. Counted per target, as fio counts per file. A sync is
//! issued, not awaited: it covers the writes completed before it (the
//! kernel's and the protocols' semantics), and runs beside the others in flight.

use crate::workload::{Op, SyncEvery};

pub struct SyncClock {
    every: u64,
    op: Op,
    /// Writes issued to each target since its last sync.
    written: Vec<u64>,
    /// A sync is owed to each target.
    due: Vec<bool>,
}

impl SyncClock {
    /// None when the workload asks for no syncs.
    pub fn new(sync: Option<SyncEvery>, targets: usize) -> Option<Self> {
        let s = sync?;
        Some(SyncClock { every: s.every.max(1), op: s.kind.op(), written: vec![0; targets], due: vec![false; targets] })
    }

    /// The sync owed to `target`, if any (it is then no longer owed).
    #[inline]
    pub fn take_due(&mut self, target: usize) -> Option<Op> {
        std::mem::take(&mut self.due[target]).then_some(self.op)
    }

    /// Counts an I/O issued to `target`.
    #[inline]
    pub fn issued(&mut self, target: usize, op: Op) {
        if op == Op::Write {
            self.written[target] += 1;
            if self.written[target] == self.every {
                self.written[target] = 0;
                self.due[target] = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::SyncKind;

    #[test]
    fn a_sync_falls_due_after_every_n_writes_to_each_target() {
        let mut c = SyncClock::new(Some(SyncEvery { kind: SyncKind::Fsync, every: 3 }), 2).unwrap();
        // Target 0: reads do not count; the third write makes a sync due, once.
        for op in [Op::Write, Op::Read, Op::Write] {
            c.issued(0, op);
            assert_eq!(c.take_due(0), None);
        }
        c.issued(1, Op::Write);
        c.issued(0, Op::Write);
        assert_eq!(c.take_due(1), None, "target 1 has had one write");
        assert_eq!(c.take_due(0), Some(Op::Sync));
        assert_eq!(c.take_due(0), None, "taken once");
        // 30 more writes to target 1 (2 counted already): 10 syncs fall due.
        let mut syncs = 0;
        for _ in 0..30 {
            c.issued(1, Op::Write);
            syncs += c.take_due(1).is_some() as u32;
        }
        assert_eq!(syncs, 10);
        let mut c = SyncClock::new(Some(SyncEvery { kind: SyncKind::Fdatasync, every: 1 }), 1).unwrap();
        c.issued(0, Op::Write);
        assert_eq!(c.take_due(0), Some(Op::DataSync));
        assert!(SyncClock::new(None, 1).is_none());
    }
}
