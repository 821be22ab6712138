//! The run's `status_reason` after a Ctrl-C or SIGTERM: the signal, and where
//! it left the plan (which point it stopped, whether that point was kept, and
//! which points did not run), so a result with 1 point of the 3 planned says why.

use crate::units::counted;

/// "point 3 did not run", "points 3 to 5 did not run"; None when `next` (0-based)
/// is past the last of `count` points.
fn not_run(next: usize, count: usize) -> Option<String> {
    match count.saturating_sub(next) {
        0 => None,
        1 => Some(format!("point {count} did not run")),
        _ => Some(format!("points {} to {count} did not run", next + 1)),
    }
}

fn joined(head: String, next: usize, count: usize) -> String {
    match not_run(next, count) {
        Some(rest) => format!("{head}; {rest}"),
        None => head,
    }
}

/// "the 2 finished repeats of this point are kept": what a point keeps of a
/// stop or failure after `n` (at least 1) of its repeats finished.
pub fn repeats_kept(n: usize) -> String {
    format!("the {} of this point {} kept", counted(n as u64, "finished repeat"), if n == 1 { "is" } else { "are" })
}

/// The stop was seen before repeat `repeat` (0-based) of point `point` (0-based)
/// started: the points before it finished, and so did its first repeats.
pub fn before(why: &str, point: usize, count: usize, repeat: usize, repeats: usize) -> String {
    if repeat > 0 {
        let which = if count > 1 { format!(" of point {} of {count}", point + 1) } else { String::new() };
        let head = format!("{why} after repeat {repeat} of {repeats}{which}; {}", repeats_kept(repeat));
        return joined(head, point + 1, count);
    }
    if point == 0 {
        return why.to_string();
    }
    joined(format!("{why} after point {point} of {count} had finished"), point, count)
}

/// Point `point` (0-based) was stopped before it measured (in its set-up or
/// ramp): it measured nothing and was dropped.
pub fn in_ramp(why: &str, point: usize, count: usize) -> String {
    joined(
        format!("{why} before point {} of {count} measured anything (in its set-up or ramp), so it was dropped", point + 1),
        point + 1,
        count,
    )
}

/// Point `point` (0-based) was stopped while measuring: its measured part is kept, marked cut short.
pub fn in_point(why: &str, point: usize, count: usize) -> String {
    if count == 1 {
        return why.to_string();
    }
    joined(format!("{why} during point {} of {count}, kept cut short", point + 1), point + 1, count)
}

/// A repeat after the first was stopped: `why` already says which; the later points did not run.
pub fn in_repeat(said: String, point: usize, count: usize) -> String {
    joined(said, point + 1, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHY: &str = "interrupted by Ctrl-C (SIGINT)";

    #[test]
    fn each_stop_says_which_point_and_what_did_not_run() {
        assert_eq!(
            in_ramp(WHY, 1, 3),
            "interrupted by Ctrl-C (SIGINT) before point 2 of 3 measured anything (in its set-up or ramp), so it was dropped; point 3 did not run"
        );
        assert_eq!(
            in_ramp(WHY, 1, 2),
            "interrupted by Ctrl-C (SIGINT) before point 2 of 2 measured anything (in its set-up or ramp), so it was dropped"
        );
        assert_eq!(before(WHY, 1, 4, 0, 1), "interrupted by Ctrl-C (SIGINT) after point 1 of 4 had finished; points 2 to 4 did not run");
        assert_eq!(before(WHY, 0, 1, 0, 1), WHY);
        assert_eq!(
            before(WHY, 0, 2, 2, 3),
            "interrupted by Ctrl-C (SIGINT) after repeat 2 of 3 of point 1 of 2; the 2 finished repeats of this point are kept; point 2 did not run"
        );
        assert_eq!(in_point(WHY, 0, 1), WHY);
        assert_eq!(in_point(WHY, 1, 3), "interrupted by Ctrl-C (SIGINT) during point 2 of 3, kept cut short; point 3 did not run");
    }
}
