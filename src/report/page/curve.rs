//! The hockey stick (issue 28): latency (p50, p99, p99.9) against achieved
//! IOPS, for a load-latency curve (`--curve`: the paced points and the
//! maximum-rate one) and for a knee search (`--sla`: its steps), each latency
//! bound drawn as a flat line. Pure: results in, charts out.

use crate::report::page::charts::{self, Chart, Series};
use crate::results::model::RunResult;

/// One chart per result that holds a curve or a search.
pub fn charts(results: &[&RunResult]) -> Vec<Chart> {
    let names = crate::report::point_view::names(results);
    let mut out = Vec::new();
    for (i, (r, name)) in results.iter().zip(&names).enumerate() {
        let (what, indexes, limits) = match (&r.curve, &r.search) {
            (Some(c), _) => ("load-latency curve", c.points.iter().map(|p| p.point).collect::<Vec<_>>(), c.latency_limits_us.clone()),
            (None, Some(s)) => ("knee search", s.steps.iter().map(|p| p.point).collect(), search_limits(s)),
            (None, None) => continue,
        };
        // Drawn left to right by the IOPS achieved.
        let mut at: Vec<(f64, [f64; 3])> = indexes
            .iter()
            .filter_map(|&k| r.points.get(k))
            .map(|p| (p.summary.iops, [p.summary.latency_us.all.p50, p.summary.latency_us.all.p99, p.summary.latency_us.all.p99_9]))
            .collect();
        if at.len() < 2 {
            continue;
        }
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        let x: Vec<f64> = at.iter().map(|a| a.0).collect();
        let mut series: Vec<Series> = ["p50", "p99", "p99.9"]
            .iter()
            .enumerate()
            .map(|(j, label)| Series { label: format!("{label} latency"), values: at.iter().map(|a| Some(a.1[j])).collect() })
            .collect();
        for (text, limit) in &limits {
            series.push(Series { label: format!("bound {text}"), values: vec![Some(*limit); x.len()] });
        }
        let bounds = if limits.is_empty() { String::new() } else { ", each bound a flat line".into() };
        out.push(Chart {
            id: format!("curve-{}", i + 1),
            caption: format!("Latency against achieved IOPS, {what} of {name}: one marker per point{bounds}"),
            svg: charts::lines(&format!("Latency against load: {name}"), "achieved IOPS", "latency (us)", &x, &series),
        });
    }
    out
}

/// The latency bounds of a search, with their limits (microseconds).
fn search_limits(s: &crate::results::model::SearchOutcome) -> Vec<(String, f64)> {
    match crate::results::pass::parse(&s.expr) {
        Ok(criteria) => criteria
            .iter()
            .filter(|c| matches!(c.measure, crate::results::pass::Measure::Latency { .. }))
            .map(|c| (c.text.clone(), c.limit))
            .collect(),
        Err(_) => Vec::new(),
    }
}
