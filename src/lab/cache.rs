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

use super::servers;
use crate::cache::mrc::{block_accesses, MissRatioCurve};
use crate::cache::trace::{load_trace, TraceRecord};
use crate::cli::run::{measure_and_keep, ResultStore, RunArgs};
use crate::engine::cache::config::frames_for;
use crate::results::model::RunResult;

/// The paper's sizes, % of the LUN.
pub const DEFAULT_SIZES: &[f64] = &[0.0, 25.0, 30.0, 50.0, 75.0, 100.0];

pub struct LabOptions {
    pub lun_size: String,
    /// Added by the backend to every read and to every write, in ms (nbdkit's delay filter counts whole ms).
    pub read_delay_ms: u64,
    pub write_delay_ms: u64,
    pub sizes: Vec<f64>,
}

impl LabOptions {
    /// "backend +5ms read, +1ms write": the delays the LUN's server adds.
    pub fn backend(&self) -> String {
        format!("backend +{}ms read, +{}ms write", self.read_delay_ms, self.write_delay_ms)
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
    let d = crate::units::parse_duration(text).map_err(|e| e.to_string())?;
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

pub fn run(args: &RunArgs, opts: &LabOptions, store: &ResultStore) -> Result<Vec<SizePoint>> {
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
        let mut a = args.clone();
        a.targets = vec![server.uri.clone()];
        a.cache = Some(format!("{pct}%"));
        a.trace = Some(trace_path.clone());
        a.label = Some(format!("{}lab cache: {pct}% of the LUN, {}", super::label_prefix(args), opts.backend()));
        let mut plan = a.to_plan(vec![server.uri.clone()])?;
        for p in &mut plan.points {
            for g in &mut p.spec.groups {
                g.rate = None;
            }
        }
        plan.criteria.clear();
        let mut ctx = a.context()?;
        // The trace lives in the lab's directory and goes with it: its path is no use to anyone.
        ctx.announce_trace = false;
        eprintln!("== cache {pct}% of the LUN");
        let result = measure_and_keep(&plan, &ctx, None, store, false).map(|k| k.result).map_err(|e| format!("{e:#}"));
        let trace = load_trace(&trace_path).map(|(_, t)| t).unwrap_or_default();
        out.push(SizePoint { pct, result, trace });
    }
    drop(server);
    Ok(out)
}

/// `lab cache --dry-run`: the whole study, nothing started or run. Each
/// size's workload is checked as the lab would run it (shown against `mem:`).
pub fn plan_text(args: &RunArgs, opts: &LabOptions) -> Result<String> {
    let prefix = super::label_prefix(args);
    let mut text = String::from("lab cache (dry run: no server started, nothing run)\n");
    text.push_str(&format!("a {} LUN: nbdkit memory behind its delay filter ({}), on a unix socket\n", opts.lun_size, opts.backend()));
    text.push_str(
        "each cache size runs the workload below flat out as a result of its own, recording its I/O stream for the prediction:\n",
    );
    for pct in &opts.sizes {
        text.push_str(&format!("  {prefix}lab cache: {pct}% of the LUN, {}\n", opts.backend()));
    }
    if let Some(json) = &args.json {
        text.push_str(&format!("--json {json}: the list of the sizes' results\n"));
    }
    for &pct in &opts.sizes {
        let mut a = args.clone();
        a.cache = Some(format!("{pct}%"));
        a.label = None;
        let target = format!("mem:{}", opts.lun_size);
        let plan = a.to_plan(vec![target])?;
        // Refused here as the lab would refuse it at that size.
        if let Some(cfg) = a.cache_config()? {
            for p in &plan.points {
                crate::engine::cache::config::check(&cfg, &p.spec, a.context()?.safety)?;
            }
        }
        if pct == opts.sizes[0] {
            text.push_str(&format!(
                "workload of each size (shown against mem:{}; the lab runs it on its LUN through the cache):\n",
                opts.lun_size
            ));
            let mut shown = plan;
            for p in &mut shown.points {
                for g in &mut p.spec.groups {
                    g.rate = None;
                }
            }
            shown.criteria.clear();
            text.push_str(&crate::run::plan::describe(&shown));
        }
    }
    Ok(text)
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

/// One row of the study: measured and predicted.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub pct: f64,
    pub cache_bytes: u64,
    pub read_latency_ms: f64,
    pub iops: f64,
    pub latency_reduction_pct: f64,
    pub iops_increase_pct: f64,
    pub read_hit_ratio: f64,
    pub predicted_read_hit_ratio: f64,
    pub predicted_read_latency_ms: f64,
    pub predicted_iops: f64,
}

/// The study's rows, from the measured points. The prediction uses the mean
/// latency of a hit (from the points that had hits) and of a miss (the 0%
/// point, or else the misses of the points), and IOPS scale as 1 / mean latency
/// at the same I/Os in flight (Little's law: the 0% point's, or without one the
/// point's own).
pub fn rows(points: &[SizePoint], args: &RunArgs) -> Vec<Row> {
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
    let block = crate::units::parse_size(args.cache_block()).map(|b| b.get()).unwrap_or(4096);
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

pub fn render(points: &[SizePoint], rows: &[Row], opts: &LabOptions, dist: &str) -> String {
    use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY).set_header(vec![
        "cache % of LUN",
        "cache size",
        "read lat ms",
        "IOPS",
        "lat reduction %",
        "IOPS increase %",
        "read hit ratio",
        "predicted hit ratio",
        "predicted read lat ms",
        "predicted IOPS",
    ]);
    let pct = |v: f64| if v.is_nan() { "-".to_string() } else { format!("{v:.1}") };
    for r in rows {
        // A row that did not run to its end is marked where its figures are read.
        let status = points.iter().find(|p| p.pct == r.pct).and_then(|p| p.result.as_ref().ok()).map(|r| r.status);
        let mark = match status {
            Some(s) if s != crate::results::Status::Completed => format!(" ({})", format!("{s:?}").to_lowercase()),
            _ => String::new(),
        };
        t.add_row(vec![
            format!("{}{mark}", r.pct),
            crate::units::Bytes(r.cache_bytes).to_string(),
            format!("{:.2}", r.read_latency_ms),
            format!("{:.0}", r.iops),
            pct(r.latency_reduction_pct),
            pct(r.iops_increase_pct),
            format!("{:.1}%", r.read_hit_ratio * 100.0),
            format!("{:.1}%", r.predicted_read_hit_ratio * 100.0),
            format!("{:.2}", r.predicted_read_latency_ms),
            format!("{:.0}", r.predicted_iops),
        ]);
    }
    for i in 0..10 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(if i == 1 { CellAlignment::Left } else { CellAlignment::Right });
        }
    }
    let mut text = format!(
        "cache study: backend nbdkit memory + {}ms per read, + {}ms per write; random offsets {dist}; cache in RAM on the host, cold at each size\n{t}\n",
        opts.read_delay_ms, opts.write_delay_ms
    );
    for p in points {
        match &p.result {
            Ok(r) if r.status == crate::results::Status::Completed => text.push_str(&format!("{}%: result {}\n", p.pct, r.id)),
            Ok(r) => {
                text.push_str(&format!("{}%: result {} ({:?}: {})\n", p.pct, r.id, r.status, r.status_reason.as_deref().unwrap_or("")))
            }
            Err(why) => text.push_str(&format!("{}%: not measured: {why}\n", p.pct)),
        }
    }
    text.push_str("Predicted: exact LRU stack distances of each point's own I/O stream over the measured interval, with the measured hit and miss latencies.\n");
    text.push_str("Chart them with `lunmark report ID... -o cache.html` (IOPS and latency against cache size).\n");
    text
}
