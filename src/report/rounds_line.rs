//! The outcome of a run of rounds in one line: said by the terminal's table
//! and by the report page alike.

use crate::report::cells::num;
use crate::units::counted;

/// The outcome of a run of rounds, in one line.
pub fn rounds_line(r: &crate::results::steady::RoundsOutcome) -> String {
    let when = match r.reached_at_round {
        Some(n) if r.reached => format!("steady at round {n}"),
        _ => format!("NOT steady in {} (at most {})", counted(r.watched_iops.len() as u64, "round"), r.max_rounds),
    };
    let (Some(mean), Some(range), Some(slope)) = (r.mean, r.range, r.slope) else {
        // Fewer rounds than the window: there is no window mean, range or slope to show.
        return format!(
            "rounds: IOPS of '{}' {when}; window of {} rounds not complete ({} ran): no mean, range or slope\n",
            r.watch,
            r.window_rounds,
            r.watched_iops.len()
        );
    };
    let pct = |v: f64| if mean > 0.0 { format!("{:.1}%", v / mean * 100.0) } else { "-".into() };
    format!(
        "rounds: IOPS of '{}' {when}; last {} rounds: mean {}, range {} (limit {}%), slope {} (limit {}%)\n",
        r.watch,
        r.window_rounds,
        num(mean),
        pct(range),
        r.range_limit_pct,
        pct(slope),
        r.slope_limit_pct
    )
}
