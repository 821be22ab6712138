//! Side-by-side comparison of results, the papers' real product: "133% better
//! IOPS", "3.9x greater". The first result is the baseline; every other one is
//! compared with it, point by point, metric by metric:
//! difference % = (X - base) / base x 100, ratio = X / base (METHODOLOGY.md),
//! and whether X is better (higher is better for rates and efficiencies, lower
//! for latency, CPU and service demand). Pure: results in, a `Comparison` out,
//! rendered by the functions at the end.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::rows::{name, params_text};
use crate::results::model::{Point, RunResult, Summary};
use crate::results::repeats::{RepeatStats, Spread};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

/// One comparable metric. Adding a metric is one line in `METRICS`.
pub struct Metric {
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub get: fn(&Summary) -> Option<f64>,
    /// The spread over repeats, where repeats record it.
    pub spread: Option<fn(&RepeatStats) -> &Spread>,
}

fn some(v: f64) -> Option<f64> {
    Some(v)
}

pub const METRICS: &[Metric] = &[
    Metric { name: "IOPS", unit: "IO/s", better: Better::Higher, get: |s| some(s.iops), spread: Some(|r| &r.iops) },
    Metric { name: "read IOPS", unit: "IO/s", better: Better::Higher, get: |s| some(s.read_iops), spread: None },
    Metric { name: "write IOPS", unit: "IO/s", better: Better::Higher, get: |s| some(s.write_iops), spread: None },
    Metric { name: "MB/s", unit: "MB/s", better: Better::Higher, get: |s| some(s.mbps), spread: Some(|r| &r.mbps) },
    Metric { name: "read MB/s", unit: "MB/s", better: Better::Higher, get: |s| some(s.read_mbps), spread: None },
    Metric { name: "write MB/s", unit: "MB/s", better: Better::Higher, get: |s| some(s.write_mbps), spread: None },
    Metric {
        name: "latency mean",
        unit: "us",
        better: Better::Lower,
        get: |s| some(s.latency_us.all.mean),
        spread: Some(|r| &r.lat_mean_us),
    },
    Metric { name: "latency p50", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.all.p50), spread: None },
    Metric { name: "latency p90", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.all.p90), spread: None },
    Metric { name: "latency p99", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.all.p99), spread: Some(|r| &r.lat_p99_us) },
    Metric { name: "latency p99.9", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.all.p99_9), spread: None },
    Metric { name: "latency p99.99", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.all.p99_99), spread: None },
    Metric { name: "latency max", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.all.max), spread: None },
    Metric { name: "read latency mean", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.read.mean), spread: None },
    Metric { name: "write latency mean", unit: "us", better: Better::Lower, get: |s| some(s.latency_us.write.mean), spread: None },
    Metric { name: "CPU", unit: "%", better: Better::Lower, get: |s| some(s.cpu.utilization_pct), spread: None },
    Metric { name: "IOPS per CPU%", unit: "IO/s/%", better: Better::Higher, get: |s| s.cpu.iops_per_cpu_pct, spread: None },
    Metric { name: "MB/s per CPU%", unit: "MB/s/%", better: Better::Higher, get: |s| s.cpu.mbps_per_cpu_pct, spread: None },
    Metric { name: "service demand", unit: "us/KB", better: Better::Lower, get: |s| s.cpu.service_demand_us_per_kb, spread: None },
    Metric { name: "power", unit: "W", better: Better::Lower, get: |s| s.power.as_ref()?.avg_watts, spread: None },
    Metric {
        name: "IOPS per delta watt",
        unit: "IO/s/W",
        better: Better::Higher,
        get: |s| s.power.as_ref()?.iops_per_delta_watt,
        spread: None,
    },
    Metric {
        name: "MB/s per delta watt",
        unit: "MB/s/W",
        better: Better::Higher,
        get: |s| s.power.as_ref()?.mbps_per_delta_watt,
        spread: None,
    },
];

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Display names: the baseline first.
    pub results: Vec<String>,
    pub points: Vec<PointComparison>,
    /// Points present in some results only.
    pub unmatched: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PointComparison {
    pub params: String,
    pub rows: Vec<MetricRow>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MetricRow {
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub baseline: f64,
    /// One per non-baseline result.
    pub versus: Vec<Versus>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Versus {
    pub value: f64,
    /// (value - baseline) / baseline x 100; null when the baseline is 0.
    pub diff_pct: Option<f64>,
    /// value / baseline; null when the baseline is 0.
    pub ratio: Option<f64>,
    /// "better", "worse", "same", or "not significant" (the difference is within the repeats' spread).
    pub verdict: String,
}

/// Workload fields that may differ between compared results: what is being compared.
const MAY_DIFFER: &[&str] = &["targets", "size", "offset", "engine", "buffered", "seed"];

/// Where two workloads differ, as "path: a vs b" lines (empty when comparable).
pub fn workload_differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    let strip = |r: &RunResult| {
        let mut v = serde_json::to_value(&r.workload).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            for k in MAY_DIFFER {
                m.remove(*k);
            }
        }
        let mut flat = BTreeMap::new();
        flatten("", &v, &mut flat);
        flat
    };
    let (fa, fb) = (strip(a), strip(b));
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| {
            format!("{k}: {} vs {}", fa.get(k).map(String::as_str).unwrap_or("(none)"), fb.get(k).map(String::as_str).unwrap_or("(none)"))
        })
        .collect()
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            m.iter().for_each(|(k, v)| flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, v, out))
        }
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&format!("{prefix}[{i}]"), v, out)),
        other => {
            out.insert(prefix.to_string(), other.to_string().trim_matches('"').to_string());
        }
    }
}

fn point_key(p: &Point) -> String {
    params_text(p)
}

pub fn compare(results: &[&RunResult]) -> Comparison {
    let base = results[0];
    let mut points = Vec::new();
    let mut unmatched = Vec::new();
    for bp in &base.points {
        let key = point_key(bp);
        let others: Vec<Option<&Point>> = results[1..].iter().map(|r| r.points.iter().find(|p| point_key(p) == key)).collect();
        if others.iter().any(Option::is_none) {
            unmatched.push(format!("{key} (not in every result)"));
            continue;
        }
        let others: Vec<&Point> = others.into_iter().map(Option::unwrap).collect();
        let mut rows = Vec::new();
        for m in METRICS {
            let Some(b) = (m.get)(&bp.summary) else { continue };
            let vals: Vec<Option<f64>> = others.iter().map(|p| (m.get)(&p.summary)).collect();
            if b == 0.0 && vals.iter().all(|v| v.unwrap_or(0.0) == 0.0) {
                continue; // e.g. write latency of a read-only workload
            }
            let versus = others
                .iter()
                .zip(vals)
                .map(|(p, v)| {
                    let v = v.unwrap_or(f64::NAN);
                    let diff_pct = (b != 0.0).then(|| (v - b) / b * 100.0);
                    let ratio = (b != 0.0).then(|| v / b);
                    let noise = m.spread.and_then(|sp| Some(sp(bp.repeats.as_ref()?).stdev.max(sp(p.repeats.as_ref()?).stdev)));
                    let verdict = if noise.is_some_and(|n| (v - b).abs() <= n) {
                        "not significant"
                    } else if v == b {
                        "same"
                    } else if (v > b) == (m.better == Better::Higher) {
                        "better"
                    } else {
                        "worse"
                    };
                    Versus { value: v, diff_pct, ratio, verdict: verdict.into() }
                })
                .collect();
            rows.push(MetricRow { metric: m.name.into(), unit: m.unit.into(), better: m.better, baseline: b, versus });
        }
        points.push(PointComparison { params: key, rows });
    }
    for r in &results[1..] {
        for p in &r.points {
            let key = point_key(p);
            if !base.points.iter().any(|bp| point_key(bp) == key) {
                unmatched.push(format!("{key} (only in {})", name(r)));
            }
        }
    }
    Comparison { results: results.iter().map(|r| name(r)).collect(), points, unmatched }
}

fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn cells(v: &Versus) -> [String; 4] {
    [
        num(v.value),
        v.diff_pct.map(|d| format!("{d:+.1}%")).unwrap_or_else(|| "-".into()),
        v.ratio.map(|r| format!("{r:.2}x")).unwrap_or_else(|| "-".into()),
        v.verdict.clone(),
    ]
}

fn header(c: &Comparison) -> Vec<String> {
    let mut h = vec!["metric".to_string(), "unit".into(), format!("{} (baseline)", c.results[0])];
    for r in &c.results[1..] {
        h.extend([r.clone(), "diff".into(), "ratio".into(), "".into()]);
    }
    h
}

fn body(row: &MetricRow) -> Vec<String> {
    let mut cols = vec![row.metric.clone(), row.unit.clone(), num(row.baseline)];
    for v in &row.versus {
        cols.extend(cells(v));
    }
    cols
}

pub fn render_table(c: &Comparison) -> String {
    use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};
    let mut out = String::new();
    for p in &c.points {
        let mut t = Table::new();
        t.load_preset(UTF8_BORDERS_ONLY).set_header(header(c));
        for row in &p.rows {
            t.add_row(body(row));
        }
        out += &format!("point {}\n{t}\n", p.params);
    }
    for u in &c.unmatched {
        out += &format!("not compared: {u}\n");
    }
    out
}

pub fn render_markdown(c: &Comparison) -> String {
    let mut out = String::new();
    for p in &c.points {
        let h = header(c);
        out += &format!("### point {}\n\n| {} |\n|{}\n", p.params, h.join(" | "), "---|".repeat(h.len()));
        for row in &p.rows {
            out += &format!("| {} |\n", body(row).join(" | "));
        }
        out.push('\n');
    }
    for u in &c.unmatched {
        out += &format!("- not compared: {u}\n");
    }
    out
}

pub fn render_csv(c: &Comparison) -> String {
    let mut out = String::from("point,metric,unit,better,result,value,baseline,diff_pct,ratio,verdict\n");
    for p in &c.points {
        for row in &p.rows {
            for (name, v) in c.results[1..].iter().zip(&row.versus) {
                out += &format!(
                    "\"{}\",{},{},{:?},\"{}\",{},{},{},{},{}\n",
                    p.params,
                    row.metric,
                    row.unit,
                    row.better,
                    name,
                    v.value,
                    row.baseline,
                    v.diff_pct.map(|d| d.to_string()).unwrap_or_default(),
                    v.ratio.map(|r| r.to_string()).unwrap_or_default(),
                    v.verdict
                );
            }
        }
    }
    out
}

pub fn render_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("a comparison serialises") + "\n"
}
