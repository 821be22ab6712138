//! A thread that reads a power source while a point runs and hands back its
//! energy samples. RAPL is read every 200 ms (cheap, and often enough to catch every
//! counter wrap); IPMI and commands once a second, each reading within
//! `command::READING_TIMEOUT` (a meter that does not answer fails the samples, and
//! its command's process group is killed); a log file is read at the end.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::{command, log, unix_now, EnergySamples, Source};

pub struct Sampler {
    stop: Arc<AtomicBool>,
    /// Set to abandon a reading in progress (Ctrl-C): its command is killed at once.
    abort: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<EnergySamples, SampleError>>>,
    source: Source,
    /// An error from a first reading taken before `start` returned.
    failed: Option<String>,
}

/// Why a sampler has no samples.
#[derive(Clone, Debug)]
pub struct SampleError {
    pub reason: String,
    /// The meter stopped answering: reading it again would only wait again.
    pub meter_gone: bool,
}

impl From<String> for SampleError {
    fn from(reason: String) -> SampleError {
        SampleError { reason, meter_gone: false }
    }
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

/// The failure of a meter's command as a reason; a timeout means the meter is gone.
pub fn command_failure(what: &str, f: command::Failure) -> SampleError {
    match f {
        command::Failure::Spawn(e) => format!("{what}: cannot run it: {e}").into(),
        command::Failure::TimedOut(limit) => {
            SampleError { reason: format!("{what} {}", command::describe_timeout(limit)), meter_gone: true }
        }
        command::Failure::Aborted => format!("{what}: reading abandoned when the run was interrupted").into(),
    }
}

/// Watts printed by a command: the first number in its output. The command
/// gets `command::READING_TIMEOUT` to answer.
pub fn command_watts(cmd: &str, abort: &AtomicBool) -> Result<f64, SampleError> {
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(cmd);
    let what = format!("the power command '{cmd}'");
    let out = command::run(sh, command::READING_TIMEOUT, abort).map_err(|f| command_failure(&what, f))?;
    if !out.success {
        return Err(format!("--power-cmd '{cmd}' exited with {}: {}", out.status, out.stderr.trim()).into());
    }
    let text = out.stdout;
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| !w.is_empty() && w.parse::<f64>().is_ok())
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("--power-cmd '{cmd}' printed no number of watts: '{}'", text.trim()).into())
}

impl Sampler {
    /// Starts sampling now: the samples begin at this instant (the first reading
    /// is taken on the sampler's thread, so a slow meter does not delay the run).
    pub fn start(source: &Source) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let abort = Arc::new(AtomicBool::new(false));
        let idle = |failed| Sampler { stop: stop.clone(), abort: abort.clone(), handle: None, source: source.clone(), failed };
        let t0 = unix_now();
        // Energy counters are read here, at t0 exactly (a file read: it cannot
        // hang); a meter's command on the thread, where a slow one waits alone.
        let first_energy = match source {
            Source::Log(_) => return idle(None),
            Source::Rapl(r) => match r.read_uj() {
                Ok(v) => Some(v),
                Err(e) => return idle(Some(e)),
            },
            _ => None,
        };
        let (flag, abandon, src) = (stop.clone(), abort.clone(), source.clone());
        let handle = std::thread::Builder::new()
            .name("lunmark-power".into())
            .spawn(move || sample(&src, &flag, &abandon, t0, first_energy))
            .expect("spawn power sampler");
        Sampler { stop, abort, handle: Some(handle), source: source.clone(), failed: None }
    }

    /// Ends sampling after one last reading (which gets its usual time limit).
    pub fn stop(mut self) -> Result<EnergySamples, SampleError> {
        if let Some(e) = self.failed.take() {
            return Err(e.into());
        }
        self.stop.store(true, Ordering::Relaxed);
        match (self.handle.take(), &self.source) {
            (Some(h), _) => h.join().unwrap_or_else(|_| Err("the power sampler panicked".to_string().into())),
            (None, Source::Log(path)) => log::read(path).map(|r| EnergySamples::from_watts(&r)).map_err(SampleError::from),
            (None, _) => Err("no sampler".to_string().into()),
        }
    }

    /// Ends sampling at once (Ctrl-C): a reading in progress is abandoned and its command killed.
    pub fn abort(self) -> Result<EnergySamples, SampleError> {
        self.abort.store(true, Ordering::Relaxed);
        self.stop()
    }
}

fn sample(
    source: &Source,
    stop: &AtomicBool,
    abort: &AtomicBool,
    t0: f64,
    first_energy: Option<Vec<u64>>,
) -> Result<EnergySamples, SampleError> {
    match source {
        Source::Rapl(rapl) => {
            let mut last = match first_energy {
                Some(v) => v,
                None => rapl.read_uj()?,
            };
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
                    return Ok(EnergySamples { samples, resolution_w: None });
                }
            }
        }
        Source::Ipmi(_) | Source::Command(_) => {
            let read = || match source {
                Source::Ipmi(i) => i.read(abort),
                Source::Command(c) => command_watts(c, abort),
                _ => unreachable!("only watt sources here"),
            };
            // The first reading stands for the start of the samples.
            let mut readings = vec![(t0, read()?)];
            loop {
                let stopping = nap(stop, Duration::from_secs(1));
                readings.push((unix_now(), read()?));
                if stopping {
                    return Ok(EnergySamples::from_watts(&readings));
                }
            }
        }
        Source::Log(_) => Err("a log is read at the end, not sampled".to_string().into()),
    }
}
