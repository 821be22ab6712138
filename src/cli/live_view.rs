//! The live view, an observer of the run: on a terminal, one progress line
//! redrawn in place (indicatif); otherwise a plain line per second on stderr.
//! Never on stdout, so that `--json -` stays clean. The run's notes and
//! warnings are printed above the line (with `--quiet` too: only the
//! per-second line is silenced).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::results::model::RunResult;
use crate::run::live::LiveFigures;
use crate::run::{RunObserver, RunPlan};

pub struct LiveView {
    /// On a terminal: the progress line, from the run's start to its end.
    bar: Option<ProgressBar>,
    /// On a terminal and not quiet: a progress line is drawn once the run starts.
    tty: bool,
    /// Not on a terminal and not quiet: a plain line per update.
    plain: bool,
    /// Said before each line: under MPI, "rank 0 of N: ", as the figures are rank 0's own.
    whose: String,
    /// When the run started, and its planned ramp and measurement time (None
    /// when unknown: a run by I/O count, rounds, a replay).
    run: Option<(std::time::Instant, Option<Duration>)>,
    /// How much of the planned time the ticks so far have covered.
    covered: Covered,
    /// A knee search: its steps are counted as steps, of at most this many
    /// (how many it takes is not known beforehand, nor the run's length).
    search_steps: Option<u32>,
}

/// The planned (ramp and measured) time the run has gone through, from its
/// ticks: what is left of the plan is the plan less this, whatever the
/// set-up (a file's fill, connections) took besides it.
#[derive(Default)]
struct Covered {
    /// The phases ended, at their last tick.
    done: Duration,
    /// The phase ticking now: (point, phase), and how far into it.
    current: Option<((usize, String), Duration)>,
}

impl Covered {
    /// Takes a tick: a new point or phase (or a phase starting over, a repeat
    /// without a ramp) ends the one before at its last tick.
    fn tick(&mut self, f: &LiveFigures) -> Duration {
        let key = (f.point, f.phase.to_string());
        match &mut self.current {
            Some((k, at)) if *k == key && f.elapsed >= *at => *at = f.elapsed,
            _ => {
                self.done += self.current.take().map_or(Duration::ZERO, |c| c.1);
                self.current = Some((key, f.elapsed));
            }
        }
        self.done + f.elapsed
    }
}

impl LiveView {
    pub fn new(quiet: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        LiveView {
            bar: None,
            tty: !quiet && tty,
            plain: !quiet && !tty,
            whose: String::new(),
            run: None,
            covered: Covered::default(),
            search_steps: None,
        }
    }

    /// The view of rank 0 of an MPI job of `ranks` ranks: its lines say they
    /// show rank 0's own figures (the other ranks' are merged only when the point ends).
    pub fn of_rank_0(mut self, ranks: u32) -> Self {
        self.whose = format!("rank 0 of {ranks}: ");
        self
    }

    /// Only the run's notes and warnings, no progress line: a rank other than
    /// 0 of an MPI job (rank 0 shows the progress), a lab's row headings.
    pub fn notes_only() -> Self {
        Self::new(true)
    }

    /// The line an update shows.
    pub fn line(f: &LiveFigures) -> String {
        let point = if f.points > 1 { format!("point {}/{} [{}] ", f.point, f.points, f.label) } else { String::new() };
        format!("{point}{}", Self::figures(f))
    }

    /// The line of a knee search's step: which step, of at most how many (the
    /// search ends when it finds the knee, usually well before).
    pub fn step_line(f: &LiveFigures, most: u32) -> String {
        format!("step {} of at most {most} [{}] {}", f.point, f.label, Self::figures(f))
    }

    /// A line's phase, time and figures.
    fn figures(f: &LiveFigures) -> String {
        let total = f.total.map(|t| format!("/{}s", Self::exact_secs(t))).unwrap_or_default();
        // A partial last second shows its tenths, so its line is not read as the whole second before it.
        let elapsed = f.elapsed.as_secs_f64();
        let elapsed = if f.elapsed.subsec_nanos() == 0 { format!("{elapsed:.0}") } else { format!("{elapsed:.1}") };
        let mut line = format!("{} {elapsed}s{total}", f.phase);
        if let Some(s) = &f.second {
            line.push_str(&format!("  {:>10.0} IOPS  {:>9.1} MB/s  p99 {:>9.1} us", s.iops, s.mbps, s.p99_us));
        }
        if let Some(stall) = &f.stall {
            line.push_str(&format!("  {stall}"));
        }
        line
    }

    /// A planned length as it was asked: whole seconds bare, a fraction to the
    /// millisecond ("0.7", "2.25"), never rounded to a second it is not (a
    /// 700 ms run read "0.7s/1s").
    fn exact_secs(d: Duration) -> String {
        if d.subsec_nanos() == 0 {
            return d.as_secs().to_string();
        }
        let text = format!("{:.3}", d.as_secs_f64());
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }

    /// The whole run's elapsed and remaining time, after a point's line:
    /// "  (whole run 12s of ~18s, ~6s left)"; elapsed alone when the length is
    /// unknown. What is left is the plan less what the ticks have `covered`
    /// of it, and the whole is elapsed plus that: the set-up spent so far
    /// (a file's fill) counts, though no plan foresees it.
    pub fn whole_run(elapsed: Duration, planned: Option<Duration>, covered: Duration) -> String {
        let secs = |d: Duration| format!("{:.0}s", d.as_secs_f64());
        match planned {
            Some(p) => {
                let left = p.saturating_sub(covered);
                format!("  (whole run {} of ~{}, ~{} left)", secs(elapsed), secs(elapsed + left), secs(left))
            }
            None => format!("  (whole run {})", secs(elapsed)),
        }
    }

    /// The planned ramp and measurement time of the whole run, when known (a
    /// search's is not: it takes as many steps as it needs).
    fn planned(plan: &RunPlan) -> Option<Duration> {
        if plan.rounds.is_some() || plan.replay.is_some() || plan.search.is_some() {
            return None;
        }
        plan.points.iter().try_fold(Duration::ZERO, |sum, p| Some(sum + p.spec.planned_length()? * plan.repeat.max(1)))
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl RunObserver for LiveView {
    fn started(&mut self, plan: &RunPlan) {
        self.run = Some((std::time::Instant::now(), Self::planned(plan)));
        self.search_steps = plan.search.as_ref().map(|s| s.max_steps);
        self.covered = Covered::default();
        if self.tty && self.bar.is_none() {
            let bar = ProgressBar::new(1000);
            bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
    }

    fn tick(&mut self, figures: &LiveFigures<'_>) {
        let covered = self.covered.tick(figures);
        let whole = self.run.map(|(start, planned)| Self::whole_run(start.elapsed(), planned, covered)).unwrap_or_default();
        let line = match self.search_steps {
            Some(most) => Self::step_line(figures, most),
            None => Self::line(figures),
        };
        if let Some(bar) = &self.bar {
            bar.set_message(crate::report::escape::terminal(&format!("{}{line}{whole}", self.whose)));
        } else if self.plain {
            crate::ewriteln!("{}{}{whole}", self.whose, crate::report::escape::terminal(&line));
        }
    }

    /// Printed above the live line.
    fn note(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(crate::report::escape::terminal(text)),
            None => crate::ewriteln!("{text}"),
        }
    }

    fn finished(&mut self, _result: &RunResult) {
        self.clear();
    }
}

impl Drop for LiveView {
    /// A run that ended in an error leaves no progress line behind.
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::live::SecondFigures;

    /// The line of a measured second of a sweep's point, as the live view has
    /// always printed it (scripts and the stall tests read it).
    #[test]
    fn a_measured_second_reads_as_before() {
        let f = LiveFigures {
            point: 2,
            points: 3,
            label: "bs=4k",
            phase: "run",
            elapsed: Duration::from_secs(3),
            total: Some(Duration::from_secs(4)),
            second: Some(SecondFigures { iops: 2032424.4, mbps: 8324.94, p99_us: 12.34 }),
            stall: Some("STALLED: 3 I/Os in flight, oldest 1.5 s".into()),
            measured: None,
        };
        assert_eq!(
            LiveView::line(&f),
            "point 2/3 [bs=4k] run 3s/4s     2032424 IOPS     8324.9 MB/s  p99      12.3 us  STALLED: 3 I/Os in flight, oldest 1.5 s"
        );
        let ramp = LiveFigures { points: 1, phase: "ramp", second: None, stall: None, total: None, ..f };
        assert_eq!(LiveView::line(&ramp), "ramp 3s");
        // A partial last second (a stop 0.4 s into second 3) is not labelled as second 2 was.
        let partial = LiveFigures { phase: "run", elapsed: Duration::from_millis(2400), ..ramp };
        assert_eq!(LiveView::line(&partial), "run 2.4s");
        // A run of 700 ms is planned as 0.7 s, not rounded up to 1 s.
        let short = LiveFigures { elapsed: Duration::from_millis(700), total: Some(Duration::from_millis(700)), ..partial };
        assert_eq!(LiveView::line(&short), "run 0.7s/0.7s");
        // The whole run after it: elapsed, planned and left; elapsed alone when unknown.
        let (ten, eighteen) = (Duration::from_secs(10), Duration::from_secs(18));
        assert_eq!(LiveView::whole_run(ten, Some(eighteen), ten), "  (whole run 10s of ~18s, ~8s left)");
        assert_eq!(LiveView::whole_run(ten, None, ten), "  (whole run 10s)");
        // 6 s of set-up spent (a file's fill): 4 s of the plan gone, 14 s left, 24 s in all.
        assert_eq!(LiveView::whole_run(ten, Some(eighteen), Duration::from_secs(4)), "  (whole run 10s of ~24s, ~14s left)");
        // A knee search's third step (it read "point 3/3", as if the last).
        let step = LiveFigures {
            point: 3,
            points: 3,
            label: "qd=4",
            elapsed: Duration::from_secs(2),
            total: Some(Duration::from_secs(5)),
            ..short
        };
        assert_eq!(LiveView::step_line(&step, 12), "step 3 of at most 12 [qd=4] run 2s/5s");
    }

    /// The plan covered is counted from the ticks: each phase up to its last
    /// tick, a repeat without a ramp starting its run over.
    #[test]
    fn the_plan_covered_counts_each_phase_once() {
        let at = |point, phase, secs| LiveFigures {
            point,
            points: 2,
            label: "",
            phase,
            elapsed: Duration::from_secs(secs),
            total: None,
            second: None,
            stall: None,
            measured: None,
        };
        let mut c = Covered::default();
        let secs = |d: Duration| d.as_secs();
        assert_eq!(secs(c.tick(&at(1, "ramp", 1))), 1);
        assert_eq!(secs(c.tick(&at(1, "ramp", 2))), 2);
        assert_eq!(secs(c.tick(&at(1, "run", 1))), 3);
        assert_eq!(secs(c.tick(&at(1, "run", 3))), 5);
        // The point again (a repeat, no ramp): its run starts over.
        assert_eq!(secs(c.tick(&at(1, "run", 1))), 6);
        assert_eq!(secs(c.tick(&at(2, "run", 2))), 8);
    }
}
