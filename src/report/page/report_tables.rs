//! The report's tables as typed text, shared by the HTML page and the
//! Markdown file: the results (what ran where) and the summary (one row per
//! point: its workload in words and its figures under human headers with
//! units, numbers with thousands separators). Pure.

use crate::report::human::{count, fixed, number};
use crate::report::point_view;
use crate::results::model::{Point, RunResult, Status};

/// A table: headers, which columns hold numbers (right-aligned), rows of cells.
pub struct Table {
    pub headers: Vec<String>,
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

/// Headers as owned text (a comparison's are the results' names).
fn own(headers: &[&str]) -> Vec<String> {
    headers.iter().map(|h| h.to_string()).collect()
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Running => "running",
        Status::Completed => "completed",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

/// One row per result: its name, when, what ran where, on which host.
pub fn results(results: &[&RunResult]) -> Table {
    let names = point_view::names(results);
    Table {
        headers: own(&["result", "id", "started (UTC)", "status", "profile", "engine", "targets", "host"]),
        numeric: vec![false; 8],
        rows: results
            .iter()
            .zip(names)
            .map(|(r, name)| {
                vec![
                    name,
                    r.id.chars().take(12).collect(),
                    r.started_at.replace('T', " ").trim_end_matches('Z').split('.').next().unwrap_or_default().to_string(),
                    status(r.status).to_string(),
                    r.profile.clone().unwrap_or_else(|| "custom (flags)".into()),
                    r.engine.clone(),
                    r.targets.iter().map(|t| t.uri.as_str()).collect::<Vec<_>>().join(", "),
                    format!("{}, {} cores, kernel {}", r.host.cpu_model, r.host.cores, r.host.kernel),
                ]
            })
            .collect(),
    }
}

/// How a summary column writes its figure.
#[derive(Clone, Copy)]
enum Shown {
    /// Thousands separators, decimals by size.
    Number,
    /// One decimal (percentages).
    Percent,
    /// A whole count.
    Count,
}

/// The summary's figure columns: the registry metric each shows (its one
/// definition, `results::registry`), under a header with its unit.
const SUMMARY_FIGURES: [(&str, &str, Shown); 12] = [
    ("iops", "IOPS", Shown::Number),
    ("read_iops", "read IOPS", Shown::Number),
    ("write_iops", "write IOPS", Shown::Number),
    ("mbps", "throughput (MB/s)", Shown::Number),
    ("latency_us.all.mean", "mean latency (µs)", Shown::Number),
    ("latency_us.all.p50", "p50 latency (µs)", Shown::Number),
    ("latency_us.all.p99", "p99 latency (µs)", Shown::Number),
    ("latency_us.all.p99_9", "p99.9 latency (µs)", Shown::Number),
    ("latency_us.all.max", "max latency (µs)", Shown::Number),
    ("cpu.utilization_pct", "CPU (% of all cores)", Shown::Percent),
    ("cpu.iops_per_cpu_pct", "IOPS per CPU %", Shown::Number),
    ("errors.total", "errors", Shown::Count),
];

/// The summary's columns: what each holds and its unit.
pub fn summary_headers() -> Vec<&'static str> {
    ["result", "point", "workload", "figures"].into_iter().chain(SUMMARY_FIGURES.iter().map(|(_, h, _)| *h)).collect()
}

/// A figure of a point as a cell: the repeats' mean ± stdev, or the single
/// run's value; "-" where the point does not have it.
fn shown_cell(p: &Point, key: &str, shown: Shown) -> String {
    let f = crate::report::shown::fig(p, key);
    crate::report::shown::cell(&f, |v| match shown {
        Shown::Number => number(v),
        Shown::Percent => fixed(v, 1),
        Shown::Count => count(v.round().max(0.0) as u64),
    })
}

/// A point's number in the tables beside the summary, marked when the point
/// was stopped early (the summary gives the whole note).
fn point_cell(index: usize, p: &Point) -> String {
    match p.cut_short {
        Some(_) => format!("{} (cut short)", index + 1),
        None => (index + 1).to_string(),
    }
}

/// A point's number in a table of one run's figures (per target, per
/// worker, line rate): a repeated point's are the run it picked, said so.
fn picked_point_cell(index: usize, p: &Point) -> String {
    match &p.repeats {
        Some(r) => format!("{} (picked run: repeat {} of {})", point_cell(index, p), r.picked, r.count),
        None => point_cell(index, p),
    }
}

/// One row per point of every result.
pub fn summary(results: &[&RunResult]) -> Table {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            // A point stopped early says so under its workload, beside its figures.
            let workload = match &p.cut_short {
                Some(note) => format!("{}\ncut short: {note}", point_view::describe_point(r, p)),
                None => point_view::describe_point(r, p),
            };
            let mut row = vec![name.clone(), (i + 1).to_string(), workload, crate::report::shown::basis(p)];
            row.extend(SUMMARY_FIGURES.iter().map(|(key, _, shown)| shown_cell(p, key, *shown)));
            rows.push(row);
        }
    }
    let headers = summary_headers();
    let mut numeric = vec![true; headers.len()];
    numeric[..4].iter_mut().for_each(|n| *n = false);
    Table { headers: own(&headers), numeric, rows }
}

/// Rows of figures per point: (header, registry key, how shown) columns
/// after result and point, with a last column of notes; None when no point
/// has any of the figures that `has` names.
fn figure_table(
    results: &[&RunResult],
    columns: &[(&'static str, &'static str, Shown)],
    keep: impl Fn(&Point) -> bool,
    note: impl Fn(&Point) -> String,
) -> Option<Table> {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate().filter(|(_, p)| keep(p)) {
            let mut row = vec![name.clone(), point_cell(i, p), crate::report::shown::basis(p)];
            row.extend(columns.iter().map(|(_, key, shown)| shown_cell(p, key, *shown)));
            row.push(note(p));
            rows.push(row);
        }
    }
    let mut headers = vec!["result", "point", "figures"];
    headers.extend(columns.iter().map(|(h, _, _)| *h));
    headers.push("notes");
    let mut numeric = vec![true; headers.len()];
    numeric[..3].iter_mut().for_each(|n| *n = false);
    numeric[headers.len() - 1] = false;
    (!rows.is_empty()).then_some(Table { headers: own(&headers), numeric, rows })
}

/// CPU per point: utilization, CPU efficiency and service demand (HP's
/// diskbench figures), and with --cpus the pinned CPUs' own.
pub fn cpu(results: &[&RunResult]) -> Option<Table> {
    let pinned = results.iter().any(|r| r.points.iter().any(|p| p.summary.cpu.pinned.is_some()));
    let mut columns = vec![
        ("CPU (% of all cores)", "cpu.utilization_pct", Shown::Percent),
        ("IOPS per CPU %", "cpu.iops_per_cpu_pct", Shown::Number),
        ("MB/s per CPU %", "cpu.mbps_per_cpu_pct", Shown::Number),
        ("service demand (µs CPU per KB)", "cpu.service_demand_us_per_kb", Shown::Number),
    ];
    if pinned {
        columns.extend([
            ("pinned CPUs busy (%)", "cpu.pinned.utilization_pct", Shown::Percent),
            ("service demand of pinned CPUs (µs per KB)", "cpu.pinned.service_demand_us_per_kb", Shown::Number),
        ]);
    }
    let note = |p: &Point| {
        let c = &p.summary.cpu;
        let mut notes: Vec<String> = c.pinned.iter().map(|x| format!("pinned to CPUs {}", x.cpus)).collect();
        notes.extend(c.warning.clone());
        notes.extend(c.other_processes_estimate.as_ref().map(|e| format!("other processes: an estimate: {e}")));
        notes.join("; ")
    };
    figure_table(results, &columns, |_| true, note)
}

/// Power per point, one measure per column and named: the average draw, the
/// idle baseline, IOPS and MB/s per watt, and per watt above idle; a figure a
/// point does not have is "-" with why in its notes, never the other measure.
pub fn power(results: &[&RunResult]) -> Option<Table> {
    let measured = |p: &Point| p.summary.power.as_ref().is_some_and(|w| w.avg_watts.is_some());
    if !results.iter().any(|r| r.points.iter().any(measured)) {
        return None;
    }
    let columns = [
        ("power (W)", "power.avg_watts", Shown::Number),
        ("IOPS per watt", "power.iops_per_watt", Shown::Number),
        ("MB/s per watt", "power.mbps_per_watt", Shown::Number),
        ("IOPS per watt above idle", "power.iops_per_delta_watt", Shown::Number),
        ("MB/s per watt above idle", "power.mbps_per_delta_watt", Shown::Number),
    ];
    let note = |p: &Point| {
        let Some(w) = &p.summary.power else { return "power not measured".into() };
        let mut notes = vec![format!("source: {}", w.source.as_deref().unwrap_or("none"))];
        notes.extend(w.idle_watts.map(|i| format!("idle {} W", number(i))));
        let missing: Vec<String> = columns[1..]
            .iter()
            .filter_map(|(h, key, _)| crate::report::shown::fig(p, key).missing.map(|why| format!("{h}: {why}")))
            .collect();
        // One reason often covers both per-watt-above-idle columns: said once.
        let mut seen: Vec<String> = Vec::new();
        for m in missing {
            let why = m.split_once(": ").map(|x| x.1.to_string()).unwrap_or_default();
            if !seen.contains(&why) {
                notes.push(format!("missing {m}"));
                seen.push(why);
            }
        }
        notes.join("; ")
    };
    figure_table(results, &columns, |_| true, note)
}

/// Each point's share of its link (`--link`): None when no point has one.
pub fn line_rate(results: &[&RunResult]) -> Option<Table> {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            let Some(l) = &p.summary.line_rate else { continue };
            let link = match l.target {
                Some(t) => format!("{} (target {t})", l.link),
                None => l.link.clone(),
            };
            rows.push(vec![
                name.clone(),
                picked_point_cell(i, p),
                link,
                number(l.usable_mbps_per_direction),
                fixed(l.read_pct, 1),
                fixed(l.write_pct, 1),
                fixed(l.pct, 1),
            ]);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let headers = vec![
        "result",
        "point",
        "link",
        "usable rate per direction (MB/s)",
        "reads (% of line rate)",
        "writes (% of line rate)",
        "busier direction (% of line rate)",
    ];
    Some(Table { headers: own(&headers), numeric: vec![false, false, false, true, true, true, true], rows })
}

/// Each target's figures per point (IOmeter's target rows): None when no point has them.
pub fn targets(results: &[&RunResult]) -> Option<Table> {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            for t in &p.targets {
                rows.push(vec![
                    name.clone(),
                    picked_point_cell(i, p),
                    format!("{} {}", t.target, t.uri),
                    count(t.workers as u64),
                    number(t.iops),
                    number(t.mbps),
                    number(t.latency_mean_us),
                    number(t.latency_p99_us),
                    count(t.errors),
                ]);
            }
        }
    }
    let headers =
        vec!["result", "point", "target", "workers", "IOPS", "throughput (MB/s)", "mean latency (µs)", "p99 latency (µs)", "errors"];
    (!rows.is_empty()).then(|| Table {
        headers: own(&headers),
        numeric: vec![false, false, false, true, true, true, true, true, true],
        rows,
    })
}

/// Each worker's figures per point, with the queue depth it held against the
/// depth asked: None when no point has them.
/// What the Targets and Workers tables' figures are over: said when a point's
/// groups ran apart (a start delay or a time of their own), where a worker's
/// figures are over its group's window and a target's over the whole span.
pub fn windows_note(results: &[&RunResult]) -> &'static str {
    let apart = results.iter().flat_map(|r| &r.points).any(|p| p.groups.iter().any(|g| g.window.is_some()));
    if apart {
        " Where a point's groups ran apart (a start delay or a time of their own, as its workload says), each worker's figures are over its group's own measured window, and each target's over the point's whole span."
    } else {
        ""
    }
}

pub fn workers(results: &[&RunResult]) -> Option<Table> {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            for w in &p.workers {
                rows.push(vec![
                    name.clone(),
                    picked_point_cell(i, p),
                    format!("{} ({})", w.worker, w.group),
                    w.targets.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
                    number(w.iops),
                    number(w.mbps),
                    number(w.latency_mean_us),
                    number(w.latency_p99_us),
                    count(w.errors),
                    count(w.qd_requested as u64),
                    w.qd_achieved.map(|d| fixed(d, 1)).unwrap_or_else(|| "-".into()),
                ]);
            }
        }
    }
    let headers = vec![
        "result",
        "point",
        "worker",
        "targets",
        "IOPS",
        "throughput (MB/s)",
        "mean latency (µs)",
        "p99 latency (µs)",
        "errors",
        "queue depth asked",
        "queue depth held",
    ];
    let mut numeric = vec![true; headers.len()];
    numeric[..4].iter_mut().for_each(|n| *n = false);
    (!rows.is_empty()).then_some(Table { headers: own(&headers), numeric, rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::registry;

    fn fixture(name: &str) -> RunResult {
        crate::report::golden_result(name)
    }

    /// Human headers with units; each point's workload in words; figures with
    /// separators; results without a label named by profile and target.
    #[test]
    fn every_summary_figure_is_read_through_the_registry() {
        for (key, header, _) in SUMMARY_FIGURES {
            assert!(registry::by_key(key).is_some(), "{header}: {key} is not a registry metric");
        }
    }

    #[test]
    fn the_summary_reads_like_a_document() {
        let (mut a, b) = (fixture("result-a.json"), fixture("result-b.json"));
        a.label = None;
        let t = summary(&[&a, &b]);
        assert!(t.headers.iter().any(|h| h == "p99.9 latency (µs)") && t.headers.iter().any(|h| h == "throughput (MB/s)"));
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[0][0], "custom on mem:16m");
        assert_eq!(t.rows[1][2], "bs 64k, 100% read, 100% random, QD 32, 1 worker, 1 target");
        assert!(t.rows.iter().all(|row| row.len() == t.headers.len()));
        // Every IOPS figure of a thousand or more has its separator.
        for (row, p) in t.rows.iter().zip(a.points.iter().chain(&b.points)) {
            assert_eq!(row[4].contains(','), p.summary.iops >= 999.5, "{} for {}", row[4], p.summary.iops);
            assert_eq!(row[3], "single run");
        }
        let r = results(&[&a, &b]);
        assert_eq!(r.rows[0][0], "custom on mem:16m");
        assert_eq!(r.rows[1][0], "null", "a label is kept");
    }

    /// A point cut short says so beside its figures: the whole note under its
    /// workload in the summary, "(cut short)" by its number elsewhere.
    #[test]
    fn a_point_cut_short_says_so_in_its_rows() {
        use crate::results::per_worker::TargetFigures;
        let mut a = fixture("result-a.json");
        a.points[1].cut_short = Some("interrupted by Ctrl-C (SIGINT) after 0.50 s of the 1s planned".into());
        a.points.iter_mut().for_each(|p| p.targets = vec![TargetFigures { target: 0, uri: "mem:16m".into(), ..Default::default() }]);
        let t = summary(&[&a]);
        assert!(!t.rows[0][2].contains("cut short"), "{}", t.rows[0][2]);
        assert!(t.rows[1][2].ends_with("\ncut short: interrupted by Ctrl-C (SIGINT) after 0.50 s of the 1s planned"), "{}", t.rows[1][2]);
        let t = targets(&[&a]).unwrap();
        assert_eq!((t.rows[0][1].as_str(), t.rows[1][1].as_str()), ("1", "2 (cut short)"));
    }

    /// Per-target and per-worker rows appear for the points that have them;
    /// results recorded before them give no table.
    #[test]
    fn targets_and_workers_get_their_own_tables() {
        use crate::results::per_worker::{TargetFigures, WorkerFigures};
        let mut a = fixture("result-a.json");
        assert!(targets(&[&a]).is_none() && workers(&[&a]).is_none());
        a.points[0].targets =
            vec![TargetFigures { target: 1, uri: "nbd://port-b/l0".into(), workers: 2, iops: 12345.0, ..Default::default() }];
        a.points[0].workers = vec![WorkerFigures {
            worker: 0,
            group: "main".into(),
            targets: vec![1],
            qd_requested: 32,
            qd_achieved: Some(1.0),
            ..Default::default()
        }];
        let t = targets(&[&a]).unwrap();
        assert_eq!((t.rows.len(), t.rows[0][2].as_str(), t.rows[0][4].as_str()), (1, "1 nbd://port-b/l0", "12,345"));
        let w = workers(&[&a]).unwrap();
        assert_eq!((w.rows[0][9].as_str(), w.rows[0][10].as_str()), ("32", "1.0"));
        assert!(w.rows.iter().all(|row| row.len() == w.headers.len()));
    }
}
