//! Jetstress-style tuning (`--tune`, issue 28) as text, for the terminal and
//! the report page alike (under the knee search's steps): the threads tuned,
//! the transactional IOPS (the log's excluded), the mailboxes they support,
//! and what stopped the tuning there. Also the dry run's account of it. Pure.

use crate::report::cells::num;
use crate::results::model::TuningOutcome;
use crate::results::search::SearchSpec;

/// The tuning's lines.
pub fn render(t: &TuningOutcome) -> String {
    match t.threads {
        None => format!("tuning ({} threads): NOT MET: {}\n", t.group, t.limit),
        Some(n) => format!(
            "tuning ({} threads): {n} threads; transactional IOPS {} ({} reads + {} writes of {}; {} IOPS of the other groups, the log's, excluded); \
             mailboxes supported {} at {} IOPS per mailbox (--iops-per-mailbox; Jetstress's usual mailbox profiles are 0.06-0.10)\nlimit: {}\n",
            t.group,
            num(t.transactional_iops),
            num(t.transactional_read_iops),
            num(t.transactional_write_iops),
            t.group,
            num(t.excluded_iops),
            t.mailboxes,
            t.iops_per_mailbox,
            t.limit
        ),
    }
}

/// The dry run's line: what the tuning searches and reports.
pub fn describe(s: &SearchSpec) -> String {
    let Some(t) = &s.tune else { return String::new() };
    format!(
        "tuning (--tune): the threads are the workers of group '{}', {} to {} at its queue depth of {}, the other groups as the profile has them; \
         the most threads at which every bound holds is tuned, its transactional IOPS ({}'s reads and writes, the log's excluded) \
         over {} IOPS per mailbox (--iops-per-mailbox; Jetstress's usual mailbox profiles are 0.06-0.10) is the mailboxes supported\n",
        t.group,
        s.workers.min,
        s.workers.max,
        s.fixed_qd.unwrap_or(1),
        t.group,
        t.iops_per_mailbox
    )
}
