//! The worker and target tables of a point (`--detail`): IOmeter's per-worker
//! and per-target rows. Pure: a point in, text out.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, Table};

use crate::report::cells::{num, right};

use crate::results::model::Point;

/// Both tables, or a line saying the result has none (recorded by an older version).
pub fn render(p: &Point) -> String {
    if p.workers.is_empty() && p.targets.is_empty() {
        return "per-worker and per-target figures: not in this result (recorded before lunmark kept them)\n".into();
    }
    let mut workers = Table::new();
    workers.load_preset(UTF8_BORDERS_ONLY).set_header(vec![
        "worker", "group", "targets", "cpus", "IOPS", "MB/s", "I/Os", "mean us", "p99 us", "errors", "QD asked", "QD held",
    ]);
    for w in &p.workers {
        let list = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        let cpus = if w.cpus.is_empty() { "-".into() } else { crate::workload::cpus::CpuList(w.cpus.clone()).to_string() };
        workers.add_row(vec![
            right(w.worker.to_string()),
            Cell::new(&w.group),
            Cell::new(list(&w.targets)),
            Cell::new(cpus),
            right(num(w.iops)),
            right(num(w.mbps)),
            right(w.ios.to_string()),
            right(num(w.latency_mean_us)),
            right(num(w.latency_p99_us)),
            right(w.errors.to_string()),
            right(w.qd_requested.to_string()),
            right(w.qd_achieved.map(|d| format!("{d:.1}")).unwrap_or_else(|| "-".into())),
        ]);
    }
    let mut targets = Table::new();
    targets
        .load_preset(UTF8_BORDERS_ONLY)
        .set_header(vec!["target", "uri", "workers", "IOPS", "MB/s", "I/Os", "mean us", "p99 us", "errors"]);
    for t in &p.targets {
        targets.add_row(vec![
            right(t.target.to_string()),
            Cell::new(&t.uri),
            right(t.workers.to_string()),
            right(num(t.iops)),
            right(num(t.mbps)),
            right(t.ios.to_string()),
            right(num(t.latency_mean_us)),
            right(num(t.latency_p99_us)),
            right(t.errors.to_string()),
        ]);
    }
    format!("per worker:\n{workers}\nper target:\n{targets}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::per_worker::{TargetFigures, WorkerFigures};

    #[test]
    fn each_worker_and_target_gets_a_row() {
        let mut p: Point = serde_json::from_value(
            serde_json::json!({"params": {}, "summary": serde_json::to_value(crate::results::Summary::default()).unwrap()}),
        )
        .unwrap();
        assert!(render(&p).contains("not in this result"));
        p.workers = vec![
            WorkerFigures {
                worker: 0,
                group: "db".into(),
                targets: vec![0, 1],
                qd_requested: 64,
                qd_achieved: Some(63.5),
                ..Default::default()
            },
            WorkerFigures { worker: 1, group: "log".into(), targets: vec![1], cpus: vec![1], qd_requested: 32, ..Default::default() },
        ];
        p.targets = vec![TargetFigures { target: 1, uri: "mem:port-b".into(), workers: 2, ios: 77, ..Default::default() }];
        let text = render(&p);
        assert!(text.contains("63.5") && text.contains("log") && text.contains("mem:port-b") && text.contains("77"), "{text}");
    }
}
