//! The live view: on a terminal, one progress line redrawn in place (indicatif);
//! otherwise a plain line per second on stderr. Never on stdout, so that
//! `--json -` stays clean.

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
    pub elapsed: Duration,
    pub total: Option<Duration>,
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
        let line = format!(
            "{point}{} {:.0}s{total}  {:>10.0} IOPS  {:>9.1} MB/s  p99 {:>9.1} us",
            f.phase,
            f.elapsed.as_secs_f64(),
            f.iops,
            f.mbps,
            f.p99_us
        );
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
