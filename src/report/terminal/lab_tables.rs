//! The labs' tables: `lab cache` (measured and predicted latency and IOPS at
//! each cache size, the QLogic table) and `lab protocols` (what each path to a
//! RAM target costs). Pure: the labs' results and rows in, text out; the labs
//! run the studies and compute the rows.

use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, Table};

use crate::results::model::RunResult;
use crate::results::Status;

/// One row of the cache study: measured and predicted (`lab cache` computes it).
#[derive(Clone, Debug, PartialEq)]
pub struct CacheStudyRow {
    pub pct: f64,
    pub cache_bytes: u64,
    pub read_latency_ms: f64,
    pub iops: f64,
    pub latency_reduction_pct: f64,
    pub iops_increase_pct: f64,
    pub read_hit_ratio: f64,
    pub predicted_read_hit_ratio: f64,
    pub predicted_read_latency_ms: f64,
    pub predicted_iops: f64,
}

/// One cache size of the study: its result, or why it was not measured.
#[derive(Clone, Copy, Debug)]
pub struct SizeOutcome<'a> {
    pub pct: f64,
    pub result: Result<&'a RunResult, &'a str>,
}

/// The backend the cache study's LUN sits on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backend<'a> {
    /// The lab's model in a line ("model: a 16m LUN striped over 4 disks ...").
    pub model: &'a str,
    /// The random offsets' distribution, as given ("uniform").
    pub dist: &'a str,
}

/// A group that did not hold the IOPS ratio it was asked to (more than 10%
/// off): a line saying so, naming the row ("cache 25%: log held 0.13 x db's
/// IOPS (1:7.6) where 0.25 (1:4.0) was asked"); None when every group held it.
pub fn ratio_notes(row: &str, r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for p in &r.points {
        for g in &p.groups {
            let Some(f) = &g.follow else { continue };
            if f.target_ratio > 0.0 && ((f.achieved_ratio - f.target_ratio) / f.target_ratio).abs() > 0.10 {
                let one_in = |x: f64| if x > 0.0 { format!("1:{:.1}", 1.0 / x) } else { "none".into() };
                let point = crate::report::rows::params_text(p);
                let at = if point == "-" { String::new() } else { format!(" at {point}") };
                out.push(format!(
                    "{row}{at}: group {} held {:.2} x {}'s IOPS ({}) where {:.2} ({}) was asked: the mix is not the one asked",
                    g.name,
                    f.achieved_ratio,
                    f.group,
                    one_in(f.achieved_ratio),
                    f.target_ratio,
                    one_in(f.target_ratio)
                ));
            }
        }
    }
    out
}

/// Why the cache table predicts no IOPS (it did: `CacheStudyRow::predicted_iops`).
pub const NO_PREDICTED_IOPS: &str = "No predicted IOPS: Little's law with the same I/Os in flight at every size and the 0% point's miss latency fell short of the measured IOPS \
     by up to 56% in this lab (misses queue at the disks, so a miss waits less as the cache takes reads off them, and write-through writes still queue there), so the hit ratio does not set the IOPS alone; \
     the hit ratio and read latency predictions stand.\n";

/// A cache's size in its largest binary unit: "16 MiB", "4.80 MiB" (30% of
/// 16m; the exact form read "4912k", and 30% of 64m "19660k"), "0 B".
fn size_text(bytes: u64) -> String {
    let units = [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    match units.iter().find(|(u, _)| bytes >= *u) {
        Some((u, name)) if bytes.is_multiple_of(*u) => format!("{} {name}", bytes / u),
        Some((u, name)) => format!("{:.2} {name}", bytes as f64 / *u as f64),
        None => format!("{bytes} B"),
    }
}

/// `lab cache`'s table, a line per size saying which result it is, and how to read and chart them.
pub fn cache_study(sizes: &[SizeOutcome], rows: &[CacheStudyRow], backend: Backend) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY).set_header(vec![
        "cache % of LUN",
        "cache size",
        "read lat ms",
        "IOPS",
        "lat reduction %",
        "IOPS increase %",
        "read hit ratio",
        "predicted hit ratio",
        "predicted read lat ms",
    ]);
    let pct = |v: f64| if v.is_nan() { "-".to_string() } else { format!("{v:.1}") };
    for r in rows {
        // A row that did not run to its end is marked where its figures are read.
        let status = sizes.iter().find(|p| p.pct == r.pct).and_then(|p| p.result.ok()).map(|r| r.status);
        let mark = match status {
            Some(s) if s != Status::Completed => format!(" ({})", format!("{s:?}").to_lowercase()),
            _ => String::new(),
        };
        t.add_row(vec![
            format!("{}{mark}", r.pct),
            size_text(r.cache_bytes),
            format!("{:.2}", r.read_latency_ms),
            format!("{:.0}", r.iops),
            pct(r.latency_reduction_pct),
            pct(r.iops_increase_pct),
            format!("{:.1}%", r.read_hit_ratio * 100.0),
            format!("{:.1}%", r.predicted_read_hit_ratio * 100.0),
            format!("{:.2}", r.predicted_read_latency_ms),
        ]);
    }
    for i in 0..9 {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(if i == 1 { CellAlignment::Left } else { CellAlignment::Right });
        }
    }
    let mut text = format!(
        "cache study: {}\nrandom offsets {}; the cache in RAM on the host, cold at each size and warmed by the ramp\n{t}\n",
        backend.model, backend.dist
    );
    for p in sizes {
        if let Ok(r) = p.result {
            for line in ratio_notes(&format!("cache {}%", p.pct), r) {
                text.push_str(&format!("{line}\n"));
            }
        }
        match p.result {
            Ok(r) if r.status == Status::Completed => text.push_str(&format!("{}%: result {}\n", p.pct, r.id)),
            Ok(r) => {
                text.push_str(&format!("{}%: result {} ({:?}: {})\n", p.pct, r.id, r.status, r.status_reason.as_deref().unwrap_or("")))
            }
            Err(why) => text.push_str(&format!("{}%: not measured: {why}\n", p.pct)),
        }
    }
    text.push_str("Predicted: exact LRU stack distances of each point's own I/O stream over the measured interval, with the measured hit and miss latencies.\n");
    text.push_str(NO_PREDICTED_IOPS);
    text.push_str("Chart them with `lunmark report ID... -o cache.html` (IOPS and latency against cache size).\n");
    text
}

/// `lab protocols`' comparison: one row per leg and point. `linked`: the TCP
/// legs crossed shaped links (a "% of link" column); `notes` the lines under
/// the table (the links, the port limit, where the CPUs ran).
///
/// The CPU columns keep the two sides apart: the initiator is lunmark's own
/// CPUs when it was pinned apart (--cpus), else lunmark's own CPU time; the
/// target side is the CPU time of the servers lunmark started. IOPS per CPU %
/// and service demand are the initiator's, as the papers state them.
pub fn protocols(legs: &[(String, Result<RunResult, String>)], linked: bool, notes: &[String]) -> String {
    let mut t = Table::new();
    let mut header = vec![
        "target",
        "point",
        "IOPS",
        "MB/s",
        "lat mean us",
        "p99 us",
        "host CPU %",
        "init CPU %",
        "target CPU %",
        "IOPS/init CPU%",
        "us init CPU/KB",
    ];
    if linked {
        header.push("% of link");
    }
    header.push("result");
    t.load_preset(UTF8_BORDERS_ONLY).set_header(header);
    let mut text = String::new();
    for (label, r) in legs {
        match r {
            Ok(r) => {
                for p in &r.points {
                    let s = &p.summary;
                    let f = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into());
                    let (init_pct, init_demand) = crate::report::point_view::initiator_cpu(s);
                    let mut row = vec![
                        label.clone(),
                        crate::report::rows::params_text(p),
                        format!("{:.0}", s.iops),
                        format!("{:.1}", s.mbps),
                        format!("{:.1}", s.latency_us.all.mean),
                        format!("{:.1}", s.latency_us.all.p99),
                        format!("{:.1}", s.cpu.utilization_pct),
                        format!("{init_pct:.1}"),
                        f(s.cpu.started_processes_pct),
                        f((init_pct > 0.0).then(|| s.iops / init_pct)),
                        init_demand.map(|d| format!("{d:.3}")).unwrap_or_else(|| "-".into()),
                    ];
                    if linked {
                        row.push(s.line_rate.as_ref().map(|l| format!("{:.1}", l.pct)).unwrap_or_else(|| "-".into()));
                    }
                    row.push(match r.status {
                        Status::Completed => r.id.clone(),
                        status => format!("{} ({})", r.id, format!("{status:?}").to_lowercase()),
                    });
                    t.add_row(row);
                }
            }
            Err(why) => text.push_str(&format!("{label}: {why}\n")),
        }
        if let Ok(r) = r {
            for line in ratio_notes(label, r) {
                text.push_str(&format!("{line}\n"));
            }
        }
    }
    for line in notes {
        text.push_str(&format!("{line}\n"));
    }
    format!("{t}\n{text}Compare any two with `lunmark compare ID ID`; chart them with `lunmark report ID... -o lab.html`.\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{check_golden, golden_result};

    fn row(pct: f64, cache_bytes: u64, read_latency_ms: f64, iops: f64) -> CacheStudyRow {
        let (base_ms, base_iops) = (5.08, 197.0);
        CacheStudyRow {
            pct,
            cache_bytes,
            read_latency_ms,
            iops,
            latency_reduction_pct: if pct == 0.0 { 0.0 } else { (base_ms - read_latency_ms) / base_ms * 100.0 },
            iops_increase_pct: (iops - base_iops) / base_iops * 100.0,
            read_hit_ratio: pct / 100.0 * 0.9,
            predicted_read_hit_ratio: pct / 100.0 * 0.92,
            predicted_read_latency_ms: read_latency_ms * 0.98,
            predicted_iops: iops * 1.02,
        }
    }

    /// A group far from its asked ratio is named under the table; one that held it is not.
    #[test]
    fn a_group_off_its_ratio_is_said() {
        let mut r = golden_result("result-a.json");
        r.points.truncate(1);
        r.points[0].groups = vec![crate::results::model::GroupSummary {
            name: "log".into(),
            workers: 1,
            iops: 0.0,
            read_iops: 0.0,
            write_iops: 0.0,
            mbps: 0.0,
            latency_us: r.points[0].summary.latency_us.clone(),
            follow: Some(crate::results::model::FollowOutcome { group: "db".into(), target_ratio: 0.25, achieved_ratio: 0.13 }),
            window: None,
        }];
        let notes = ratio_notes("cache 25%", &r);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("group log held 0.13 x db's IOPS (1:7.7) where 0.25 (1:4.0) was asked"), "{}", notes[0]);
        r.points[0].groups[0].follow.as_mut().unwrap().achieved_ratio = 0.24;
        assert!(ratio_notes("x", &r).is_empty());
        let legs = vec![("leg".to_string(), Ok(r))];
        assert!(!protocols(&legs, false, &[]).contains("was asked"));
    }

    #[test]
    fn cache_sizes_read_in_their_largest_unit() {
        assert_eq!(size_text(20132659 / 4096 * 4096), "19.20 MiB", "30% of 64m in 4 KiB blocks");
        assert_eq!(size_text(16 << 20), "16 MiB");
        assert_eq!(size_text(0), "0 B");
        assert_eq!(size_text(1536), "1.50 KiB");
    }

    #[test]
    fn the_cache_study_matches_its_snapshot() {
        let a = golden_result("result-a.json");
        let mut stopped = golden_result("result-b.json");
        stopped.status = Status::Interrupted;
        stopped.status_reason = Some("interrupted by Ctrl-C".into());
        let sizes = [
            SizeOutcome { pct: 0.0, result: Ok(&a) },
            SizeOutcome { pct: 50.0, result: Ok(&stopped) },
            SizeOutcome { pct: 100.0, result: Err("nbdkit exited: no such plugin") },
        ];
        let mut no_base = row(50.0, 128 << 20, 2.61, 383.0);
        no_base.iops_increase_pct = f64::NAN;
        let rows = [row(0.0, 0, 5.08, 197.0), no_base];
        let text = cache_study(&sizes, &rows, Backend { model: "model: a 16m LUN striped over 4 disks", dist: "uniform" });
        assert!(text.contains("50 (interrupted)"), "{text}");
        check_golden("lab-cache.txt", &text);
    }

    #[test]
    fn the_protocols_table_matches_its_snapshots() {
        let (a, b) = (golden_result("result-a.json"), golden_result("result-b.json"));
        let legs = vec![
            ("mem: (lunmark alone)".to_string(), Ok(a)),
            ("NBD unix socket".to_string(), Err("nbdkit: command not found".to_string())),
            ("iSCSI TCP 127.0.0.1 (tgtd)".to_string(), Ok(b)),
        ];
        check_golden("lab-protocols.txt", &protocols(&legs, false, &[]));
        let linked = protocols(&legs, true, &["link: 1gbit each way on veth lm0 (tc tbf)".into()]);
        assert!(linked.contains("% of link"), "{linked}");
        check_golden("lab-protocols-link.txt", &linked);
    }
}
