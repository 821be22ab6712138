//! The report's tables as typed text, shared by the HTML page and the
//! Markdown file: the results (what ran where) and the summary (one row per
//! point: its workload in words and its figures under human headers with
//! units, numbers with thousands separators). Pure.

use super::human::{count, fixed, number};
use super::point_view;
use crate::results::model::{RunResult, Status};

/// A table: headers, which columns hold numbers (right-aligned), rows of cells.
pub struct Table {
    pub headers: Vec<&'static str>,
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
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
        headers: vec!["result", "id", "started (UTC)", "status", "profile", "engine", "targets", "host"],
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

/// The summary's columns: what each holds and its unit.
pub const SUMMARY_HEADERS: [&str; 15] = [
    "result",
    "point",
    "workload",
    "IOPS",
    "read IOPS",
    "write IOPS",
    "throughput (MB/s)",
    "mean latency (µs)",
    "p50 latency (µs)",
    "p99 latency (µs)",
    "p99.9 latency (µs)",
    "max latency (µs)",
    "CPU (% of all cores)",
    "IOPS per CPU %",
    "errors",
];

/// One row per point of every result.
pub fn summary(results: &[&RunResult]) -> Table {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            let s = &p.summary;
            let l = &s.latency_us.all;
            let point = (i + 1).to_string();
            rows.push(vec![
                name.clone(),
                point,
                point_view::describe_point(r, p),
                number(s.iops),
                number(s.read_iops),
                number(s.write_iops),
                number(s.mbps),
                number(l.mean),
                number(l.p50),
                number(l.p99),
                number(l.p99_9),
                number(l.max),
                fixed(s.cpu.utilization_pct, 1),
                s.cpu.iops_per_cpu_pct.map(number).unwrap_or_else(|| "-".into()),
                count(s.errors.total),
            ]);
        }
    }
    let mut numeric = vec![true; SUMMARY_HEADERS.len()];
    numeric[..3].iter_mut().for_each(|n| *n = false);
    Table { headers: SUMMARY_HEADERS.to_vec(), numeric, rows }
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
                (i + 1).to_string(),
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
    Some(Table { headers, numeric: vec![false, false, false, true, true, true, true], rows })
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
                    (i + 1).to_string(),
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
    (!rows.is_empty()).then(|| Table { headers, numeric: vec![false, false, false, true, true, true, true, true, true], rows })
}

/// Each worker's figures per point, with the queue depth it held against the
/// depth asked: None when no point has them.
pub fn workers(results: &[&RunResult]) -> Option<Table> {
    let names = point_view::names(results);
    let mut rows = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            for w in &p.workers {
                rows.push(vec![
                    name.clone(),
                    (i + 1).to_string(),
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
    (!rows.is_empty()).then_some(Table { headers, numeric, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> RunResult {
        crate::report::golden_result(name)
    }

    /// Human headers with units; each point's workload in words; figures with
    /// separators; results without a label named by profile and target.
    #[test]
    fn the_summary_reads_like_a_document() {
        let (mut a, b) = (fixture("result-a.json"), fixture("result-b.json"));
        a.label = None;
        let t = summary(&[&a, &b]);
        assert!(t.headers.contains(&"p99.9 latency (µs)") && t.headers.contains(&"throughput (MB/s)"));
        assert_eq!(t.rows.len(), 4);
        assert_eq!(t.rows[0][0], "custom on mem:16m");
        assert_eq!(t.rows[1][2], "bs 64k, 100% read, 100% random, QD 32, 1 worker, 1 target");
        assert!(t.rows.iter().all(|row| row.len() == t.headers.len()));
        // Every IOPS figure of a thousand or more has its separator.
        for (row, p) in t.rows.iter().zip(a.points.iter().chain(&b.points)) {
            assert_eq!(row[3].contains(','), p.summary.iops >= 999.5, "{} for {}", row[3], p.summary.iops);
        }
        let r = results(&[&a, &b]);
        assert_eq!(r.rows[0][0], "custom on mem:16m");
        assert_eq!(r.rows[1][0], "null", "a label is kept");
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
