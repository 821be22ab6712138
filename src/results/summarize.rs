//! Turns merged recorders and CPU usage into a `Summary`, with the exact metric
//! definitions of METHODOLOGY.md. Pure: no I/O, no clocks.

use std::collections::BTreeMap;

use super::model::{CpuStats, ErrorSummary, GroupSummary, Interval, LatencyByOp, LatencyStats, Summary};
use crate::engine::cache::config::CacheConfig;
use crate::metrics::cpu::CpuUsage;
use crate::metrics::errno::errno_name;
use crate::metrics::{IntervalSlice, LatencyHistogram, Recorder};

pub fn latency_stats(h: &LatencyHistogram) -> LatencyStats {
    if h.count() == 0 {
        return LatencyStats::default();
    }
    let us = |ns: u64| ns as f64 / 1e3;
    LatencyStats {
        count: h.count(),
        mean: h.mean_ns() / 1e3,
        min: us(h.min_ns()),
        p50: us(h.quantile_ns(0.50)),
        p90: us(h.quantile_ns(0.90)),
        p99: us(h.quantile_ns(0.99)),
        p99_9: us(h.quantile_ns(0.999)),
        p99_99: us(h.quantile_ns(0.9999)),
        max: us(h.max_ns()),
        p95: Some(us(h.quantile_ns(0.95))),
        stddev: Some(h.stddev_ns() / 1e3),
        percentiles: BTreeMap::new(),
    }
}

/// The percentiles a workload asks for besides the standard ones (`list`,
/// percent), from the same histogram; none when it holds no I/O.
pub fn add_percentiles(stats: &mut LatencyStats, h: &LatencyHistogram, list: &[f64]) {
    if h.count() == 0 {
        return;
    }
    for p in list {
        stats.percentiles.insert(p.to_string(), h.quantile_ns(p / 100.0) as f64 / 1e3);
    }
}

pub fn latency_by_op(rec: &Recorder) -> LatencyByOp {
    LatencyByOp {
        read: latency_stats(&rec.read),
        write: latency_stats(&rec.write),
        all: latency_stats(&rec.all()),
        trim: (rec.ios_trimmed > 0).then(|| latency_stats(&rec.trim)),
        sync: (rec.ios_synced > 0).then(|| latency_stats(&rec.sync)),
    }
}

fn per_second(count: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        count as f64 / secs
    } else {
        0.0
    }
}

/// `slices` are merged per-second slices in index order; `duration_s` is the
/// measured interval (the last slice may be partial).
pub fn summarize(rec: &Recorder, slices: &[IntervalSlice], cpu: &CpuUsage, duration_s: f64) -> Summary {
    let rate = |n: u64| per_second(n, duration_s);
    let bytes = rec.bytes_read + rec.bytes_written;
    let iops = rate(rec.ios());
    let mbps = rate(bytes) / 1e6;
    let by_errno: BTreeMap<String, u64> = rec.errors.iter().map(|(e, n)| (errno_name(*e), *n)).collect();
    Summary {
        iops,
        read_iops: rate(rec.ios_read),
        write_iops: rate(rec.ios_written),
        mbps,
        read_mbps: rate(rec.bytes_read) / 1e6,
        write_mbps: rate(rec.bytes_written) / 1e6,
        mibps: rate(bytes) / (1u64 << 20) as f64,
        read_mibps: rate(rec.bytes_read) / (1u64 << 20) as f64,
        write_mibps: rate(rec.bytes_written) / (1u64 << 20) as f64,
        bytes_read: rec.bytes_read,
        bytes_written: rec.bytes_written,
        ios_read: rec.ios_read,
        ios_written: rec.ios_written,
        ios_trimmed: rec.ios_trimmed,
        trim_iops: rate(rec.ios_trimmed),
        bytes_trimmed: rec.bytes_trimmed,
        ios_synced: rec.ios_synced,
        sync_per_s: rate(rec.ios_synced),
        duration_s,
        latency_us: latency_by_op(rec),
        service_latency_us: None,
        latency_buckets: rec.all().counts_below(&super::model::LATENCY_BUCKET_BOUNDS_NS),
        rate: None,
        cpu: CpuStats::from_usage(cpu, iops, mbps, bytes),
        power: None,
        errors: ErrorSummary { total: rec.error_count(), by_errno, first: rec.first_errors.clone() },
        verify: None,
        cache: rec.cache.as_deref().map(cache_summary),
        in_flight_at_end: 0,
        oldest_in_flight_ms: None,
        abandoned_ios: 0,
        stalled: false,
        stall_reason: None,
        line_rate: None,
        queue_depth: None,
        replay: None,
        steady: None,
        intervals: intervals(slices, duration_s),
        histograms: None,
    }
}

/// Counts and latencies of a cache tier; its setting is filled in by the run.
fn cache_summary(c: &crate::metrics::recorder::CacheCounters) -> super::model::CacheSummary {
    let ratio = |a: u64, b: u64| if a + b > 0 { a as f64 / (a + b) as f64 } else { 0.0 };
    super::model::CacheSummary {
        hit_ratio: ratio(c.read_hits + c.write_hits, c.read_misses + c.write_misses),
        read_hit_ratio: ratio(c.read_hits, c.read_misses),
        reads_from_cache: c.read_hits,
        reads_from_target: c.read_misses,
        writes_to_cache: c.write_hits,
        writes_to_target: c.write_misses,
        hit_latency_us: latency_stats(&c.hit),
        miss_latency_us: latency_stats(&c.miss),
        ..Default::default()
    }
}

/// The setting part of a point's cache summary: the caches of all its targets
/// together (each target has its own, sized from its own region).
pub fn describe_cache(cfg: &CacheConfig, regions: &[u64], summary: &mut super::model::CacheSummary) {
    let frames: u64 = regions.iter().map(|&r| crate::engine::cache::config::frames_for(cfg, r) as u64).sum();
    let region_bytes: u64 = regions.iter().sum();
    summary.mode = cfg.mode.to_string();
    summary.block_bytes = cfg.block_bytes;
    summary.size_bytes = frames * cfg.block_bytes as u64;
    summary.size_pct = if region_bytes > 0 { summary.size_bytes as f64 * 100.0 / region_bytes as f64 } else { 0.0 };
}

/// A last partial second shorter than this is no row of its own: its I/Os are
/// folded into the second before it (a rate over a few ms, or over nothing,
/// says nothing about the target).
pub const SHORTEST_ROW_S: f64 = 0.1;

/// How long a second's row lasts when `duration_s` was measured (the last second may be partial).
pub fn row_length(s: &IntervalSlice, duration_s: f64) -> f64 {
    (duration_s - s.index as f64).clamp(0.0, 1.0)
}

/// The stored rows of the seconds: one per second, a last one shorter than
/// `SHORTEST_ROW_S` (the stop landed just after a second's edge, or on it)
/// folded into the one before, so every I/O is in a row and no row lasts less
/// than the threshold (a point that measured less than that has one short row).
pub fn intervals(slices: &[IntervalSlice], duration_s: f64) -> Vec<Interval> {
    rows(slices, duration_s).iter().map(|(s, len)| interval_over(s, *len)).collect()
}

/// The slices of the stored rows (see `intervals`), each with its length in seconds.
pub fn rows(slices: &[IntervalSlice], duration_s: f64) -> Vec<(IntervalSlice, f64)> {
    let mut rows: Vec<(IntervalSlice, f64)> = Vec::new();
    for s in slices {
        let len = row_length(s, duration_s);
        match rows.last_mut() {
            Some((prev, prev_len)) if len < SHORTEST_ROW_S => {
                prev.merge(s);
                *prev_len += len;
            }
            // Nothing was measured: no row can hold a rate.
            None if len <= 0.0 => {}
            _ => rows.push((s.clone(), len)),
        }
    }
    rows
}

/// One second's figures; `duration_s` is the measured interval (the last second may be partial).
pub fn interval(s: &IntervalSlice, duration_s: f64) -> Interval {
    let len = row_length(s, duration_s);
    interval_over(s, if len > 0.0 { len } else { 1.0 })
}

/// A row's figures over `len` seconds.
fn interval_over(s: &IntervalSlice, len: f64) -> Interval {
    let latency = s.latency();
    Interval {
        t_s: s.index as f64,
        duration_s: len,
        iops: per_second(s.ios_read + s.ios_written + s.ios_trimmed, len),
        read_iops: per_second(s.ios_read, len),
        write_iops: per_second(s.ios_written, len),
        mbps: per_second(s.bytes_read + s.bytes_written, len) / 1e6,
        lat_mean_us: latency.mean_ns() / 1e3,
        lat_p99_us: latency.quantile_ns(0.99) as f64 / 1e3,
        read_mbps: Some(per_second(s.bytes_read, len) / 1e6),
        write_mbps: Some(per_second(s.bytes_written, len) / 1e6),
        watts: None,
    }
}

pub fn group_summary(name: &str, workers: u32, rec: &Recorder, duration_s: f64) -> GroupSummary {
    let rate = |n: u64| per_second(n, duration_s);
    GroupSummary {
        name: name.to_string(),
        workers,
        iops: rate(rec.ios()),
        read_iops: rate(rec.ios_read),
        write_iops: rate(rec.ios_written),
        mbps: rate(rec.bytes_read + rec.bytes_written) / 1e6,
        latency_us: latency_by_op(rec),
        follow: None,
        window: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    /// `n` reads in each of `slices` one-second slices.
    fn seconds(n: &[u64]) -> Vec<IntervalSlice> {
        n.iter()
            .enumerate()
            .map(|(i, &k)| {
                let mut s = IntervalSlice::new(i as u32);
                (0..k).for_each(|_| s.record(Op::Read, 4096, 1000));
                s
            })
            .collect()
    }

    /// A stop 0.13 ms after a second's edge, a stop on the edge (the MPI
    /// span's empty last second), a stop 0.4 s in: no row shorter than the
    /// threshold, none of zero length, and the rows still add up to the total.
    #[test]
    fn a_short_last_second_is_folded_into_the_one_before() {
        for (counts, duration, rows) in
            [(vec![1000, 1000, 7], 2.00013, 2), (vec![1000, 1000, 1000, 0], 3.0, 3), (vec![1000, 1000, 400], 2.4, 3)]
        {
            let out = intervals(&seconds(&counts), duration);
            assert_eq!(out.len(), rows, "{duration}: {out:?}");
            assert!(out.iter().all(|r| r.duration_s >= SHORTEST_ROW_S), "{duration}: {out:?}");
            let ios: f64 = out.iter().map(|r| r.iops * r.duration_s).sum();
            assert!((ios - counts.iter().sum::<u64>() as f64).abs() < 1e-6, "{duration}: {ios} of {counts:?}");
            assert!((out.iter().map(|r| r.duration_s).sum::<f64>() - duration).abs() < 1e-9);
        }
        // The folded row is the second before, over its longer length.
        let out = intervals(&seconds(&[1000, 1000, 7]), 2.00013);
        assert_eq!(out[1].t_s, 1.0);
        assert!((out[1].iops - 1007.0 / 1.00013).abs() < 1e-6, "{}", out[1].iops);
        // A point shorter than the threshold keeps its one row; one that measured nothing has none.
        assert_eq!(intervals(&seconds(&[5]), 0.05).len(), 1);
        assert!(intervals(&seconds(&[0]), 0.0).is_empty());
    }

    #[test]
    fn metrics_follow_the_methodology_definitions() {
        let mut rec = Recorder::default();
        for _ in 0..1000 {
            rec.record(Op::Read, 4096, 100_000);
        }
        for _ in 0..1000 {
            rec.record(Op::Write, 4096, 200_000);
        }
        let cpu = CpuUsage { utilization_pct: 50.0, busy_cpu_s: 2.0, ..Default::default() };
        let s = summarize(&rec, &[], &cpu, 2.0);
        assert_eq!(s.iops, 1000.0);
        assert_eq!(s.mbps, 2000.0 * 4096.0 / 2.0 / 1e6);
        assert_eq!(s.cpu.iops_per_cpu_pct, Some(20.0));
        // 2 CPU-seconds over 8000 KB = 250 us per KB.
        assert_eq!(s.cpu.service_demand_us_per_kb, Some(2.0 * 1e6 / 8000.0));
        assert!((s.latency_us.read.mean - 100.0).abs() < 1e-9);
        assert!((s.latency_us.all.mean - 150.0).abs() < 1e-9);
    }
}
