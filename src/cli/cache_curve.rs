//! `lunmark cache-curve FILE`: how much a read-write-through LRU cache of each
//! size (a % of the region, as in METHODOLOGY.md's cache table) would hit on a
//! recorded trace, and, given measured hit and miss latencies, what mean
//! latency and IOPS to expect. Answers "how big must the cache be" before
//! anyone builds it; the numbers come from `crate::sizing`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use serde::Serialize;

use super::exit;
use crate::output_path::{self, Mode};
use crate::sizing::mrc::{block_accesses, count_block_accesses, Method, MissRatioCurve, AUTO_EXACT_LIMIT};
use crate::sizing::predict::{predict, HitRatioPoint, LatencyModel, Prediction};
use crate::trace::{load_trace, TraceKind, TraceRecord};
use crate::units::{parse_size, Bytes};
use crate::workload::Op;

const DEFAULT_SIZES: &str = "0,25,30,50,75,100";

#[derive(Args, Debug)]
pub struct CacheCurveArgs {
    /// The trace: a lunmark binary trace (docs/trace-format.md), `blkparse` text output or MSR Cambridge CSV (SNIA IOTTA).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The cache block size: an I/O touches every block its bytes fall in.
    #[arg(long, value_name = "SIZE", default_value = "4k", allow_hyphen_values = true)]
    pub block_size: String,
    /// Cache sizes to report, as % of the region, comma-separated.
    #[arg(long, value_name = "PCT,..", default_value = DEFAULT_SIZES, allow_hyphen_values = true)]
    pub sizes: String,
    /// The region of each target the cache % refers to (default: the highest offset + length the trace reaches on it).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Measured mean latency of a cache hit, µs (with --miss-us and --outstanding: predict latency and IOPS).
    #[arg(long, value_name = "US", allow_negative_numbers = true)]
    pub hit_us: Option<f64>,
    /// Measured mean latency of a miss (the backing store), µs.
    #[arg(long, value_name = "US", allow_negative_numbers = true)]
    pub miss_us: Option<f64>,
    /// I/Os outstanding in total (workers × queue depth), for IOPS by Little's law.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub outstanding: Option<u32>,
    /// Estimate with SHARDS sampling at this rate (0 < RATE <= 1) instead of the default choice.
    #[arg(long, value_name = "RATE", conflicts_with = "exact", allow_negative_numbers = true)]
    pub sampled: Option<f64>,
    /// Compute the exact curve whatever the trace's length (the default is exact up to 20M block accesses).
    #[arg(long)]
    pub exact: bool,
    /// Also write the table as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

/// One cache size of the report.
#[derive(Clone, Debug, Serialize)]
pub struct CurveRow {
    pub cache_pct: f64,
    pub cache_blocks: u64,
    pub cache_bytes: u64,
    /// Accesses (reads and writes) that find their block in the cache.
    pub hit_ratio: f64,
    /// Reads that find their block, over reads (None without reads).
    pub read_hit_ratio: Option<f64>,
    /// Accesses completed from the cache: read hits over all accesses.
    pub served_ratio: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<Prediction>,
}

/// Everything the command reports (also its JSON form).
#[derive(Clone, Debug, Serialize)]
pub struct CurveReport {
    pub trace: String,
    pub format: &'static str,
    pub ios: u64,
    pub reads: u64,
    pub writes: u64,
    pub targets: usize,
    pub block_size: u64,
    /// Region of each target, bytes, by target index.
    pub region_bytes: BTreeMap<u16, u64>,
    pub region_blocks: u64,
    pub block_accesses: u64,
    /// A count of blocks (the sampled estimate rounded to a whole block).
    pub distinct_blocks: u64,
    pub sampled_accesses: u64,
    #[serde(flatten)]
    pub method: Method,
    /// Expected mean absolute error of the ratios (0 when exact).
    pub error_bound: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<LatencyModel>,
    pub rows: Vec<CurveRow>,
}

/// Memory the exact curve takes per block access, at most: the stack's
/// Fenwick tree (4 bytes, grown by doubling), the latest-access map and the
/// two distance histograms per distinct block (at most one per access).
const EXACT_BYTES_PER_ACCESS: u64 = 64;

/// Refuses `--exact` when its estimate is above the memory available, before
/// it starts (a few 4 GiB I/Os are a billion block accesses: it grew past
/// 1.9 GB in 15 s with no word), as the run refuses a plan that cannot fit.
fn check_exact_memory(records: &[TraceRecord], block_size: u64) -> Result<()> {
    let accesses = count_block_accesses(records, block_size);
    let need = accesses.saturating_mul(EXACT_BYTES_PER_ACCESS);
    if let Some(available) = crate::run::resources::mem_available().filter(|&a| need > a) {
        bail!(
            "--exact: the trace is {accesses} block accesses of {}, and the exact curve needs about {} of memory for them, \
             but only {} is available (MemAvailable in /proc/meminfo): drop --exact (above {AUTO_EXACT_LIMIT} accesses \
             the curve is sampled, its error stated), or give a larger --block-size",
            Bytes(block_size),
            crate::run::resources::human(need),
            crate::run::resources::human(available)
        );
    }
    Ok(())
}

pub fn execute(args: CacheCurveArgs) -> Result<i32> {
    let json = args.json.as_deref().map(|p| output_path::check("--json", p, Mode::Replace)).transpose()?;
    let report = build(&args)?;
    // A closed stdout (`| head`) is reported, not a panic, and the JSON file is still written.
    let printed = super::print_out(&render(&report), "the summary");
    if let Some(out) = json {
        let text = serde_json::to_string_pretty(&report)?;
        out.replace_with((text + "\n").as_bytes())?;
    }
    printed.map(|_| exit::OK)
}

/// The region of each target: `region` for all, or the highest byte each reaches.
pub fn regions(records: &[TraceRecord], region: Option<u64>) -> BTreeMap<u16, u64> {
    let mut reached: BTreeMap<u16, u64> = BTreeMap::new();
    for r in records {
        let end = r.offset.saturating_add(r.len as u64);
        let e = reached.entry(r.target).or_insert(0);
        *e = (*e).max(end);
    }
    if let Some(size) = region {
        reached.values_mut().for_each(|v| *v = size);
    }
    reached
}

fn latency_model(args: &CacheCurveArgs) -> Result<Option<LatencyModel>> {
    match (args.hit_us, args.miss_us, args.outstanding) {
        (None, None, None) => Ok(None),
        (Some(hit), Some(miss), Some(n)) => Ok(Some(LatencyModel::new(hit, miss, n)?)),
        (hit, miss, n) => {
            let missing: Vec<&str> = [(hit.is_none(), "--hit-us"), (miss.is_none(), "--miss-us"), (n.is_none(), "--outstanding")]
                .iter()
                .filter(|(absent, _)| *absent)
                .map(|(_, flag)| *flag)
                .collect();
            bail!(
                "--hit-us, --miss-us and --outstanding go together: give all three to predict latency and IOPS (missing: {})",
                missing.join(", ")
            )
        }
    }
}

/// Loads the trace and computes the report (no printing).
pub fn build(args: &CacheCurveArgs) -> Result<CurveReport> {
    let block_size = parse_size(&args.block_size).map_err(|e| anyhow::anyhow!("--block-size: {e}"))?.get();
    if block_size == 0 {
        bail!("--block-size 0: the cache block size must be at least 1 byte, for example 4k");
    }
    let region = args.region.as_deref().map(|r| parse_size(r).map_err(|e| anyhow::anyhow!("--region: {e}"))).transpose()?;
    if region == Some(Bytes(0)) {
        bail!("--region 0: the region must be above 0 bytes, for example 10g");
    }
    let sizes = super::cache_sizes::parse("--sizes", &args.sizes)?;
    let model = latency_model(args)?;
    if let Some(rate) = args.sampled {
        if !(rate > 0.0 && rate <= 1.0) {
            bail!("--sampled {rate}: the SHARDS sampling rate must be above 0 and at most 1, for example 0.01 (1% of blocks)");
        }
    }
    if !args.file.exists() {
        bail!("{}: no such file; give a lunmark binary trace, blkparse text output or MSR Cambridge CSV", args.file.display());
    }
    let (kind, records) = load_trace(&args.file)?;
    if records.is_empty() {
        bail!("{}: the trace holds no I/O records, so there is no curve to compute", args.file.display());
    }
    let regions = regions(&records, region.map(Bytes::get));
    if let Some(size) = region {
        let reached = records.iter().map(|r| r.offset.saturating_add(r.len as u64)).max().unwrap_or(0);
        if reached > size.get() {
            crate::ewriteln!(
                "warning: the trace reaches byte {reached}, beyond --region {size}; cache % are of a region smaller than what is used"
            );
        }
    }
    let region_blocks: u64 = regions.values().map(|&bytes| bytes.div_ceil(block_size)).sum();

    let curve = if args.exact {
        check_exact_memory(&records, block_size)?;
        MissRatioCurve::exact(block_accesses(&records, block_size))
    } else if let Some(rate) = args.sampled {
        MissRatioCurve::sampled(block_accesses(&records, block_size), rate)
    } else {
        MissRatioCurve::auto(&records, block_size)
    };
    let rows = curve_rows(&curve, &sizes, region_blocks, block_size, model.as_ref());
    let reads = records.iter().filter(|r| r.op == Op::Read).count() as u64;
    Ok(CurveReport {
        trace: args.file.display().to_string(),
        format: match kind {
            TraceKind::Binary => "lunmark binary trace",
            TraceKind::Blkparse => "blkparse text",
            TraceKind::Msr => "MSR Cambridge CSV",
        },
        ios: records.len() as u64,
        reads,
        writes: records.len() as u64 - reads,
        targets: regions.len(),
        block_size,
        region_bytes: regions,
        region_blocks,
        block_accesses: count_block_accesses(&records, block_size),
        distinct_blocks: curve.distinct_blocks().round() as u64,
        sampled_accesses: curve.sampled_accesses,
        method: curve.method,
        error_bound: curve.error_bound(),
        model,
        rows,
    })
}

/// The ratios (and predictions) at each size, as % of `region_blocks`.
pub fn curve_rows(
    curve: &MissRatioCurve,
    sizes: &[f64],
    region_blocks: u64,
    block_size: u64,
    model: Option<&LatencyModel>,
) -> Vec<CurveRow> {
    let rows: Vec<CurveRow> = sizes
        .iter()
        .map(|&pct| {
            let blocks = MissRatioCurve::blocks_at_fraction(pct / 100.0, region_blocks);
            CurveRow {
                cache_pct: pct,
                cache_blocks: blocks,
                cache_bytes: blocks.saturating_mul(block_size),
                hit_ratio: curve.hit_ratio(blocks),
                read_hit_ratio: (curve.read_accesses > 0).then(|| curve.read_hit_ratio(blocks)),
                served_ratio: curve.served_ratio(blocks),
                prediction: None,
            }
        })
        .collect();
    let Some(model) = model else { return rows };
    let points: Vec<HitRatioPoint> =
        rows.iter().map(|r| HitRatioPoint { cache_pct: r.cache_pct, cache_bytes: r.cache_bytes, hit_ratio: r.served_ratio }).collect();
    rows.into_iter().zip(predict(model, &points)).map(|(row, p)| CurveRow { prediction: Some(p), ..row }).collect()
}

/// The terminal form of a report (report::terminal::cache_curve_table renders it).
pub fn render(r: &CurveReport) -> String {
    use crate::report::terminal::cache_curve_table::{
        self as table, CurveMethod, CurveTable, CurveTableRow, LatencyInputs, PredictedFigures,
    };
    let view = CurveTable {
        trace: &r.trace,
        format: r.format,
        ios: r.ios,
        reads: r.reads,
        writes: r.writes,
        block_size: r.block_size,
        regions: r.region_bytes.values().copied().collect(),
        region_blocks: r.region_blocks,
        block_accesses: r.block_accesses,
        distinct_blocks: r.distinct_blocks as f64,
        sampled_accesses: r.sampled_accesses,
        method: match r.method {
            Method::Exact => CurveMethod::Exact,
            Method::Shards { rate } => CurveMethod::Sampled { rate },
        },
        past_exact_limit: r.block_accesses > AUTO_EXACT_LIMIT,
        error_bound: r.error_bound,
        model: r.model.as_ref().map(|m| LatencyInputs { hit_us: m.hit_us, miss_us: m.miss_us, outstanding: m.outstanding }),
        rows: r
            .rows
            .iter()
            .map(|row| CurveTableRow {
                cache_pct: row.cache_pct,
                cache_bytes: row.cache_bytes,
                hit_ratio: row.hit_ratio,
                read_hit_ratio: row.read_hit_ratio,
                served_ratio: row.served_ratio,
                prediction: row.prediction.map(|p| PredictedFigures {
                    latency_us: p.predicted_latency_us,
                    iops: p.predicted_iops,
                    latency_reduction_pct: p.latency_reduction_pct,
                    iops_increase_pct: p.iops_increase_pct,
                }),
            })
            .collect(),
    };
    table::render(&view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// For tests: the report of a trace file with default flags.
    fn report_of(file: &Path, extra: &[&str]) -> Result<CurveReport> {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            args: CacheCurveArgs,
        }
        let argv = ["cache-curve", file.to_str().unwrap_or_default()].into_iter().chain(extra.iter().copied());
        build(&Wrap::try_parse_from(argv)?.args)
    }

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blkparse/sample.txt")
    }

    /// `--sizes` as cache-curve reads it (the rules are `cache_sizes`').
    fn parse_sizes(text: &str) -> Result<Vec<f64>> {
        crate::cli::cache_sizes::parse("--sizes", text)
    }

    #[test]
    fn sizes_parse_and_bad_ones_say_what_is_allowed() {
        assert_eq!(parse_sizes("0, 25,30%,100").unwrap(), vec![0.0, 25.0, 30.0, 100.0]);
        let err = parse_sizes("0,120").unwrap_err().to_string();
        assert!(err.starts_with("--sizes 0,120: '120' is not a percentage between 0 and 100"), "{err}");
        for signed in ["10,-0", "+5"] {
            let err = parse_sizes(signed).unwrap_err().to_string();
            assert!(err.contains("is not a percentage between 0 and 100"), "{signed}: {err}");
        }
        assert!(parse_sizes("0,,5").unwrap_err().to_string().contains("empty entry"));
        assert!(parse_sizes("ten").unwrap_err().to_string().contains("'ten'"));
    }

    #[test]
    fn the_fixture_gives_a_curve_that_rises_to_every_reuse() {
        let r = report_of(&fixture(), &[]).unwrap();
        assert_eq!((r.ios, r.reads, r.writes, r.targets), (13, 9, 4, 2));
        assert_eq!(r.method, Method::Exact);
        assert_eq!(r.rows.len(), 6);
        assert_eq!(r.rows[0].hit_ratio.to_bits(), 0.0f64.to_bits(), "no cache, no hits (and not -0)");
        assert!(r.rows.windows(2).all(|w| w[0].hit_ratio <= w[1].hit_ratio), "hit ratios grow with the cache");
        let full = r.rows.last().unwrap();
        let reuse = 1.0 - r.distinct_blocks as f64 / r.block_accesses as f64;
        assert!((full.hit_ratio - reuse).abs() < 1e-12, "at 100% only cold misses remain: {} vs {reuse}", full.hit_ratio);
        assert!(render(&r).contains("method: exact"));
    }

    #[test]
    fn predictions_appear_with_all_three_latency_flags_only() {
        let r = report_of(&fixture(), &["--hit-us", "100", "--miss-us", "4700", "--outstanding", "5", "--sizes", "0,100"]).unwrap();
        let p = r.rows[1].prediction.unwrap();
        let h = r.rows[1].served_ratio;
        assert!((p.predicted_latency_us - (h * 100.0 + (1.0 - h) * 4700.0)).abs() < 1e-9);
        let text = render(&r);
        assert!(text.contains("Little's law") && !text.contains("-0.0%"), "{text}");
        let err = report_of(&fixture(), &["--hit-us", "100"]).unwrap_err().to_string();
        assert!(err.contains("missing: --miss-us, --outstanding"), "{err}");
    }

    #[test]
    fn the_fixture_prints_as_its_snapshot() {
        // The trace as the user names it from the repository's root.
        let with_model = ["--hit-us", "100", "--miss-us", "4700", "--outstanding", "5"];
        for (extra, golden) in [(&[][..], "cache-curve.txt"), (&with_model[..], "cache-curve-predicted.txt")] {
            let mut r = report_of(&fixture(), extra).unwrap();
            r.trace = "tests/fixtures/blkparse/sample.txt".into();
            crate::report::check_golden(golden, &render(&r));
        }
    }

    #[test]
    fn sampling_region_and_missing_file_errors() {
        let r = report_of(&fixture(), &["--sampled", "1"]).unwrap();
        assert_eq!(r.method, Method::Shards { rate: 1.0 });
        let err = report_of(&fixture(), &["--sampled", "2"]).unwrap_err().to_string();
        assert!(err.contains("--sampled 2"), "{err}");
        let r = report_of(&fixture(), &["--region", "1g", "--block-size", "1m"]).unwrap();
        assert_eq!(r.region_blocks, 2 * 1024);
        let err = report_of(Path::new("/nonexistent/trace"), &[]).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/trace: no such file"), "{err}");
    }

    #[test]
    fn the_json_counts_distinct_blocks_as_a_whole_number() {
        for extra in [&[][..], &["--sampled", "0.3"][..]] {
            let r = report_of(&fixture(), extra).unwrap();
            let json: serde_json::Value = serde_json::to_value(&r).unwrap();
            assert!(json["distinct_blocks"].is_u64(), "{extra:?}: {}", json["distinct_blocks"]);
        }
    }

    #[test]
    fn an_empty_binary_trace_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.lmtrace");
        crate::trace::TraceWriter::create(&path).unwrap().finish().unwrap();
        let err = report_of(&path, &[]).unwrap_err().to_string();
        assert!(err.contains("holds no I/O records"), "{err}");
    }
}
