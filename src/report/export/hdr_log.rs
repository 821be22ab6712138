//! An HdrHistogram interval log (`--hdr-log FILE`): the V2 log format that
//! HdrHistogram's own tools (HistogramLogProcessor) and the `hdrhistogram`
//! Python package read, from the per-second histograms the result keeps.
//! One line per second of each point and per operation (`Tag=read`,
//! `Tag=write`, `Tag=trim`), the histogram in HdrHistogram's compressed V2
//! encoding, base64, exactly as stored: nothing is re-bucketed. Pure: result
//! in, text out.
//!
//! Timestamps are seconds from the `BaseTime` (which is also the
//! `StartTime`): the start of the first point's measured interval. A sweep's
//! points follow each other on that one time line (the gaps between them are
//! their ramps and set-up), each introduced by a comment naming it.

use std::fmt::Write;

use crate::results::histograms::{self, OPS};
use crate::results::model::RunResult;

/// Interval_Max is written in ms (the values are ns), as HdrHistogram's Java writer does by default.
const MAX_VALUE_DIVISOR: f64 = 1e6;

/// The log's text for every point of `result` that has per-second histograms.
pub fn render(result: &RunResult) -> String {
    let mut out = String::new();
    let kept: Vec<_> = result.points.iter().enumerate().filter_map(|(i, p)| Some((i, p.summary.histograms.as_ref()?))).collect();
    // A millisecond base, so that every timestamp below is exact to the 3 decimals written.
    let base = kept.first().map(|(_, h)| (h.start_unix_s * 1e3).floor() / 1e3).unwrap_or(0.0);
    let digits = kept.first().map(|(_, h)| h.significant_digits).unwrap_or(crate::metrics::recorder::SLICE_DIGITS);
    let _ = writeln!(
        out,
        "#lunmark {} run {}: one histogram per second of each point, per operation",
        result.lunmark_version,
        clean(&result.id)
    );
    let _ = writeln!(out, "#Values are latencies in nanoseconds; Interval_Max is in milliseconds.");
    let _ = writeln!(
        out,
        "#Precision: lunmark records each second in an HdrHistogram with {digits} significant digits (any value within {}%), \
         coarser than the {} digits of the point's own percentiles: percentiles from this log agree with lunmark's within {}%.",
        relative_pct(digits),
        3,
        relative_pct(digits)
    );
    let _ = writeln!(out, "#[Histogram log format version 1.3]");
    let _ = writeln!(out, "#[StartTime: {base:.3} (seconds since epoch), {}]", rfc3339(base));
    let _ = writeln!(out, "#[BaseTime: {base:.3} (seconds since epoch)]");
    let _ = writeln!(out, "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"");
    for (i, p) in result.points.iter().enumerate() {
        let label = crate::report::rows::params_text(p);
        let Some(h) = p.summary.histograms.as_ref() else {
            let _ = writeln!(out, "#Point {} of {} ({}): no per-second histograms kept", i + 1, result.points.len(), clean(&label));
            continue;
        };
        let offset = h.start_unix_s - base;
        let _ = writeln!(out, "#Point {} of {} ({}): measured from {offset:.3} s", i + 1, result.points.len(), clean(&label));
        for s in &h.seconds {
            for op in OPS {
                let Some(text) = s.of(op) else { continue };
                let max_ms = histograms::decode(text).map(|h| h.max_ns() as f64 / MAX_VALUE_DIVISOR).unwrap_or(0.0);
                let _ = writeln!(out, "Tag={op},{:.3},{:.3},{max_ms:.3},{text}", offset + s.t_s, s.duration_s);
            }
        }
    }
    out
}

/// The relative error of a histogram of `digits` significant digits, in percent (2 digits: 1%).
fn relative_pct(digits: u8) -> f64 {
    100.0 / 10f64.powi(digits as i32)
}

/// A comment's text on one line, without control characters (a label is user text).
fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

fn rfc3339(unix_s: f64) -> String {
    chrono::DateTime::from_timestamp_millis((unix_s * 1e3).round() as i64)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::IntervalSlice;
    use crate::results::histograms::of_rows;
    use crate::workload::Op;

    /// `n` reads (and `n / 2` writes) of 10 us in each of `secs` seconds.
    fn seconds(secs: u32, n: u64) -> Vec<(IntervalSlice, f64)> {
        (0..secs)
            .map(|i| {
                let mut s = IntervalSlice::new(i);
                (0..n).for_each(|_| s.record(Op::Read, 4096, 10_000));
                (0..n / 2).for_each(|_| s.record(Op::Write, 4096, 20_000));
                (s, 1.0)
            })
            .collect()
    }

    /// A sweep of three points, the last from an older lunmark: each point is
    /// introduced by a comment on one line (a newline in its params stays
    /// escaped), its seconds follow on the one time line from the first
    /// point's start, a line per operation, each payload holding that second's
    /// count; the point without histograms says so and has no line.
    #[test]
    fn a_sweeps_points_follow_on_one_time_line() {
        let mut r = crate::report::golden_result("result-a.json");
        let mut third = r.points[1].clone();
        third.summary.histograms = None;
        r.points.push(third);
        r.points[0].summary.histograms = Some(of_rows(&seconds(2, 100), 1_700_000_000.500_4));
        r.points[1].summary.histograms = Some(of_rows(&seconds(1, 40), 1_700_000_006.000_4));
        r.points[1].params.insert("note".into(), serde_json::json!("two\nlines"));
        let text = render(&r);
        assert!(text.contains("#[StartTime: 1700000000.500 (seconds since epoch), 2023-11-14T22:13:20.500Z]"), "{text}");
        assert!(text.contains("#[BaseTime: 1700000000.500 (seconds since epoch)]\n\"StartTimestamp\""), "{text}");
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("Tag=")).collect();
        let head: Vec<String> = lines.iter().map(|l| l.splitn(4, ',').take(3).collect::<Vec<_>>().join(",")).collect();
        assert_eq!(
            head,
            [
                "Tag=read,0.000,1.000",
                "Tag=write,0.000,1.000",
                "Tag=read,1.000,1.000",
                "Tag=write,1.000,1.000",
                "Tag=read,5.500,1.000",
                "Tag=write,5.500,1.000"
            ]
        );
        let count = |l: &str| crate::results::histograms::decode(l.rsplit(',').next().unwrap()).unwrap().count();
        assert_eq!(lines.iter().map(|l| count(l)).collect::<Vec<_>>(), [100, 50, 100, 50, 40, 20]);
        assert!(lines[0].contains(",0.010,HISTFAAA"), "Interval_Max in ms: {}", lines[0]);
        assert!(text.contains("#Point 2 of 3 (bs=64k note=two\\nlines): measured from 5.500 s\n"), "{text}");
        assert!(text.contains("#Point 3 of 3 (bs=64k): no per-second histograms kept\n"), "{text}");
    }
}
