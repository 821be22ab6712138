//! `lunmark lab cache`: the QLogic study on one host. The paper's set-up is a
//! read cache (0-100% of the LUN) in front of a disk array, under Jetstress's
//! mix; the lab builds it on loopback with nbdkit:
//!
//! - The array: `--disks N` disks (default 4), each an nbdkit memory server
//!   behind noparallel (one I/O at a time, whoever sends it) and delay: a read
//!   holds its disk 8 ms (a 10K-rpm disk's average seek and half a rotation), a
//!   write 1 ms. The LUN is striped over the disks (lunmark spreads every
//!   worker's I/Os over them), so the array reads at most N x 125 IOPS and
//!   misses queue at the disks, as on a real array: the delay filter alone served
//!   every miss in parallel (20,000 IOPS at 6 ms on one server) and the cache
//!   only ever changed latency.
//! - The array's write cache: a write is acknowledged from the controller's
//!   NVRAM, which destages gathered writes to the disks at 1 ms of a disk's time
//!   each (sorted and coalesced, an eighth of a random read). Under Jetstress's
//!   65% writes the NVRAM is full in steady state, so a write waits for its
//!   destage turn: the bounded destage rate is each disk's queue.
//! - The cache: lunmark's write-through RAM cache, warmed by the ramp (the
//!   default LUN is small, so the ramp's accesses reach most blocks, as the
//!   paper's hours-long runs did).
//!
//! Random offsets are uniform unless --dist says otherwise: Jetstress spreads
//! its I/O over the database, and a skewed stream makes the curve concave
//! (most hits come from the first quarter of the cache).
//!
//! Beside each measurement stands a prediction from the workload's own address
//! stream: every point records its I/Os (`--trace`), the exact LRU curve of that
//! stream gives the hit ratio the cache should have had over the measured
//! interval (accesses of the ramp warm the cache but are not counted, as in the
//! measurement), and latency follows from the measured hit and miss latencies.
//!
//! The lab runs the profile's access pattern flat out: a fixed-rate profile
//! (jetstress) keeps its mix and its log-follows-database ratio but not its
//! rate, so that the cache shows in IOPS, as it did in the paper. Each worker's
//! queue depth is the LUN's, spread over the disks (qd / N per disk, rounded
//! up): the I/Os in flight stay the profile's. Verdicts are not judged: this
//! is a study.

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
    /// Disks of the array the LUN is striped over (--disks).
    pub disks: u32,
    /// How long a read and a write hold their disk, in ms (nbdkit's delay filter counts whole ms).
    pub read_delay_ms: u64,
    pub write_delay_ms: u64,
    pub sizes: Vec<f64>,
    /// The cache of every size (--cache-mode, --cache-dev, --cache-block); its size is set per row.
    pub cache: CacheConfig,
    /// --cache-mode, --cache-dev or --cache-block was given: the dry run says the cache they set.
    pub cache_tuned: bool,
}

impl LabOptions {
    /// "4 disks x (+8ms read, +1ms write)": the array, short, for each result's label.
    pub fn backend(&self) -> String {
        format!("{} x (+{}ms read, +{}ms write)", crate::units::counted(self.disks, "disk"), self.read_delay_ms, self.write_delay_ms)
    }

    /// The lab's model in a line ("model: ..."), printed with the table and by the dry run.
    pub fn model(&self) -> String {
        let reads = if self.read_delay_ms > 0 {
            format!("at most {:.0} read IOPS", self.disks as f64 * 1000.0 / self.read_delay_ms as f64)
        } else {
            "no limit on reads".into()
        };
        format!(
            "model: a {} LUN striped over an array of {} (each an nbdkit memory server serving one I/O at a time: a read holds its disk {} ms, a write {} ms, destaged from the controller's write cache); {reads}; each worker's queue spread over the disks (qd / {} per disk, rounded up); the cache ({}) on the host in front of it",
            self.lun_size,
            crate::units::counted(self.disks, "disk"),
            self.read_delay_ms,
            self.write_delay_ms,
            self.disks,
            self.cache.mode,
        )
    }

    /// The cache of the row at `pct` % of the LUN.
    pub fn cache_at(&self, pct: f64) -> CacheConfig {
        CacheConfig { size: CacheSize::Percent(pct), ..self.cache.clone() }
    }

    /// Refuses, before any server starts (the dry run too), a study whose RAM
    /// does not fit: the disks (nbdkit memory) hold up to the whole LUN as it
    /// is written, and each size's run holds its cache (in RAM without
    /// --cache-dev) beside its workers; the largest size decides.
    pub fn check_memory(&self, request: &RunRequest) -> Result<()> {
        let (Some(most), Some(m)) = (self.sizes.iter().copied().reduce(f64::max), crate::targets::host_memory::HostMemory::read()) else {
            return Ok(());
        };
        let lun = crate::units::parse_size(&self.lun_size).map_err(|e| anyhow::anyhow!("--lun-size: {e}"))?.get();
        // null: has the LUN's size and holds nothing: the estimate is the run's and its cache's.
        let plan = request.on(vec![Target::parse(&format!("null:{lun}"))?]).plan()?;
        let cache = self.cache_at(most);
        let extras = crate::run::resources::Extras { cache: Some(&cache), ..Default::default() };
        let run = crate::run::resources::for_plan(&plan, extras).1.total();
        let need = run.saturating_add(lun);
        if need <= m.usable() {
            return Ok(());
        }
        let human = crate::run::resources::human;
        anyhow::bail!(
            "--lun-size {}: the disks hold up to {} in RAM (nbdkit memory, as the LUN is written) and the run at the largest cache size ({most}% of the LUN) needs about {} with its cache: {} in all, \
             but only {} is available (MemAvailable in /proc/meminfo), of which lunmark leaves {} to the rest of the system: use a smaller --lun-size or --cache-sizes, or --cache-dev",
            self.lun_size,
            human(lun),
            human(run),
            human(need),
            human(m.available),
            human(m.reserve())
        )
    }

    /// Each disk's size: the LUN's share, in whole 64 KiB stripes, refused
    /// when under 1 MiB (a share that small holds no cache worth measuring).
    pub fn disk_bytes(&self) -> Result<u64> {
        let lun = crate::units::parse_size(&self.lun_size).map_err(|e| anyhow::anyhow!("--lun-size: {e}"))?.get();
        let each = lun / self.disks as u64 / STRIPE * STRIPE;
        if each < 1 << 20 {
            anyhow::bail!(
                "--lun-size {} over --disks {}: each disk would hold {} bytes, and a disk needs at least 1m: give a larger --lun-size or fewer --disks",
                self.lun_size,
                self.disks,
                each
            );
        }
        Ok(each)
    }
}

/// A disk's share of the LUN is a whole number of these.
const STRIPE: u64 = 64 << 10;

/// Disks in the array unless --disks says otherwise.
pub const DEFAULT_DISKS: u32 = 4;
/// The most disks the lab starts (an nbdkit each).
pub const MAX_DISKS: u32 = 32;
/// The lab's access distribution unless --dist is given.
pub const DEFAULT_DIST: &str = "uniform";
/// A 10K-rpm disk's random read: about 5 ms average seek (4.7 ms for a
/// Cheetah 10K.7) and 3 ms, half a rotation.
pub const DEFAULT_READ_DELAY: &str = "8ms";
/// A write destaged from the controller's write cache: gathered and sorted, an
/// eighth of a random read's time on the disk.
pub const DEFAULT_WRITE_DELAY: &str = "1ms";
/// The lab's LUN unless --lun-size says otherwise: small, so that a short ramp
/// warms a whole-LUN cache.
pub const DEFAULT_LUN_SIZE: &str = "16m";

/// Each size's measured time and ramp unless --time and --ramp say otherwise:
/// six sizes in under a minute.
pub const DEFAULT_TIME: &str = "5s";
pub const DEFAULT_RAMP: &str = "3s";

/// A backend delay in whole ms, as nbdkit's delay filter takes it.
pub fn delay_ms(text: &str) -> Result<u64, String> {
    // A bare number is refused: "5" could be seconds or nbdkit's own milliseconds.
    let d = crate::units::parse_duration_with_unit(text)?;
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(format!("'{text}': the backend (nbdkit's delay filter) delays by whole milliseconds: give 0ms, 1ms, 2ms, ..."));
    }
    Ok(d.as_millis() as u64)
}

/// Starts the array: a server per disk, each one I/O at a time (noparallel
/// across all its connections) held `read_delay_ms` / `write_delay_ms`.
fn start_disks(dir: &std::path::Path, opts: &LabOptions) -> Result<Vec<servers::Server>> {
    let size = opts.disk_bytes()?.to_string();
    let filters = ["--filter=noparallel".to_string(), "--filter=delay".to_string()];
    let params =
        ["serialize=all-requests".to_string(), format!("rdelay={}ms", opts.read_delay_ms), format!("wdelay={}ms", opts.write_delay_ms)];
    (0..opts.disks).map(|i| servers::nbdkit_unix_at(&dir.join(format!("disk{i}.sock")), &size, &filters, &params)).collect()
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
    let disks = start_disks(dir.path(), opts)?;
    let targets = disks.iter().map(|d| Target::parse(&d.uri)).collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for &pct in &opts.sizes {
        if crate::run::signals::interrupt_flag().load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let trace_path: PathBuf = dir.path().join(format!("trace-{pct}"));
        let mut r = request.on(targets.clone());
        r.context.cache = Some(opts.cache_at(pct));
        r.context.trace = Some(trace_path.clone());
        r.context.label = Some(format!("{}lab cache: {pct}% of the LUN, {}", request.label_prefix(), opts.backend()));
        let mut plan = r.plan()?;
        for p in &mut plan.points {
            for g in &mut p.spec.groups {
                g.rate = None;
                // The LUN's queue spread over its disks: the I/Os in flight stay the profile's.
                g.qd = g.qd.div_ceil(opts.disks).max(1);
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
    drop(disks);
    Ok(out)
}

/// `lab cache --dry-run`: the whole study, nothing started or run. Each
/// size's workload is checked as the lab would run it (shown against `mem:`).
pub fn plan_text(request: &RunRequest, opts: &LabOptions) -> Result<String> {
    let mut workload = String::new();
    let mut total = Some(std::time::Duration::ZERO);
    for &pct in &opts.sizes {
        let plan = request.on(vec![Target::parse(&format!("mem:{}", opts.lun_size))?]).plan()?;
        total = total.and_then(|sum| timed_length(&plan).map(|t| sum + t));
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
    opts.disk_bytes()?;
    let backend = opts.backend();
    let model = opts.model();
    let json = request.json.as_ref().map(|j| j.to_string());
    let cache = opts.cache_tuned.then(|| {
        let place = opts.cache.dev.as_ref().map(|d| d.display().to_string()).unwrap_or_else(|| "RAM".into());
        (opts.cache.mode.to_string(), place, opts.cache.block_bytes)
    });
    Ok(crate::report::terminal::lab_plan_text::cache_study(&crate::report::terminal::lab_plan_text::CacheStudyView {
        prefix: &prefix,
        lun_size: &opts.lun_size,
        backend: &backend,
        model: &model,
        sizes: &opts.sizes,
        json: json.as_deref(),
        cache,
        workload: &workload,
        total: total.map(crate::units::format_duration).as_deref(),
    }))
}

/// One size's ramp and measurement; None when a point runs by I/O count or a trace's pace.
fn timed_length(plan: &crate::run::RunPlan) -> Option<std::time::Duration> {
    let mut sum = std::time::Duration::ZERO;
    for p in &plan.points {
        sum += p.spec.planned_length()? * plan.repeat;
    }
    Some(sum)
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
        // The trace names each block with its disk: one LRU over the disks'
        // blocks, as large as the disks' caches together.
        let regions: Vec<u64> =
            ok.iter().find(|(q, _)| q.pct == p.pct).map(|(_, r)| r.targets.iter().map(|t| t.region_bytes).collect()).unwrap_or_default();
        let ramp_ns = ok.iter().find(|(q, _)| q.pct == p.pct).map(|(_, r)| r.workload.ramp.as_nanos() as u64).unwrap_or(0);
        let cfg = crate::engine::cache::config::CacheConfig {
            size: crate::engine::cache::config::CacheSize::Percent(p.pct),
            mode: Default::default(),
            dev: None,
            block_bytes: block as u32,
        };
        let blocks: u64 = regions.iter().map(|&region| frames_for(&cfg, region) as u64).sum();
        // The trace's time zero is the run's start, before its connections
        // (20 to 4 disks) are made; the point, and its ramp, start with its
        // first I/O (sorted first by the loader).
        let first_ns = p.trace.first().map_or(0, |r| r.t_ns);
        let (served, read_hit) = window_hit_ratios(&p.trace, block, blocks, first_ns + ramp_ns);
        let pred_read_us = read_hit * hit_us + (1.0 - read_hit) * miss_read_us;
        let pred_all_us = served * hit_us + (1.0 - served) * miss_all_us;
        let base_read = base.map(|b| b.latency_us.read.mean);
        out.push(Row {
            pct: p.pct,
            cache_bytes: blocks * block,
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
    cache_study(&sizes, rows, Backend { model: &opts.model(), dist })
}
