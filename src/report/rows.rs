//! Results as rows of named figures, one row per point: the shared shape of the
//! CSV and Markdown exporters (and the report's summary table). Pure.

use crate::results::model::{Point, RunResult};

pub const COLUMNS: &[&str] = &[
    "id",
    "label",
    "point",
    "params",
    "iops",
    "read_iops",
    "write_iops",
    "mbps",
    "read_mbps",
    "write_mbps",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p99_9_us",
    "lat_max_us",
    "cpu_pct",
    "iops_per_cpu_pct",
    "mbps_per_cpu_pct",
    "service_demand_us_per_kb",
    "errors",
];

/// "qd=8 bs=4k" for a point, "-" for a plain run.
pub fn params_text(p: &Point) -> String {
    let text: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"'))).collect();
    if text.is_empty() {
        "-".into()
    } else {
        text.join(" ")
    }
}

/// A result's display name: its label, else its id.
pub fn name(r: &RunResult) -> String {
    r.label.clone().unwrap_or_else(|| r.id.clone())
}

fn fmt(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

pub fn rows(r: &RunResult) -> Vec<Vec<String>> {
    r.points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let s = &p.summary;
            let opt = |v: Option<f64>| v.map(fmt).unwrap_or_default();
            vec![
                r.id.clone(),
                r.label.clone().unwrap_or_default(),
                (i + 1).to_string(),
                params_text(p),
                fmt(s.iops),
                fmt(s.read_iops),
                fmt(s.write_iops),
                fmt(s.mbps),
                fmt(s.read_mbps),
                fmt(s.write_mbps),
                fmt(s.latency_us.all.mean),
                fmt(s.latency_us.all.p50),
                fmt(s.latency_us.all.p99),
                fmt(s.latency_us.all.p99_9),
                fmt(s.latency_us.all.max),
                fmt(s.cpu.utilization_pct),
                opt(s.cpu.iops_per_cpu_pct),
                opt(s.cpu.mbps_per_cpu_pct),
                opt(s.cpu.service_demand_us_per_kb),
                s.errors.total.to_string(),
            ]
        })
        .collect()
}

/// CSV with a header line; fields quoted when they hold a comma, quote or newline.
pub fn csv(results: &[&RunResult]) -> String {
    let quote = |f: &str| if f.contains([',', '"', '\n']) { format!("\"{}\"", f.replace('"', "\"\"")) } else { f.to_string() };
    let mut out = COLUMNS.join(",") + "\n";
    for r in results {
        for row in rows(r) {
            out += &row.iter().map(|f| quote(f)).collect::<Vec<_>>().join(",");
            out.push('\n');
        }
    }
    out
}

/// A Markdown table (pipes in fields escaped).
pub fn markdown(results: &[&RunResult]) -> String {
    let mut out = format!("| {} |\n|{}\n", COLUMNS.join(" | "), "---|".repeat(COLUMNS.len()));
    for r in results {
        for row in rows(r) {
            out += &format!("| {} |\n", row.iter().map(|f| f.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
        }
    }
    out
}
