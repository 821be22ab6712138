//! Latency histogram: an HDR histogram of nanoseconds with 3 significant digits.
//! Error bound: any reported percentile lies within 0.1% of the exact value of
//! the recorded sample at that rank (relative), far inside the 1% we promise.
//! Histograms merge by addition, so each worker keeps its own and they are
//! summed once at the end: no shared state on the I/O path.

use hdrhistogram::Histogram;

/// Largest latency recorded exactly: one hour. Longer ones are clamped to it.
const MAX_NS: u64 = 3_600_000_000_000;

/// The relative error bound of reported percentiles.
pub const RELATIVE_ERROR: f64 = 0.001;

#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    sum_ns: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::with_digits(3)
    }
}

impl LatencyHistogram {
    /// A histogram with the given significant digits (2 for per-second slices).
    pub fn with_digits(digits: u8) -> Self {
        LatencyHistogram { h: Histogram::new_with_bounds(1, MAX_NS, digits).expect("valid histogram bounds"), sum_ns: 0 }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(1, MAX_NS);
        self.h.saturating_record(v);
        self.sum_ns += v as u128;
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        self.h.add(&other.h).expect("histograms with the same bounds merge");
        self.sum_ns += other.sum_ns;
    }

    pub fn reset(&mut self) {
        self.h.reset();
        self.sum_ns = 0;
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Exact mean (kept as a running sum, not from buckets).
    pub fn mean_ns(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count() as f64
        }
    }

    /// The value at quantile `q` (0..=1), within RELATIVE_ERROR.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        // hdrhistogram returns the top of the bucket; the midpoint halves the error.
        let v = self.h.value_at_quantile(q);
        self.h.median_equivalent(v)
    }

    /// Bytes a histogram of `digits` significant digits holds (its counts), for
    /// the memory estimate made before a run.
    /// Computed once per number of digits: building a histogram to count its
    /// buckets allocates all of them, and a plan of 100 K points asks per point.
    pub fn footprint_bytes(digits: u8) -> u64 {
        static KNOWN: std::sync::Mutex<Vec<(u8, u64)>> = std::sync::Mutex::new(Vec::new());
        let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, bytes)) = known.iter().find(|(d, _)| *d == digits) {
            return bytes;
        }
        let h = Histogram::<u64>::new_with_bounds(1, MAX_NS, digits).expect("valid histogram bounds");
        let bytes = (h.distinct_values() * std::mem::size_of::<u64>() + std::mem::size_of::<LatencyHistogram>()) as u64;
        known.push((digits, bytes));
        bytes
    }

    /// The histogram in HdrHistogram's V2 encoding, and the exact sum of what
    /// it recorded: enough to rebuild it in another process (MPI ranks send
    /// their histograms to rank 0 this way, to be merged exactly).
    pub fn to_v2(&self) -> (Vec<u8>, u128) {
        let mut bytes = Vec::new();
        use hdrhistogram::serialization::Serializer;
        hdrhistogram::serialization::V2Serializer::new().serialize(&self.h, &mut bytes).expect("a histogram serializes into memory");
        (bytes, self.sum_ns)
    }

    /// The histogram in HdrHistogram's compressed V2 encoding (zlib-deflated),
    /// the payload of an interval log line once in base64 (`--hdr-log`).
    pub fn to_v2_deflate(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        use hdrhistogram::serialization::Serializer;
        hdrhistogram::serialization::V2DeflateSerializer::new().serialize(&self.h, &mut bytes).expect("a histogram serializes into memory");
        bytes
    }

    /// Significant digits of the histogram's buckets.
    pub fn digits(&self) -> u8 {
        self.h.sigfig()
    }

    /// Rebuilds a histogram from `to_v2`'s (or `to_v2_deflate`'s) output (with this build's bounds, so it merges with local ones).
    pub fn from_v2(bytes: &[u8], sum_ns: u128) -> Result<LatencyHistogram, String> {
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut std::io::Cursor::new(bytes))
            .map_err(|e| format!("a latency histogram could not be decoded: {e:?}"))?;
        let mut out = LatencyHistogram::with_digits(h.sigfig());
        out.h.add(&h).map_err(|e| format!("a latency histogram does not fit this build's bounds: {e:?}"))?;
        out.sum_ns = sum_ns;
        Ok(out)
    }

    /// Standard deviation of the recorded values (population), from the
    /// buckets: each value within RELATIVE_ERROR.
    pub fn stddev_ns(&self) -> f64 {
        if self.count() == 0 {
            return 0.0;
        }
        self.h.stdev()
    }

    /// Counts of the recorded values below each bound (ns) and from the
    /// previous bound: `counts[i]` holds values in [bounds[i-1], bounds[i]),
    /// the last entry those at or above the last bound. A value counts where
    /// its bucket's middle falls (within RELATIVE_ERROR).
    pub fn counts_below(&self, bounds: &[u64]) -> Vec<u64> {
        let mut counts = vec![0u64; bounds.len() + 1];
        for v in self.h.iter_recorded() {
            let x = self.h.median_equivalent(v.value_iterated_to());
            counts[bounds.partition_point(|b| *b <= x)] += v.count_at_value();
        }
        counts
    }

    pub fn max_ns(&self) -> u64 {
        self.h.max()
    }

    pub fn min_ns(&self) -> u64 {
        self.h.min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's latency ranges: [1, 2) µs is its latency_us "2", [10, 20) µs its "20",
    /// 2 s and more its latency_ms ">=2000".
    #[test]
    fn counts_fall_in_fios_latency_ranges() {
        let mut h = LatencyHistogram::default();
        for v in [1, 1_500, 15_000, 19_990, 3_000_000_000] {
            h.record(v);
        }
        let c = h.counts_below(&crate::results::model::LATENCY_BUCKET_BOUNDS_NS);
        assert_eq!(c.len(), 32);
        assert_eq!((c[0], c[10], c[13], c[31]), (1, 1, 2, 1), "{c:?}");
        assert_eq!(c.iter().sum::<u64>(), 5);
        assert!((h.stddev_ns() - 1.2e9).abs() < 1.2e9 * 0.001, "{}", h.stddev_ns());
    }

    #[test]
    fn a_histogram_survives_its_v2_encoding_exactly() {
        let mut h = LatencyHistogram::default();
        for v in [1_000u64, 20_000, 20_001, 3_000_000, 77] {
            h.record(v);
        }
        let (bytes, sum) = h.to_v2();
        let back = LatencyHistogram::from_v2(&bytes, sum).unwrap();
        assert_eq!(back.count(), 5);
        assert_eq!(back.mean_ns(), h.mean_ns());
        for q in [0.1, 0.5, 0.99, 1.0] {
            assert_eq!(back.quantile_ns(q), h.quantile_ns(q));
        }
        let mut merged = back.clone();
        merged.add(&h);
        assert_eq!(merged.count(), 10);
    }
    use crate::workload::rng::Rng;

    /// Percentiles of a skewed known sample against exact order statistics.
    #[test]
    fn percentiles_are_within_the_stated_bound() {
        let mut rng = Rng::new(9);
        let mut sample: Vec<u64> = (0..200_000)
            .map(|_| {
                // A long-tailed mix: mostly 20-200 us, a tail up to 50 ms.
                let base = 20_000 + rng.below(180_000);
                if rng.below(100) == 0 {
                    base * (1 + rng.below(250))
                } else {
                    base
                }
            })
            .collect();
        let mut h = LatencyHistogram::default();
        let (mut a, mut b) = (LatencyHistogram::default(), LatencyHistogram::default());
        for (i, &v) in sample.iter().enumerate() {
            h.record(v);
            if i % 2 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
        }
        a.add(&b);
        sample.sort_unstable();
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
            let exact = sample[((q * sample.len() as f64).ceil() as usize).saturating_sub(1)] as f64;
            for hist in [&h, &a] {
                let got = hist.quantile_ns(q) as f64;
                assert!((got - exact).abs() / exact <= RELATIVE_ERROR, "q={q} exact={exact} got={got}");
            }
        }
        let exact_mean = sample.iter().map(|&v| v as f64).sum::<f64>() / sample.len() as f64;
        assert!((h.mean_ns() - exact_mean).abs() < 1e-6 * exact_mean);
        assert_eq!(a.count(), 200_000);
        assert!((h.max_ns() as f64 - *sample.last().unwrap() as f64).abs() / (*sample.last().unwrap() as f64) <= RELATIVE_ERROR);
    }
}
