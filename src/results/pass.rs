//! Pass/fail criteria (Jetstress-style verdicts): `read_lat_avg<20ms,read_lat_max<50ms`.
//! A criterion is `[GROUP.]METRIC OP VALUE[UNIT]`: latency metrics
//! `{read,write,}lat_{avg,min,max,p50,p90,p99,p99.9,p99.99}` take a unit (us, ms, s);
//! rates `iops`, `read_iops`, `write_iops`, `mbps` and `cpu` (utilization %) and
//! `errors` take plain numbers. OP is <, <=, > or >=. The names, and how each is
//! read from a summary, are the metric registry's (`results::registry`).

use thiserror::Error;

pub use super::model::{Check, Verdict};
use super::model::{GroupSummary, LatencyByOp, LatencyStats, Summary};
use super::registry::{self, LatencyStat, Metric};

#[derive(Clone, Debug, PartialEq)]
pub struct Criterion {
    pub text: String,
    pub group: Option<String>,
    pub measure: Measure,
    pub cmp: Cmp,
    /// In the metric's unit: microseconds for latency.
    pub limit: f64,
}

/// What a criterion measures: a metric of the registry, or a statistic of one
/// latency distribution (the registry's `LATENCY_STATS` of reads, writes or all).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    Latency { op: LatOp, stat: &'static LatencyStat },
    Figure(&'static Metric),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LatOp {
    Read,
    Write,
    All,
}

/// How a criterion compares the measured value with its limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Error, PartialEq)]
pub enum PassError {
    #[error("pass criterion '{text}': {why}. Write [GROUP.]METRIC<VALUE, for example read_lat_avg<20ms or db.read_lat_max<50ms or iops>=1000; latency metrics are read_lat_, write_lat_ or lat_ followed by avg, min, max, p50, p90, p99, p99.9 or p99.99")]
    Bad { text: String, why: String },
}

pub fn parse(list: &str) -> Result<Vec<Criterion>, PassError> {
    let criteria: Vec<Criterion> = list.split(',').map(str::trim).filter(|t| !t.is_empty()).map(parse_one).collect::<Result<_, _>>()?;
    if criteria.is_empty() {
        return Err(PassError::Bad { text: list.into(), why: "no criterion given".into() });
    }
    Ok(criteria)
}

fn parse_one(text: &str) -> Result<Criterion, PassError> {
    let bad = |why: &str| PassError::Bad { text: text.into(), why: why.into() };
    let at = text.find(['<', '>']).ok_or_else(|| bad("no comparison (<, <=, > or >=)"))?;
    let (lhs, rest) = text.split_at(at);
    let (cmp, rhs) = if let Some(r) = rest.strip_prefix("<=") {
        (Cmp::Le, r)
    } else if let Some(r) = rest.strip_prefix(">=") {
        (Cmp::Ge, r)
    } else if let Some(r) = rest.strip_prefix('<') {
        (Cmp::Lt, r)
    } else {
        (Cmp::Gt, &rest[1..])
    };
    let lhs = lhs.trim();
    let (group, name) = match lhs.rsplit_once('.') {
        // "p99.9" contains a dot too: only a prefix before the metric name is a group.
        Some((g, n)) if !g.contains("lat_") && !g.is_empty() => (Some(g.to_string()), n),
        _ => (None, lhs),
    };
    let measure = parse_measure(name).ok_or_else(|| bad(&format!("unknown metric '{name}'")))?;
    let rhs = rhs.trim();
    let split = rhs.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rhs.len());
    let (num, unit) = rhs.split_at(split);
    let value: f64 = num.parse().map_err(|_| bad(&format!("'{rhs}' is not a number")))?;
    let limit = match (measure, unit.trim()) {
        (Measure::Latency { .. }, "us" | "µs") => value,
        (Measure::Latency { .. }, "ms") => value * 1e3,
        (Measure::Latency { .. }, "s") => value * 1e6,
        (Measure::Latency { .. }, u) => return Err(bad(&format!("latency needs a unit (us, ms or s), got '{u}'"))),
        (_, "") => value,
        (_, u) => return Err(bad(&format!("'{name}' takes a plain number, not '{u}'"))),
    };
    Ok(Criterion { text: text.to_string(), group, measure, cmp, limit })
}

fn parse_measure(name: &str) -> Option<Measure> {
    if let Some(m) = registry::by_pass_name(name) {
        return Some(Measure::Figure(m));
    }
    let (op, stat) = if let Some(s) = name.strip_prefix("read_lat_") {
        (LatOp::Read, s)
    } else if let Some(s) = name.strip_prefix("write_lat_") {
        (LatOp::Write, s)
    } else {
        (LatOp::All, name.strip_prefix("lat_")?)
    };
    Some(Measure::Latency { op, stat: registry::latency_stat(stat)? })
}

/// Judges a point: each criterion against the point's summary, or a group's.
/// A criterion naming a group the point does not have fails, saying so. A
/// latency criterion fails when no I/O of its kind completed (there is no
/// latency to judge), and an upper bound fails when an I/O still in flight at
/// the end had been outstanding longer than the bound (it would have exceeded
/// it, had it completed).
pub fn judge(criteria: &[Criterion], summary: &Summary, groups: &[GroupSummary]) -> Verdict {
    let checks: Vec<Check> = criteria.iter().map(|c| check(c, summary, groups)).collect();
    Verdict { passed: checks.iter().all(|c| c.passed), checks }
}

fn check(c: &Criterion, summary: &Summary, groups: &[GroupSummary]) -> Check {
    let unit = if matches!(c.measure, Measure::Latency { .. }) { "us" } else { "" };
    let fail =
        |value: Option<f64>, note: String| Check { criterion: c.text.clone(), value, unit: unit.into(), passed: false, note: Some(note) };
    let group = match &c.group {
        Some(name) => match groups.iter().find(|s| &s.name == name) {
            Some(g) => Some(g),
            None => return fail(None, format!("this point has no group '{name}'")),
        },
        None => None,
    };
    let value = match group {
        Some(g) => match measure_group(c.measure, g) {
            Some(v) => v,
            None => return fail(None, format!("'{}' is measured for the whole point, not per group", c.text)),
        },
        None => measure_point(c.measure, summary),
    };
    if let Measure::Latency { op, .. } = c.measure {
        let lat = match group {
            Some(g) => by_op(&g.latency_us, op),
            None => by_op(&summary.latency_us, op),
        };
        if lat.count == 0 {
            let what = match op {
                LatOp::Read => "no read",
                LatOp::Write => "no write",
                LatOp::All => "no I/O",
            };
            return fail(None, format!("{what} completed in the measured interval: there is no latency to judge"));
        }
        let upper = matches!(c.cmp, Cmp::Lt | Cmp::Le);
        let in_flight = summary.in_flight_at_end;
        let stat = match c.measure {
            Measure::Latency { stat, .. } => stat.key,
            Measure::Figure(_) => "",
        };
        let broken = |ms: &f64| upper && straggler_breaks(stat, lat, in_flight, ms * 1e3, c.limit);
        if let Some(ms) = summary.oldest_in_flight_ms.filter(broken) {
            return fail(
                Some(value.max(ms * 1e3)),
                format!(
                    "{} {} still in flight at the end, the oldest already for {ms:.0} ms: past the bound before it completed, if it ever did",
                    crate::units::counted(summary.in_flight_at_end, "I/O"),
                    if summary.in_flight_at_end == 1 { "was" } else { "were" }
                ),
            );
        }
    }
    let passed = match c.cmp {
        Cmp::Lt => value < c.limit,
        Cmp::Le => value <= c.limit,
        Cmp::Gt => value > c.limit,
        Cmp::Ge => value >= c.limit,
    };
    Check { criterion: c.text.clone(), value: Some(value), unit: unit.into(), passed, note: None }
}

/// Whether the I/Os still in flight at the end (the oldest for `oldest_us`)
/// surely break an upper bound `limit` on statistic `stat`, whatever they
/// take to complete: the maximum, once the oldest is past it; the mean, once
/// the oldest's age alone lifts the mean over it; a percentile, only when one
/// I/O is more than the share of I/Os above that percentile (a straggler
/// among thousands cannot move a p99). The minimum is not touched.
fn straggler_breaks(stat: &str, lat: &LatencyStats, in_flight: u64, oldest_us: f64, limit: f64) -> bool {
    if oldest_us <= limit || in_flight == 0 {
        return false;
    }
    let all = (lat.count + in_flight) as f64;
    let tail = |p: f64| 1.0 > (1.0 - p) * all;
    match stat {
        "max" => true,
        "mean" => (lat.mean * lat.count as f64 + oldest_us) / all > limit,
        "p50" => tail(0.5),
        "p90" => tail(0.9),
        "p99" => tail(0.99),
        "p99_9" => tail(0.999),
        "p99_99" => tail(0.9999),
        _ => false,
    }
}

fn by_op(l: &LatencyByOp, op: LatOp) -> &LatencyStats {
    match op {
        LatOp::Read => &l.read,
        LatOp::Write => &l.write,
        LatOp::All => &l.all,
    }
}

fn measure_point(m: Measure, s: &Summary) -> f64 {
    match m {
        Measure::Latency { op, stat } => (stat.read)(by_op(&s.latency_us, op)),
        Measure::Figure(f) => f.get(s).unwrap_or(f64::NAN),
    }
}

fn measure_group(m: Measure, g: &GroupSummary) -> Option<f64> {
    match m {
        Measure::Latency { op, stat } => Some((stat.read)(by_op(&g.latency_us, op))),
        Measure::Figure(f) => f.group.map(|read| read(g)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_parse_with_units_and_groups() {
        let c = parse("read_lat_avg<20ms, db.read_lat_max<=50ms,iops>=1000,lat_p99.9<2s").unwrap();
        assert_eq!(c[0].limit, 20_000.0);
        assert_eq!(c[1].group.as_deref(), Some("db"));
        assert_eq!(c[1].cmp, Cmp::Le);
        assert_eq!(c[2].measure, Measure::Figure(registry::by_key("iops").unwrap()));
        assert_eq!(c[3].measure, Measure::Latency { op: LatOp::All, stat: registry::latency_stat("p99_9").unwrap() });
        assert_eq!(c[3].limit, 2e6);
    }

    #[test]
    fn bad_criteria_explain_themselves() {
        assert!(parse("read_lat_avg=20ms").unwrap_err().to_string().contains("no comparison"));
        assert!(parse("read_latency<20ms").unwrap_err().to_string().contains("unknown metric 'read_latency'"));
        assert!(parse("read_lat_avg<20").unwrap_err().to_string().contains("needs a unit"));
        assert!(parse("iops>10ms").unwrap_err().to_string().contains("plain number"));
        assert!(parse("iops>x").unwrap_err().to_string().contains("not a number"));
        assert!(parse("").unwrap_err().to_string().contains("no criterion"));
    }

    #[test]
    fn judging_compares_measured_values() {
        let mut s = Summary::default();
        s.latency_us.read.count = 10;
        s.latency_us.read.mean = 15_000.0;
        s.latency_us.read.max = 60_000.0;
        let v = judge(&parse("read_lat_avg<20ms,read_lat_max<50ms").unwrap(), &s, &[]);
        assert!(!v.passed);
        assert!(v.checks[0].passed && !v.checks[1].passed);
        let v = judge(&parse("nope.iops>1").unwrap(), &s, &[]);
        assert!(!v.passed && v.checks[0].note.as_deref().unwrap().contains("no group 'nope'"));
    }

    #[test]
    fn latency_criteria_fail_without_completions_or_with_older_stalled_io() {
        // No I/O completed: a maximum of "0 us" must not pass.
        let mut s = Summary::default();
        let v = judge(&parse("read_lat_max<50ms,iops>=0").unwrap(), &s, &[]);
        assert!(!v.passed && !v.checks[0].passed && v.checks[1].passed);
        assert_eq!(v.checks[0].value, None);
        assert!(v.checks[0].note.as_deref().unwrap().contains("no read completed"), "{:?}", v.checks[0]);

        // Reads completed fast, but one is stuck for 2 s.
        s.latency_us.read = LatencyStats { count: 100, mean: 900.0, min: 500.0, max: 1_500.0, ..Default::default() };
        s.latency_us.all = s.latency_us.read.clone();
        s.in_flight_at_end = 3;
        s.oldest_in_flight_ms = Some(2_000.0);
        let v = judge(&parse("read_lat_max<50ms,read_lat_avg<3s,lat_min>100us").unwrap(), &s, &[]);
        assert!(!v.checks[0].passed, "stuck for longer than the bound");
        assert_eq!(v.checks[0].value, Some(2_000_000.0));
        assert!(v.checks[0].note.as_deref().unwrap().contains("oldest already for 2000 ms"));
        assert!(v.checks[1].passed, "a bound above the stall's age still holds");
        assert!(v.checks[2].passed, "a lower bound is not broken by a slow I/O");

        // One straggler among 100 I/Os cannot move a p90 (it is within the 10% above it), but lifts a mean of 0.9 ms to 20 ms;
        // among 10 completed it is more than the 1% above a p99.
        let v = judge(&parse("read_lat_p90<50ms,read_lat_avg<10ms").unwrap(), &s, &[]);
        assert!(v.checks[0].passed, "{:?}", v.checks[0]);
        assert!(!v.checks[1].passed, "2 s over 103 I/Os lifts the mean to 20 ms: {:?}", v.checks[1]);
        s.latency_us.read.count = 10;
        assert!(!judge(&parse("read_lat_p99<50ms").unwrap(), &s, &[]).passed);

        // Nothing in flight: the measured value decides, as before.
        s.oldest_in_flight_ms = None;
        s.in_flight_at_end = 0;
        assert!(judge(&parse("read_lat_max<50ms").unwrap(), &s, &[]).passed);
    }
}
