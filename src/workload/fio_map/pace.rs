//! How long and how fast a job runs: its end (`runtime`, `io_size`, `loops`),
//! steady state, think time, rate and arrivals, and `latency_target` as the knee search.

use super::*;

/// How long the job runs: `time_based` + `runtime`, `number_ios`, `io_size`, or
/// fio's default of one pass over `size`.
pub(super) fn run_end(
    set: &Settings,
    name: &str,
    kb_base: u64,
    lines: &[AccessLine],
    place: &Place,
    problems: &mut Problems,
    notes: &mut Notes,
) -> End {
    // runtime=0 is fio's "no limit", as if not given.
    let runtime = set.time("runtime", problems).filter(|t| !t.is_zero());
    let avg_bs: f64 = lines.iter().map(|l| l.share / 100.0 * l.bs.get() as f64).sum();
    if set.switch("time_based", problems) {
        return match runtime {
            Some(t) => End::Time(t),
            // A runtime that is not a time was refused already, on its own line.
            None if set.time("runtime", &mut Problems::default()).is_none() && set.get("runtime").is_some() => End::Unknown,
            None => {
                match set.get("runtime") {
                    Some(r) => problems.push(
                        r,
                        "runtime=0 is fio's \"no limit\": with time_based the job runs until stopped; give a runtime above 0",
                        false,
                    ),
                    None => problems.push(
                        set.get("time_based").expect("given"),
                        "time_based without runtime runs until stopped: give runtime= as well",
                        false,
                    ),
                }
                End::Unknown
            }
        };
    }
    // number_ios=0 is fio's default: no limit, as if not given.
    if let Some(n) = set.number::<u64>("number_ios", problems).filter(|n| *n != 0) {
        if runtime.is_some() {
            notes.push(format!(
                "job '{name}': fio ends it after {n} I/Os or at runtime, whichever comes first; lunmark ends it after {n} I/Os per worker"
            ));
        }
        return End::Ios(n);
    }
    let io_size = set.size("io_size", kb_base, problems);
    let bytes = io_size.or(place.pass_bytes);
    // A pass over the region with holes (rw=read:8k) does fewer I/Os: one per
    // bs + skip, as fio's pass ends at the region's end.
    let avg_bs = match io_size {
        None if lines.iter().any(|l| l.skip.is_some() && l.random < 100.0) => {
            lines.iter().map(|l| l.share / 100.0 * (l.bs.get() + l.skip.map_or(0, |s| s.get())) as f64).sum()
        }
        _ => avg_bs,
    };
    match (bytes, runtime) {
        (Some(bytes), Some(t)) if avg_bs > 0.0 => {
            notes.push(format!(
                "job '{name}': without time_based fio ends it after {} of I/O ({} I/Os) or at runtime={}, whichever comes first; lunmark runs it for the runtime",
                Bytes(bytes),
                ((bytes as f64 / avg_bs).round() as u64).max(1),
                crate::units::format_duration(t)
            ));
            End::Time(t)
        }
        (Some(bytes), None) if avg_bs > 0.0 => {
            let whole = if io_size.is_none() && lines.iter().any(|l| l.skip.is_some()) {
                (bytes as f64 / avg_bs).ceil()
            } else {
                (bytes as f64 / avg_bs).round()
            };
            let n = (whole as u64).max(1);
            if lines.windows(2).any(|w| w[0].bs != w[1].bs) {
                notes.push(format!(
                    "job '{name}': fio moves {} of I/O; lunmark runs {n} I/Os per worker, that amount at the average transfer size",
                    Bytes(bytes)
                ));
            }
            End::Ios(n)
        }
        (_, Some(t)) => End::Time(t),
        _ => {
            notes.push(format!(
                "job '{name}': fio would make one pass over the whole target; lunmark cannot know its size here and runs its default time (set runtime= with time_based, or --time)"
            ));
            End::Unknown
        }
    }
}

/// fio's `ss`/`ss_dur`/`ss_ramp` onto lunmark's steady state (`--steady`).
/// fio 3.33 takes one sample a second after the ramp and ends the job once the
/// last `ss_dur` seconds meet one criterion:
/// - `iops_slope:X%` / `bw_slope:X%`: |least-squares slope per second| < X% of
///   the mean. lunmark's slope excursion is that slope x (window - 1), so its
///   limit is X x (window - 1)%, and the range limit window x 100% can never
///   bind (the range of figures >= 0 is at most window x the mean): the same test.
/// - `iops:X%` / `bw:X%`: every sample within X% of the mean. lunmark's
///   nearest is a range within 2X% (it holds whenever fio's does, and may also
///   hold a little earlier), with a slope limit of 3X%, which a window of that
///   range never exceeds; the note says so.
///
/// Limits in absolute units and `ss_ramp` (counted in fio's figures while
/// lunmark judges from the end of its ramp) are refused, naming --steady.
pub(super) fn steady_state(
    set: &Settings,
    name: &str,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Option<crate::workload::steady::SteadySpec> {
    use crate::workload::steady::{SteadyMetric, SteadySpec};
    const HOW: &str = "lunmark's --steady iops|bw with --steady-window, --steady-range and --steady-slope (docs/fio.md)";
    if let Some((s, v)) = set.value("ss_ramp").filter(|(_, v)| parse_time(v, Duration::from_secs(1)).map_or(true, |t| !t.is_zero())) {
        let m = format!("fio waits {} after its ramp before it watches for steady state, and counts that time in its figures; lunmark watches from the end of its ramp: drop ss_ramp, or add it to ramp_time (it then leaves the figures); or give {HOW}", v.trim());
        problems.push(s, m, false);
        return None;
    }
    let Some(dur) = set.time("ss_dur", problems).filter(|d| !d.is_zero()) else {
        if let Some(s) = set.get("ss") {
            notes.push(format!("{} ({}): fio watches for steady state only with ss_dur, and this job has none", show(s), s.place()));
        }
        return None;
    };
    let dur_s = set.get("ss_dur").expect("read above");
    if dur.subsec_nanos() != 0 || dur.as_secs() < 2 {
        problems.push(dur_s, "fio takes a sample a second: give ss_dur in whole seconds, at least 2 (lunmark's --steady-window)", false);
        return None;
    }
    let window = dur.as_secs().min(u32::MAX as u64) as u32;
    let (given, text) = set.value("ss").map_or((None, "iops_slope:0.01%"), |(s, v)| (Some(s), v.trim()));
    let place = given.map_or_else(|| dur_s.place(), |s| s.place());
    let bad = |problems: &mut Problems, m: String| problems.push(given.unwrap_or(dur_s), m, false);
    let Some((kind, limit)) = text.split_once(':') else {
        bad(problems, format!("'{text}' is not a steady-state criterion: give iops:X%, bw:X%, iops_slope:X% or bw_slope:X%"));
        return None;
    };
    let (metric, slope_form) = match kind.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "bw" => (SteadyMetric::Bw, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw_slope" => (SteadyMetric::Bw, true),
        other => {
            bad(problems, format!("'{other}' is not a steady-state criterion: use iops, bw, iops_slope or bw_slope"));
            return None;
        }
    };
    let Some(x) = limit.trim().strip_suffix('%').and_then(|p| p.trim().parse::<f64>().ok()).filter(|x| x.is_finite() && *x > 0.0) else {
        bad(problems, format!("'{}': lunmark's --steady takes limits in percent of the mean; a limit in units of the figure (fio's {kind}:N) has no mapping: give {kind}:X% or {HOW}", limit.trim()));
        return None;
    };
    let n = window as f64;
    let (range, slope, how) = if slope_form {
        (n * 100.0, x * (n - 1.0), format!("slope excursion {}% of the mean (fio's slope {x}% a second x {} seconds), range not limited ({}%, more than any window can have)", x * (n - 1.0), window - 1, n * 100.0))
    } else {
        (2.0 * x, 3.0 * x, format!("range {}% of the mean, slope {}% (never the tighter of the two); fio asks every sample within {x}% of the mean, which a range within {}% nearly is: lunmark may end the point a little earlier", 2.0 * x, 3.0 * x, 2.0 * x))
    };
    let spec = SteadySpec { metric, window, round: Duration::from_secs(1), range, slope };
    notes.push(format!("ss={text} ({place}), ss_dur={}s: job '{name}' -> --steady {metric}, window {window} x 1 s, {how}; runtime is the maximum, as in fio", window));
    Some(spec)
}

/// `loops=N`: fio repeats the job's I/O N times; a job that ends after a
/// number of I/Os does N times as many. A timed job runs for its time (fio's
/// loops end at the runtime too).
pub(super) fn loops(set: &Settings, name: &str, end: End, problems: &mut Problems, notes: &mut Notes) -> End {
    let Some(n) = set.number::<u64>("loops", problems) else { return end };
    if n == 0 {
        problems.push(set.get("loops").expect("given"), "loops must be at least 1", false);
        return end;
    }
    match end {
        End::Ios(ios) if n > 1 => {
            notes.push(format!("job '{name}': loops={n}: {n} passes of {ios} I/Os per worker, {} in all", ios * n));
            End::Ios(ios * n)
        }
        End::Time(t) if n > 1 => {
            notes.push(format!(
                "job '{name}': loops={n} with a runtime: it runs for {} (fio ends at the runtime too)",
                crate::units::format_duration(t)
            ));
            End::Time(t)
        }
        e => e,
    }
}

/// `thinktime=` (a bare number is µs in fio). fio stalls after an I/O
/// completes; lunmark stops issuing for that long after each burst, with what
/// is in flight completing meanwhile: the same at iodepth=1, said otherwise.
pub(super) fn thinktime(set: &Settings, problems: &mut Problems, notes: &mut Notes) -> Option<Duration> {
    let (s, v) = set.value("thinktime")?;
    let t = crate::workload::fio_job::parse_time(v, Duration::from_micros(1)).map_err(|m| problems.push(s, m, false)).ok()?;
    if set.number::<u32>("iodepth", problems).is_some_and(|d| d > 1) {
        notes.push(format!(
            "thinktime: fio waits for an I/O to complete before its pause; lunmark pauses issuing after each burst while the {} I/Os in flight complete",
            set.value("iodepth").map(|(_, v)| v.trim()).unwrap_or("")
        ));
    }
    Some(t)
}

/// `latency_target=` (a bare number is µs in fio) at `latency_percentile=`
/// (default 100: every I/O) is lunmark's knee search, `--sla`: fio searches
/// the depth of one job below its iodepth, lunmark the queue depth from 1 up
/// (to 1024) for the most IOPS within the bound. fio judges the bound over
/// each `latency_window`; lunmark over each step's measured time, which the
/// window becomes.
pub(super) fn latency_target(set: &Settings, job: &str, flag: Option<&str>, problems: &mut Problems, notes: &mut Notes) -> Option<Sla> {
    // The percentiles lunmark's latency statistics hold, by fio's latency_percentile.
    const BOUNDED: [(f64, &str); 6] = [(100.0, "max"), (99.99, "p99.99"), (99.9, "p99.9"), (99.0, "p99"), (90.0, "p90"), (50.0, "p50")];
    let Some((s, v)) = set.value("latency_target") else {
        for key in ["latency_window", "latency_percentile"] {
            if let Some(s) = set.get(key) {
                problems.push(s, format!("{key} shapes fio's latency_target search: add latency_target=TIME, or drop {key}"), false);
            }
        }
        return None;
    };
    let target = crate::workload::fio_job::parse_time(v, Duration::from_micros(1)).map_err(|m| problems.push(s, m, false)).ok()?;
    if target.is_zero() {
        // fio's default: no search. Its companions then shape nothing either.
        notes.push("latency_target=0: fio's default, no latency search: the job runs at its iodepth".into());
        return None;
    }
    let stat = match set.value("latency_percentile") {
        None => "max",
        Some((p, v)) => match v.trim().trim_end_matches('%').parse::<f64>().ok().and_then(|x| BOUNDED.iter().find(|b| b.0 == x)) {
            Some(&(_, stat)) => stat,
            None => {
                problems.push(p, "lunmark bounds the percentiles 50, 90, 99, 99.9, 99.99 or 100 (the maximum): give one of them", false);
                return None;
            }
        },
    };
    let window = set.time("latency_window", problems).filter(|w| !w.is_zero());
    let expr = format!("lat_{stat}<{}us", target.as_micros());
    let each =
        window.map(|w| format!(", each step measured for latency_window ({})", crate::units::format_duration(w))).unwrap_or_default();
    let depth = set
        .value("iodepth")
        .map(|(_, v)| {
            let d = v.trim();
            format!("; the job's iodepth={d} is replaced by the depth searched, which may go past {d} (up to 1024) where fio's search stays at or below it")
        })
        .unwrap_or_default();
    // The run's --sla wins over the job file's bound: the note says which the search uses.
    notes.push(match flag {
        None => format!("latency_target: lunmark searches the queue depth for the most IOPS with {expr} (--sla '{expr}'{each}){depth}"),
        Some(given) => format!(
            "latency_target ({}: {}, as {expr}) is replaced by --sla '{given}': lunmark searches the queue depth for the most IOPS with {given}{each}{depth}",
            s.place(),
            show(s)
        ),
    });
    Some(Sla { expr, window, origin: format!("job '{job}', {}: {}", s.place(), show(s)) })
}

/// A job's `latency_target`, as the knee search takes it.
#[derive(Clone, Debug)]
pub(super) struct Sla {
    /// The bound, in `--sla`'s grammar (`lat_p99<2000us`).
    pub(super) expr: String,
    /// `latency_window`: each step's measured time.
    pub(super) window: Option<Duration>,
    /// "job 'j', line 8: latency_target=2ms", for messages about the search.
    pub(super) origin: String,
}

/// `rate_process=linear|poisson`: fixed or Poisson arrivals of the rate.
pub(super) fn arrivals(set: &Settings, problems: &mut Problems) -> crate::workload::timing::Arrivals {
    use crate::workload::timing::Arrivals;
    let Some((s, v)) = set.value("rate_process") else { return Arrivals::Fixed };
    match v.trim() {
        "linear" => Arrivals::Fixed,
        "poisson" if set.get("rate_iops").or(set.get("rate")).is_some() => Arrivals::Poisson,
        "poisson" => {
            problems.push(s, "rate_process=poisson needs rate_iops or rate (lunmark's Poisson arrivals have a mean rate)", false);
            Arrivals::Fixed
        }
        other => {
            problems.push(s, format!("'{other}' is not a rate process: use linear or poisson"), false);
            Arrivals::Fixed
        }
    }
}

/// `rate_iops=N` or `rate=BYTES` (a second's bytes, at the job's mean transfer
/// size): fio caps each job (clone), so the group's rate is N x numjobs. Both
/// take `READ,WRITE`: a job that only reads takes the first part, one that
/// only writes the second (`rate=,4m`); an empty part is no cap. On a job that
/// does both fio caps each direction apart, which lunmark does not do.
pub(super) fn rate(
    set: &Settings,
    lines: &[AccessLine],
    kb_base: u64,
    read: f64,
    numjobs: u32,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Option<f64> {
    if let (Some(_), Some(s)) = (set.get("rate_iops"), set.get("rate")) {
        problems.push(s, "give one of rate and rate_iops", false);
        return None;
    }
    let (s, v) = set.value("rate_iops").or(set.value("rate"))?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let part = match (parts.len(), read) {
        (1, _) => parts[0],
        (_, r) if r >= 100.0 => parts[0],
        (_, r) if r <= 0.0 => parts[1],
        _ => {
            problems.push(s, "separate read and write rates on a job that does both: lunmark caps the total (use --rate)", false);
            return None;
        }
    };
    if part.is_empty() {
        return None;
    }
    if read > 0.0 && read < 100.0 {
        problems.push(s, "on a job that reads and writes fio caps each direction apart; lunmark caps the total: use --rate", false);
        return None;
    }
    let per_job = if s.key == "rate" {
        let bytes = parse_size(part, kb_base).map_err(|m| problems.push(s, m, false)).ok()? as f64;
        let mean_bs: f64 = lines.iter().map(|l| l.share / 100.0 * l.bs.get() as f64).sum();
        if lines.windows(2).any(|w| w[0].bs != w[1].bs) {
            notes.push(format!(
                "{} ({}): fio caps the bytes; lunmark caps the I/Os, {:.1} a second at the mean transfer size ({:.0} bytes): the same bytes on average",
                show(s),
                s.place(),
                bytes / mean_bs,
                mean_bs
            ));
        }
        bytes / mean_bs
    } else {
        part.parse::<f64>().unwrap_or(f64::NAN)
    };
    if !(per_job > 0.0 && per_job.is_finite()) {
        problems.push(s, format!("'{part}' is not a positive rate"), false);
        return None;
    }
    Some(per_job * numjobs as f64)
}
