//! What a reader needs to judge a result, stated per result in the report:
//! the targets with their size and region, the engine, direct or buffered
//! I/O, each worker group's workload, run time and ramp, repeats, seed,
//! lunmark's version, the host, when it started, its store id, and every
//! warning the run raised or its points carry. Pure.

use crate::results::model::RunResult;
use crate::units::{format_duration, Bytes};
use crate::workload::RunLength;

/// (field, value) rows describing one result.
pub fn metadata(r: &RunResult) -> Vec<(&'static str, String)> {
    let w = &r.workload;
    let mut rows = vec![("store id", r.id.clone()), ("started (UTC)", r.started_at.clone())];
    if let Some(f) = &r.finished_at {
        rows.push(("finished (UTC)", f.clone()));
    }
    rows.push(("lunmark version", r.lunmark_version.clone()));
    rows.push(("host", format!("{}: {}, {} cores, kernel {}", r.host.hostname, r.host.cpu_model, r.host.cores, r.host.kernel)));
    rows.push(("command", r.command_line.join(" ")));
    rows.push(("profile", r.profile.clone().unwrap_or_else(|| "custom (flags)".into())));
    let targets: Vec<String> = if r.targets.is_empty() {
        w.targets.clone()
    } else {
        r.targets
            .iter()
            .map(|t| {
                let mut text =
                    format!("{}: {}, region {} at offset {}", t.uri, Bytes(t.size_bytes), Bytes(t.region_bytes), Bytes(t.region_offset));
                text += &[t.model.as_deref(), t.filesystem.as_deref()].into_iter().flatten().map(|m| format!(", {m}")).collect::<String>();
                text
            })
            .collect()
    };
    rows.push(("targets", targets.join("\n")));
    rows.push(("engine", r.engine.clone()));
    // Only the engines of files and devices go through a page cache or bypass it.
    let through_files = ["io_uring", "psync"].iter().any(|e| r.engine.contains(e));
    let io = match (through_files, w.buffered) {
        (false, _) => "no page cache in the path (RAM or network LUNs)",
        (true, true) => "buffered (page cache)",
        (true, false) => "direct (O_DIRECT, page cache bypassed)",
    };
    rows.push(("I/O", io.into()));
    let groups = match crate::report::point_view::group_lines(w) {
        lines if lines.is_empty() => crate::report::point_view::describe(w),
        lines => lines.join("\n"),
    };
    // A sweep changes the workload from point to point: this is its first point's, the points row says the rest.
    let swept = r.points.iter().any(|p| !p.params.is_empty()) && r.points.len() > 1;
    rows.push((if swept { "workload (first point)" } else { "workload" }, groups));
    if let Some(c) = &r.cpus {
        rows.push(("pinned CPUs", serde_json::to_value(c).map(|v| v.to_string()).unwrap_or_default()));
    }
    rows.push((
        "run",
        match w.run {
            RunLength::Time(d) if w.groups_apart() => format!(
                "{} measured per point, each group over its own window of it (the groups start late or run times of their own), after a ramp of {}",
                format_duration(w.planned_span().unwrap_or(d)),
                format_duration(w.ramp)
            ),
            RunLength::Time(d) => {
                format!("{} measured per point, after a ramp of {}", format_duration(w.planned_span().unwrap_or(d)), format_duration(w.ramp))
            }
            RunLength::Ios(n) => format!("{n} I/Os per worker per point, after a ramp of {}", format_duration(w.ramp)),
        },
    ));
    let swept: Vec<String> = r.points.iter().map(crate::report::rows::params_text).filter(|p| p != "-").collect();
    rows.push(("points", if swept.is_empty() { r.points.len().to_string() } else { format!("{}: {}", swept.len(), swept.join(", ")) }));
    rows.push((
        "repeats",
        match r.points.iter().find_map(|p| p.repeats.as_ref()) {
            Some(s) => format!(
            "{} per point: figures are their mean ± stdev; charts of one run (percentiles, per second) show the run picked by --pick {}",
            s.count,
            format!("{:?}", s.pick).to_lowercase()
        ),
            None => "1 (each figure is a single run)".into(),
        },
    ));
    rows.push(("seed", w.seed.to_string()));
    let status = format!("{:?}", r.status).to_lowercase();
    rows.push(("status", format!("{status}{}", r.status_reason.as_deref().map(|s| format!(": {s}")).unwrap_or_default())));
    rows
}

/// Every warning of a result: the run's own, then each point's (CPU
/// disturbed by other processes, a queue depth not held, a point cut short,
/// power figures left out), each said once with the points it applies to.
pub fn warnings(r: &RunResult) -> Vec<String> {
    let mut out: Vec<(String, Vec<usize>)> = r.warnings.iter().map(|w| (w.clone(), Vec::new())).collect();
    let mut add = |text: String, point: usize| match out.iter_mut().find(|(t, _)| *t == text) {
        Some((_, points)) => points.push(point),
        None => out.push((text, vec![point])),
    };
    for (i, p) in r.points.iter().enumerate() {
        let s = &p.summary;
        let found = [
            s.cpu.warning.clone(),
            s.cpu.other_processes_estimate.as_ref().map(|e| format!("other processes' CPU is an estimate: {e}")),
            s.queue_depth.as_ref().and_then(|q| q.warning.clone()),
            // The whole note stands under the point's workload in the summary: named here, not repeated.
            p.cut_short
                .as_ref()
                .map(|_| "cut short: its figures cover only part of the planned time (the summary row says how much)".to_string()),
            s.power.as_ref().filter(|w| w.avg_watts.is_some()).and_then(|w| w.reason.clone()).map(|w| format!("power: {w}")),
        ];
        for w in found.into_iter().flatten() {
            // Numbers differ point by point; the wording is said once per point then.
            add(w, i + 1);
        }
    }
    out.into_iter()
        .map(|(w, points)| match points.as_slice() {
            [] => w,
            [one] if r.points.len() == 1 && *one == 1 => w,
            points => format!("point {}: {w}", points.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
        })
        .collect()
}

/// The metadata as a two-column table (field, value), for the page and the Markdown file.
pub fn table(r: &RunResult) -> crate::report::page::report_tables::Table {
    let mut rows: Vec<Vec<String>> = metadata(r).into_iter().map(|(k, v)| vec![k.to_string(), v]).collect();
    let warnings = warnings(r);
    rows.push(vec!["warnings".into(), if warnings.is_empty() { "none".into() } else { warnings.join("\n") }]);
    crate::report::page::report_tables::Table { headers: vec!["field".into(), "value".into()], numeric: vec![false, false], rows }
}
