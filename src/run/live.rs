//! The live view: on a terminal, one progress line redrawn in place (indicatif);
//! otherwise a plain line per second on stderr. Never on stdout, so that
//! `--json -` stays clean. A measured second is shown once every worker has
//! reported it, with the same figures the result stores for that second.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

pub struct Live {
    bar: Option<ProgressBar>,
    plain: bool,
}

/// What one update shows.
pub struct LiveFigures<'a> {
    pub point: usize,
    pub points: usize,
    pub label: &'a str,
    pub phase: &'a str,
    /// Into the phase: for a measured second, the end of that second.
    pub elapsed: Duration,
    pub total: Option<Duration>,
    /// A measured second, complete (every worker reported it): the figures the
    /// result stores for it. None during the ramp.
    pub second: Option<SecondFigures>,
    /// Said when I/Os are outstanding far too long.
    pub stall: Option<String>,
}

pub struct SecondFigures {
    pub iops: f64,
    pub mbps: f64,
    pub p99_us: f64,
}

impl Live {
    pub fn new(quiet: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        Live { bar: None, plain: !quiet && !tty }.with_bar(!quiet && tty)
    }

    fn with_bar(mut self, on: bool) -> Self {
        if on {
            let bar = ProgressBar::new(1000);
            bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
        self
    }

    pub fn update(&mut self, f: &LiveFigures) {
        let total = f.total.map(|t| format!("/{:.0}s", t.as_secs_f64())).unwrap_or_default();
        let point = if f.points > 1 { format!("point {}/{} [{}] ", f.point, f.points, f.label) } else { String::new() };
        let mut line = format!("{point}{} {:.0}s{total}", f.phase, f.elapsed.as_secs_f64());
        if let Some(s) = &f.second {
            line.push_str(&format!("  {:>10.0} IOPS  {:>9.1} MB/s  p99 {:>9.1} us", s.iops, s.mbps, s.p99_us));
        }
        if let Some(stall) = &f.stall {
            line.push_str(&format!("  {stall}"));
        }
        if let Some(bar) = &self.bar {
            bar.set_message(line);
        } else if self.plain {
            eprintln!("{line}");
        }
    }

    /// Prints a message above the live line.
    pub fn note(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.finish();
    }
}
