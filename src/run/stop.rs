//! What a point keeps when its repeats end, and whether the run goes on: a pure
//! function of where the point stopped, so every rule about stops (a Ctrl-C
//! before a repeat, in a ramp, during a repeat; a target that could not be
//! opened; a failed repeat) lives in one place and is tested as a table, with
//! no process, signal or sleep. The wording comes from `stop_reason`.

use super::stop_reason;
use crate::results::model::Status;

/// Where a point sits in the plan.
#[derive(Clone, Copy, Debug)]
pub struct At {
    /// 0-based index of the point.
    pub point: usize,
    /// Points in the plan.
    pub points: usize,
    /// Runs of each point (`--repeat`).
    pub repeats: usize,
}

/// How one run (repeat) of the point ended.
#[derive(Clone, Debug, PartialEq)]
pub struct RepeatEnd {
    pub status: Status,
    pub reason: Option<String>,
    /// Stopped before its measured interval began: it has no figures.
    pub measured_nothing: bool,
}

/// Why the loop over a point's repeats ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RepeatsEnd {
    /// Every repeat ran, or the last one to run did not complete.
    Ran,
    /// A stop (`why`: the signal) was seen before the next repeat started.
    StopBefore { why: String },
    /// A stop came while the next repeat was set up (a file being filled): it
    /// measured nothing, and the file lunmark created for it is gone.
    StopInSetUp { why: String },
    /// The next repeat could not be set up (its targets, a replay or verify check).
    SetUpFailed { error: String },
}

/// Which of the point's runs make its result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kept {
    /// The point is dropped: nothing it measured is kept.
    Nothing,
    /// The first N runs, all completed: one, or combined as repeats.
    Repeats(usize),
    /// The last run alone (it failed or was cut short).
    Last,
}

/// The decision: what the point keeps and, when the run ends here, its status and reason.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// The first repeat of the first point could not be set up: the run is
    /// refused with that error, as a bad target is before anything runs.
    Refused,
    /// The point keeps `kept`; `ends` is the run's final status and reason, None: the run goes on.
    Settled { kept: Kept, ends: Option<(Status, Option<String>)> },
}

/// Decides what point `at.point` keeps after its repeat loop ended with `runs`
/// (the repeats that ran, in order) and `end`.
pub fn settle(at: At, runs: &[RepeatEnd], end: &RepeatsEnd) -> Stop {
    let done = runs.len();
    match end {
        RepeatsEnd::SetUpFailed { .. } if at.point == 0 && done == 0 => Stop::Refused,
        RepeatsEnd::SetUpFailed { error } if done == 0 => {
            ended(Kept::Nothing, Status::Failed, Some(format!("point {}: {error}", at.point + 1)))
        }
        // The finished repeats of this point are kept, as after a stop between repeats.
        RepeatsEnd::SetUpFailed { error } => {
            let why =
                format!("point {}, repeat {} of {}: {error}; {}", at.point + 1, done + 1, at.repeats, stop_reason::repeats_kept(done));
            ended(Kept::Repeats(done), Status::Failed, Some(why))
        }
        RepeatsEnd::StopBefore { why } => {
            let reason = stop_reason::before(why, at.point, at.points, done, at.repeats);
            let kept = if done == 0 { Kept::Nothing } else { Kept::Repeats(done) };
            ended(kept, Status::Interrupted, Some(reason))
        }
        RepeatsEnd::StopInSetUp { why } if done == 0 => {
            ended(Kept::Nothing, Status::Interrupted, Some(stop_reason::in_ramp(why, at.point, at.points)))
        }
        // Finished repeats are kept, as after a stop between repeats.
        RepeatsEnd::StopInSetUp { why } => settle(at, runs, &RepeatsEnd::StopBefore { why: why.clone() }),
        RepeatsEnd::Ran => settle_ran(at, runs),
    }
}

/// Every repeat that started has ended; the last may have failed or been stopped.
fn settle_ran(at: At, runs: &[RepeatEnd]) -> Stop {
    let Some(last) = runs.last() else { return Stop::Settled { kept: Kept::Nothing, ends: None } };
    let earlier = runs.len() - 1;
    // A repeat cut short once earlier repeats finished: the point is the
    // finished repeats, not a fraction of the last one. A run stopped before
    // it measured anything (in its set-up or ramp) has no figures: it is not
    // kept, so no zeros pass for a measurement.
    let cut_repeat = earlier > 0 && last.status == Status::Interrupted;
    if cut_repeat || last.measured_nothing {
        let reason = match &last.reason {
            Some(why) if earlier > 0 => {
                let of_point = if at.points > 1 { format!(" of point {} of {}", at.point + 1, at.points) } else { String::new() };
                let said =
                    format!("{why} during repeat {} of {}{of_point}; {}", earlier + 1, at.repeats, stop_reason::repeats_kept(earlier));
                Some(stop_reason::in_repeat(said, at.point, at.points))
            }
            Some(why) if last.status == Status::Interrupted => Some(stop_reason::in_ramp(why, at.point, at.points)),
            why => why.clone(),
        };
        let kept = if earlier == 0 { Kept::Nothing } else { Kept::Repeats(earlier) };
        return ended(kept, last.status, reason);
    }
    if last.status == Status::Completed {
        return Stop::Settled { kept: Kept::Repeats(runs.len()), ends: None };
    }
    let reason = match &last.reason {
        // The first of several repeats, cut short: it is the point, and the reason says which repeat.
        Some(why) if last.status == Status::Interrupted && at.repeats > 1 => {
            let of_point = if at.points > 1 { format!(" of point {} of {}", at.point + 1, at.points) } else { String::new() };
            Some(stop_reason::in_repeat(format!("{why} during repeat 1 of {}{of_point}, kept cut short", at.repeats), at.point, at.points))
        }
        Some(why) if last.status == Status::Interrupted => Some(stop_reason::in_point(why, at.point, at.points)),
        why => why.clone(),
    };
    ended(Kept::Last, last.status, reason)
}

fn ended(kept: Kept, status: Status, reason: Option<String>) -> Stop {
    Stop::Settled { kept, ends: Some((status, reason)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHY: &str = "interrupted by Ctrl-C (SIGINT)";

    fn at(point: usize, points: usize, repeats: usize) -> At {
        At { point, points, repeats }
    }

    fn completed() -> RepeatEnd {
        RepeatEnd { status: Status::Completed, reason: None, measured_nothing: false }
    }

    fn interrupted(measured_nothing: bool) -> RepeatEnd {
        RepeatEnd { status: Status::Interrupted, reason: Some(WHY.into()), measured_nothing }
    }

    fn failed(why: &str) -> RepeatEnd {
        RepeatEnd { status: Status::Failed, reason: Some(why.into()), measured_nothing: false }
    }

    fn settled(kept: Kept, ends: Option<(Status, &str)>) -> Stop {
        Stop::Settled { kept, ends: ends.map(|(s, r)| (s, Some(r.to_string()))) }
    }

    #[test]
    fn points_that_ran_whole_go_on() {
        assert_eq!(settle(at(0, 2, 1), &[completed()], &RepeatsEnd::Ran), settled(Kept::Repeats(1), None));
        assert_eq!(settle(at(1, 2, 3), &[completed(), completed(), completed()], &RepeatsEnd::Ran), settled(Kept::Repeats(3), None));
    }

    /// Each row: where the point stood, its runs, how the loop ended, and what it keeps and says.
    #[test]
    fn a_stop_keeps_what_finished_and_says_where_it_left_the_plan() {
        let stop = |why: &str| RepeatsEnd::StopBefore { why: why.into() };
        // Before point 2 of 3 started: nothing of it is kept, the earlier points stay.
        assert_eq!(
            settle(at(1, 3, 1), &[], &stop(WHY)),
            settled(
                Kept::Nothing,
                Some((Status::Interrupted, "interrupted by Ctrl-C (SIGINT) after point 1 of 3 had finished; points 2 to 3 did not run"))
            )
        );
        // Before repeat 3 of 3: the two finished repeats are the point.
        assert_eq!(
            settle(at(0, 1, 3), &[completed(), completed()], &stop(WHY)),
            settled(
                Kept::Repeats(2),
                Some((
                    Status::Interrupted,
                    "interrupted by Ctrl-C (SIGINT) after repeat 2 of 3; the 2 finished repeats of this point are kept"
                ))
            )
        );
        // In the ramp of point 2 of 3: dropped.
        assert_eq!(
            settle(at(1, 3, 1), &[interrupted(true)], &RepeatsEnd::Ran),
            settled(
                Kept::Nothing,
                Some((
                    Status::Interrupted,
                    "interrupted by Ctrl-C (SIGINT) before point 2 of 3 measured anything (in its set-up or ramp), so it was dropped; point 3 did not run"
                ))
            )
        );
        // During the measured part of point 1 of 2: kept cut short.
        assert_eq!(
            settle(at(0, 2, 1), &[interrupted(false)], &RepeatsEnd::Ran),
            settled(
                Kept::Last,
                Some((Status::Interrupted, "interrupted by Ctrl-C (SIGINT) during point 1 of 2, kept cut short; point 2 did not run"))
            )
        );
        // During the first of 3 repeats: that repeat, cut short, is the point, and the reason says which.
        assert_eq!(
            settle(at(0, 1, 3), &[interrupted(false)], &RepeatsEnd::Ran),
            settled(Kept::Last, Some((Status::Interrupted, "interrupted by Ctrl-C (SIGINT) during repeat 1 of 3, kept cut short")))
        );
        // During repeat 2 of 2 of point 1 of 2: the finished repeat is the point, the cut one is dropped.
        assert_eq!(
            settle(at(0, 2, 2), &[completed(), interrupted(false)], &RepeatsEnd::Ran),
            settled(
                Kept::Repeats(1),
                Some((
                    Status::Interrupted,
                    "interrupted by Ctrl-C (SIGINT) during repeat 2 of 2 of point 1 of 2; the 1 finished repeat of this point is kept; point 2 did not run"
                ))
            )
        );
    }

    /// A stop while a new file was filled for the point: the point measured nothing.
    #[test]
    fn a_stop_in_the_set_up_drops_the_point_and_keeps_finished_repeats() {
        let in_set_up = RepeatsEnd::StopInSetUp { why: WHY.into() };
        assert_eq!(
            settle(at(0, 1, 1), &[], &in_set_up),
            settled(
                Kept::Nothing,
                Some((
                    Status::Interrupted,
                    "interrupted by Ctrl-C (SIGINT) before point 1 of 1 measured anything (in its set-up or ramp), so it was dropped"
                ))
            )
        );
        assert_eq!(
            settle(at(0, 1, 3), &[completed()], &in_set_up),
            settled(
                Kept::Repeats(1),
                Some((
                    Status::Interrupted,
                    "interrupted by Ctrl-C (SIGINT) after repeat 1 of 3; the 1 finished repeat of this point is kept"
                ))
            )
        );
    }

    #[test]
    fn a_failure_keeps_the_failed_run_or_the_finished_repeats() {
        let gone = || RepeatsEnd::SetUpFailed { error: "the target is gone".into() };
        // The first repeat of the first point: the run is refused, nothing ran.
        assert_eq!(settle(at(0, 3, 2), &[], &gone()), Stop::Refused);
        // A later point: the run fails there, earlier points kept.
        assert_eq!(settle(at(2, 3, 1), &[], &gone()), settled(Kept::Nothing, Some((Status::Failed, "point 3: the target is gone"))));
        // Before repeat 3 of 3: the finished repeats are kept.
        assert_eq!(
            settle(at(0, 1, 3), &[completed(), completed()], &gone()),
            settled(
                Kept::Repeats(2),
                Some((Status::Failed, "point 1, repeat 3 of 3: the target is gone; the 2 finished repeats of this point are kept"))
            )
        );
        // A repeat that failed while running is the point, with its own reason.
        assert_eq!(
            settle(at(0, 1, 2), &[completed(), failed("I/O error")], &RepeatsEnd::Ran),
            settled(Kept::Last, Some((Status::Failed, "I/O error")))
        );
    }
}
