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
    "lat_all_mean_us",
    "lat_all_p50_us",
    "lat_all_p99_us",
    "lat_all_p99_9_us",
    "lat_all_max_us",
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
    cols.extend(EXTRA_COLUMNS.iter().map(|c| c.to_string()));
    cols.extend(spread_columns());
    cols
}

/// After `cut_short`: the repeats a point ran, and with --cpus the pinned CPUs' figures.
const EXTRA_COLUMNS: [&str; 5] = ["repeats", "pinned_cpus", "pinned_cpu_pct", "pinned_iops_per_cpu_pct", "pinned_service_demand_us_per_kb"];

/// The figures whose spread over repeats is kept (compare's), each by its
/// CSV column name: a latency as the point's own column (`lat_all_p99_us`,
/// as the Markdown export names it too), another without one by its key
/// with `_` for `.`.
fn spread_figures() -> impl Iterator<Item = (String, &'static registry::Metric)> {
    registry::compared().map(|m| (m.csv.map(String::from).unwrap_or_else(|| column_of(m.key)), m))
}

/// `latency_us.all.p99` -> `lat_all_p99_us` (the CSV's latency columns);
/// any other key with `_` for `.`.
fn column_of(key: &str) -> String {
    match key.strip_prefix("latency_us.").and_then(|k| k.split_once('.')) {
        Some((kind, stat)) => format!("lat_{kind}_{stat}_us"),
        None => key.replace('.', "_"),
    }
}

/// `NAME_n`, `NAME_mean`, `NAME_stdev`, `NAME_cv_pct` for every figure with a spread.
fn spread_columns() -> Vec<String> {
    spread_figures().flat_map(|(name, _)| ["n", "mean", "stdev", "cv_pct"].map(|s| format!("{name}_{s}"))).collect()
}

/// The repeats and pinned-CPU fields of a point, in `EXTRA_COLUMNS` order
/// (empty without repeats or --cpus).
fn extra_fields(p: &Point) -> Vec<String> {
    let pinned = p.summary.cpu.pinned.as_ref();
    let opt = |v: Option<f64>| v.map(fmt).unwrap_or_default();
    vec![
        p.repeats.as_ref().map(|r| r.count.to_string()).unwrap_or_default(),
        pinned.map(|x| x.cpus.clone()).unwrap_or_default(),
        opt(pinned.map(|x| x.utilization_pct)),
        opt(pinned.and_then(|x| x.iops_per_cpu_pct)),
        opt(pinned.and_then(|x| x.service_demand_us_per_kb)),
    ]
}

/// n, mean, stdev and CV of each figure over the point's repeats, in
/// `spread_columns` order; empty for a point without repeats.
fn spread_fields(p: &Point) -> Vec<String> {
    spread_figures()
        .flat_map(|(_, m)| match p.repeats.as_ref().and_then(|r| r.spread(m.key)) {
            Some(s) => [s.n.unwrap_or_default().to_string(), fmt(s.mean), fmt(s.stdev), fmt(s.cv_pct)],
            None => Default::default(),
        })
        .collect()
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
            row.extend(extra_fields(p));
            row.extend(spread_fields(p));
            out += &row.iter().map(|f| quote(f)).collect::<Vec<_>>().join(",");
            out.push('\n');
        }
    }
    out
}

/// The Markdown export's figures with a spread over repeats: (column, registry key).
const MD_SPREAD: [(&str, &str); 15] = [
    ("iops", "iops"),
    ("read_iops", "read_iops"),
    ("write_iops", "write_iops"),
    ("mbps", "mbps"),
    ("read_mbps", "read_mbps"),
    ("write_mbps", "write_mbps"),
    ("lat_all_mean_us", "latency_us.all.mean"),
    ("lat_all_p50_us", "latency_us.all.p50"),
    ("lat_all_p99_us", "latency_us.all.p99"),
    ("lat_all_p99_9_us", "latency_us.all.p99_9"),
    ("lat_all_max_us", "latency_us.all.max"),
    ("cpu_pct", "cpu.utilization_pct"),
    ("iops_per_cpu_pct", "cpu.iops_per_cpu_pct"),
    ("mbps_per_cpu_pct", "cpu.mbps_per_cpu_pct"),
    ("service_demand_us_per_kb", "cpu.service_demand_us_per_kb"),
];

/// A Markdown table (pipes in fields escaped): `COLUMNS`, then the repeats
/// and pinned-CPU fields, then, where any point was repeated, the mean,
/// stdev and CV over its repeats of each figure that has them.
pub fn markdown(results: &[&RunResult]) -> String {
    let repeated = results.iter().any(|r| r.points.iter().any(|p| p.repeats.is_some()));
    let mut header: Vec<String> = COLUMNS.iter().chain(&EXTRA_COLUMNS).map(|c| c.to_string()).collect();
    if repeated {
        header.extend(MD_SPREAD.iter().flat_map(|(c, _)| ["mean", "stdev", "cv_pct"].map(|s| format!("{c}_{s}"))));
    }
    let mut out = format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len()));
    for r in results {
        for (p, mut row) in r.points.iter().zip(rows(r)) {
            row.extend(extra_fields(p));
            if repeated {
                row.extend(MD_SPREAD.iter().flat_map(|(_, key)| match p.repeats.as_ref().and_then(|x| x.spread(key)) {
                    Some(s) => [fmt(s.mean), fmt(s.stdev), fmt(s.cv_pct)],
                    None => Default::default(),
                }));
            }
            out += &format!("| {} |\n", row.iter().map(|f| super::escape::markdown(f)).collect::<Vec<_>>().join(" | "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::model::{PinnedCpuStats, Summary};
    use crate::results::repeats::{combine, Pick};

    /// The CSV and Markdown exports carry each figure's spread over repeats
    /// (n, mean, stdev, CV), the repeats and the pinned-CPU fields, after the
    /// columns that were there before; a label cannot start a formula.
    #[test]
    fn exports_carry_the_repeats_spread_and_the_pinned_fields() {
        let mut r = crate::report::golden_result("result-a.json");
        r.points.truncate(1);
        r.label = Some("=HYPERLINK(\"x\")".into());
        let p = &mut r.points[0];
        let runs: Vec<Summary> = [100.0, 100.0, 130.0].iter().map(|&iops| Summary { iops, ..p.summary.clone() }).collect();
        let (i, stats) = combine(&runs, Pick::Mean);
        p.summary = runs[i].clone();
        p.summary.cpu.pinned =
            Some(PinnedCpuStats { cpus: "0-1".into(), utilization_pct: 50.0, service_demand_us_per_kb: Some(1.5), ..Default::default() });
        p.repeats = Some(stats);
        let csv = csv(&[&r]);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let at = |c: &str| row[header.iter().position(|h| *h == c).unwrap_or_else(|| panic!("no column {c}"))];
        assert!(header.iter().position(|h| *h == "cut_short") < header.iter().position(|h| *h == "repeats"), "new columns at the end");
        assert_eq!((at("iops"), at("repeats")), ("100", "3"), "the picked run, and how many repeats");
        assert_eq!((at("iops_n"), at("iops_mean"), at("iops_stdev"), at("iops_cv_pct")), ("3", "110", "17.321", "15.746"));
        assert_eq!(at("lat_all_p99_us_n"), "3");
        assert_eq!((at("pinned_cpus"), at("pinned_cpu_pct"), at("pinned_service_demand_us_per_kb")), ("0-1", "50", "1.500"));
        assert!(csv.contains(",\"'=HYPERLINK(\"\"x\"\")\","), "a label read as a formula: {csv}");
        assert_eq!(quote("-1.5"), "-1.5", "a negative number stays a number");
        let md = markdown(&[&r]);
        let header: Vec<&str> = md.lines().next().unwrap().split(" | ").collect();
        let row: Vec<&str> = md.lines().nth(2).unwrap().split(" | ").collect();
        let at = |c: &str| row[header.iter().position(|h| *h == c).unwrap_or_else(|| panic!("no column {c}"))];
        assert_eq!((at("iops_mean"), at("iops_stdev"), at("iops_cv_pct"), at("repeats")), ("110", "17.321", "15.746", "3"));
        assert_eq!(at("pinned_cpus"), "0-1");
        // One naming: every Markdown column is a CSV column of the same name
        // (it was lat_mean_us_mean beside the CSV's latency_us_all_mean_mean).
        let csv_header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let md_only: Vec<&str> =
            header.iter().map(|h| h.trim_matches(|c| c == '|' || c == ' ')).filter(|h| *h != "params" && !csv_header.contains(h)).collect();
        assert!(md_only.is_empty(), "Markdown columns the CSV names otherwise: {md_only:?}");
        assert!(header.contains(&"lat_all_mean_us_mean") && csv_header.contains(&"lat_all_mean_us_mean"));
    }
}
