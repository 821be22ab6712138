//! The hockey stick (issue 28): latency (p50, p99, p99.9) against achieved
//! IOPS, for a load-latency curve (`--curve`: the paced points and the
//! maximum-rate one) and for a knee search (`--sla`: its steps), on a log
//! latency axis, each latency bound drawn as a flat line and the knee as a
//! vertical one. Several results with curves (or searches) share one chart,
//! as `compare` puts them side by side. Pure: results in, charts out.

use crate::report::page::charts::Chart;
use crate::report::page::hockey::{self, Knee, Line, Rule};
use crate::results::model::{CurveOutcome, RunResult, SearchOutcome};

const PERCENTILES: [&str; 3] = ["p50", "p99", "p99.9"];

/// What one result draws: its lines' points, its bounds and its knee.
struct Stick {
    name: String,
    /// What names it beside its knee: the compare table's short name.
    short: String,
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
    let short = crate::report::curve_compare::short_name(r);
    (at.len() >= 2).then(|| Stick { name: name.to_string(), short, at, bounds, knee })
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
            let (label, name) = if several { (format!("knee of {}", s.name), Some(s.short.clone())) } else { ("knee".into(), None) };
            knees.push(Knee { label, name, iops: k });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::page::charts::LABEL_FONT;
    use crate::results::model::SearchPoint;

    /// A search over the golden result's two points whose found point gives `knee` IOPS.
    fn searched(label: &str, id: &str, knee: f64) -> RunResult {
        let mut r = crate::report::golden_result("result-a.json");
        (r.label, r.id) = (Some(label.into()), id.into());
        let step = |point: usize, iops: f64| SearchPoint {
            point,
            qd: point as u32 + 1,
            workers: 1,
            iops,
            mbps: 1.0,
            p99_us: 100.0,
            passed: true,
            bounds: Vec::new(),
            unfinished: None,
        };
        r.search = Some(SearchOutcome {
            expr: "lat_p99<1ms".into(),
            max_qd: 1024,
            max_steps: 20,
            workers: None,
            fixed_qd: None,
            tuning: None,
            found: Some(step(0, knee)),
            first_failing: None,
            ended: "ended".into(),
            steps: vec![step(0, knee), step(1, 1_000.0)],
        });
        r
    }

    /// The (x, y) of the SVG text that reads `content`.
    fn text_at(svg: &str, content: &str) -> Option<(f64, f64)> {
        let tag =
            svg.split("<text").skip(1).find(|t| t.split('>').nth(1).and_then(|c| c.split('<').next()).map(str::trim) == Some(content))?;
        let attr = |name: &str| -> Option<f64> { tag.split(&format!(" {name}=\"")).nth(1)?.split('"').next()?.parse().ok() };
        Some((attr("x")?, attr("y")?))
    }

    /// Two searches on one chart whose knees nearly coincide: each knee is
    /// named by its result's short name (the compare table's: a short label,
    /// else the id's first 8 characters), and the two names sit at least a
    /// line apart (they were offset by a ratio of the log axis, 6 px here, and
    /// overlapped), each within the chart (they ran off its right edge).
    #[test]
    fn compared_knees_are_named_by_each_results_short_name_and_do_not_overlap() {
        let a = searched("fast", "aaaa1111bbbb", 4_400_000.0);
        let b = searched("a label longer than sixteen", "c0ffee00deadbeef", 4_300_000.0);
        let charts = charts(&[&a, &b]);
        assert_eq!(charts.len(), 1, "one chart for both");
        let svg = &charts[0].svg;
        let short = [crate::report::curve_compare::short_name(&a), crate::report::curve_compare::short_name(&b)];
        assert_eq!(short, ["fast", "c0ffee00"]);
        let at_a = text_at(svg, "fast knee 4.4M").unwrap_or_else(|| panic!("no knee named fast: {svg}"));
        let at_b = text_at(svg, "c0ffee00 knee 4.3M").unwrap_or_else(|| panic!("no knee named c0ffee00: {svg}"));
        let font = f64::from(LABEL_FONT);
        assert!((at_a.1 - at_b.1).abs() >= font, "a line apart: {at_a:?} {at_b:?}");
        // Both knees are at the right end of the IOPS axis: their names turn left of the line, within the chart.
        for (at, text) in [(at_a, "fast knee 4.4M"), (at_b, "c0ffee00 knee 4.3M")] {
            let width = f64::from(crate::report::page::charts::text_width(text, LABEL_FONT));
            assert!(at.0 > 0.0 && at.0 + width <= f64::from(crate::report::page::charts::WIDTH), "{text} at {at:?} runs off the chart");
        }
    }
}
