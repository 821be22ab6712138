//! Results as rows of named figures, one row per point: the shared shape of the
//! Markdown exporter and the report's summary table; and the wide CSV for
//! scripts (one row per point, a column per parameter and metric). Pure.

use super::workload_text;
use crate::results::model::{LatencyStats, Point, RunResult};
use crate::results::registry;

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

/// A figure in a CSV: whole numbers as they are, others to 3 decimals (not
/// every digit of the float).
pub fn fmt(v: f64) -> String {
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

use super::escape::csv_field as quote;

/// One figure read from a latency distribution.
pub type LatencyFigure = fn(&LatencyStats) -> f64;

/// The figures of one latency distribution, in CSV column order: its count,
/// then the registry's statistics.
fn latency_figures() -> impl Iterator<Item = (&'static str, LatencyFigure)> {
    let count: LatencyFigure = |l| l.count as f64;
    std::iter::once(("count", count)).chain(registry::LATENCY_STATS.iter().map(|s| (s.key, s.read)))
}

/// The latency distributions of the wide CSV, in column order (trim and sync
/// are empty for a point without them).
const LATENCY_OPS: [&str; 5] = ["read", "write", "all", "trim", "sync"];

/// The header of the wide CSV: identity, one column per sweep parameter seen
/// in any of the results (`param_qd`, `param_phase`, ...), the point's
/// workload, then every metric, latency per direction with every percentile.
pub fn csv_columns(results: &[&RunResult]) -> Vec<String> {
    let mut cols: Vec<String> = ["id", "label", "profile", "started_at", "status", "point"].iter().map(|c| c.to_string()).collect();
    cols.extend(param_keys(results).iter().map(|k| format!("param_{k}")));
    cols.extend(["bs", "read_pct", "random_pct", "qd", "workers", "targets"].iter().map(|c| c.to_string()));
    cols.extend(registry::csv_columns().map(|(column, _)| column.to_string()));
    for op in LATENCY_OPS {
        cols.extend(latency_figures().map(|(f, _)| if f == "count" { format!("lat_{op}_count") } else { format!("lat_{op}_{f}_us") }));
    }
    // Last, so the columns before keep their places: why a point stopped before its plan.
    cols.push("cut_short".into());
    cols
}

/// Every sweep parameter of the results' points, sorted.
fn param_keys(results: &[&RunResult]) -> Vec<String> {
    let mut keys: Vec<String> = results.iter().flat_map(|r| r.points.iter()).flat_map(|p| p.params.keys().cloned()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// CSV for scripts: one row per point of every result, one column per
/// parameter and metric (reads and writes apart, every percentile); an empty
/// field where a figure does not apply (a point without that parameter,
/// CPU efficiency without CPU use, a workload not recorded).
pub fn csv(results: &[&RunResult]) -> String {
    let keys = param_keys(results);
    let mut out = csv_columns(results).join(",") + "\n";
    for r in results {
        for (i, p) in r.points.iter().enumerate() {
            let s = &p.summary;
            let mut row: Vec<String> = vec![
                r.id.clone(),
                r.label.clone().unwrap_or_default(),
                r.profile.clone().unwrap_or_default(),
                r.started_at.clone(),
                serde_json::to_value(r.status).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
                (i + 1).to_string(),
            ];
            row.extend(keys.iter().map(|k| p.params.get(k).map(|v| v.to_string().trim_matches('"').to_string()).unwrap_or_default()));
            match workload_text::of_point(r, i) {
                // A replay's access lines are not what ran: the trace gave each I/O.
                Some(w) if w.replay.is_some() => row.extend([
                    "replay".to_string(),
                    String::new(),
                    String::new(),
                    workload_text::qd(&w),
                    w.total_workers().to_string(),
                    w.targets.len().to_string(),
                ]),
                Some(w) => row.extend([
                    workload_text::bs(&w),
                    workload_text::read_pct(&w),
                    workload_text::random_pct(&w),
                    workload_text::qd(&w),
                    w.total_workers().to_string(),
                    w.targets.len().to_string(),
                ]),
                None => row.extend(std::iter::repeat_n(String::new(), 6)),
            }
            row.extend(registry::csv_columns().map(|(_, m)| m.get(s).map(fmt).unwrap_or_default()));
            for l in [
                Some(&s.latency_us.read),
                Some(&s.latency_us.write),
                Some(&s.latency_us.all),
                s.latency_us.trim.as_ref(),
                s.latency_us.sync.as_ref(),
            ] {
                // Empty where the point issued no trims (or no syncs).
                row.extend(latency_figures().map(|(_, f)| l.map(|l| fmt(f(l))).unwrap_or_default()));
            }
            // Empty for a point that ran its whole plan.
            row.push(p.cut_short.clone().unwrap_or_default());
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
            out += &format!("| {} |\n", row.iter().map(|f| super::escape::markdown(f)).collect::<Vec<_>>().join(" | "));
        }
    }
    out
}
