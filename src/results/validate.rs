//! Checks a result that comes from outside (`lunmark results import`) before
//! it joins the store: an id as lunmark makes them, a schema this version
//! reads, and figures that a run could have measured. A result edited by hand
//! or damaged in transit is refused with what is wrong and where, instead of
//! breaking `compare` and `report` later.

use thiserror::Error;

use super::model::{LatencyStats, RunResult, Summary, SCHEMA_VERSION};

/// Larger than any figure a real run produces (IOPS, MB/s, µs, W): a value
/// beyond it is damage, not a measurement.
pub const ABSURD: f64 = 1e15;

#[derive(Debug, Error, PartialEq)]
pub enum InvalidResult {
    #[error("id '{id}' is not 12 hex digits (lunmark's ids look like d3db0fd53ad4)")]
    BadId { id: String },
    #[error("it was written by a newer lunmark (schema_version {found}; this lunmark reads up to {supported}): import it with that version, or upgrade lunmark")]
    NewerSchema { found: u32, supported: u32 },
    #[error("schema_version {found} is not one lunmark ever wrote (versions start at 1)")]
    UnknownSchema { found: u32 },
    #[error("{field} is {value}, which no run can measure{why}")]
    Absurd { field: String, value: String, why: &'static str },
    #[error("{field}: the percentiles are out of order ({detail})")]
    PercentilesOutOfOrder { field: String, detail: String },
    /// A text longer than lunmark stores (the message names it and the limit).
    #[error("{0}")]
    TooLong(String),
    /// Figures that no run could have measured together.
    #[error("{field} is {value}, {why}")]
    Inconsistent { field: String, value: String, why: String },
}

/// How far a point's IOPS may lie from its I/Os over its measured time: the
/// two are one division apart when lunmark writes them (also under MPI, where
/// both are the job's over its span), so anything beyond rounding is an edit.
const IOPS_TOLERANCE: f64 = 0.01;

/// The earliest start a result can have: lunmark did not exist before.
const EARLIEST_YEAR: i32 = 2000;

/// Every check, in order; the first problem found is returned.
pub fn check(r: &RunResult) -> Result<(), InvalidResult> {
    if !valid_id(&r.id) {
        return Err(InvalidResult::BadId { id: r.id.clone() });
    }
    if r.schema_version > SCHEMA_VERSION {
        return Err(InvalidResult::NewerSchema { found: r.schema_version, supported: SCHEMA_VERSION });
    }
    if r.schema_version == 0 {
        return Err(InvalidResult::UnknownSchema { found: 0 });
    }
    texts(r)?;
    times(r)?;
    if r.status == super::model::Status::Completed && r.points.is_empty() {
        return Err(InvalidResult::Inconsistent {
            field: "points".into(),
            value: "empty".into(),
            why: "but status is completed: a completed run measured at least one point".into(),
        });
    }
    for (i, p) in r.points.iter().enumerate() {
        rates(&p.summary, &format!("points[{i}].summary"))?;
    }
    // Whatever fields later versions add: no number anywhere may be
    // non-finite or beyond what any run measures.
    let value = serde_json::to_value(r).expect("a result serialises");
    all_numbers_sane(&value, "result")?;
    for (i, p) in r.points.iter().enumerate() {
        let at = format!("points[{i}].summary");
        summary(&p.summary, &at)?;
        for (gi, g) in p.groups.iter().enumerate() {
            let at = format!("points[{i}].groups[{gi}]");
            for (name, v) in [("iops", g.iops), ("read_iops", g.read_iops), ("write_iops", g.write_iops), ("mbps", g.mbps)] {
                non_negative(&format!("{at}.{name}"), v)?;
            }
            latency_by_op(&g.latency_us, &format!("{at}.latency_us"))?;
        }
        per_worker(p, &format!("points[{i}]"))?;
    }
    Ok(())
}

/// The label and names are bounded as a run bounds them.
fn texts(r: &RunResult) -> Result<(), InvalidResult> {
    use crate::units::{check_length, MAX_LABEL_CHARS, MAX_NAME_CHARS};
    let long = InvalidResult::TooLong;
    check_length("label", r.label.as_deref().unwrap_or_default(), MAX_LABEL_CHARS).map_err(long)?;
    check_length("profile", r.profile.as_deref().unwrap_or_default(), MAX_NAME_CHARS).map_err(long)?;
    Ok(())
}

/// `started_at` and `finished_at` are RFC 3339 times, the start after 2000
/// and not in the future (a day's grace for clocks), the end not before it.
fn times(r: &RunResult) -> Result<(), InvalidResult> {
    use chrono::{DateTime, Datelike, Utc};
    let parse = |field: &str, text: &str| {
        DateTime::parse_from_rfc3339(text).map(|t| t.with_timezone(&Utc)).map_err(|e| InvalidResult::Inconsistent {
            field: field.into(),
            value: format!("'{text}'"),
            why: format!("not an RFC 3339 date-time such as 2026-11-23T14:00:00Z ({e})"),
        })
    };
    let start = parse("started_at", &r.started_at)?;
    let latest = Utc::now() + chrono::Duration::days(1);
    if start.year() < EARLIEST_YEAR || start > latest {
        return Err(InvalidResult::Inconsistent {
            field: "started_at".into(),
            value: r.started_at.clone(),
            why: format!("which no run started at: it must lie between {EARLIEST_YEAR}-01-01 and now"),
        });
    }
    if let Some(end) = &r.finished_at {
        if parse("finished_at", end)? < start {
            return Err(InvalidResult::Inconsistent {
                field: "finished_at".into(),
                value: end.clone(),
                why: format!("before started_at {}: a run ends after it starts", r.started_at),
            });
        }
    }
    Ok(())
}

/// A point's IOPS are its I/Os over its measured time: none without time,
/// and within `IOPS_TOLERANCE` of the count's rate.
fn rates(s: &Summary, at: &str) -> Result<(), InvalidResult> {
    let ios = s.ios_read + s.ios_written + s.ios_trimmed;
    if s.duration_s <= 0.0 && (ios > 0 || s.iops > 0.0) {
        return Err(InvalidResult::Inconsistent {
            field: format!("{at}.duration_s"),
            value: s.duration_s.to_string(),
            why: format!("but the point has {ios} I/Os at {} IOPS: I/Os take measured time", s.iops),
        });
    }
    if s.duration_s <= 0.0 {
        return Ok(());
    }
    let expected = ios as f64 / s.duration_s;
    if (s.iops - expected).abs() > IOPS_TOLERANCE * expected.max(1.0) {
        return Err(InvalidResult::Inconsistent {
            field: format!("{at}.iops"),
            value: s.iops.to_string(),
            why: format!(
                "but its {ios} I/Os (ios_read + ios_written + ios_trimmed) over duration_s {} make {expected:.1} IOPS",
                s.duration_s
            ),
        });
    }
    Ok(())
}

/// Worker and target rows, the queue depth held and the pinned CPUs' figures:
/// rates, latencies and depths are never negative, shares are percentages.
fn per_worker(p: &super::model::Point, at: &str) -> Result<(), InvalidResult> {
    for (k, w) in p.workers.iter().enumerate() {
        let at = format!("{at}.workers[{k}]");
        for (name, v) in [
            ("iops", w.iops),
            ("mbps", w.mbps),
            ("latency_mean_us", w.latency_mean_us),
            ("latency_p99_us", w.latency_p99_us),
            ("qd_achieved", w.qd_achieved.unwrap_or(0.0)),
        ] {
            non_negative(&format!("{at}.{name}"), v)?;
        }
    }
    for (k, t) in p.targets.iter().enumerate() {
        let at = format!("{at}.targets[{k}]");
        for (name, v) in [("iops", t.iops), ("mbps", t.mbps), ("latency_mean_us", t.latency_mean_us), ("latency_p99_us", t.latency_p99_us)]
        {
            non_negative(&format!("{at}.{name}"), v)?;
        }
    }
    if let Some(q) = &p.summary.queue_depth {
        non_negative(&format!("{at}.summary.queue_depth.achieved"), q.achieved)?;
    }
    if let Some(c) = &p.summary.cpu.pinned {
        percent(&format!("{at}.summary.cpu.pinned.utilization_pct"), c.utilization_pct)?;
        for (k, v) in c.per_cpu_pct.iter().enumerate() {
            percent(&format!("{at}.summary.cpu.pinned.per_cpu_pct[{k}]"), *v)?;
        }
        non_negative(&format!("{at}.summary.cpu.pinned.busy_cpu_s"), c.busy_cpu_s)?;
    }
    Ok(())
}

/// An id as `results::host::new_id` makes them: 12 lowercase hex digits.
pub fn valid_id(id: &str) -> bool {
    id.len() == 12 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn summary(s: &Summary, at: &str) -> Result<(), InvalidResult> {
    for (name, v) in [
        ("iops", s.iops),
        ("read_iops", s.read_iops),
        ("write_iops", s.write_iops),
        ("mbps", s.mbps),
        ("read_mbps", s.read_mbps),
        ("write_mbps", s.write_mbps),
        ("mibps", s.mibps),
        ("read_mibps", s.read_mibps),
        ("write_mibps", s.write_mibps),
        ("duration_s", s.duration_s),
        ("cpu.busy_cpu_s", s.cpu.busy_cpu_s),
        ("cpu.process_cpu_s", s.cpu.process_cpu_s),
    ] {
        non_negative(&format!("{at}.{name}"), v)?;
    }
    for (name, v) in [("cpu.utilization_pct", s.cpu.utilization_pct), ("cpu.process_pct", s.cpu.process_pct)] {
        percent(&format!("{at}.{name}"), v)?;
    }
    for (c, v) in s.cpu.per_core_pct.iter().enumerate() {
        percent(&format!("{at}.cpu.per_core_pct[{c}]"), *v)?;
    }
    latency_by_op(&s.latency_us, &format!("{at}.latency_us"))?;
    if let Some(service) = &s.service_latency_us {
        latency_by_op(service, &format!("{at}.service_latency_us"))?;
    }
    for (k, iv) in s.intervals.iter().enumerate() {
        let at = format!("{at}.intervals[{k}]");
        for (name, v) in [
            ("t_s", iv.t_s),
            ("duration_s", iv.duration_s),
            ("iops", iv.iops),
            ("read_iops", iv.read_iops),
            ("write_iops", iv.write_iops),
            ("mbps", iv.mbps),
            ("lat_mean_us", iv.lat_mean_us),
            ("lat_p99_us", iv.lat_p99_us),
        ] {
            non_negative(&format!("{at}.{name}"), v)?;
        }
    }
    if let Some(h) = &s.histograms {
        second_histograms(h, &s.intervals, &format!("{at}.histograms"))?;
    }
    Ok(())
}

/// Each kept second's histograms decode and hold the I/Os of the interval of
/// that second: `results percentiles` and `--hdr-log` would otherwise tell
/// figures the rest of the result contradicts.
fn second_histograms(h: &super::histograms::SecondHistograms, intervals: &[super::model::Interval], at: &str) -> Result<(), InvalidResult> {
    for (k, sec) in h.seconds.iter().enumerate() {
        let row = intervals.iter().find(|i| i.t_s == sec.t_s);
        for (op, rate) in [("read", row.map(|i| i.read_iops)), ("write", row.map(|i| i.write_iops)), ("trim", None)] {
            let field = format!("{at}.seconds[{k}].{op}");
            let count = match sec.of(op) {
                Some(text) => super::histograms::decode(text)
                    .map_err(|e| InvalidResult::Inconsistent { field: field.clone(), value: "not a histogram".into(), why: e })?
                    .count(),
                None => 0,
            };
            let Some((rate, row)) = rate.zip(row) else { continue };
            let ios = (rate * row.duration_s).round() as u64;
            if count != ios {
                return Err(InvalidResult::Inconsistent {
                    field,
                    value: format!("a histogram of {count} I/Os"),
                    why: format!("but the interval of second {} completed {ios} {op}s", sec.t_s),
                });
            }
        }
    }
    Ok(())
}

fn latency_by_op(l: &super::model::LatencyByOp, at: &str) -> Result<(), InvalidResult> {
    for (op, stats) in [("read", &l.read), ("write", &l.write), ("all", &l.all)] {
        latency(stats, &format!("{at}.{op}"))?;
    }
    Ok(())
}

/// Latency figures are non-negative and ordered: min <= p50 <= ... <= max.
/// Percentiles are bucket midpoints within 0.1% (metrics/histogram.rs), so
/// neighbours may differ by that much in either direction.
fn latency(l: &LatencyStats, at: &str) -> Result<(), InvalidResult> {
    let ordered =
        [("min", l.min), ("p50", l.p50), ("p90", l.p90), ("p99", l.p99), ("p99_9", l.p99_9), ("p99_99", l.p99_99), ("max", l.max)];
    for (name, v) in ordered.iter().chain([("mean", l.mean)].iter()) {
        non_negative(&format!("{at}.{name}"), *v)?;
    }
    if l.count == 0 {
        return Ok(());
    }
    let slack = 1.0 + 2.0 * crate::metrics::histogram::RELATIVE_ERROR;
    for w in ordered.windows(2) {
        let ((a, va), (b, vb)) = (w[0], w[1]);
        if va > vb * slack {
            return Err(InvalidResult::PercentilesOutOfOrder { field: at.to_string(), detail: format!("{a} {va} is above {b} {vb}") });
        }
    }
    if l.mean > l.max * slack || l.mean * slack < l.min {
        return Err(InvalidResult::PercentilesOutOfOrder {
            field: at.to_string(),
            detail: format!("the mean {} lies outside min {} .. max {}", l.mean, l.min, l.max),
        });
    }
    Ok(())
}

fn non_negative(field: &str, v: f64) -> Result<(), InvalidResult> {
    if v.is_nan() || v < 0.0 {
        return Err(InvalidResult::Absurd { field: field.to_string(), value: v.to_string(), why: " (it cannot be negative)" });
    }
    Ok(())
}

fn percent(field: &str, v: f64) -> Result<(), InvalidResult> {
    non_negative(field, v)?;
    // A little over 100 is measurement jitter between /proc readings.
    if v > 101.0 {
        return Err(InvalidResult::Absurd {
            field: field.to_string(),
            value: v.to_string(),
            why: " (a share of all cores is at most 100%)",
        });
    }
    Ok(())
}

fn all_numbers_sane(v: &serde_json::Value, at: &str) -> Result<(), InvalidResult> {
    match v {
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() && x.abs() <= ABSURD => Ok(()),
            // Counters (bytes, I/Os) are integers and may be large.
            _ if n.is_u64() || n.is_i64() => Ok(()),
            _ => Err(InvalidResult::Absurd { field: at.to_string(), value: n.to_string(), why: " (beyond 10^15)" }),
        },
        serde_json::Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| all_numbers_sane(item, &format!("{at}[{i}]"))),
        serde_json::Value::Object(map) => map.iter().try_for_each(|(k, item)| all_numbers_sane(item, &format!("{at}.{k}"))),
        _ => Ok(()),
    }
}

/// The results of an import file: one result (as `--json` writes it) or an
/// array of them (as `results export` writes several). A result that does not
/// parse is refused naming the JSON path of the field at fault
/// (`[1].points[0].summary.iops`), not only a line and column.
pub fn parse_import(text: &str) -> Result<Vec<RunResult>, String> {
    let many = text.trim_start().starts_with('[');
    let parsed = if many { serde_json::from_str::<Vec<RunResult>>(text) } else { serde_json::from_str::<RunResult>(text).map(|r| vec![r]) };
    parsed.map_err(|e| {
        let (line, column) = (e.line(), e.column());
        let text_of = e.to_string();
        // serde's words without its position, which the path replaces.
        let what = text_of.split(" at line ").next().unwrap_or(&text_of).to_string();
        let missing = what.strip_prefix("missing field `").and_then(|f| f.strip_suffix('`'));
        // A missing field is found at its object's closing brace: the path is that object's.
        let offset = byte_offset(text, line, column).saturating_sub(usize::from(missing.is_some()));
        let mut path = path_at(text, offset, missing.is_none());
        if let Some(field) = missing {
            path = if path.is_empty() { field.to_string() } else { format!("{path}.{field}") };
        }
        match path.is_empty() {
            true => format!("{what} (line {line}, column {column})"),
            false => format!("{path}: {what} (line {line}, column {column})"),
        }
    })
}

fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (start + column).min(text.len())
}

/// The JSON path of the value being read at byte `offset` of `text`: the keys
/// and indices of the objects and arrays open there, with the innermost
/// object's last key or without it (the path of the object itself). One pass,
/// no parsing of values: strings are skipped with their escapes.
fn path_at(text: &str, offset: usize, innermost_key: bool) -> String {
    enum Frame {
        Object { key: Option<String>, wants_key: bool },
        Array(usize),
    }
    let bytes = &text.as_bytes()[..offset.min(text.len())];
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, wants_key }) = stack.last_mut() {
                    if *wants_key {
                        *key = Some(String::from_utf8_lossy(&bytes[start..i.min(bytes.len())]).into_owned());
                        *wants_key = false;
                    }
                }
            }
            b'{' => stack.push(Frame::Object { key: None, wants_key: true }),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array(n)) => *n += 1,
                Some(Frame::Object { wants_key, .. }) => *wants_key = true,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    let last = stack.len().saturating_sub(1);
    for (depth, f) in stack.iter().enumerate() {
        match f {
            Frame::Array(n) => path += &format!("[{n}]"),
            Frame::Object { key: Some(k), wants_key: false } if depth < last || innermost_key => {
                path += &if path.is_empty() { k.clone() } else { format!(".{k}") };
            }
            Frame::Object { .. } => {}
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept second whose histogram does not hold its interval's reads, or
    /// is no histogram at all, is named; the true one passes.
    #[test]
    fn kept_second_histograms_must_hold_their_intervals_ios() {
        let mut slice = crate::metrics::IntervalSlice::new(0);
        (0..30).for_each(|_| slice.record(crate::workload::Op::Read, 4096, 5_000));
        let h = super::super::histograms::of_rows(&[(slice, 1.0)], 0.0);
        let mut rows = vec![super::super::model::Interval { t_s: 0.0, duration_s: 1.0, read_iops: 30.0, ..Default::default() }];
        assert!(second_histograms(&h, &rows, "h").is_ok());
        rows[0].read_iops = 31.0;
        let e = second_histograms(&h, &rows, "h").unwrap_err().to_string();
        assert!(e.contains("h.seconds[0].read") && e.contains("30 I/Os") && e.contains("31 reads"), "{e}");
        let mut bad = h.clone();
        bad.seconds[0].read = Some("HISTnot".into());
        assert!(second_histograms(&bad, &rows, "h").unwrap_err().to_string().contains("not a histogram"));
    }

    #[test]
    fn ids_must_be_twelve_hex_digits() {
        assert!(valid_id("d3db0fd53ad4") && valid_id(&crate::results::host::new_id()));
        for bad in ["D3DB0FD53AD4", "../../etc/pw", "d3db0fd53ad", "d3db0fd53ad4x", "", "d3db0fd53adg"] {
            assert!(!valid_id(bad), "{bad}");
        }
    }

    #[test]
    fn out_of_order_percentiles_are_found_within_the_histogram_error() {
        let mut l = LatencyStats {
            count: 10,
            mean: 50.0,
            min: 10.0,
            p50: 40.0,
            p90: 80.0,
            p99: 90.0,
            p99_9: 95.0,
            p99_99: 99.0,
            max: 100.0,
            ..Default::default()
        };
        assert!(latency(&l, "x").is_ok());
        l.p90 = 90.0 * 1.0005;
        assert!(latency(&l, "x").is_ok(), "within the 0.1% of bucket midpoints");
        l.p50 = 95.0;
        let e = latency(&l, "x").unwrap_err().to_string();
        assert!(e.contains("p50 95 is above p90 90"), "{e}");
        l.p50 = -1.0;
        assert!(latency(&l, "x").unwrap_err().to_string().contains("cannot be negative"));
    }

    #[test]
    fn a_negative_worker_or_target_figure_is_named() {
        let mut r = crate::report::golden_result("result-a.json");
        r.points[0].workers = vec![crate::results::per_worker::WorkerFigures { iops: 10.0, qd_achieved: Some(4.0), ..Default::default() }];
        assert!(check(&r).is_ok());
        r.points[0].targets = vec![crate::results::per_worker::TargetFigures { latency_p99_us: -3.0, ..Default::default() }];
        let e = check(&r).unwrap_err().to_string();
        assert!(e.contains("points[0].targets[0].latency_p99_us"), "{e}");
    }
}
