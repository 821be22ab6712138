//! Each point's workload, restated: the effective workload a point ran (its
//! sweep values and phase applied), and its parts as short texts (transfer
//! size, read %, random %, queue depth, workers, targets) for the summary, the
//! CSV and the fio-shaped export. Pure.
//!
//! A point records its workload since lunmark 0.1 (`points[].workload`); for a
//! result saved before that, the run's workload with the point's sweep values
//! applied stands in, which is exact for sweeps and unknown for the phases of a
//! multi-phase profile (then None).

use crate::results::model::{Point, RunResult};
use crate::units::counted;
use crate::workload::sweep;
use crate::workload::{WorkerGroup, WorkloadSpec};

/// The effective workload of point `index` of a result, when it is known.
pub fn of_point(result: &RunResult, index: usize) -> Option<WorkloadSpec> {
    of(result, result.points.get(index)?)
}

/// The effective workload of `point`, a point of `result`, when it is known.
pub fn of(result: &RunResult, point: &Point) -> Option<WorkloadSpec> {
    if let Some(w) = &point.workload {
        return Some(w.clone());
    }
    let mut spec = result.workload.clone();
    for (key, value) in &point.params {
        // Only sweep keys can be replayed; a phase changes the groups themselves.
        let key = sweep::KEYS.iter().find(|k| **k == key)?;
        sweep::apply(&mut spec, key, value).ok()?;
    }
    Some(spec)
}

/// The same figure for every group, or `name=value` per group joined with "; ".
fn per_group(spec: &WorkloadSpec, f: impl Fn(&WorkerGroup) -> String) -> String {
    let values: Vec<String> = spec.groups.iter().map(&f).collect();
    if values.windows(2).all(|w| w[0] == w[1]) {
        values.into_iter().next().unwrap_or_default()
    } else {
        spec.groups.iter().zip(values).map(|(g, v)| format!("{}={v}", g.name)).collect::<Vec<_>>().join("; ")
    }
}

/// A number without a needless ".0": 70, 33.3.
fn pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Transfer size: "4k", or fio's bssplit notation for a mix, "4k/50:8k/50".
pub fn bs(spec: &WorkloadSpec) -> String {
    per_group(spec, |g| match g.access.as_slice() {
        [one] => one.bs.to_string(),
        lines => lines.iter().map(|l| format!("{}/{}", l.bs, pct(l.share))).collect::<Vec<_>>().join(":"),
    })
}

/// Share-weighted read % of a group's access lines.
pub fn group_read_pct(g: &WorkerGroup) -> f64 {
    g.access.iter().map(|l| l.share * l.read).sum::<f64>() / 100.0
}

/// Share-weighted random % of a group's access lines.
pub fn group_random_pct(g: &WorkerGroup) -> f64 {
    g.access.iter().map(|l| l.share * l.random).sum::<f64>() / 100.0
}

/// Read %, per group when the groups differ.
pub fn read_pct(spec: &WorkloadSpec) -> String {
    per_group(spec, |g| pct(group_read_pct(g)))
}

/// Random %, per group when the groups differ.
pub fn random_pct(spec: &WorkloadSpec) -> String {
    per_group(spec, |g| pct(group_random_pct(g)))
}

/// Outstanding I/Os per worker per target, per group when the groups differ.
pub fn qd(spec: &WorkloadSpec) -> String {
    per_group(spec, |g| g.qd.to_string())
}

/// "bs 4k, 70% read, 100% random, QD 32, 1 worker, 1 target".
pub fn line(spec: &WorkloadSpec) -> String {
    let workers = spec.total_workers();
    let targets = spec.targets.len();
    let several = |n: usize, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
    if let Some(r) = &spec.replay {
        return replay_line(r, spec);
    }
    // Trims and syncs are named only when the workload has them.
    let trim = if spec.has_trims() {
        format!(", {}% trim", per_group(spec, |g| pct(g.access.iter().map(|l| l.share * l.trim).sum::<f64>() / 100.0)))
    } else {
        String::new()
    };
    let sync = spec.sync.map(|s| format!(", {} {}", s.kind.flag(), s.every)).unwrap_or_default();
    // Polling and data reduction change what is measured: named when set.
    let mut extra = String::new();
    if spec.polling.sqpoll.is_some() {
        extra.push_str(", sqpoll");
    }
    if spec.polling.poll {
        extra.push_str(", poll");
    }
    if let Some(d) = &spec.data {
        if d.compress > 0.0 {
            extra.push_str(&format!(", compress {}%", pct(d.compress)));
        }
        if d.dedupe > 0.0 {
            extra.push_str(&format!(", dedupe {}%", pct(d.dedupe)));
        }
    }
    if spec.groups.len() > 1 {
        // One line per group: "db: 8k, 35% read, 100% random, QD 2 x 4 workers".
        let groups: String = spec.groups.iter().map(|g| format!("\n  {}", group_line(spec, g))).collect();
        return format!(
            "{} groups, {}, {}{sync}{extra}{}{groups}",
            spec.groups.len(),
            several(workers as usize, "worker"),
            several(targets, "target"),
            timing_and_skew(spec)
        );
    }
    format!(
        "bs {}, {}% read{trim}, {}% random{sync}{extra}, QD {}, {}, {}{}",
        bs(spec),
        read_pct(spec),
        random_pct(spec),
        qd(spec),
        several(workers as usize, "worker"),
        several(targets, "target"),
        timing_and_skew(spec)
    )
}

/// One worker group in words: "db: 8k, 35% read, 100% random, QD 2 x 4
/// workers", with its trims, its rate or the group it follows.
fn group_line(spec: &WorkloadSpec, g: &WorkerGroup) -> String {
    let bs = match g.access.as_slice() {
        [one] => one.bs.to_string(),
        lines => lines.iter().map(|l| format!("{}/{}", l.bs, pct(l.share))).collect::<Vec<_>>().join(":"),
    };
    let trim = g.access.iter().map(|l| l.share * l.trim).sum::<f64>() / 100.0;
    let trim = if trim > 0.0 { format!(", {}% trim", pct(trim)) } else { String::new() };
    let workers = spec.group_workers(g);
    let mut text = format!(
        "{}: {bs}, {}% read{trim}, {}% random, QD {} x {workers} worker{}",
        g.name,
        pct(group_read_pct(g)),
        pct(group_random_pct(g)),
        g.qd,
        if workers == 1 { "" } else { "s" }
    );
    if let Some(f) = &g.follow {
        text += &format!(", paced at {} x {}'s IOPS", f.ratio, f.group);
    } else if let Some(r) = g.rate {
        text += &format!(", paced at {} IOPS", pct(r));
    }
    text
}

/// "replay of t.csv (msr, 1200 records, speed 1), QD 32, 1 worker, 2 targets":
/// a replay's access lines are not what ran, the trace is.
pub fn replay_line(r: &crate::workload::replay::ReplayWorkload, spec: &WorkloadSpec) -> String {
    replay_said(&r.file, &r.format, r.records, &r.speed, spec)
}

/// The replay line from its parts: the stored workload's and the result's
/// replay summary hold the same four.
pub fn replay_said(file: &str, format: &str, records: u64, speed: &str, spec: &WorkloadSpec) -> String {
    format!(
        "replay of {file} ({format}, {}, speed {speed}), QD {}, {}, {}",
        counted(records, "record"),
        qd(spec),
        counted(spec.total_workers(), "worker"),
        counted(spec.targets.len() as u64, "target")
    )
}

/// What makes a workload skewed or bursty, said after the rest ("" for none):
/// ", offsets zipf:0.9, think time 2ms/4 I/Os, Poisson arrivals".
fn timing_and_skew(spec: &WorkloadSpec) -> String {
    let lines = || spec.groups.iter().flat_map(|g| g.access.iter());
    let mut dists: Vec<String> = lines().filter_map(|l| l.dist.as_ref()).filter(|d| !d.is_uniform()).map(|d| d.to_string()).collect();
    dists.dedup();
    let mut parts = Vec::new();
    if !dists.is_empty() {
        parts.push(format!("offsets {}", dists.join(" / ")));
    }
    if let Some(g) = spec.groups.iter().find(|g| g.thinktime.is_some()) {
        let t = g.thinktime.unwrap_or_default();
        parts.push(format!("think time {}/{}", crate::units::format_duration(t), counted(g.thinktime_blocks.unwrap_or(1), "I/O")));
    }
    if lines().any(|l| l.delay.is_some()) {
        parts.push("IOmeter delay/burst".into());
    }
    if let Some(skip) = lines().find_map(|l| l.skip) {
        parts.push(format!("holes of {skip} between sequential I/Os"));
    }
    if let Some(l) = lines().find(|l| l.random_run.is_some()) {
        let n = l.random_run.unwrap_or(1);
        parts.push(format!(
            "a random offset every {}{}",
            counted(n, "I/O"),
            if l.random_run_same { ", repeated" } else { ", sequential between" }
        ));
    }
    if spec.groups.iter().any(|g| !g.arrivals.is_fixed() && g.rate.is_some()) {
        parts.push("Poisson arrivals".into());
    }
    parts.iter().map(|p| format!(", {p}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::profile;

    fn spec_of(name: &str) -> WorkloadSpec {
        let p = profile::builtin(name).unwrap();
        WorkloadSpec { run: crate::workload::RunLength::Ios(1), ..WorkloadSpec::plain(vec!["mem:1m".into()], p.phases[0].groups.clone()) }
    }

    #[test]
    fn skew_think_time_and_poisson_arrivals_are_said() {
        let mut spec = spec_of("quick");
        assert!(!line(&spec).contains("offsets"));
        spec.groups[0].access[0].dist = Some("zipf:0.9".parse().unwrap());
        spec.groups[0].thinktime = Some(std::time::Duration::from_millis(2));
        spec.groups[0].thinktime_blocks = Some(4);
        assert!(line(&spec).ends_with(", offsets zipf:0.9, think time 2ms/4 I/Os"), "{}", line(&spec));
    }

    #[test]
    fn a_mix_reads_as_bssplit_and_weighted_shares() {
        let mut spec = spec_of("quick");
        spec.groups[0].access = vec![
            crate::workload::AccessLine {
                share: 50.0,
                bs: crate::units::Bytes(4096),
                read: 100.0,
                random: 100.0,
                align: None,
                ..Default::default()
            },
            crate::workload::AccessLine {
                share: 50.0,
                bs: crate::units::Bytes(8192),
                read: 40.0,
                random: 0.0,
                align: None,
                ..Default::default()
            },
        ];
        spec.groups[0].qd = 8;
        spec.groups[0].workers = 2;
        assert_eq!(line(&spec), "bs 4k/50:8k/50, 70% read, 50% random, QD 8, 2 workers, 1 target");
    }

    #[test]
    fn sqpoll_and_data_reduction_are_said() {
        let mut spec = spec_of("quick");
        let plain = line(&spec);
        assert!(!plain.contains("sqpoll") && !plain.contains("compress"), "{plain}");
        spec.polling.sqpoll = Some(crate::workload::polling::SqPoll::AnyCpu);
        spec.data = Some(crate::workload::reduction::DataReduction { compress: 50.0, dedupe: 30.0, dedupe_unit: None });
        let said = line(&spec);
        assert!(said.contains(", sqpoll, compress 50%, dedupe 30%, QD "), "{said}");
    }

    #[test]
    fn groups_that_differ_are_named() {
        let mut spec = spec_of("quick");
        let mut log = spec.groups[0].clone();
        log.name = "log".into();
        log.qd = 1;
        spec.groups[0].name = "db".into();
        spec.groups[0].qd = 16;
        spec.groups.push(log);
        assert_eq!(qd(&spec), "db=16; log=1");
    }
}
