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
    watts_printed(&out.stdout).map_err(|e| format!("--power-cmd '{cmd}' {e}").into())
}

/// The first number a meter's command printed, sign included: a negative,
/// NaN or infinite reading is a bad reading (refused, so the point's power is
/// left out with the reason), not a figure with its sign dropped.
pub fn watts_printed(text: &str) -> Result<f64, String> {
    let bad =
        |word: &str| Err(format!("gave a bad reading: '{word}' (watts must be a finite number, 0 or more); fix the command or the meter"));
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let word_start = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        // A sign counts when it opens a word ("-5 W", "power=-5"), not inside one ("usb-3").
        let signed = matches!(b[i], b'-' | b'+') && word_start;
        let digits_at = if signed { i + 1 } else { i };
        let starts_number = b.get(digits_at).is_some_and(|c| c.is_ascii_digit())
            || (b.get(digits_at) == Some(&b'.') && b.get(digits_at + 1).is_some_and(|c| c.is_ascii_digit()));
        if starts_number && (signed || !b[i].is_ascii_alphabetic()) {
            let end = digits_at + b[digits_at..].iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
            let word = &text[i..end];
            // "1.2.3" is no number: skip its first part as the old reader did.
            if let Ok(w) = word.parse::<f64>() {
                return if w.is_finite() && w >= 0.0 { Ok(w) } else { bad(word) };
            }
            i = end;
            continue;
        }
        if word_start && b[i].is_ascii_alphabetic() {
            let end = i + b[i..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
            let word = &text[i..end];
            if ["nan", "inf", "infinity"].contains(&word.to_ascii_lowercase().as_str()) {
                return bad(word);
            }
            i = end;
            continue;
        }
        i += 1;
    }
    Err(format!("printed no number of watts: '{}'", text.trim()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_or_non_finite_reading_is_a_bad_reading_not_a_figure() {
        assert_eq!(watts_printed("230.5 W\n"), Ok(230.5));
        assert_eq!(watts_printed("power=231W"), Ok(231.0));
        assert_eq!(watts_printed("usb-3 meter: 12.5"), Ok(3.0), "a dash inside a word is no sign (as before)");
        assert_eq!(watts_printed("0 W"), Ok(0.0));
        for (out, word) in [("-5 W", "-5"), ("power: -0.5", "-0.5"), ("NaN W", "NaN"), ("inf", "inf"), ("-inf", "inf")] {
            let e = watts_printed(out).unwrap_err();
            assert!(e.starts_with(&format!("gave a bad reading: '{word}'")), "{out}: {e}");
        }
        assert!(watts_printed("info: 230 W").is_ok_and(|w| w == 230.0), "'info' is a word, not inf");
        assert!(watts_printed("no meter").unwrap_err().contains("no number"));
    }

    #[test]
    fn a_power_command_printing_a_negative_reading_gives_no_power_figure_and_says_why() {
        let source = Source::Command("echo -5 W".into());
        let sampler = Sampler::start(&source);
        std::thread::sleep(Duration::from_millis(50));
        let e = sampler.stop().unwrap_err();
        assert!(e.reason.contains("bad reading: '-5'"), "{}", e.reason);
    }
}
