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
