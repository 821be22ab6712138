//! `lunmark lab cache`: the QLogic study on one host. A slow LUN on loopback
//! (nbdkit memory behind its delay filter: by default 5 ms per read, a 10K
//! disk, and 1 ms per write, an array whose write cache takes the write) is
//! run with a host-side cache of 0, 25, 30, 50, 75 and 100% of the region, and
//! the paper's table is printed: read latency, IOPS, and their change against
//! no cache, with the hit ratio. Random offsets follow zipf 0.9 unless --dist
//! says otherwise: the paper's Exchange database had a small hot part.
//!
//! Beside each measurement stands a prediction from the workload's own address
//! stream: every point records its I/Os (`--trace`), the exact LRU curve of that
//! stream gives the hit ratio the cache should have had over the measured
//! interval (accesses of the ramp warm the cache but are not counted, as in the
//! measurement), and latency and IOPS follow from the measured hit and miss
//! latencies (Little's law: the same I/Os in flight at every size).
//!
//! The lab runs the profile's access pattern flat out: a fixed-rate profile
//! (jetstress) keeps its mix and its log-follows-database ratio but not its
//! rate, so that the cache shows in IOPS, as it did under IOmeter in the paper.
//! Verdicts are not judged: this is a study.

use std::path::PathBuf;

use anyhow::Result;

use super::{servers, Measure};
use crate::engine::cache::config::{frames_for, CacheConfig, CacheSize};
use crate::results::model::RunResult;
use crate::run::request::RunRequest;
use crate::run::RunObserver;
use crate::sizing::mrc::{block_accesses, MissRatioCurve};
use crate::targets::Target;
use crate::trace::{load_trace, TraceRecord};

/// The paper's sizes, % of the LUN.
pub const DEFAULT_SIZES: &[f64] = &[0.0, 25.0, 30.0, 50.0, 75.0, 100.0];

pub struct LabOptions {
    pub lun_size: String,
    /// Added by the backend to every read and to every write, in ms (nbdkit's delay filter counts whole ms).
    pub read_delay_ms: u64,
    pub write_delay_ms: u64,
    pub sizes: Vec<f64>,
    /// The cache of every size (--cache-mode, --cache-dev, --cache-block); its size is set per row.
    pub cache: CacheConfig,
    /// --cache-mode, --cache-dev or --cache-block was given: the dry run says the cache they set.
    pub cache_tuned: bool,
}

impl LabOptions {
    /// "backend +5ms read, +1ms write": the delays the LUN's server adds.
    pub fn backend(&self) -> String {
        format!("backend +{}ms read, +{}ms write", self.read_delay_ms, self.write_delay_ms)
    }

    /// The cache of the row at `pct` % of the LUN.
    pub fn cache_at(&self, pct: f64) -> CacheConfig {
        CacheConfig { size: CacheSize::Percent(pct), ..self.cache.clone() }
    }
}

/// The lab's access distribution unless --dist is given.
pub const DEFAULT_DIST: &str = "zipf:0.9";
/// A 10K disk's read: seek and rotation.
pub const DEFAULT_READ_DELAY: &str = "5ms";
/// A write taken by the array's mirrored write cache, plus the fabric.
pub const DEFAULT_WRITE_DELAY: &str = "1ms";

/// A backend delay in whole ms, as nbdkit's delay filter takes it.
pub fn delay_ms(text: &str) -> Result<u64, String> {
    // A bare number is refused: "5" could be seconds or nbdkit's own milliseconds.
    let d = crate::units::parse_duration_with_unit(text)?;
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(format!("'{text}': the backend (nbdkit's delay filter) delays by whole milliseconds: give 0ms, 1ms, 2ms, ..."));
    }
    Ok(d.as_millis() as u64)
}

/// One cache size: its result and its I/O stream.
pub struct SizePoint {
    pub pct: f64,
    pub result: Result<RunResult, String>,
    pub trace: Vec<TraceRecord>,
}

/// Runs every size; each is announced to `observer` as it starts (a note: "== cache 25% of the LUN").
pub fn run(request: &RunRequest, opts: &LabOptions, measure: &mut Measure, observer: &mut dyn RunObserver) -> Result<Vec<SizePoint>> {
    let dir = servers::lab_dir()?;
    let delay = [format!("rdelay={}ms", opts.read_delay_ms), format!("wdelay={}ms", opts.write_delay_ms)];
    // Enough server threads that the backend never queues behind itself: the
    // cache tier sends up to every outstanding I/O to it at once.
    let server = servers::nbdkit_unix(dir.path(), &opts.lun_size, &["--filter=delay".into()], &delay)?;
    let mut out = Vec::new();
    for &pct in &opts.sizes {
        if crate::run::signals::interrupt_flag().load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let trace_path: PathBuf = dir.path().join(format!("trace-{pct}"));
        let mut r = request.on(vec![Target::parse(&server.uri)?]);
        r.context.cache = Some(opts.cache_at(pct));
        r.context.trace = Some(trace_path.clone());
        r.context.label = Some(format!("{}lab cache: {pct}% of the LUN, {}", request.label_prefix(), opts.backend()));
        let mut plan = r.plan()?;
        for p in &mut plan.points {
            for g in &mut p.spec.groups {
                g.rate = None;
            }
        }
        plan.criteria.clear();
        // The trace lives in the lab's directory and goes with it: its path is no use to anyone.
        r.context.announce_trace = false;
        observer.note(&format!("== cache {pct}% of the LUN"));
        let result = measure(&plan, &r.context).map_err(|e| format!("{e:#}"));
        let trace = load_trace(&trace_path).map(|(_, t)| t).unwrap_or_default();
        out.push(SizePoint { pct, result, trace });
    }
    drop(server);
    Ok(out)
}

/// `lab cache --dry-run`: the whole study, nothing started or run. Each
/// size's workload is checked as the lab would run it (shown against `mem:`).
pub fn plan_text(request: &RunRequest, opts: &LabOptions) -> Result<String> {
    let mut workload = String::new();
    for &pct in &opts.sizes {
        let plan = request.on(vec![Target::parse(&format!("mem:{}", opts.lun_size))?]).plan()?;
        // Refused here as the lab would refuse it at that size.
        for p in &plan.points {
            crate::engine::cache::config::check(&opts.cache_at(pct), &p.spec, request.context.safety)?;
        }
        if pct == opts.sizes[0] {
            let mut shown = plan;
            for p in &mut shown.points {
                for g in &mut p.spec.groups {
                    g.rate = None;
                }
            }
            shown.criteria.clear();
            workload = super::plan_view::describe(&shown);
        }
    }
    let prefix = request.label_prefix();
    let backend = opts.backend();
    let json = request.json.as_ref().map(|j| j.to_string());
    let cache = opts.cache_tuned.then(|| {
        let place = opts.cache.dev.as_ref().map(|d| d.display().to_string()).unwrap_or_else(|| "RAM".into());
        (opts.cache.mode.to_string(), place, opts.cache.block_bytes)
    });
    Ok(crate::report::terminal::lab_plan_text::cache_study(&crate::report::terminal::lab_plan_text::CacheStudyView {
        prefix: &prefix,
        lun_size: &opts.lun_size,
        backend: &backend,
        sizes: &opts.sizes,
        json: json.as_deref(),
        cache,
        workload: &workload,
    }))
}

/// Hit ratios an exact LRU cache of `cache_blocks` gives the accesses issued
/// from `from_ns` on (the measured interval), having seen all before:
/// (hits over all accesses, hits over reads).
pub fn window_hit_ratios(records: &[TraceRecord], block_bytes: u64, cache_blocks: u64, from_ns: u64) -> (f64, f64) {
    let split = records.partition_point(|r| r.t_ns < from_ns);
    let full = MissRatioCurve::exact(block_accesses(records, block_bytes));
    let warm = MissRatioCurve::exact(block_accesses(&records[..split], block_bytes));
    let served =
        full.served_ratio(cache_blocks) * full.total_accesses as f64 - warm.served_ratio(cache_blocks) * warm.total_accesses as f64;
    let read_hits =
        full.read_hit_ratio(cache_blocks) * full.read_accesses as f64 - warm.read_hit_ratio(cache_blocks) * warm.read_accesses as f64;
    let all = (full.total_accesses - warm.total_accesses) as f64;
    let reads = (full.read_accesses - warm.read_accesses) as f64;
    (if all > 0.0 { served / all } else { 0.0 }, if reads > 0.0 { read_hits / reads } else { 0.0 })
}

/// One row of the study: measured and predicted (a plain row the report renders).
pub use crate::report::terminal::lab_tables::CacheStudyRow as Row;

/// The study's rows, from the measured points. The prediction uses the mean
/// latency of a hit (from the points that had hits) and of a miss (the 0%
/// point, or else the misses of the points), and IOPS scale as 1 / mean latency
/// at the same I/Os in flight (Little's law: the 0% point's, or without one the
/// point's own).
pub fn rows(points: &[SizePoint], opts: &LabOptions) -> Vec<Row> {
    let ok: Vec<(&SizePoint, &RunResult)> = points.iter().filter_map(|p| p.result.as_ref().ok().map(|r| (p, r))).collect();
    let summaries = || ok.iter().filter_map(|(p, r)| r.points.first().map(|pt| (*p, &pt.summary)));
    let weighted = |f: &dyn Fn(&crate::results::model::CacheSummary) -> (f64, u64)| {
        let (sum, n) =
            summaries().filter_map(|(_, s)| s.cache.as_ref()).map(f).fold((0.0, 0u64), |(a, n), (m, c)| (a + m * c as f64, n + c));
        if n > 0 {
            Some(sum / n as f64)
        } else {
            None
        }
    };
    let hit_us = weighted(&|c| (c.hit_latency_us.mean, c.hit_latency_us.count)).unwrap_or(0.0);
    let base = summaries().find(|(p, _)| p.pct == 0.0).map(|(_, s)| s);
    let miss_read_us =
        base.map(|s| s.latency_us.read.mean).or_else(|| weighted(&|c| (c.miss_latency_us.mean, c.miss_latency_us.count))).unwrap_or(0.0);
    let miss_all_us = base.map(|s| s.latency_us.all.mean).unwrap_or(miss_read_us);
    let base_iops = base.map(|s| s.iops);
    // I/Os in flight, IOPS x mean latency (in µs-seconds; only ratios are taken).
    let in_flight = |s: &crate::results::model::Summary| s.iops * s.latency_us.all.mean;
    let block = opts.cache.block_bytes as u64;
    let mut out = Vec::new();
    for (p, s) in summaries() {
        let c = s.cache.clone().unwrap_or_default();
        let region = ok.iter().find(|(q, _)| q.pct == p.pct).and_then(|(_, r)| r.targets.first()).map(|t| t.region_bytes).unwrap_or(0);
        let ramp_ns = ok.iter().find(|(q, _)| q.pct == p.pct).map(|(_, r)| r.workload.ramp.as_nanos() as u64).unwrap_or(0);
        let cfg = crate::engine::cache::config::CacheConfig {
            size: crate::engine::cache::config::CacheSize::Percent(p.pct),
            mode: Default::default(),
            dev: None,
            block_bytes: block as u32,
        };
        let blocks = frames_for(&cfg, region) as u64;
        let (served, read_hit) = window_hit_ratios(&p.trace, block, blocks, ramp_ns);
        let pred_read_us = read_hit * hit_us + (1.0 - read_hit) * miss_read_us;
        let pred_all_us = served * hit_us + (1.0 - served) * miss_all_us;
        let base_read = base.map(|b| b.latency_us.read.mean);
        out.push(Row {
            pct: p.pct,
            cache_bytes: c.size_bytes,
            read_latency_ms: s.latency_us.read.mean / 1e3,
            iops: s.iops,
            latency_reduction_pct: base_read.map(|b| (b - s.latency_us.read.mean) / b * 100.0).unwrap_or(f64::NAN),
            iops_increase_pct: base_iops.map(|b| (s.iops - b) / b * 100.0).unwrap_or(f64::NAN),
            read_hit_ratio: c.read_hit_ratio,
            predicted_read_hit_ratio: read_hit,
            predicted_read_latency_ms: pred_read_us / 1e3,
            // Without a 0% point (--cache-sizes without 0, or it failed) this
            // point's own queue gives the figure: it used to be NaN in the table.
            predicted_iops: if pred_all_us > 0.0 { base.map_or_else(|| in_flight(s), in_flight) / pred_all_us } else { 0.0 },
        });
    }
    out
}

/// The study's table (report::terminal::lab_tables renders it).
pub fn render(points: &[SizePoint], rows: &[Row], opts: &LabOptions, dist: &str) -> String {
    use crate::report::terminal::lab_tables::{cache_study, Backend, SizeOutcome};
    let sizes: Vec<SizeOutcome> =
        points.iter().map(|p| SizeOutcome { pct: p.pct, result: p.result.as_ref().map_err(String::as_str) }).collect();
    cache_study(&sizes, rows, Backend { read_delay_ms: opts.read_delay_ms, write_delay_ms: opts.write_delay_ms, dist })
}
