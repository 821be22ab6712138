//! What the report says about each result and point: a readable name for a
//! result (its label, else its profile and target), and the workload each
//! point ran stated in words (transfer size, read %, random %, queue depth,
//! workers, targets). Pure.
//!
//! A point records its workload (`points[].workload`); for a result saved
//! before it did, the run's workload with the point's sweep values replayed
//! stands in, which is exact for sweeps and unknown for the phases of a
//! multi-phase profile (the phase's name is stated instead).

use crate::results::model::{Point, RunResult};
use crate::workload::{WorkerGroup, WorkloadSpec};

/// The effective workload of a point of a result, when it is known.
pub fn spec(result: &RunResult, point: &Point) -> Option<WorkloadSpec> {
    super::workload_text::of(result, point)
}

/// The one transfer size every access line of the point uses, in bytes.
pub fn single_bs(spec: &WorkloadSpec) -> Option<u64> {
    let mut sizes = spec.groups.iter().flat_map(|g| g.access.iter().map(|l| l.bs.get()));
    let first = sizes.next()?;
    sizes.all(|b| b == first).then_some(first)
}

/// The point's workload with its transfer size left out: two points that
/// differ only in transfer size have the same key.
pub fn key_without_bs(spec: &WorkloadSpec) -> String {
    let mut s = spec.clone();
    s.groups.iter_mut().flat_map(|g| g.access.iter_mut()).for_each(|l| {
        l.bs = crate::units::Bytes(0);
        l.align = None;
    });
    serde_json::to_string(&(&s.targets, &s.groups)).unwrap_or_default()
}

fn pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn group_text(spec: &WorkloadSpec, g: &WorkerGroup) -> String {
    let share = |f: fn(&crate::workload::AccessLine) -> f64| g.access.iter().map(|l| l.share * f(l)).sum::<f64>() / 100.0;
    let bs = match g.access.as_slice() {
        [one] => one.bs.to_string(),
        lines => lines.iter().map(|l| format!("{} ({}%)", l.bs, pct(l.share))).collect::<Vec<_>>().join(" + "),
    };
    let workers = spec.group_workers(g);
    let targets = spec.group_targets(g).len();
    let plural = |n: usize, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
    let mut text = format!(
        "bs {bs}, {}% read, {}% random, QD {}, {}, {}",
        pct(share(|l| l.read)),
        pct(share(|l| l.random)),
        g.qd,
        plural(workers as usize, "worker"),
        plural(targets, "target")
    );
    if let Some(rate) = g.rate {
        text += &format!(", {} IOPS cap", super::human::number(rate));
    }
    text += &window_text(spec, g);
    text
}

/// ", measured 2s-5s of the point" for a group of a point whose groups run
/// apart (its figures are over that window); empty otherwise.
pub fn window_text(spec: &WorkloadSpec, g: &WorkerGroup) -> String {
    let f = crate::units::format_duration;
    spec.planned_window(g).map_or(String::new(), |(from, to)| format!(", measured {}-{} of the point", f(from), f(to)))
}

/// The workload in words: "bs 4k, 100% read, 100% random, QD 8, 1 worker,
/// 1 target", one clause per worker group when there are several.
pub fn describe(spec: &WorkloadSpec) -> String {
    if let Some(r) = &spec.replay {
        return super::workload_text::replay_line(r, spec);
    }
    match spec.groups.as_slice() {
        [one] => group_text(spec, one),
        groups => groups.iter().map(|g| format!("{}: {}", g.name, group_text(spec, g))).collect::<Vec<_>>().join("; "),
    }
}

/// Each worker group's workload in words, one line per group, named:
/// "db: bs 8k, 35% read, 100% random, QD 2, 4 workers, 1 target". Empty for
/// a replay (its trace gave each I/O).
pub fn group_lines(spec: &WorkloadSpec) -> Vec<String> {
    if spec.replay.is_some() {
        return Vec::new();
    }
    spec.groups.iter().map(|g| format!("{}: {}", g.name, group_text(spec, g))).collect()
}

/// The workload of a point in words, or its phase and parameters when unknown.
pub fn describe_point(result: &RunResult, point: &Point) -> String {
    match spec(result, point) {
        Some(s) => describe(&s),
        None => format!("{} (workload not recorded)", super::rows::params_text(point)),
    }
}

/// A name for each result, in order: its label, else "PROFILE on TARGETS"
/// (the profile, or "custom" for a workload from flags). Names two results
/// would share get the start of their id added, so every line of a chart
/// can be told apart.
pub fn names(results: &[&RunResult]) -> Vec<String> {
    let base: Vec<String> = results
        .iter()
        .map(|r| match &r.label {
            Some(l) => l.clone(),
            None => {
                let targets: Vec<&str> = r.targets.iter().map(|t| t.uri.as_str()).collect();
                let targets = if targets.is_empty() { r.workload.targets.join(", ") } else { targets.join(", ") };
                format!("{} on {targets}", r.profile.as_deref().unwrap_or("custom"))
            }
        })
        .collect();
    base.iter()
        .zip(results)
        .map(|(n, r)| if base.iter().filter(|m| *m == n).count() > 1 { format!("{n} ({})", &r.id[..r.id.len().min(8)]) } else { n.clone() })
        .collect()
}
/// The initiator's CPU % and µs of its CPU per KB: its pinned CPUs' when it
/// was pinned apart (--cpus), else lunmark's own time as a share of all host
/// CPUs (the target servers' time is `started_processes_pct`, apart).
pub fn initiator_cpu(s: &crate::results::model::Summary) -> (f64, Option<f64>) {
    let kb = (s.bytes_read + s.bytes_written) as f64 / 1024.0;
    match &s.cpu.pinned {
        Some(p) => (p.utilization_pct, p.service_demand_us_per_kb),
        None => (s.cpu.process_pct, (kb > 0.0).then(|| s.cpu.process_cpu_s * 1e6 / kb)),
    }
}
