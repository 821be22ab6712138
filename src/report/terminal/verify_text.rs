//! What `lunmark verify` prints: how many blocks of the journal were checked,
//! how many are corrupt or uncertain, whether the journal was cut short, and
//! the first of the uncertain and corrupt blocks. Pure: the check's outcome
//! in, text out; the command reads the journal and the target.

use crate::verify::block::Mismatch;

/// At most this many uncertain blocks are listed one by one.
const UNCERTAIN_LISTED: usize = 8;
/// At most this many corrupt blocks are listed one by one.
const CORRUPT_LISTED: usize = 16;

/// The outcome of checking one target against its journal.
#[derive(Clone, Debug)]
pub struct VerifyOutcome<'a> {
    /// The target as the user named it.
    pub target: &'a str,
    /// The journal's path, as shown.
    pub journal: &'a str,
    /// Blocks read and compared.
    pub checked: u64,
    pub corrupt: &'a [Mismatch],
    /// Offsets of blocks whose content is unknown (a write in flight, or a cut-short journal).
    pub uncertain: &'a [u64],
    /// Blocks not checked: their write failed.
    pub not_checked: u64,
    /// Where a cut-short journal ends, when it is.
    pub torn: Option<TornJournal>,
}

/// A journal that ends mid-record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TornJournal {
    /// Byte at which the partial record starts.
    pub at: u64,
    /// Bytes of it present.
    pub tail: usize,
    /// Bytes of a whole record.
    pub record: usize,
}

/// The report, a line each.
pub fn render(v: &VerifyOutcome) -> String {
    let mut out = format!(
        "{}: {} checked against {}, {} corrupt, {} uncertain (a write was in flight when the run ended, or the journal is cut short), {} not checked (a write failed)\n",
        v.target,
        crate::units::counted(v.checked, "block"),
        v.journal,
        v.corrupt.len(),
        v.uncertain.len(),
        v.not_checked
    );
    if let Some(t) = &v.torn {
        out.push_str(&format!(
            "the journal ends mid-record at byte {} ({} of {} bytes): it was cut short; the last write it describes is uncertain, and blocks holding a newer generation than the journal records are uncertain, not corrupt\n",
            t.at, t.tail, t.record
        ));
    }
    for o in v.uncertain.iter().take(UNCERTAIN_LISTED) {
        out.push_str(&format!("  uncertain: offset {o}\n"));
    }
    for m in v.corrupt.iter().take(CORRUPT_LISTED) {
        out.push_str(&format!(
            "  CORRUPT: offset {}: {}; expected generation {}; first differing byte at {}\n",
            m.offset,
            m.what,
            m.expected.generation,
            m.first_bad_byte.map(|b| b.to_string()).unwrap_or_else(|| "-".into())
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::check_golden;
    use crate::verify::block::Expect;

    fn mismatch(offset: u64, generation: u32, first_bad_byte: Option<u64>, what: &str) -> Mismatch {
        Mismatch {
            target: "/dev/shm/lun".into(),
            offset,
            expected: Expect { stamp: 7, target: 0, offset, generation },
            found: None,
            first_bad_byte,
            what: what.into(),
        }
    }

    #[test]
    fn the_verify_report_matches_its_snapshots() {
        let clean = VerifyOutcome {
            target: "/dev/shm/lun",
            journal: "run.journal",
            checked: 4096,
            corrupt: &[],
            uncertain: &[],
            not_checked: 0,
            torn: None,
        };
        check_golden("verify-clean.txt", &render(&clean));
        // More uncertain and corrupt blocks than are listed: the counts say how many.
        let corrupt: Vec<Mismatch> = (0..20)
            .map(|i| match i % 2 {
                0 => mismatch(i * 4096, 3, Some(i * 4096 + 100), "the data differs from what was written"),
                _ => mismatch(i * 4096, 2, None, "no block header: never written, or overwritten by something else"),
            })
            .collect();
        let uncertain: Vec<u64> = (0..10).map(|i| (1 << 20) + i * 4096).collect();
        let damaged = VerifyOutcome {
            target: "file:lun.img",
            journal: "/tmp/j",
            checked: 100,
            corrupt: &corrupt,
            uncertain: &uncertain,
            not_checked: 3,
            torn: Some(TornJournal { at: 2424, tail: 11, record: 24 }),
        };
        let text = render(&damaged);
        assert_eq!(text.matches("CORRUPT").count(), CORRUPT_LISTED);
        assert_eq!(text.matches("uncertain: offset").count(), UNCERTAIN_LISTED);
        check_golden("verify-damaged.txt", &text);
    }
}
