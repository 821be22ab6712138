//! The latency histograms of a point's seconds, per operation, kept in the
//! result so that percentiles over any window can be recomputed afterwards
//! (`results percentiles`) and written as an HdrHistogram interval log
//! (`--hdr-log`). Each is lunmark's own one-second histogram (an HdrHistogram
//! of nanoseconds with 2 significant digits: values within 1%) in
//! HdrHistogram's compressed V2 encoding, base64: the very text of an interval
//! log line, so that no figure is re-bucketed on the way out.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::metrics::{IntervalSlice, LatencyHistogram};

/// The per-second histograms of one point.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondHistograms {
    /// When the point's measured interval began, Unix seconds (under MPI, the earliest rank's start).
    pub start_unix_s: f64,
    /// Significant digits of every histogram (2: any value within 1%).
    pub significant_digits: u8,
    /// One per row of the summary's `intervals`, with the same times.
    pub seconds: Vec<SecondHistogram>,
}

/// One second's latencies (ns) per operation; an operation with no I/O completed in it is absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SecondHistogram {
    pub t_s: f64,
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<String>,
}

/// The operations a second's histograms are kept for, as named in tags and flags.
pub const OPS: [&str; 3] = ["read", "write", "trim"];

impl SecondHistogram {
    /// The encoded histogram of `op` ("read", "write" or "trim").
    pub fn of(&self, op: &str) -> Option<&str> {
        match op {
            "read" => self.read.as_deref(),
            "write" => self.write.as_deref(),
            "trim" => self.trim.as_deref(),
            _ => None,
        }
        .filter(|s| !s.is_empty())
    }
}

/// A histogram as the text of an interval log line's last field.
pub fn encode(h: &LatencyHistogram) -> String {
    base64::engine::general_purpose::STANDARD.encode(h.to_v2_deflate())
}

/// The histogram behind `encode`'s text (its exact sum is not kept: the mean is not recomputed from it).
pub fn decode(text: &str) -> Result<LatencyHistogram, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("a stored per-second histogram is not base64: {e}"))?;
    LatencyHistogram::from_v2(&bytes, 0)
}

/// The histograms of the stored rows (`summarize::rows`), the measured interval having begun at `start_unix_s`.
pub fn of_rows(rows: &[(IntervalSlice, f64)], start_unix_s: f64) -> SecondHistograms {
    let enc = |h: &Option<LatencyHistogram>| h.as_ref().filter(|h| h.count() > 0).map(encode);
    SecondHistograms {
        start_unix_s,
        significant_digits: crate::metrics::recorder::SLICE_DIGITS,
        seconds: rows
            .iter()
            .map(|(s, len)| SecondHistogram {
                t_s: s.index as f64,
                duration_s: *len,
                read: enc(&s.read),
                write: enc(&s.write),
                trim: enc(&s.trim),
            })
            .collect(),
    }
}

/// What `results percentiles` asks for: seconds [from_s, to_s) of the measured
/// interval, one operation ("read", "write", "trim" or "all"), percentiles.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowAsk {
    pub from_s: f64,
    pub to_s: f64,
    pub op: String,
    pub percentiles: Vec<f64>,
    /// One point (1-based), or every point.
    pub point: Option<usize>,
}

/// The latencies of one point's seconds in a window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowFigures {
    /// 1-based.
    pub point: usize,
    pub params: String,
    /// False for a point whose seconds were not kept (a result of an older lunmark).
    pub kept: bool,
    /// The seconds the window holds: the start of the first, the end of the last.
    pub from_s: Option<f64>,
    pub to_s: Option<f64>,
    pub ios: u64,
    pub min_us: Option<f64>,
    pub max_us: Option<f64>,
    /// (percentile, latency us), in the order asked.
    pub percentiles_us: Vec<(f64, f64)>,
}

/// What `window` reads of one point.
pub struct PointSeconds<'a> {
    /// None for a point of a result made before they were kept.
    pub histograms: Option<&'a SecondHistograms>,
    /// The point's measured interval.
    pub duration_s: f64,
    /// What names the point ("bs=4k qd=8").
    pub params: String,
    /// The asked operation's latencies as the point's summary stores them
    /// (exact min and max), where it has them.
    pub exact: Option<ExactLatency>,
}

/// One operation's stored I/O count and exact min and max (us) over a point.
pub struct ExactLatency {
    pub count: u64,
    pub min_us: f64,
    pub max_us: f64,
}

/// Percentiles over a window of each point's seconds, from the kept histograms.
/// `params` names each point ("bs=4k qd=8"). Refused: an empty or reversed
/// window, one beyond every point's measured interval, an unknown operation,
/// a percentile outside (0, 100], a point the result does not have, and a
/// result that kept no per-second histograms.
pub fn window(id: &str, points: &[PointSeconds], ask: &WindowAsk) -> Result<Vec<WindowFigures>, String> {
    check_ask(points.len(), ask)?;
    let chosen: Vec<usize> = match ask.point {
        Some(n) => vec![n - 1],
        None => (0..points.len()).collect(),
    };
    if chosen.iter().all(|&i| points[i].histograms.is_none()) {
        return Err(format!(
            "per-second histograms are not kept for this result ({id}: made by a lunmark that did not keep them): \
             percentiles over a window cannot be recomputed; the whole point's are in `lunmark results show {id}`"
        ));
    }
    let longest = chosen.iter().map(|&i| points[i].duration_s).fold(0.0, f64::max);
    let end = longest.ceil();
    if ask.from_s >= longest {
        return Err(format!("--from {}: beyond the run, whose points measured {longest:.1} s at most (seconds 0 to {end})", ask.from_s));
    }
    if ask.to_s > end {
        return Err(format!("--to {}: beyond the run, whose points measured {longest:.1} s at most (seconds 0 to {end})", ask.to_s));
    }
    let rows: Vec<WindowFigures> = chosen.into_iter().map(|i| point_window(i, &points[i], ask)).collect::<Result<_, _>>()?;
    if rows.iter().all(|r| r.from_s.is_none()) {
        // Seconds start at 0, 1, 2, ...: [2.5, 3) holds none of them.
        return Err(format!(
            "--from {} --to {}: no measured second starts in this window (each starts at a whole second, 0 to {}): widen it",
            ask.from_s,
            ask.to_s,
            end - 1.0
        ));
    }
    Ok(rows)
}

fn check_ask(points: usize, ask: &WindowAsk) -> Result<(), String> {
    if ask.op != "all" && !OPS.contains(&ask.op.as_str()) {
        return Err(format!("--op {}: choose read, write, trim or all", ask.op));
    }
    if ask.from_s.is_nan() || ask.from_s < 0.0 || !ask.to_s.is_finite() {
        return Err(format!("--from {} --to {}: give seconds of the measured interval, 0 or more", ask.from_s, ask.to_s));
    }
    if ask.from_s >= ask.to_s {
        return Err(format!("--from {} --to {}: the window is empty; --from must be below --to", ask.from_s, ask.to_s));
    }
    if let Some(p) = ask.percentiles.iter().find(|p| !(**p > 0.0 && **p <= 100.0)) {
        return Err(format!("--pct {p}: a percentile is above 0 and at most 100 (for example 50,99,99.9)"));
    }
    match ask.point {
        Some(n) if n == 0 || n > points => Err(format!("--point {n}: the result has {points} point(s), numbered from 1")),
        _ => Ok(()),
    }
}

fn point_window(i: usize, p: &PointSeconds, ask: &WindowAsk) -> Result<WindowFigures, String> {
    let mut out = WindowFigures {
        point: i + 1,
        params: p.params.clone(),
        kept: false,
        from_s: None,
        to_s: None,
        ios: 0,
        min_us: None,
        max_us: None,
        percentiles_us: vec![],
    };
    let Some(kept) = p.histograms else { return Ok(out) };
    out.kept = true;
    let mut merged = LatencyHistogram::with_digits(kept.significant_digits);
    for s in kept.seconds.iter().filter(|s| s.t_s >= ask.from_s && s.t_s < ask.to_s) {
        out.from_s.get_or_insert(s.t_s);
        out.to_s = Some(s.t_s + s.duration_s);
        for op in OPS.iter().filter(|op| ask.op == "all" || ask.op == **op) {
            if let Some(text) = s.of(op) {
                merged.add(&decode(text)?);
            }
        }
    }
    out.ios = merged.count();
    if out.ios > 0 {
        let us = |ns: u64| ns as f64 / 1e3;
        // A window of every second of the point has the exact extremes the summary
        // stores; a narrower one has its histograms' (within 1%).
        let whole = out.from_s == kept.seconds.first().map(|s| s.t_s) && out.to_s == kept.seconds.last().map(|s| s.t_s + s.duration_s);
        let exact = p.exact.as_ref().filter(|l| whole && l.count == out.ios);
        out.min_us = Some(exact.map_or(us(merged.min_ns()), |l| l.min_us));
        out.max_us = Some(exact.map_or(us(merged.max_ns()), |l| l.max_us));
        // p100 is the max itself: a histogram's quantile is the middle of its bucket, a little under it.
        let at = |p: f64| if p >= 100.0 { out.max_us.unwrap_or_default() } else { us(merged.quantile_ns(p / 100.0)) };
        out.percentiles_us = ask.percentiles.iter().map(|&p| (p, at(p))).collect();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    /// A second of reads and writes: each operation's histogram survives its
    /// text exactly (counts, percentiles); an operation not done is absent.
    #[test]
    fn each_operations_second_survives_its_text() {
        let mut s = IntervalSlice::new(3);
        for i in 0..1000u64 {
            s.record(Op::Read, 4096, 10_000 + i * 37);
        }
        for i in 0..10u64 {
            s.record(Op::Write, 4096, 2_000_000 + i);
        }
        let h = of_rows(&[(s.clone(), 0.5)], 1_700_000_000.25);
        assert_eq!((h.significant_digits, h.seconds.len(), h.start_unix_s), (2, 1, 1_700_000_000.25));
        let row = &h.seconds[0];
        assert_eq!((row.t_s, row.duration_s), (3.0, 0.5));
        assert!(row.trim.is_none() && row.of("trim").is_none());
        assert!(row.of("read").unwrap().starts_with("HISTFAAA"), "{:?}", row.read);
        let read = decode(row.of("read").unwrap()).unwrap();
        let write = decode(row.of("write").unwrap()).unwrap();
        assert_eq!((read.count(), write.count()), (1000, 10));
        let orig = s.read.as_ref().unwrap();
        for q in [0.5, 0.99, 1.0] {
            assert_eq!(read.quantile_ns(q), orig.quantile_ns(q));
        }
        assert!(decode("not base64!").unwrap_err().contains("not base64"));
    }
}
