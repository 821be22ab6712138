//! A thread that reads a power source while a point runs and hands back its
//! trace. RAPL is read every 200 ms (cheap, and often enough to catch every
//! counter wrap); IPMI and commands once a second; a log file is read at the end.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{ipmi, log, unix_now, Source, Trace};

pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<Trace, String>>>,
    source: Source,
    /// An error from the first reading.
    failed: Option<String>,
}

/// The first reading, taken before `start` returns so that the trace covers
/// everything that happens after it.
enum First {
    Energy(Vec<u64>),
    Watts(f64),
}

/// Sleeps up to `d`, waking early when asked to stop. True when stopping.
fn nap(stop: &AtomicBool, d: Duration) -> bool {
    let until = std::time::Instant::now() + d;
    while std::time::Instant::now() < until {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20).min(until.saturating_duration_since(std::time::Instant::now())));
    }
    stop.load(Ordering::Relaxed)
}

/// Watts printed by a command: the first number in its output.
pub fn command_watts(cmd: &str) -> Result<f64, String> {
    let out = Command::new("sh").arg("-c").arg(cmd).output().map_err(|e| format!("--power-cmd: running '{cmd}': {e}"))?;
    if !out.status.success() {
        return Err(format!("--power-cmd '{cmd}' exited with {}: {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| !w.is_empty() && w.parse::<f64>().is_ok())
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("--power-cmd '{cmd}' printed no number of watts: '{}'", text.trim()))
}

impl Sampler {
    pub fn start(source: &Source) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let src = source.clone();
        let t0 = unix_now();
        let first = match source {
            Source::Log(_) => return Sampler { stop, handle: None, source: source.clone(), failed: None },
            Source::Rapl(r) => r.read_uj().map(First::Energy),
            Source::Ipmi(i) => i.read().map(First::Watts),
            Source::Command(c) => command_watts(c).map(First::Watts),
        };
        let first = match first {
            Ok(f) => f,
            Err(e) => return Sampler { stop, handle: None, source: source.clone(), failed: Some(e) },
        };
        let handle = std::thread::Builder::new()
            .name("lunmark-power".into())
            .spawn(move || sample(&src, &flag, t0, first))
            .expect("spawn power sampler");
        Sampler { stop, handle: Some(handle), source: source.clone(), failed: None }
    }

    pub fn stop(mut self) -> Result<Trace, String> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.stop.store(true, Ordering::Relaxed);
        match (self.handle.take(), &self.source) {
            (Some(h), _) => h.join().unwrap_or_else(|_| Err("the power sampler panicked".into())),
            (None, Source::Log(path)) => log::read(path).map(|r| Trace::from_watts(&r)),
            (None, _) => Err("no sampler".into()),
        }
    }
}

fn sample(source: &Source, stop: &AtomicBool, t0: f64, first: First) -> Result<Trace, String> {
    match (source, first) {
        (Source::Rapl(rapl), First::Energy(first)) => {
            let mut last = first;
            let mut total_uj: u128 = 0;
            let mut samples = vec![(t0, 0.0)];
            loop {
                let stopping = nap(stop, Duration::from_millis(200));
                let now = rapl.read_uj()?;
                let t = unix_now();
                for (d, (before, after)) in last.iter().zip(&now).enumerate() {
                    total_uj += rapl.delta_uj(d, *before, *after) as u128;
                }
                last = now;
                samples.push((t, total_uj as f64 / 1e6));
                if stopping {
                    return Ok(Trace { samples });
                }
            }
        }
        (Source::Ipmi(_) | Source::Command(_), First::Watts(w)) => {
            let read = || match source {
                Source::Ipmi(i) => i.read(),
                Source::Command(c) => command_watts(c),
                _ => unreachable!("only watt sources here"),
            };
            let mut readings = vec![(t0, w)];
            loop {
                let stopping = nap(stop, Duration::from_secs(1));
                readings.push((unix_now(), read()?));
                if stopping {
                    return Ok(Trace::from_watts(&readings));
                }
            }
        }
        _ => Err("a power source gave a first reading of the wrong kind".into()),
    }
}

/// Keeps the ipmi module's parser reachable for tests of recorded outputs.
pub use ipmi::parse_reading;
