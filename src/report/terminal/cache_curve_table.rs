//! The terminal form of `lunmark cache-curve`: the trace's counts, the cache
//! modelled, how the curve was computed, and a table of hit ratios (and, with
//! measured hit and miss latencies, predicted latency and IOPS) at each cache
//! size. Pure: the figures in, text out; the command computes them.
//!
//! The figures come as a view filled by the command, not as the sizing
//! module's own types: the report layer does not import trace-based sizing.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};

use crate::report::cells::right;
use crate::units::{plural, Bytes};

/// Everything the table says.
#[derive(Clone, Debug)]
pub struct CurveTable<'a> {
    /// The trace file as the user named it.
    pub trace: &'a str,
    /// Its format in words ("blkparse text").
    pub format: &'a str,
    pub ios: u64,
    pub reads: u64,
    pub writes: u64,
    pub block_size: u64,
    /// The region of each target the cache % refer to, bytes, in target order.
    pub regions: Vec<u64>,
    pub region_blocks: u64,
    pub block_accesses: u64,
    pub distinct_blocks: f64,
    pub sampled_accesses: u64,
    pub method: CurveMethod,
    /// An exact curve of more accesses than the default choice computes
    /// exactly (20M): the table suggests sampling.
    pub past_exact_limit: bool,
    /// Expected mean absolute error of the ratios (0 when exact).
    pub error_bound: f64,
    /// The latencies the predictions use, when given.
    pub model: Option<LatencyInputs>,
    pub rows: Vec<CurveTableRow>,
}

/// How the curve was computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CurveMethod {
    Exact,
    /// SHARDS sampling at this rate.
    Sampled {
        rate: f64,
    },
}

/// The measured latencies and the outstanding I/Os a prediction assumes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyInputs {
    pub hit_us: f64,
    pub miss_us: f64,
    pub outstanding: u32,
}

/// One cache size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurveTableRow {
    pub cache_pct: f64,
    pub cache_bytes: u64,
    pub hit_ratio: f64,
    /// None without reads in the trace.
    pub read_hit_ratio: Option<f64>,
    pub served_ratio: f64,
    pub prediction: Option<PredictedFigures>,
}

/// What a cache of one size should give, with the changes against no cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredictedFigures {
    pub latency_us: f64,
    pub iops: f64,
    pub latency_reduction_pct: f64,
    pub iops_increase_pct: f64,
}

/// "1.5 GiB", "512 KiB", "300 B".
pub fn human_bytes(bytes: u64) -> String {
    let exact = Bytes(bytes).to_string();
    if exact.len() <= 5 && exact.ends_with(|c: char| c.is_ascii_alphabetic()) {
        let (num, unit) = exact.split_at(exact.len() - 1);
        return format!("{num} {}iB", unit.to_ascii_uppercase());
    }
    let mut v = bytes as f64;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB"] {
        if v < 1024.0 || unit == "TiB" {
            return if unit == "B" { format!("{bytes} B") } else { format!("{v:.2} {unit}") };
        }
        v /= 1024.0;
    }
    unreachable!()
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// A count with thousands separated: "1,234,567".
pub fn count(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The terminal form of a curve.
pub fn render(r: &CurveTable) -> String {
    let targets = r.regions.len();
    let mut out = String::new();
    out.push_str(&format!(
        "trace: {} ({}): {} I/O{}, {} read{}, {} write{}, {} target{}\n",
        r.trace,
        r.format,
        count(r.ios as f64),
        plural(r.ios),
        count(r.reads as f64),
        plural(r.reads),
        count(r.writes as f64),
        plural(r.writes),
        targets,
        plural(targets as u64)
    ));
    let regions: Vec<String> = r.regions.iter().map(|&b| human_bytes(b)).collect();
    out.push_str(&format!(
        "cache: LRU, {} blocks, write-through with write-allocate; region {} = {} block{} ({})\n",
        human_bytes(r.block_size),
        regions.join(" + "),
        count(r.region_blocks as f64),
        plural(r.region_blocks),
        if targets == 1 { "cache % are of this region" } else { "cache % are of the sum over targets" }
    ));
    out.push_str(&format!(
        "accesses: {} block access{}, {} distinct block{}\n",
        count(r.block_accesses as f64),
        if r.block_accesses == 1 { "" } else { "es" },
        count(r.distinct_blocks),
        // An estimate when sampled: singular when it shows as 1.
        if count(r.distinct_blocks) == "1" { "" } else { "s" }
    ));
    out.push_str(&match r.method {
        CurveMethod::Exact => "method: exact LRU stack distances (every access; no sampling error)\n".to_string(),
        CurveMethod::Sampled { rate } => format!(
            "method: SHARDS sampling at R = {rate:.4} ({} of {} accesses); expected mean absolute error of the ratios \
             <= {:.3} (single sizes next to a knee of the curve can be off by more; --exact removes it)\n",
            count(r.sampled_accesses as f64),
            count(r.block_accesses as f64),
            r.error_bound
        ),
    });
    if r.method == CurveMethod::Exact && r.past_exact_limit {
        out.push_str("note: above 20M accesses; --sampled 0.01 would be faster and use less memory\n");
    }
    let mut table = Table::new();
    let mut header = vec!["cache %", "cache size", "hit ratio", "read hit ratio"];
    if r.model.is_some() {
        header.extend(["served", "latency us", "IOPS", "latency vs 0%", "IOPS vs 0%"]);
    }
    table.load_preset(UTF8_BORDERS_ONLY).set_header(header);
    for row in &r.rows {
        let mut cells = vec![
            right(format!("{}", row.cache_pct)),
            right(human_bytes(row.cache_bytes)),
            right(pct(row.hit_ratio)),
            right(row.read_hit_ratio.map(pct).unwrap_or_else(|| "-".into())),
        ];
        if let Some(p) = &row.prediction {
            cells.extend([
                right(pct(row.served_ratio)),
                right(format!("{:.1}", p.latency_us)),
                right(count(p.iops)),
                right(format!("{:+.1}%", 0.0 - p.latency_reduction_pct)), // 0.0 - x: never "-0.0%"
                right(format!("{:+.1}%", p.iops_increase_pct)),
            ]);
        }
        table.add_row(cells);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out.push_str("hit ratio: accesses (reads and writes) whose block is in the cache; read hit ratio: over reads only.\n");
    if let Some(m) = &r.model {
        out.push_str(&format!(
            "prediction: served = read hits / all accesses (writes are written through and pay the miss latency); \
             latency = served × {} + (1 − served) × {} µs; IOPS = {} outstanding / latency (Little's law); changes vs no cache.\n",
            m.hit_us, m.miss_us, m.outstanding
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The curve of tests/fixtures/blkparse/sample.txt as `lunmark cache-curve`
    /// computes it (13 I/Os on two targets, 24 block accesses, 10 distinct blocks).
    fn sample(model: Option<LatencyInputs>) -> CurveTable<'static> {
        let sizes = [(0.0, 0), (25.0, 32_832), (30.0, 39_399), (50.0, 65_665), (75.0, 98_498), (100.0, 131_331)];
        let rows = sizes
            .into_iter()
            .map(|(pct, blocks): (f64, u64)| {
                let (hit, read_hit, served) = if pct == 0.0 { (0.0, 0.0, 0.0) } else { (14.0 / 24.0, 12.0 / 19.0, 12.0 / 24.0) };
                let prediction = model.map(|m| {
                    let latency_us = served * m.hit_us + (1.0 - served) * m.miss_us;
                    PredictedFigures {
                        latency_us,
                        iops: m.outstanding as f64 / latency_us * 1e6,
                        latency_reduction_pct: (m.miss_us - latency_us) / m.miss_us * 100.0,
                        iops_increase_pct: (m.miss_us / latency_us - 1.0) * 100.0,
                    }
                });
                CurveTableRow {
                    cache_pct: pct,
                    cache_bytes: blocks * 4096,
                    hit_ratio: hit,
                    read_hit_ratio: Some(read_hit),
                    served_ratio: served,
                    prediction,
                }
            })
            .collect();
        CurveTable {
            trace: "tests/fixtures/blkparse/sample.txt",
            format: "blkparse text",
            ios: 13,
            reads: 9,
            writes: 4,
            block_size: 4096,
            regions: vec![536_879_104, 1_052_672],
            region_blocks: 131_331,
            block_accesses: 24,
            distinct_blocks: 10.0,
            sampled_accesses: 24,
            method: CurveMethod::Exact,
            past_exact_limit: false,
            error_bound: 0.0,
            model,
            rows,
        }
    }

    #[test]
    fn the_curve_table_matches_its_snapshots() {
        crate::report::check_golden("cache-curve.txt", &render(&sample(None)));
        let model = LatencyInputs { hit_us: 100.0, miss_us: 4700.0, outstanding: 5 };
        crate::report::check_golden("cache-curve-predicted.txt", &render(&sample(Some(model))));
        let mut sampled = sample(None);
        sampled.method = CurveMethod::Sampled { rate: 0.5 };
        sampled.sampled_accesses = 11;
        sampled.error_bound = 0.0123;
        sampled.block_accesses = 30_000_000;
        sampled.regions.truncate(1);
        sampled.rows[1].read_hit_ratio = None;
        crate::report::check_golden("cache-curve-sampled.txt", &render(&sampled));
    }

    #[test]
    fn an_exact_curve_past_the_limit_suggests_sampling() {
        let mut big = sample(None);
        big.past_exact_limit = true;
        assert!(render(&big).contains("note: above 20M accesses"));
        big.method = CurveMethod::Sampled { rate: 0.01 };
        assert!(!render(&big).contains("note:"), "a sampled curve needs no such note");
    }

    #[test]
    fn bytes_print_for_people() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(4096), "4 KiB");
        assert_eq!(human_bytes(3 << 30), "3 GiB");
        assert_eq!(human_bytes(1536 * 1024 + 1), "1.50 MiB");
        assert_eq!(human_bytes(1536), "1.50 KiB");
        assert_eq!(count(1234567.0), "1,234,567");
    }
}
