//! The hockey stick (issue 28): latency (p50, p99, p99.9) against achieved
//! IOPS, for a load-latency curve (`--curve`: the paced points and the
//! maximum-rate one) and for a knee search (`--sla`: its steps), on a log
//! latency axis, each latency bound drawn as a flat line and the knee as a
//! vertical one. Several results with curves (or searches) share one chart,
//! as `compare` puts them side by side. Pure: results in, charts out.

use crate::report::page::charts::Chart;
use crate::report::page::hockey::{self, Line, Rule};
use crate::results::model::{CurveOutcome, RunResult, SearchOutcome};

const PERCENTILES: [&str; 3] = ["p50", "p99", "p99.9"];

/// What one result draws: its lines' points, its bounds and its knee.
struct Stick {
    name: String,
    /// (achieved IOPS, [p50, p99, p99.9] µs), left to right.
    at: Vec<(f64, [f64; 3])>,
    bounds: Vec<(String, f64)>,
    knee: Option<f64>,
}

/// The IOPS of a curve's knee: the paced point of most IOPS at which every
/// `--curve-stop` bound held (none without --curve-stop).
pub fn curve_knee(c: &CurveOutcome) -> Option<f64> {
    c.points.iter().filter(|p| p.pct.is_some() && p.passed == Some(true) && p.cut_short.is_none()).map(|p| p.iops).reduce(f64::max)
}

fn stick(r: &RunResult, name: &str, searches: bool) -> Option<Stick> {
    let (indexes, bounds, knee): (Vec<usize>, _, _) = match (&r.curve, &r.search) {
        (Some(c), _) if !searches => (c.points.iter().map(|p| p.point).collect(), c.latency_limits_us.clone(), curve_knee(c)),
        (None, Some(s)) if searches => (s.steps.iter().map(|p| p.point).collect(), search_limits(s), s.found.as_ref().map(|f| f.iops)),
        _ => return None,
    };
    let mut at: Vec<(f64, [f64; 3])> = indexes
        .iter()
        .filter_map(|&k| r.points.get(k))
        .map(|p| (p.summary.iops, [p.summary.latency_us.all.p50, p.summary.latency_us.all.p99, p.summary.latency_us.all.p99_9]))
        .collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    (at.len() >= 2).then(|| Stick { name: name.to_string(), at, bounds, knee })
}

/// One chart per result that holds a curve or a search; with several, one
/// chart for all the curves and one for all the searches.
pub fn charts(results: &[&RunResult]) -> Vec<Chart> {
    let names = crate::report::point_view::names(results);
    let mut out = Vec::new();
    for (searches, what) in [(false, "load-latency curve"), (true, "knee search")] {
        let sticks: Vec<Stick> = results.iter().zip(&names).filter_map(|(r, n)| stick(r, n, searches)).collect();
        if sticks.len() > 1 {
            out.push(chart(&sticks, what, format!("curve-compared-{}", if searches { "search" } else { "curve" })));
            continue;
        }
        out.extend(sticks.iter().map(|s| {
            let i = names.iter().position(|n| *n == s.name).unwrap_or(0);
            chart(std::slice::from_ref(s), what, format!("curve-{}", i + 1))
        }));
    }
    out
}

/// The chart of `sticks`: one line per result per percentile, named by the
/// result when there are several; their bounds (each once) and knees.
fn chart(sticks: &[Stick], what: &str, id: String) -> Chart {
    let several = sticks.len() > 1;
    let mut lines = Vec::new();
    let mut bounds: Vec<Rule> = Vec::new();
    let mut knees = Vec::new();
    for s in sticks {
        for (j, p) in PERCENTILES.iter().enumerate() {
            let label = if several { format!("{} {p}", s.name) } else { format!("{p} latency") };
            lines.push(Line { label, points: s.at.iter().map(|a| (a.0, a.1[j])).collect() });
        }
        for (text, limit) in &s.bounds {
            let label = format!("bound {text}");
            if !bounds.iter().any(|b| b.label == label) {
                bounds.push(Rule { label, value: *limit });
            }
        }
        if let Some(k) = s.knee {
            knees.push(Rule { label: if several { format!("knee of {}", s.name) } else { "knee".into() }, value: k });
        }
    }
    let whose = sticks.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(" and ");
    let knee_is = if what == "knee search" {
        "the found point (the step of most IOPS within every bound)"
    } else {
        "the paced point of most IOPS within every --curve-stop bound"
    };
    let mut caption = format!("Latency against achieved IOPS, {what} of {whose}: one marker per point, latency on a log scale");
    if !bounds.is_empty() {
        caption += ", each bound a flat line";
    }
    if !knees.is_empty() {
        caption += &format!(", the knee ({knee_is}) a vertical line");
    }
    // "knee search" takes "es": "knee searchs" is not a word.
    let plural = if what.ends_with('h') { format!("{what}es") } else { format!("{what}s") };
    let title = if several { format!("Latency against load: {plural} compared") } else { format!("Latency against load: {whose}") };
    Chart { id, caption, svg: hockey::chart(&title, &lines, &bounds, &knees) }
}

/// The latency bounds of a search, with their limits (microseconds).
fn search_limits(s: &SearchOutcome) -> Vec<(String, f64)> {
    match crate::results::pass::parse(&s.expr) {
        Ok(criteria) => criteria
            .iter()
            .filter(|c| matches!(c.measure, crate::results::pass::Measure::Latency { .. }))
            .map(|c| (c.text.clone(), c.limit))
            .collect(),
        Err(_) => Vec::new(),
    }
}
