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
}

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

#[cfg(test)]
mod tests {
    use super::*;

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
