//! Live telemetry of a run (issue 29, docs/telemetry.md): `--live-json` and
//! `--metrics-listen`, observers of the run opened before anything runs and
//! closed when it ends. Neither can slow or stop the run: each writes from a
//! thread of its own.

pub mod hdr_log;
pub mod live_json;
pub mod metrics;

use std::sync::Arc;

use anyhow::Result;

use crate::output_path::{self, Destination, Mode};
use crate::run::live::StreamCounts;
use crate::run::RunObserver;

/// What the telemetry flags opened for one run.
#[derive(Default)]
pub struct Telemetry {
    live: Option<live_json::LiveJson>,
    metrics: Option<metrics::MetricsEndpoint>,
    /// The --live-json stream's counts, shared with the run (RunContext::live_json).
    pub counts: Option<Arc<StreamCounts>>,
    /// --live-json - writes to stdout: the summary goes to stderr.
    pub takes_stdout: bool,
    /// With --hdr-log: the interval log, rewritten after each point.
    pub hdr_log: Option<hdr_log::HdrLogWriter>,
    /// Under MPI, on rank 0: the merger of every rank's seconds, which the
    /// stream and the endpoint are told instead of rank 0's own (`mpi::seconds`).
    pub job: Option<crate::mpi::seconds::JobSeconds>,
}

/// The flags, as `run` has them.
pub struct Asked<'a> {
    pub live_json: Option<&'a str>,
    pub metrics_listen: Option<&'a str>,
    pub detail: bool,
    /// Where the JSON result goes (`-`: stdout).
    pub json: Option<&'a str>,
}

impl Asked<'_> {
    /// The refusals that need no file or socket: both outputs on stdout.
    fn check(&self) -> Result<()> {
        if self.live_json == Some("-") && self.json == Some("-") {
            anyhow::bail!(
                "--live-json - and the JSON result (--json - or --output-format json) would both write to stdout: \
                 give one of them a FILE"
            );
        }
        Ok(())
    }

    /// For the dry run: the flags checked (the address bound and let go), and
    /// what they will do, one line each.
    pub fn describe(&self) -> Result<Vec<String>> {
        self.check()?;
        let mut lines = Vec::new();
        if let Some(to) = self.live_json {
            let whose = if self.detail { "each point's and each worker's figures (--detail)" } else { "each point's figures" };
            let place = if to == "-" { "stdout (the summary on stderr)".to_string() } else { to.to_string() };
            lines.push(format!("live-json: one JSON line a second of {whose} to {place} (docs/telemetry.md)"));
        }
        if let Some(text) = self.metrics_listen {
            let addr = metrics::bind(text).map_err(anyhow::Error::msg)?.local_addr()?;
            lines.push(format!("metrics: Prometheus text at http://{addr}/metrics while the run goes (docs/telemetry.md)"));
        }
        Ok(lines)
    }

    /// Opens what the flags ask for: the stream (its file truncated) and the
    /// listening socket. Called after the plan is checked, before any I/O.
    pub fn open(&self) -> Result<Telemetry> {
        self.check()?;
        let mut t = Telemetry::default();
        if let Some(text) = self.metrics_listen {
            let listener = metrics::bind(text).map_err(anyhow::Error::msg)?;
            let endpoint = metrics::MetricsEndpoint::serve(listener)?;
            crate::ewriteln!("metrics: serving http://{}/metrics until the run ends", endpoint.addr);
            t.metrics = Some(endpoint);
        }
        if let Some(to) = self.live_json {
            let dest = output_path::destination("--live-json", to, true, Mode::Stream)?;
            let counts = Arc::new(StreamCounts::default());
            t.takes_stdout = dest == Destination::Stdout;
            t.live = Some(live_json::LiveJson::open(&dest, self.detail, counts.clone())?);
            t.counts = Some(counts);
        }
        Ok(t)
    }
}

impl Telemetry {
    /// The observers to add to the run's.
    pub fn observers(&mut self) -> Vec<&mut dyn RunObserver> {
        if self.job.is_some() {
            return vec![self as &mut dyn RunObserver];
        }
        let mut v: Vec<&mut dyn RunObserver> = Vec::new();
        v.extend(self.live.as_mut().map(|l| l as &mut dyn RunObserver));
        v.extend(self.metrics.as_mut().map(|m| m as &mut dyn RunObserver));
        v.extend(self.hdr_log.as_mut().map(|h| h as &mut dyn RunObserver));
        v
    }

    /// The stream and the endpoint (not the histogram log, written from the merged result).
    fn live(&mut self) -> crate::run::Fanout<'_> {
        let mut v: Vec<&mut dyn RunObserver> = Vec::new();
        v.extend(self.live.as_mut().map(|l| l as &mut dyn RunObserver));
        v.extend(self.metrics.as_mut().map(|m| m as &mut dyn RunObserver));
        crate::run::Fanout(v)
    }

    /// The run ended: the endpoint stops (its port closed), the stream's
    /// queued lines are written. Returns the histogram log's first failure to
    /// write, if any.
    pub fn close(mut self) -> Option<String> {
        drop(self.metrics.take());
        if let Some(l) = self.live.take() {
            l.close();
        }
        self.hdr_log.take().and_then(|h| h.failed)
    }
}

/// Under MPI (`job` set): every call reaches every observer, but the stream
/// and the endpoint are told the job's seconds, merged over the ranks, and
/// each point's last seconds before it is finished.
impl RunObserver for Telemetry {
    fn started(&mut self, plan: &crate::run::RunPlan) {
        self.live().started(plan);
        self.hdr_log.iter_mut().for_each(|h| h.started(plan));
    }
    fn tick(&mut self, f: &crate::run::live::LiveFigures<'_>) {
        let mut job = self.job.take();
        match job.as_mut() {
            Some(j) => j.tick(f, &mut self.live()),
            None => self.live().tick(f),
        }
        self.job = job;
        self.hdr_log.iter_mut().for_each(|h| h.tick(f));
    }
    fn point_finished(&mut self, result: &crate::results::model::RunResult) {
        self.flush();
        self.live().point_finished(result);
        self.hdr_log.iter_mut().for_each(|h| h.point_finished(result));
    }
    fn note(&mut self, text: &str) {
        self.live().note(text);
        self.hdr_log.iter_mut().for_each(|h| h.note(text));
    }
    fn finished(&mut self, result: &crate::results::model::RunResult) {
        self.flush();
        self.live().finished(result);
        self.hdr_log.iter_mut().for_each(|h| h.finished(result));
    }
}

impl Telemetry {
    /// Tells the job's seconds still gathered (at a point's end).
    fn flush(&mut self) {
        if let Some(mut j) = self.job.take() {
            j.flush(&mut self.live());
            self.job = Some(j);
        }
    }
}
