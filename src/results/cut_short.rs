//! The note a point carries when it stopped before its planned end (Ctrl-C, a
//! signal): why, and how much of the planned run was measured, so the kept
//! part of a point is never read as a whole one. Every point of a run gets it
//! alike: the single point of a plain run and any point of a sweep.

use crate::units::{counted, format_duration};
use crate::workload::RunLength;

/// "interrupted by Ctrl-C (SIGINT) after 0.91 s of the 3s planned: the figures
/// cover that part only". `reason` is the run's (`signals::reason`).
pub fn note(reason: &str, measured_s: f64, planned: &RunLength) -> String {
    let of_planned = match planned {
        RunLength::Time(d) => format!("of the {} planned", format_duration(*d)),
        RunLength::Ios(n) => format!("short of its {} per worker", counted(*n, "I/O")),
    };
    format!("{reason} after {measured_s:.2} s {of_planned}: the figures cover that part only")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_note_says_why_and_how_much_of_the_plan_ran() {
        assert_eq!(
            note("interrupted by Ctrl-C (SIGINT)", 0.9107, &RunLength::Time(Duration::from_secs(3))),
            "interrupted by Ctrl-C (SIGINT) after 0.91 s of the 3s planned: the figures cover that part only"
        );
        assert_eq!(
            note("interrupted by SIGTERM", 1.5, &RunLength::Ios(1)),
            "interrupted by SIGTERM after 1.50 s short of its 1 I/O per worker: the figures cover that part only"
        );
    }
}
