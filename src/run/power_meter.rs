//! Power around the points of a run: the source is chosen once, the idle
//! baseline measured once before the first point, and each point sampled while
//! it runs; its figures (and each second's watts) go into its summary.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::live::Live;
use super::point::PointOutcome;
use crate::metrics::power::{self, sampler::Sampler, PowerRequest, PowerStats, Source};

pub struct PowerMeter {
    source: Result<Source, String>,
    idle_watts: Option<f64>,
    /// Why the idle baseline is missing although it was asked for.
    idle_problem: Option<String>,
}

impl PowerMeter {
    /// Resolves the source and, with `--idle`, measures the idle baseline now.
    pub fn new(req: &PowerRequest, interrupt: &AtomicBool, live: &Live) -> PowerMeter {
        let source = power::resolve(req);
        let mut meter = PowerMeter { source, idle_watts: None, idle_problem: None };
        if let (Ok(src), Some(idle)) = (&meter.source, req.idle) {
            live.note(&format!("measuring idle power for {:.0}s ({})", idle.as_secs_f64(), src.describe()));
            let sampler = Sampler::start(src);
            let from = power::unix_now();
            let until = std::time::Instant::now() + idle;
            while std::time::Instant::now() < until && !interrupt.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let to = power::unix_now();
            match sampler.stop() {
                Ok(trace) => meter.idle_watts = trace.avg_watts(from, to),
                Err(e) => meter.idle_problem = Some(e),
            }
            if meter.idle_watts.is_none() && meter.idle_problem.is_none() {
                meter.idle_problem = Some("the power source gave no readings covering the idle period".into());
            }
        }
        meter
    }

    pub fn start(&self) -> Option<Sampler> {
        self.source.as_ref().ok().map(Sampler::start)
    }

    /// Adds the point's power figures from what the sampler saw.
    pub fn finish(&self, sampling: Option<Sampler>, outcome: &mut PointOutcome) {
        let summary = &mut outcome.point.summary;
        let stats = match (&self.source, sampling) {
            (Err(reason), _) => PowerStats::unavailable(reason),
            (Ok(src), Some(sampler)) => match sampler.stop() {
                Err(e) => PowerStats { source: Some(src.describe()), reason: Some(e), ..Default::default() },
                Ok(trace) => {
                    let (from, to) = outcome.span;
                    for i in &mut summary.intervals {
                        i.watts = trace.avg_watts(from + i.t_s, from + i.t_s + i.duration_s);
                    }
                    let mut stats =
                        PowerStats::measured(&src.describe(), trace.avg_watts(from, to), self.idle_watts, summary.iops, summary.mbps);
                    if stats.reason.is_none() {
                        stats.reason = self.idle_problem.clone();
                    }
                    stats
                }
            },
            (Ok(_), None) => PowerStats::unavailable("no sampler"),
        };
        summary.power = Some(stats);
    }
}
