//! Side-by-side comparison of results, the papers' real product: "133% better
//! IOPS", "3.9x greater". The first result is the baseline; every other one is
//! compared with it, point by point, metric by metric:
//! difference % = (X - base) / base x 100, ratio = X / base (METHODOLOGY.md),
//! and whether X is better (higher is better for rates and efficiencies, lower
//! for latency, CPU and service demand). With repeats on both sides, each
//! difference is tested (Welch's t-test at 95%, `welch.rs`) and called "not
//! significant" when the repeats' spread explains it; without, significance is
//! said to be unknown. The values compared at a point with repeats are the
//! repeats' means, the numbers the test reads (`compare --pick`: the run each
//! point reports), and every format says which ("mean of 3 repeats").
//! Results that differ only in run time or ramp are
//! compared with a note. Pure: results in, a `Comparison` out, rendered by the
//! functions at the end.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::rows::{name, params_text};
use super::welch::{welch, Sample, Welch};
use crate::results::model::{Point, RunResult};
use crate::results::registry;
use crate::workload::WorkloadSpec;

/// A comparable metric: the registry's (`results::registry`), where adding one
/// is one entry; compare takes those marked compared, in the registry's order.
pub use crate::results::registry::{Better, Metric};
use Better::{Higher, Lower};

/// Figures compared per target (two adapter ports, two LUNs), where every
/// result has the target at the same index: (name, unit, better, getter).
type TargetFigure = (&'static str, &'static str, Better, fn(&crate::results::per_worker::TargetFigures) -> f64);
const TARGET_METRICS: &[TargetFigure] = &[
    ("IOPS", "IO/s", Higher, |t| t.iops),
    ("MB/s", "MB/s", Higher, |t| t.mbps),
    ("latency mean", "us", Lower, |t| t.latency_mean_us),
    ("latency p99", "us", Lower, |t| t.latency_p99_us),
];

/// Which way `v` moved from the baseline `b`: "same" when the two are equal or
/// the difference shows as 0.0% (a depth held at 128 both times, a float a few
/// ulps apart), else "better" or "worse" as the metric improves.
fn direction(b: f64, v: f64, better: Better) -> &'static str {
    let rounds_to_zero = b != 0.0 && ((v - b) / b * 100.0).abs() < 0.05;
    if v == b || rounds_to_zero {
        "same"
    } else if (v > b) == (better == Better::Higher) {
        "better"
    } else {
        "worse"
    }
}

/// Rows "target 1 (nbd://b/l0) IOPS" for each target of the baseline point that
/// every other point has at the same index. Repeats keep no per-target spread,
/// so their significance is unknown, and their values are each point's picked
/// run: said in the row's name where the point had repeats.
fn target_rows(base: &Point, others: &[&Point]) -> Vec<MetricRow> {
    let picked = if std::iter::once(&base).chain(others).any(|p| p.repeats.is_some()) { " (picked run)" } else { "" };
    let mut rows = Vec::new();
    if base.targets.len() < 2 {
        return rows; // one target: the point's own rows say it all
    }
    for bt in &base.targets {
        let Some(theirs) = others.iter().map(|p| p.targets.iter().find(|t| t.target == bt.target)).collect::<Option<Vec<_>>>() else {
            continue;
        };
        for (what, unit, better, get) in TARGET_METRICS {
            let b = get(bt);
            let versus = theirs
                .iter()
                .map(|t| {
                    let v = get(t);
                    let verdict = direction(b, v, *better);
                    Versus {
                        value: v,
                        diff_pct: (b != 0.0).then(|| (v - b) / b * 100.0),
                        ratio: (b != 0.0).then(|| v / b),
                        verdict: verdict.into(),
                        significance: "unknown (no per-target spread)".into(),
                        p_value: None,
                        t: None,
                        df: None,
                    }
                })
                .collect();
            rows.push(MetricRow {
                metric: format!("target {} ({}) {what}{picked}", bt.target, bt.uri),
                unit: unit.to_string(),
                better: *better,
                baseline: b,
                versus,
            });
        }
    }
    rows
}

/// The confidence level of the significance test.
pub const ALPHA: f64 = 0.05;

/// How significance is decided, as every format states it.
pub const SIGNIFICANCE_RULE: &str = "significance: Welch's t-test on the means of each point's repeats (two-sided, 95%: \
significant when p < 0.05); unknown (no repeats) where a point was not repeated in both results (--repeat N, N >= 2)";

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// Display names: the baseline first.
    pub results: Vec<String>,
    pub points: Vec<PointComparison>,
    /// Points present in some results only.
    pub unmatched: Vec<String>,
    /// How "significant" is decided.
    pub significance_rule: String,
    /// Differences that do not prevent comparing (run time, ramp), and points
    /// cut short (Ctrl-C, a signal) in any result, said plainly.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PointComparison {
    pub params: String,
    /// What each result's values at this point are, the baseline first: "mean
    /// of 3 repeats", "single run", or with `--pick` "picked run (repeat 2 of 3, nearest the mean)".
    pub basis: Vec<String>,
    pub rows: Vec<MetricRow>,
}

/// Which numbers of a point with repeats are compared: the repeats' means
/// (what Welch's test reads, so difference, ratio and p-value agree), or with
/// `compare --pick` the one run each point reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Basis {
    #[default]
    Means,
    Picked,
}

/// What a point's values are under `basis`, said in every format.
pub fn basis_text(p: &Point, basis: Basis) -> String {
    match (&p.repeats, basis) {
        (None, _) => "single run".into(),
        (Some(r), Basis::Means) => format!("mean of {} repeats", r.count),
        (Some(r), Basis::Picked) => {
            let how = match r.pick {
                crate::results::model::Pick::Mean => "nearest the mean IOPS",
                crate::results::model::Pick::Median => "the median IOPS",
                crate::results::model::Pick::Best => "the best IOPS",
            };
            format!("picked run (repeat {} of {}, {how})", r.picked, r.count)
        }
    }
}

/// A metric's value at a point: the repeats' mean (`Basis::Means`, where the
/// point kept the figure's spread) or the point's own (picked or single) run.
pub fn value_of(m: &Metric, p: &Point, basis: Basis) -> Option<f64> {
    let mean = p.repeats.as_ref().filter(|_| basis == Basis::Means).and_then(|r| r.spread(m.key)).map(|s| s.mean);
    mean.or_else(|| m.get(&p.summary))
}

/// One metric of the registry compared at one point: its row of the table.
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
    /// "better", "worse", "same", or "not significant" (the test says the
    /// difference is within what the repeats' spread explains).
    pub verdict: String,
    /// "significant", "not significant", or "unknown (...)" with the reason.
    pub significance: String,
    /// Welch's two-sided p-value, where it could be computed.
    pub p_value: Option<f64>,
    /// Welch's t (this result's repeats against the baseline's) and its degrees of freedom.
    pub t: Option<f64>,
    pub df: Option<f64>,
}

/// Workload fields that may differ between compared results: what is being compared.
const MAY_DIFFER: &[&str] = &["targets", "size", "offset", "engine", "buffered", "seed"];

/// Workload fields that may differ with a note: how long the figures were
/// measured and warmed up, not what was measured. Rates, latencies and
/// efficiencies are per second or per I/O, so they stay comparable.
const NOTED: &[&str] = &["run", "ramp"];

/// The top-level field of a flattened path ("run.time" -> "run").
fn top_key(path: &str) -> &str {
    path.split(['.', '[']).next().unwrap_or(path)
}

/// The last field of a flattened path ("groups[0].access[1].bs" -> "bs").
fn leaf_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// Where two results' workloads differ in fields `keep` takes, as "path: a vs
/// b" lines: the results' own workloads, then those of each pair of points
/// (a profile's later phases differ only there), prefixed "point LABEL: ".
/// A field a sweep of either result sets (`bs` of a `--sweep bs=...`) is left
/// out of the results' own: it holds the first point's value, and the points
/// are paired by their swept values (`bs=4k,8k` against `bs=8k,4k`).
fn differences(a: &RunResult, b: &RunResult, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let swept: std::collections::BTreeSet<&str> =
        a.points.iter().chain(&b.points).flat_map(|p| p.params.keys().map(String::as_str)).filter(|k| *k != "targets").collect();
    let mut out =
        spec_differences(&a.workload, &b.workload, |k| keep(top_key(k)) && !(top_key(k) == "groups" && swept.contains(leaf_key(k))));
    let mut points = Vec::new();
    for pa in &a.points {
        let paired = b.points.iter().find(|pb| point_key(pb) == point_key(pa));
        if let (Some(wa), Some(wb)) = (pa.workload.as_ref(), paired.and_then(|pb| pb.workload.as_ref())) {
            // Said once: a difference of the results' own workloads is not repeated per point.
            let new: Vec<String> = spec_differences(wa, wb, |k| keep(top_key(k))).into_iter().filter(|d| !out.contains(d)).collect();
            points.extend(new.into_iter().map(|d| format!("point {}: {d}", point_key(pa))));
        }
    }
    out.extend(points);
    out
}

/// Where two workloads differ in the fields `keep` takes (those that may
/// differ left out), as "path: a vs b" lines.
fn spec_differences(a: &WorkloadSpec, b: &WorkloadSpec, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let flat = |w: &WorkloadSpec| {
        let v = serde_json::to_value(w).unwrap_or(Value::Null);
        let mut flat = BTreeMap::new();
        flatten("", &v, &mut flat);
        flat.retain(|k, _| !MAY_DIFFER.contains(&top_key(k)) && keep(k));
        flat
    };
    let (fa, fb) = (flat(a), flat(b));
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| {
            format!("{k}: {} vs {}", fa.get(k).map(String::as_str).unwrap_or("(none)"), fb.get(k).map(String::as_str).unwrap_or("(none)"))
        })
        .collect()
}

/// Where two workloads differ so that their figures are not comparable (empty when comparable).
pub fn workload_differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    differences(a, b, |k| !NOTED.contains(&k))
}

/// Differences in run time and ramp: comparable, but said.
pub fn workload_notes(a: &RunResult, b: &RunResult) -> Vec<String> {
    differences(a, b, |k| NOTED.contains(&k))
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

/// Welch's test of one metric between two points' repeats, or why it cannot be done.
fn significance(m: &Metric, base: &Point, other: &Point) -> Result<Welch, &'static str> {
    let (Some(rb), Some(ro)) = (&base.repeats, &other.repeats) else {
        return Err(if base.repeats.is_some() || other.repeats.is_some() {
            "unknown (repeats in one result only)"
        } else {
            "unknown (no repeats)"
        });
    };
    let (Some(sb), Some(so)) = (rb.spread(m.key), ro.spread(m.key)) else {
        return Err("unknown (spread not recorded)");
    };
    let sample = |s: &crate::results::repeats::Spread| Sample { mean: s.mean, stdev: s.stdev, n: s.n.unwrap_or(0) };
    welch(sample(&so), sample(&sb)).ok_or("unknown (fewer than 2 repeats)")
}

pub fn compare(results: &[&RunResult], basis: Basis) -> Comparison {
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
        for m in registry::compared() {
            let Some(b) = value_of(m, bp, basis) else { continue };
            let vals: Vec<Option<f64>> = others.iter().map(|p| value_of(m, p, basis)).collect();
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
                    let test = significance(m, bp, p);
                    let significant = test.as_ref().ok().map(|w| w.p < ALPHA);
                    let verdict = if significant == Some(false) { "not significant" } else { direction(b, v, m.better) };
                    let (significance, w) = match test {
                        Ok(w) => ((if w.p < ALPHA { "significant" } else { "not significant" }).to_string(), Some(w)),
                        Err(why) => (why.to_string(), None),
                    };
                    Versus {
                        value: v,
                        diff_pct,
                        ratio,
                        verdict: verdict.into(),
                        significance,
                        p_value: w.map(|w| w.p),
                        t: w.map(|w| w.t).filter(|t| t.is_finite()),
                        df: w.map(|w| w.df),
                    }
                })
                .collect();
            rows.push(MetricRow { metric: m.name.into(), unit: m.unit.into(), better: m.better, baseline: b, versus });
        }
        rows.extend(target_rows(bp, &others));
        let basis = std::iter::once(bp).chain(others.iter().copied()).map(|p| basis_text(p, basis)).collect();
        points.push(PointComparison { params: key, basis, rows });
    }
    let mut notes = Vec::new();
    for r in &results[1..] {
        for p in &r.points {
            let key = point_key(p);
            if !base.points.iter().any(|bp| point_key(bp) == key) {
                unmatched.push(format!("{key} (only in {})", name(r)));
            }
        }
        let diff = workload_notes(base, r);
        if !diff.is_empty() {
            notes.push(format!(
                "{} and {} ran or ramped up for different times ({}): compared, as rates, latencies and efficiencies are per second or per I/O",
                name(base),
                name(r),
                diff.join(", ")
            ));
        }
    }
    notes.extend(cut_short_notes(results));
    notes.extend(apart_notes(results));
    if basis == Basis::Picked && results.iter().any(|r| r.points.iter().any(|p| p.repeats.is_some())) {
        notes.push("--pick: values, differences and ratios are each point's picked run; the p-values still test the repeats' means".into());
    }
    Comparison { results: results.iter().map(|r| name(r)).collect(), points, unmatched, significance_rule: SIGNIFICANCE_RULE.into(), notes }
}

/// A note per point of any result that was cut short (Ctrl-C, a signal): its
/// figures cover less than the time planned, which the other side may have run
/// whole. "the baseline A, point 2 (qd=2), was cut short: interrupted by ... after
/// 0.91 s of the 2s planned: ...". A name two results share gets its id.
fn cut_short_notes(results: &[&RunResult]) -> Vec<String> {
    let mut notes = Vec::new();
    for (k, r) in results.iter().enumerate() {
        let shared = results.iter().filter(|o| name(o) == name(r)).count() > 1;
        let who = match (k, shared) {
            (0, false) => format!("the baseline {}", name(r)),
            (0, true) => format!("the baseline {} ({})", name(r), r.id),
            (_, false) => name(r),
            (_, true) => format!("{} ({})", name(r), r.id),
        };
        for (i, p) in r.points.iter().enumerate() {
            let Some(why) = &p.cut_short else { continue };
            let params = params_text(p);
            let point = if params == "-" { format!("point {}", i + 1) } else { format!("point {} ({params})", i + 1) };
            notes.push(format!("{who}, {point}, was cut short: {why}"));
        }
    }
    notes
}

/// A note per result whose points' groups ran apart (a start delay or a time
/// of their own): its summary figures are over the whole span, part of which
/// some groups idled, and each group's own figures are in its result.
fn apart_notes(results: &[&RunResult]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.points.iter().any(|p| p.groups.iter().any(|g| g.window.is_some())))
        .map(|r| {
            format!(
                "{}'s groups ran apart (a start delay or a time of their own): its figures are over each point's whole span, part of which some groups did not run; each group's own figures, over its window, are in its result (groups[].window)",
                name(r)
            )
        })
        .collect()
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

fn cells(v: &Versus) -> [String; 5] {
    [
        num(v.value),
        v.diff_pct.map(|d| format!("{d:+.1}%")).unwrap_or_else(|| "-".into()),
        v.ratio.map(|r| format!("{r:.2}x")).unwrap_or_else(|| "-".into()),
        v.verdict.clone(),
        v.p_value.map(|p| if p < 0.001 { "<0.001".to_string() } else { format!("{p:.3}") }).unwrap_or_else(|| "-".into()),
    ]
}

fn header(c: &Comparison) -> Vec<String> {
    let mut h = vec!["metric".to_string(), "unit".into(), format!("{} (baseline)", c.results[0])];
    for r in &c.results[1..] {
        h.extend([r.clone(), "diff".into(), "ratio".into(), "".into(), "p".into()]);
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

/// The closing lines of the text formats: how significance was decided (or
/// that it is unknown), and the notes.
fn footer(c: &Comparison) -> Vec<String> {
    let tested = c.points.iter().flat_map(|p| &p.rows).flat_map(|r| &r.versus).any(|v| v.p_value.is_some());
    let mut lines = vec![if tested {
        c.significance_rule.clone()
    } else {
        "significance: unknown (no repeats): run each with --repeat N (N >= 2) to test the differences".to_string()
    }];
    lines.extend(c.notes.iter().map(|n| format!("note: {n}")));
    lines
}

/// "values: mean of 3 repeats in each result", or each result's basis when they differ.
pub fn basis_line(c: &Comparison, p: &PointComparison) -> String {
    match p.basis.first() {
        Some(first) if p.basis.iter().all(|b| b == first) => format!("values: {first} in each result"),
        _ => format!("values: {}", c.results.iter().zip(&p.basis).map(|(r, b)| format!("{r}: {b}")).collect::<Vec<_>>().join("; ")),
    }
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
        out += &format!("point {} · {}\n{t}\n", p.params, basis_line(c, p));
    }
    for u in &c.unmatched {
        out += &format!("not compared: {u}\n");
    }
    for line in footer(c) {
        out += &format!("{line}\n");
    }
    out
}

pub fn render_markdown(c: &Comparison) -> String {
    use super::escape::markdown as md;
    let cells = |v: Vec<String>| v.iter().map(|t| md(t)).collect::<Vec<_>>().join(" | ");
    let mut out = String::new();
    for p in &c.points {
        let h = header(c);
        out +=
            &format!("### point {}\n\n{}\n\n| {} |\n|{}\n", md(&p.params), md(&basis_line(c, p)), cells(h.clone()), "---|".repeat(h.len()));
        for row in &p.rows {
            out += &format!("| {} |\n", cells(body(row)));
        }
        out.push('\n');
    }
    for u in &c.unmatched {
        out += &format!("- not compared: {}\n", md(u));
    }
    for line in footer(c) {
        out += &format!("\n{}\n", md(&line));
    }
    out
}

pub fn render_csv(c: &Comparison) -> String {
    let mut out =
        String::from("point,metric,unit,better,result,value,baseline,diff_pct,ratio,verdict,significance,p_value,baseline_basis,basis\n");
    for p in &c.points {
        for row in &p.rows {
            for (k, (name, v)) in c.results[1..].iter().zip(&row.versus).enumerate() {
                use super::escape::csv_field as q;
                out += &format!(
                    "{},{},{},{:?},{},{},{},{},{},{},{},{},{},{}\n",
                    q(&p.params),
                    row.metric,
                    row.unit,
                    row.better,
                    q(name),
                    v.value,
                    row.baseline,
                    v.diff_pct.map(|d| d.to_string()).unwrap_or_default(),
                    v.ratio.map(|r| r.to_string()).unwrap_or_default(),
                    v.verdict,
                    v.significance,
                    v.p_value.map(|p| p.to_string()).unwrap_or_default(),
                    q(p.basis.first().map(String::as_str).unwrap_or_default()),
                    q(p.basis.get(k + 1).map(String::as_str).unwrap_or_default()),
                );
            }
        }
    }
    out
}

pub fn render_json(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).expect("a comparison serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::model::Summary;
    use crate::results::repeats::{combine, Pick};

    /// Equal values, or a difference that shows as 0.0%, are the same, not worse.
    #[test]
    fn equal_or_zero_percent_differences_are_the_same() {
        assert_eq!(direction(128.0, 128.0, Better::Higher), "same");
        assert_eq!(direction(128.0, 127.99, Better::Higher), "same", "-0.008% shows as -0.0%");
        assert_eq!(direction(10.0, 10.004, Better::Lower), "same", "+0.04% shows as +0.0%");
        assert_eq!(direction(0.0, 0.0, Better::Lower), "same");
        assert_eq!(direction(50.0, 50.15, Better::Lower), "worse", "+0.3% of CPU is a change");
        assert_eq!(direction(128.0, 127.9, Better::Higher), "worse", "-0.08% shows as -0.1%");
        assert_eq!(direction(100.0, 110.0, Better::Higher), "better");
        assert_eq!(direction(0.0, 1.0, Better::Higher), "better");
    }

    #[test]
    fn every_compared_metric_has_its_spread_kept_over_repeats() {
        let r = result("a", &[100.0, 110.0], "10s");
        let summaries: Vec<_> = (0..2).map(|_| r.points[0].summary.clone()).collect();
        let stats = combine(&summaries, Pick::Mean).1;
        for m in registry::compared() {
            if m.get(&summaries[0]).is_some() {
                assert!(stats.spread(m.key).is_some(), "{} ({}) has no spread over repeats", m.name, m.key);
            }
        }
    }

    fn result(id: &str, iops: &[f64], time: &str) -> RunResult {
        let mut r: RunResult =
            serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/result-a.json")).unwrap())
                .unwrap();
        r.id = id.into();
        r.label = Some(id.into());
        r.points.truncate(1);
        let summaries: Vec<Summary> = iops.iter().map(|&v| Summary { iops: v, ..r.points[0].summary.clone() }).collect();
        let (i, stats) = combine(&summaries, Pick::Mean);
        r.points[0].summary = summaries[i].clone();
        r.points[0].repeats = (iops.len() > 1).then_some(stats);
        r.workload.run = crate::workload::RunLength::Time(crate::units::parse_duration(time).unwrap());
        r
    }

    #[test]
    fn two_ports_are_compared_target_by_target() {
        use crate::results::per_worker::TargetFigures;
        let port = |target: usize, iops: f64| TargetFigures { target, uri: format!("nbd://port{target}/l0"), iops, ..Default::default() };
        let mut a = result("a", &[100.0], "10s");
        let mut b = result("b", &[100.0], "10s");
        a.points[0].targets = vec![port(0, 50.0), port(1, 50.0)];
        b.points[0].targets = vec![port(0, 30.0), port(1, 90.0)];
        let c = compare(&[&a, &b], Basis::Means);
        let row = |name: &str| c.points[0].rows.iter().find(|r| r.metric == name).unwrap().versus[0].clone();
        assert_eq!(row("target 0 (nbd://port0/l0) IOPS").verdict, "worse");
        let second = row("target 1 (nbd://port1/l0) IOPS");
        assert_eq!((second.verdict.as_str(), second.ratio), ("better", Some(1.8)));
        // Results recorded before per-target figures: no target rows.
        a.points[0].targets.clear();
        assert!(!compare(&[&a, &b], Basis::Means).points[0].rows.iter().any(|r| r.metric.starts_with("target ")));
    }

    #[test]
    fn significance_follows_welch() {
        let iops = |c: &Comparison| c.points[0].rows.iter().find(|r| r.metric == "IOPS").unwrap().versus[0].clone();
        // Far apart with small spread: significant, and better.
        let c = compare(&[&result("a", &[100.0, 101.0, 99.0], "1s"), &result("b", &[200.0, 202.0, 198.0], "1s")], Basis::Means);
        let v = iops(&c);
        assert_eq!((v.significance.as_str(), v.verdict.as_str()), ("significant", "better"));
        assert!(v.p_value.unwrap() < 0.001);
        // Overlapping: not significant (scipy: ttest_ind([100,110,90],[103,113,93], equal_var=False) p = 0.7319176755404578).
        let c = compare(&[&result("a", &[100.0, 110.0, 90.0], "1s"), &result("b", &[103.0, 113.0, 93.0], "1s")], Basis::Means);
        let v = iops(&c);
        assert_eq!((v.significance.as_str(), v.verdict.as_str()), ("not significant", "not significant"));
        assert!((v.p_value.unwrap() - 0.7319176755404578).abs() < 1e-9, "{v:?}");
        // Without repeats: unknown, said in every text format.
        let c = compare(&[&result("a", &[100.0], "1s"), &result("b", &[200.0], "1s")], Basis::Means);
        assert_eq!(iops(&c).significance, "unknown (no repeats)");
        assert_eq!(iops(&c).verdict, "better");
        for text in [render_table(&c), render_markdown(&c)] {
            assert!(text.contains("significance: unknown (no repeats)"), "{text}");
        }
        assert!(render_csv(&c).contains(",better,unknown (no repeats),,single run,single run\n"));
        let c = compare(&[&result("a", &[100.0, 101.0, 99.0], "1s"), &result("b", &[200.0], "1s")], Basis::Means);
        assert_eq!(iops(&c).significance, "unknown (repeats in one result only)");
    }

    /// Difference and ratio come from the repeats' means, the numbers Welch's
    /// test reads, not from the runs each point picked; `Basis::Picked` keeps those.
    #[test]
    fn differences_are_between_the_repeats_means() {
        // Means 110 and 140 (+27.3%); the runs nearest them are 100 and 120 (+20%).
        let (a, b) = (result("a", &[100.0, 100.0, 130.0], "1s"), result("b", &[120.0, 120.0, 180.0], "1s"));
        assert_eq!((a.points[0].summary.iops, b.points[0].summary.iops), (100.0, 120.0));
        let iops = |c: &Comparison| c.points[0].rows.iter().find(|r| r.metric == "IOPS").unwrap().clone();
        let c = compare(&[&a, &b], Basis::Means);
        let row = iops(&c);
        assert_eq!((row.baseline, row.versus[0].value), (110.0, 140.0));
        assert!((row.versus[0].diff_pct.unwrap() - 300.0 / 11.0).abs() < 1e-9, "{row:?}");
        assert!((row.versus[0].ratio.unwrap() - 14.0 / 11.0).abs() < 1e-12);
        assert_eq!(c.points[0].basis, ["mean of 3 repeats", "mean of 3 repeats"]);
        assert!(render_table(&c).contains("point bs=4k · values: mean of 3 repeats in each result"), "{}", render_table(&c));
        assert!(render_markdown(&c).contains("values: mean of 3 repeats in each result"));
        assert!(render_csv(&c).contains(",mean of 3 repeats,mean of 3 repeats\n"), "{}", render_csv(&c));
        let c = compare(&[&a, &b], Basis::Picked);
        let row = iops(&c);
        assert_eq!((row.baseline, row.versus[0].diff_pct), (100.0, Some(20.0)));
        assert_eq!(c.points[0].basis[0], "picked run (repeat 1 of 3, nearest the mean IOPS)");
        assert!(render_table(&c).contains("note: --pick: values, differences and ratios are each point's picked run"));
        // One side without repeats: its single run, said as such.
        let c = compare(&[&a, &result("c", &[150.0], "1s")], Basis::Means);
        assert_eq!(iops(&c).versus[0].diff_pct.map(|d| d.round()), Some(36.0));
        assert!(basis_line(&c, &c.points[0]).contains("c: single run"), "{}", basis_line(&c, &c.points[0]));
    }

    #[test]
    fn run_time_and_ramp_differences_are_notes() {
        let (a, b) = (result("a", &[100.0], "1s"), result("b", &[100.0], "2s"));
        assert!(workload_differences(&a, &b).is_empty());
        let c = compare(&[&a, &b], Basis::Means);
        assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
        assert!(c.notes[0].contains("run.time: 1s vs 2s"), "{:?}", c.notes);
        assert!(render_table(&c).contains("note: a and b ran or ramped up for different times"));
        let mut d = result("d", &[100.0], "1s");
        d.workload.groups[0].qd = 99;
        assert_eq!(workload_differences(&a, &d).len(), 1);
    }
}
