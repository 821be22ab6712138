//! Power around the points of a run: the source is chosen once, the idle
//! baseline measured once before the first point, and each point sampled while
//! it runs; its figures (and each second's watts) go into its summary. A meter
//! that stops answering is not read again: later points say why power is null
//! instead of waiting for it.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::observer::RunObserver;
use super::point::PointOutcome;
use crate::metrics::power::sampler::{SampleError, Sampler};
use crate::metrics::power::{self, PowerRequest, PowerStats, Source};
use crate::results::model::Status;

pub struct PowerMeter {
    source: Result<Source, String>,
    idle_watts: Option<f64>,
    /// The meter's resolution seen while measuring idle.
    idle_resolution: Option<f64>,
    /// Why the idle baseline is missing although it was asked for.
    idle_problem: Option<String>,
    /// Set when the meter stopped answering: the reason, for every later point.
    gone: RefCell<Option<String>>,
    /// Where a baseline measured before this run came from (`PowerRequest::baseline`).
    idle_from: Option<String>,
}

impl PowerMeter {
    /// Resolves the source and, with `--idle`, measures the idle baseline now.
    pub fn new(req: &PowerRequest, interrupt: &AtomicBool, observer: &mut dyn RunObserver) -> PowerMeter {
        let source = power::resolve(req);
        let mut meter =
            PowerMeter { source, idle_watts: None, idle_resolution: None, idle_problem: None, gone: RefCell::new(None), idle_from: None };
        if let Some(b) = &req.baseline {
            (meter.idle_watts, meter.idle_resolution, meter.idle_problem) = (b.watts, b.resolution, b.problem.clone());
            meter.idle_from = Some(b.note.clone());
            return meter;
        }
        if let (Ok(src), Some(idle)) = (&meter.source, req.idle) {
            observer.note(&format!("measuring idle power for {:.0}s ({})", idle.as_secs_f64(), src.describe()));
            let sampler = Sampler::start(src);
            let from = power::unix_now();
            let until = std::time::Instant::now() + idle;
            while std::time::Instant::now() < until && !interrupt.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let to = power::unix_now();
            let got = if interrupt.load(Ordering::Relaxed) { sampler.abort() } else { sampler.stop() };
            match got {
                Ok(energy) => {
                    meter.idle_watts = energy.avg_watts(from, to);
                    meter.idle_resolution = energy.resolution_w;
                }
                Err(e) => meter.idle_problem = Some(meter.note_failure(e)),
            }
            if meter.idle_watts.is_none() && meter.idle_problem.is_none() {
                meter.idle_problem = Some("the power source gave no readings covering the idle period".into());
            }
        }
        meter
    }

    /// Measures the idle baseline of `req` once, for runs that share it (a
    /// lab's legs); None without --idle.
    pub fn shared_baseline(
        req: &PowerRequest,
        note: &str,
        interrupt: &AtomicBool,
        observer: &mut dyn RunObserver,
    ) -> Option<power::IdleBaseline> {
        req.idle?;
        let meter = PowerMeter::new(&PowerRequest { baseline: None, ..req.clone() }, interrupt, observer);
        let problem = match &meter.source {
            Err(why) => Some(why.clone()),
            Ok(_) => meter.idle_problem.clone(),
        };
        Some(power::IdleBaseline { watts: meter.idle_watts, resolution: meter.idle_resolution, problem, note: note.to_string() })
    }

    /// The reason of a failed sampling; a meter that stopped answering is marked gone.
    fn note_failure(&self, e: SampleError) -> String {
        if e.meter_gone {
            *self.gone.borrow_mut() = Some(format!("{}; not read again in this run", e.reason));
        }
        e.reason
    }

    pub fn start(&self) -> Option<Sampler> {
        if self.gone.borrow().is_some() {
            return None;
        }
        self.source.as_ref().ok().map(Sampler::start)
    }

    /// Adds the point's power figures from what the sampler saw. An interrupted
    /// point abandons a reading in progress rather than wait for it.
    pub fn finish(&self, sampling: Option<Sampler>, outcome: &mut PointOutcome) {
        let summary = &mut outcome.point.summary;
        let interrupted = outcome.status == Status::Interrupted;
        let stats = match (&self.source, sampling) {
            (Err(reason), _) => PowerStats::unavailable(reason),
            (Ok(src), Some(sampler)) => match if interrupted { sampler.abort() } else { sampler.stop() } {
                Err(e) => PowerStats { source: Some(src.describe()), reason: Some(self.note_failure(e)), ..Default::default() },
                Ok(energy) => {
                    let (from, to) = outcome.span;
                    for i in &mut summary.intervals {
                        i.watts = energy.avg_watts(from + i.t_s, from + i.t_s + i.duration_s);
                    }
                    let resolution = match (energy.resolution_w, self.idle_resolution) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    let mut stats = PowerStats::measured(
                        &src.describe(),
                        energy.avg_watts(from, to),
                        self.idle_watts,
                        resolution,
                        summary.iops,
                        summary.mbps,
                    );
                    if stats.reason.is_none() {
                        stats.reason = self.idle_problem.clone();
                    }
                    stats.idle_from = self.idle_from.clone();
                    stats
                }
            },
            (Ok(src), None) => match self.gone.borrow().as_ref() {
                Some(why) => PowerStats { source: Some(src.describe()), reason: Some(why.clone()), ..Default::default() },
                None => PowerStats::unavailable("no sampler"),
            },
        };
        summary.power = Some(stats);
    }
}
