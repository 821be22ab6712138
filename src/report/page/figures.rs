//! Which charts a set of results gets, and their data: bars by transfer size
//! where the points differ only in it (a `bs` sweep, or profiles whose phases
//! do, like `fcoe-mix` and `line-rate`), else by point; lines against
//! outstanding I/Os where points sweep the queue depth (one line per result
//! and per other setting, so a `qd x bs` sweep draws every point); latency
//! percentiles of every point on a nines axis; IOPS and MB/s against the
//! one setting separate results differ in (`across`); per-second IOPS and p99 of each
//! point. Pure: results in, SVG text out.

use crate::report::page::charts::{self, Chart, Marks, Series};
use crate::report::point_view;
use crate::report::rows::params_text;
use crate::report::shown;
use crate::results::model::{Point, RunResult, Summary};
use crate::units::Bytes;

/// Points of one result by category: (category key, point index).
type Placed = Vec<(String, usize)>;

/// How points line up along the x axis of the bar charts.
struct Categories {
    /// "transfer size" or "point".
    axis: &'static str,
    /// One key per category, in order.
    keys: Vec<String>,
    /// The text under each category (the key, or its number when keys are too long to fit).
    labels: Vec<String>,
    /// The bars of one colour: (legend label, result index, [(category key, point index)]).
    bars: Vec<(String, usize, Placed)>,
}

/// The clauses of each text that not all of them share ("100% read" and
/// "0% read" out of two workloads that differ only there).
fn differences(texts: &[String]) -> Vec<String> {
    let clauses: Vec<Vec<&str>> = texts.iter().map(|t| t.split(", ").collect()).collect();
    clauses.iter().map(|c| c.iter().filter(|x| !clauses.iter().all(|o| o.contains(x))).copied().collect::<Vec<_>>().join(", ")).collect()
}

/// Bars by transfer size, when the points of each result differ in nothing
/// but their transfer size, or form sets that do (`line-rate`: reads and
/// writes, each over seven sizes): one colour per result and set.
fn by_transfer_size(results: &[&RunResult], names: &[String]) -> Option<Categories> {
    let mut bars = Vec::new();
    let mut all: Vec<u64> = Vec::new();
    for (ri, (r, name)) in results.iter().zip(names).enumerate() {
        let specs: Vec<_> = r.points.iter().map(|p| point_view::spec(r, p)).collect::<Option<Vec<_>>>()?;
        let sizes: Vec<u64> = specs.iter().map(point_view::single_bs).collect::<Option<Vec<_>>>()?;
        // (workload without transfer size, its description, its points).
        let mut sets: Vec<(String, String, Placed)> = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let key = point_view::key_without_bs(spec);
            let bs = Bytes(sizes[i]).to_string();
            match sets.iter_mut().find(|s| s.0 == key) {
                Some(set) if set.2.iter().any(|(b, _)| *b == bs) => return None,
                Some(set) => set.2.push((bs, i)),
                None => {
                    let rest = point_view::describe(spec);
                    sets.push((key, rest.split_once(", ").map(|x| x.1.to_string()).unwrap_or(rest), vec![(bs, i)]));
                }
            }
        }
        if sets.iter().all(|s| s.2.len() < 2) {
            return None;
        }
        let texts: Vec<String> = sets.iter().map(|s| s.1.clone()).collect();
        for ((_, _, points), diff) in sets.into_iter().zip(differences(&texts)) {
            let label = if diff.is_empty() { name.clone() } else { format!("{name} · {diff}") };
            bars.push((label, ri, points));
        }
        all.extend(sizes);
    }
    all.sort_unstable();
    all.dedup();
    let keys: Vec<String> = all.iter().map(|b| Bytes(*b).to_string()).collect();
    Some(Categories { axis: "transfer size", labels: keys.clone(), keys, bars })
}

fn categories(results: &[&RunResult], names: &[String]) -> Categories {
    if let Some(c) = by_transfer_size(results, names) {
        return c;
    }
    let mut keys: Vec<String> = Vec::new();
    let mut bars = Vec::new();
    for (ri, (r, name)) in results.iter().zip(names).enumerate() {
        let points: Vec<(String, usize)> = r.points.iter().enumerate().map(|(i, p)| (params_text(p), i)).collect();
        for (k, _) in &points {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
        bars.push((name.clone(), ri, points));
    }
    let labels = if charts::labels_fit(&keys) { keys.clone() } else { (1..=keys.len()).map(|i| i.to_string()).collect() };
    Categories { axis: "point", keys, labels, bars }
}

impl Categories {
    /// One series per colour, one figure per category (from its point there,
    /// `shown::fig`: the repeats' mean and stdev where repeated), the marks
    /// of each, and a note per point whose figure is missing, with why.
    fn series(&self, results: &[&RunResult], key: &str) -> (Vec<Series>, Vec<Marks>, Vec<String>) {
        let (mut series, mut marks, mut missing) = (Vec::new(), Vec::new(), Vec::new());
        for (label, ri, points) in &self.bars {
            let figs: Vec<Option<shown::Fig>> = self
                .keys
                .iter()
                .map(|k| points.iter().find(|(pk, _)| pk == k).map(|(_, i)| shown::fig(&results[*ri].points[*i], key)))
                .collect();
            for (f, cat) in figs.iter().zip(&self.labels) {
                if let Some(why) = f.as_ref().and_then(|f| f.missing.as_ref()) {
                    let at = if self.labels.len() > 1 || cat != "-" { format!(" at {cat}") } else { String::new() };
                    missing.push(format!("{label}{at}: {why}"));
                }
            }
            series.push(Series { label: label.clone(), values: figs.iter().map(|f| f.as_ref().and_then(|f| f.value)).collect() });
            marks.push(Marks {
                stdev: figs.iter().map(|f| f.as_ref().and_then(|f| f.stdev)).collect(),
                missing: figs.iter().map(|f| f.as_ref().is_some_and(|f| f.missing.is_some())).collect(),
            });
        }
        (series, marks, missing)
    }

    /// What the numbers under the bars stand for, when they are numbers.
    fn key_note(&self) -> String {
        if self.labels == self.keys {
            String::new()
        } else {
            let pairs: Vec<String> = self.labels.iter().zip(&self.keys).map(|(l, k)| format!("{l}: {k}")).collect();
            format!(" (points: {})", pairs.join("; "))
        }
    }

    /// A bar chart of the figure `key`: error bars where points were
    /// repeated, and a "missing" mark (with why, in the caption) where a point
    /// lacks the figure.
    fn chart(&self, results: &[&RunResult], id: &str, what: &str, y: &str, key: &str) -> Chart {
        let title = format!("{what} by {}", self.axis);
        let (series, marks, missing) = self.series(results, key);
        let mut caption = format!("{title}{}", self.key_note());
        if marks.iter().any(|m| m.stdev.iter().any(Option::is_some)) {
            caption += ". Bars of repeated points are the mean of their repeats, with error bars ± 1 standard deviation; bars without error bars are a single run";
        }
        if !missing.is_empty() {
            caption += &format!(". Missing: {}", missing.join("; "));
        }
        Chart { id: id.into(), caption, svg: charts::grouped_bars_marked(&title, self.axis, y, &self.labels, &series, &marks) }
    }
}

/// The point's parameters other than `qd`: points of one result that share
/// them form one line against queue depth. A knee search's step number is
/// not a setting: its steps form one line.
fn without_qd(p: &Point) -> String {
    let rest: Vec<String> = p
        .params
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "qd" | "search_step"))
        .map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"')))
        .collect();
    rest.join(" ")
}

/// Lines against outstanding I/Os: one per result and per combination of the
/// other swept settings (a `qd x bs` sweep gives one line per block size).
fn qd_charts(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    let qd = |p: &Point| p.params.get("qd").and_then(|v| v.as_f64());
    let mut qds: Vec<f64> = results.iter().flat_map(|r| r.points.iter().filter_map(qd)).collect();
    qds.sort_by(f64::total_cmp);
    qds.dedup();
    if qds.len() < 2 {
        return Vec::new();
    }
    let mut lines: Vec<(String, Vec<&Point>)> = Vec::new();
    for (r, name) in results.iter().zip(names) {
        let mut rest: Vec<String> = Vec::new();
        for p in r.points.iter().filter(|p| qd(p).is_some()) {
            let k = without_qd(p);
            if !rest.contains(&k) {
                rest.push(k);
            }
        }
        for k in rest {
            let label = if k.is_empty() { name.clone() } else { format!("{name} · {k}") };
            lines.push((label, r.points.iter().filter(|p| qd(p).is_some() && without_qd(p) == k).collect()));
        }
    }
    let at_qd = |key: &str| -> (Vec<Series>, Vec<Marks>) {
        lines
            .iter()
            .map(|(label, points)| {
                let figs: Vec<Option<shown::Fig>> =
                    qds.iter().map(|q| points.iter().find(|p| qd(p) == Some(*q)).map(|p| shown::fig(p, key))).collect();
                (
                    Series { label: label.clone(), values: figs.iter().map(|f| f.as_ref().and_then(|f| f.value)).collect() },
                    Marks { stdev: figs.iter().map(|f| f.as_ref().and_then(|f| f.stdev)).collect(), missing: Vec::new() },
                )
            })
            .unzip()
    };
    // The steps need not double: a sweep lists its own depths, a knee search bisects.
    let x = "outstanding I/Os per worker per target (queue depth)";
    let chart = |id: &str, title: &str, y: &str, key: &str| {
        let (series, marks) = at_qd(key);
        let spread = marks.iter().any(|m| m.stdev.iter().any(Option::is_some));
        let note = if spread { ". Points are the mean of each point's repeats; error bars ± 1 standard deviation" } else { "" };
        Chart {
            id: id.into(),
            caption: format!("{title}{note}"),
            svg: charts::lines_at_values_marked(title, x, y, &qds, &series, true, &marks),
        }
    };
    vec![
        chart("iops-qd", "IOPS against outstanding I/Os", "IOPS (I/O per second)", "iops"),
        chart("latency-qd", "Mean latency against outstanding I/Os", "mean latency (µs)", "latency_us.all.mean"),
    ]
}

/// A point's name in a legend or title: its parameters, or "run" for a plain run.
fn point_name(p: &Point, index: usize, of: usize) -> String {
    match params_text(p).as_str() {
        "-" if of == 1 => "run".into(),
        "-" => format!("point {}", index + 1),
        text => text.into(),
    }
}

/// Latency percentiles of every point of each result on a nines axis.
fn percentile_charts(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    results
        .iter()
        .zip(names)
        .enumerate()
        .map(|(ri, (r, name))| {
            let series: Vec<Series> = r
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let l = &p.summary.latency_us.all;
                    Series {
                        label: point_name(p, i, r.points.len()),
                        values: [l.p50, l.p90, l.p99, l.p99_9, l.p99_99].into_iter().map(|v| (l.count > 0).then_some(v)).collect(),
                    }
                })
                .collect();
            let title = format!("Latency percentiles: {name}");
            Chart {
                id: format!("percentiles-{}", ri + 1),
                caption: format!("{title} (every point; percentiles on a nines axis, latency on a logarithmic axis)"),
                svg: charts::percentile_lines(&title, "latency (µs, log scale)", &series),
            }
        })
        .collect()
}

/// With several results: the latency percentiles of every result at each
/// point they share, on one nines axis (one line per result), so their
/// tails are compared on the same axes.
fn percentile_overlays(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    if results.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (ki, bp) in results[0].points.iter().enumerate() {
        let key = params_text(bp);
        let points: Vec<Option<&Point>> = results.iter().map(|r| r.points.iter().find(|p| params_text(p) == key)).collect();
        if points.iter().filter(|p| p.is_some()).count() < 2 {
            continue;
        }
        let labels = overlay_labels(results, &points, names);
        let series: Vec<Series> = points
            .iter()
            .zip(labels)
            .filter_map(|(p, label)| {
                let l = &p.as_ref()?.summary.latency_us.all;
                let values = [l.p50, l.p90, l.p99, l.p99_9, l.p99_99].into_iter().map(|v| (l.count > 0).then_some(v)).collect();
                Some(Series { label, values })
            })
            .collect();
        let what = if key == "-" { String::new() } else { format!(" at {key}") };
        let title = format!("Latency percentiles of every result{what}");
        out.push(Chart {
            id: format!("percentiles-compared-{}", ki + 1),
            caption: format!("{title} (one line per result, each point's picked run; nines axis, latency on a logarithmic axis)"),
            svg: charts::percentile_lines(&title, "latency (µs, log scale)", &series),
        });
    }
    out
}

/// The legend of an overlay: each result by what differs in its workload at
/// the point ("70% read"), after its label when it has one; by its name
/// (which tells results apart by id only as a last resort) when the
/// workloads are the same.
fn overlay_labels(results: &[&RunResult], points: &[Option<&Point>], names: &[String]) -> Vec<String> {
    let texts: Vec<String> =
        results.iter().zip(points).map(|(r, p)| p.map(|p| point_view::describe_point(r, p)).unwrap_or_default()).collect();
    let diffs = differences(&texts);
    results
        .iter()
        .zip(names)
        .zip(diffs)
        .map(|((r, name), diff)| match (&r.label, diff.is_empty()) {
            (_, true) => name.clone(),
            (Some(label), false) => format!("{label} · {diff}"),
            (None, false) => diff,
        })
        .collect()
}

/// Per-second IOPS and p99 latency: one chart per point (points matched
/// across results by their parameters), one line per result.
fn per_second_charts(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    let mut keys: Vec<String> = Vec::new();
    for r in results {
        for p in &r.points {
            let k = params_text(p);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut out = Vec::new();
    for (ki, key) in keys.iter().enumerate() {
        let points: Vec<Option<&Point>> = results.iter().map(|r| r.points.iter().find(|p| &params_text(p) == key)).collect();
        let longest = points.iter().flatten().map(|p| p.summary.intervals.len()).max().unwrap_or(0);
        if longest < 2 {
            continue;
        }
        let secs: Vec<f64> = (0..longest).map(|i| i as f64 + 1.0).collect();
        let series = |get: fn(&crate::results::model::Interval) -> f64| -> Vec<Series> {
            points
                .iter()
                .zip(names)
                .map(|(p, name)| Series {
                    label: name.clone(),
                    values: (0..longest).map(|i| p.and_then(|p| p.summary.intervals.get(i)).map(get)).collect(),
                })
                .collect()
        };
        let what = if key == "-" { String::new() } else { format!(": {key}") };
        let title = format!("Per second{what}");
        let (iops, p99) = (series(|i| i.iops), series(|i| i.lat_p99_us));
        out.push(Chart {
            id: format!("per-second-{}", ki + 1),
            caption: format!("IOPS and p99 latency per second of the measured interval{what}"),
            svg: charts::stacked_lines(&title, "second of the measured interval", [("IOPS", &iops), ("p99 latency (µs)", &p99)], &secs),
        });
    }
    out
}

/// IOPS and read latency against cache size, where the results are points of a
/// cache study (`lab cache`, or runs with different --cache sizes).
fn cache_charts(results: &[&RunResult]) -> Vec<Chart> {
    let mut at: Vec<(f64, &Summary)> = results
        .iter()
        .filter_map(|r| r.points.first())
        .filter_map(|p| p.summary.cache.as_ref().map(|c| (c.size_pct, &p.summary)))
        .collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    at.dedup_by(|a, b| a.0 == b.0);
    if at.len() < 2 {
        return Vec::new();
    }
    let x: Vec<f64> = at.iter().map(|(p, _)| *p).collect();
    let series = |label: &str, get: fn(&Summary) -> f64| {
        vec![Series { label: label.into(), values: at.iter().map(|(_, s)| Some(get(s))).collect() }]
    };
    vec![
        Chart {
            id: "iops-cache".into(),
            caption: "IOPS against cache size".into(),
            svg: charts::lines(
                "IOPS against cache size",
                "cache size (% of the region)",
                "IOPS (I/O per second)",
                &x,
                &series("IOPS", |s| s.iops),
            ),
        },
        Chart {
            id: "latency-cache".into(),
            caption: "Read latency against cache size".into(),
            svg: charts::lines(
                "Read latency against cache size",
                "cache size (% of the region)",
                "mean read latency (µs)",
                &x,
                &series("read latency", |s| s.latency_us.read.mean),
            ),
        },
    ]
}

/// Every chart of the report, in reading order.
pub fn charts(results: &[&RunResult]) -> Vec<Chart> {
    let names = point_view::names(results);
    let cats = categories(results, &names);
    let mut out = crate::report::page::rounds::charts(results);
    out.extend(crate::report::page::curve::charts(results));
    out.extend([
        cats.chart(results, "iops", "IOPS", "IOPS (I/O per second)", "iops"),
        cats.chart(results, "mbps", "Throughput", "MB/s (10^6 bytes per second)", "mbps"),
    ]);
    out.extend(qd_charts(results, &names));
    out.extend(crate::report::page::across::charts(results, &names));
    out.extend(cache_charts(results));
    out.extend(crate::report::page::study_figures::charts(results, &names));
    out.extend(percentile_overlays(results, &names));
    out.extend(percentile_charts(results, &names));
    out.extend(crate::report::page::ranks::charts(results));
    out.push(cats.chart(results, "cpu", "CPU utilization", "CPU (% of all cores)", "cpu.utilization_pct"));
    out.push(cats.chart(results, "cpu-efficiency", "CPU efficiency", "IOPS per CPU %", "cpu.iops_per_cpu_pct"));
    out.extend(power_charts(results, &cats));
    out.extend(per_second_charts(results, &names));
    out
}

/// Power efficiency, one measure per chart and named on its axis: IOPS per
/// watt (the whole draw), and where any point had an idle baseline, IOPS per
/// watt above idle. A point without a valid figure for a chart's measure is
/// marked missing, with why, never drawn with the other measure.
fn power_charts(results: &[&RunResult], cats: &Categories) -> Vec<Chart> {
    let points = || results.iter().flat_map(|r| r.points.iter()).filter_map(|p| p.summary.power.as_ref());
    if !points().any(|w| w.avg_watts.is_some()) {
        return Vec::new();
    }
    let mut out = vec![cats.chart(results, "power-per-watt", "IOPS per watt", "IOPS per watt (of the whole draw)", "power.iops_per_watt")];
    if points().any(|w| w.idle_watts.is_some()) {
        out.push(cats.chart(
            results,
            "power-per-watt-above-idle",
            "IOPS per watt above idle",
            "IOPS per watt above idle",
            "power.iops_per_delta_watt",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> RunResult {
        crate::report::golden_result(name)
    }

    /// A result of many points with long parameters: the bars are numbered,
    /// and the caption says which point each number stands for.
    #[test]
    fn long_point_names_become_numbers_with_a_key() {
        let mut r = fixture("result-a.json");
        let first = r.points[0].clone();
        r.points = (0..10)
            .map(|i| {
                let mut p = first.clone();
                p.params = [
                    ("qd".to_string(), serde_json::json!(i + 1)),
                    ("read".to_string(), serde_json::json!(70)),
                    ("random".to_string(), serde_json::json!(50)),
                ]
                .into();
                p
            })
            .collect();
        let cats = categories(&[&r], &["r".to_string()]);
        assert_eq!(cats.axis, "point");
        assert_eq!(cats.labels, (1..=10).map(|i| i.to_string()).collect::<Vec<_>>());
        let iops = charts(&[&r]).into_iter().find(|c| c.id == "iops").unwrap();
        assert!(iops.caption.contains("1: qd=1 random=50 read=70; 2: qd=2"), "{}", iops.caption);
        assert!(!iops.svg.contains("qd=1 random=50"), "long names under the bars");
    }

    /// Points that differ only in transfer size are bars by transfer size,
    /// whether a sweep or profile phases made them (a result saved without
    /// per-point workloads falls back to replaying the sweep).
    #[test]
    fn transfer_size_points_are_bars_by_transfer_size() {
        let (a, b) = (fixture("result-a.json"), fixture("result-b.json"));
        let cats = categories(&[&a, &b], &["a".into(), "b".into()]);
        assert_eq!(cats.axis, "transfer size");
        assert_eq!(cats.keys, vec!["4k", "64k"]);
        // Phases: the same points with their own workloads and a phase name instead of a sweep value.
        let mut phased = a.clone();
        for p in &mut phased.points {
            let bs = p.params["bs"].clone();
            let mut spec = a.workload.clone();
            crate::workload::sweep::apply(&mut spec, "bs", &bs).unwrap();
            p.workload = Some(spec);
            p.params = [("phase".to_string(), serde_json::json!(format!("randread-{}", bs.as_str().unwrap())))].into();
        }
        let cats = categories(&[&phased], &["p".into()]);
        assert_eq!((cats.axis, cats.keys.clone()), ("transfer size", vec!["4k".to_string(), "64k".to_string()]));
    }
}
