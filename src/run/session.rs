//! What lives across the points of a run: the targets (NBD connections and RAM
//! LUNs opened before a point and reused by the next), the verification tables
//! (blocks written at one point are checked at the next), the trace sink and
//! the power meter. Opened once after the plan is checked, asked for each
//! point's targets and settings, and closed once.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Result;

use super::check::ReadyPlan;
use super::observer::RunObserver;
use super::point::{PointOutcome, PointShared};
use super::power_meter::PowerMeter;
use super::trace_sink::TraceSink;
use super::{cluster, PlannedPoint, RunContext};
use crate::engine::cache::config as cache_config;
use crate::metrics::power::sampler::Sampler;
use crate::targets::{self, OpenTarget};
use crate::verify::VerifyShared;

pub struct Session<'a> {
    ready: &'a ReadyPlan,
    ctx: &'a RunContext,
    targets: targets::RunTargets,
    verify: Option<Arc<VerifyShared>>,
    trace: Option<Arc<TraceSink>>,
    meter: PowerMeter,
}

impl<'a> Session<'a> {
    /// Resolves the power source (measuring idle power when asked) and creates the trace.
    pub fn open(ready: &'a ReadyPlan, ctx: &'a RunContext, interrupt: &Arc<AtomicBool>, observer: &mut dyn RunObserver) -> Result<Self> {
        let meter = PowerMeter::new(&ctx.power, interrupt, observer);
        let trace = match &ctx.trace {
            Some(path) => Some(Arc::new(TraceSink::create(path).map_err(anyhow::Error::msg)?)),
            None => None,
        };
        // A file being filled stops within a chunk of it at a Ctrl-C, rather than after the whole fill.
        let mut targets = targets::RunTargets::default();
        targets.stop = Some(interrupt.clone());
        Ok(Session { ready, ctx, targets, verify: None, trace, meter })
    }

    /// Opens the targets of point `index` (0-based) with its cache tier, agreed
    /// across a cluster, and checked against the replay and the verification
    /// tables (made at the first point). Whatever fails leaves nothing created behind.
    pub fn open_point(&mut self, index: usize, p: &PlannedPoint) -> Result<Vec<OpenTarget>> {
        let opened = p.open_targets(self.ctx.safety, &mut self.targets).map_err(anyhow::Error::from).and_then(|t| self.attach_cache(p, t));
        let agreed = self.ctx.cluster.get().agree(&format!("opening the targets of point {}", index + 1), opened.as_ref().err());
        let targets = match (opened, agreed) {
            (opened, None) => opened?,
            (Ok(t), Some(e)) => {
                targets::discard_created(t);
                return Err(e);
            }
            (Err(_), Some(e)) => return Err(e),
        };
        match self.check_point(index, p, &targets) {
            Ok(()) => Ok(targets),
            Err(e) => {
                targets::discard_created(targets);
                Err(e)
            }
        }
    }

    fn attach_cache(&self, p: &PlannedPoint, mut targets: Vec<OpenTarget>) -> Result<Vec<OpenTarget>> {
        let Some(cfg) = &self.ctx.cache else { return Ok(targets) };
        match cache_config::check(cfg, &p.spec, self.ctx.safety).and_then(|_| cache_config::attach(cfg, &mut targets)) {
            Ok(()) => Ok(targets),
            Err(e) => {
                targets::discard_created(targets);
                Err(e)
            }
        }
    }

    /// Before any I/O: a replay's offsets and transfers fit, and the verification tables cover these targets.
    fn check_point(&mut self, index: usize, p: &PlannedPoint, targets: &[OpenTarget]) -> Result<()> {
        if let Some(replay) = &self.ready.replay {
            replay.check_targets(targets, p.spec.buffered)?;
        }
        let regions: Vec<_> = targets.iter().map(|t| (t.facts.uri.clone(), t.region)).collect();
        if let Some(v) = self.verify.as_ref().filter(|v| !v.covers(&regions)) {
            // The check refuses a sweep of the targets with --verify; this
            // keeps any other way in from indexing tables it has not got.
            anyhow::bail!(
                "point {}: --verify keeps one block table per target for the whole run ({}), and this point drives other targets or regions",
                index + 1,
                v.uris.join(", ")
            );
        }
        if let (Some(opts), None, Some(block)) = (&self.ctx.verify, &self.verify, self.ready.verify_block) {
            self.verify = Some(Arc::new(VerifyShared::new(opts, block, &regions)?));
        }
        Ok(())
    }

    /// What every worker of point `p` shares besides its targets.
    pub fn shared(&self, p: &PlannedPoint) -> PointShared {
        PointShared {
            verify: self.verify.clone(),
            trace: self.trace.clone(),
            continue_on_error: self.ctx.continue_on_error,
            cluster: Some(self.ctx.cluster.clone()),
            pinning: self.ctx.pinning.clone(),
            asked_qd: p.asked_qd.clone(),
            replay: self.ready.replay.clone(),
        }
    }

    pub fn cluster(&self) -> &dyn cluster::Cluster {
        self.ctx.cluster.get()
    }

    /// With --cache: the cache tier in front of every target.
    pub fn cache(&self) -> Option<&cache_config::CacheConfig> {
        self.ctx.cache.as_ref()
    }

    /// With --link: the link point `index` crosses.
    pub fn link(&self, index: usize) -> Option<&crate::results::line_rate::PointLink> {
        self.ready.links.get(index).and_then(Option::as_ref)
    }

    pub fn start_power(&self) -> Option<Sampler> {
        self.meter.start()
    }

    pub fn finish_power(&self, sampling: Option<Sampler>, outcome: &mut PointOutcome) {
        self.meter.finish(sampling, outcome)
    }

    /// Ends the session: the trace is kept whatever the run's outcome (its I/Os were issued), and said.
    pub fn close(self, observer: &mut dyn RunObserver) {
        let (Some(t), Some(path)) = (&self.trace, &self.ctx.trace) else { return };
        match t.finish() {
            Ok(n) if !self.ctx.quiet && self.ctx.announce_trace => {
                observer.note(&format!("trace: {} recorded in {}", crate::units::counted(n, "I/O"), path.display()))
            }
            Ok(_) => {}
            Err(e) => observer.note(&format!("warning: the trace {} is incomplete: {e}", path.display())),
        }
    }
}
