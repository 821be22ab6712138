//! What a cache of each size would do to latency and IOPS, from a hit ratio and
//! two measured latencies: a hit costs the cache's latency, a miss the backing
//! store's, so the mean is h·hit + (1 − h)·miss; with a fixed number of I/Os
//! outstanding, Little's law gives IOPS = outstanding / mean latency. A first
//! order model: it assumes hits and misses keep their measured latencies at the
//! new mix (no queueing change at the backing store). Pure: numbers in, rows out.

use serde::Serialize;
use thiserror::Error;

/// The measured inputs of the prediction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LatencyModel {
    /// Mean latency of an I/O served by the cache, µs.
    pub hit_us: f64,
    /// Mean latency of an I/O served by the backing store, µs.
    pub miss_us: f64,
    /// I/Os outstanding in total (workers × queue depth).
    pub outstanding: u32,
}

#[derive(Debug, Error, PartialEq)]
pub enum ModelError {
    #[error("--hit-us {0}: the hit latency must be a number of µs above 0, for example 100")]
    BadHit(f64),
    #[error("--miss-us {0}: the miss latency must be a number of µs above 0, for example 4700")]
    BadMiss(f64),
    #[error("--outstanding 0: give the number of I/Os in flight in total (workers × queue depth), at least 1")]
    NoOutstanding,
}

impl LatencyModel {
    pub fn new(hit_us: f64, miss_us: f64, outstanding: u32) -> Result<Self, ModelError> {
        if !(hit_us.is_finite() && hit_us > 0.0) {
            return Err(ModelError::BadHit(hit_us));
        }
        if !(miss_us.is_finite() && miss_us > 0.0) {
            return Err(ModelError::BadMiss(miss_us));
        }
        if outstanding == 0 {
            return Err(ModelError::NoOutstanding);
        }
        Ok(LatencyModel { hit_us, miss_us, outstanding })
    }

    /// Mean latency, µs, at hit ratio `h` (0..=1).
    pub fn latency_us(&self, h: f64) -> f64 {
        let h = h.clamp(0.0, 1.0);
        h * self.hit_us + (1.0 - h) * self.miss_us
    }

    /// IOPS at hit ratio `h` by Little's law.
    pub fn iops(&self, h: f64) -> f64 {
        self.outstanding as f64 / (self.latency_us(h) * 1e-6)
    }
}

/// One point of a hit-ratio curve to predict from: a cache size and the share
/// of I/Os a cache of that size serves. (What the user asks the cache tier for,
/// `--cache 25%`, is `engine::cache::config::CacheSize`.)
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HitRatioPoint {
    /// Cache size as % of the region.
    pub cache_pct: f64,
    pub cache_bytes: u64,
    /// Fraction of I/Os served by the cache at this size.
    pub hit_ratio: f64,
}

/// The prediction for one cache size.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Prediction {
    pub cache_pct: f64,
    pub cache_bytes: u64,
    pub hit_ratio: f64,
    pub predicted_latency_us: f64,
    pub predicted_iops: f64,
    /// Lower latency than with no cache, %.
    pub latency_reduction_pct: f64,
    /// More IOPS than with no cache, %.
    pub iops_increase_pct: f64,
}

/// Predicts each point; the baseline is no cache (h = 0: every I/O a miss).
pub fn predict(model: &LatencyModel, sizes: &[HitRatioPoint]) -> Vec<Prediction> {
    let (base_latency, base_iops) = (model.latency_us(0.0), model.iops(0.0));
    sizes
        .iter()
        .map(|s| {
            let (latency, iops) = (model.latency_us(s.hit_ratio), model.iops(s.hit_ratio));
            Prediction {
                cache_pct: s.cache_pct,
                cache_bytes: s.cache_bytes,
                hit_ratio: s.hit_ratio,
                predicted_latency_us: latency,
                predicted_iops: iops,
                latency_reduction_pct: (base_latency - latency) / base_latency * 100.0,
                iops_increase_pct: (iops - base_iops) / base_iops * 100.0,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn latency_mixes_and_iops_follow_littles_law() {
        let m = LatencyModel::new(100.0, 4700.0, 5).unwrap();
        let sizes = [
            HitRatioPoint { cache_pct: 0.0, cache_bytes: 0, hit_ratio: 0.0 },
            HitRatioPoint { cache_pct: 50.0, cache_bytes: 1 << 30, hit_ratio: 0.5 },
            HitRatioPoint { cache_pct: 100.0, cache_bytes: 2 << 30, hit_ratio: 1.0 },
        ];
        let rows = predict(&m, &sizes);
        assert!(close(rows[0].predicted_latency_us, 4700.0) && close(rows[0].predicted_iops, 5.0 / 4700e-6));
        assert!(close(rows[0].latency_reduction_pct, 0.0) && close(rows[0].iops_increase_pct, 0.0));
        assert!(close(rows[1].predicted_latency_us, 2400.0));
        assert!(close(rows[1].latency_reduction_pct, (4700.0 - 2400.0) / 4700.0 * 100.0));
        assert!(close(rows[1].iops_increase_pct, (4700.0 / 2400.0 - 1.0) * 100.0));
        assert!(close(rows[2].predicted_latency_us, 100.0) && close(rows[2].predicted_iops, 50_000.0));
        assert_eq!(rows[1].cache_bytes, 1 << 30);
    }

    #[test]
    fn bad_inputs_say_which_flag() {
        assert!(LatencyModel::new(0.0, 1.0, 1).unwrap_err().to_string().contains("--hit-us"));
        assert!(LatencyModel::new(1.0, f64::NAN, 1).unwrap_err().to_string().contains("--miss-us"));
        assert!(LatencyModel::new(1.0, 1.0, 0).unwrap_err().to_string().contains("--outstanding"));
    }
}
