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
    format!(
        "bs {}, {}% read, {}% random, QD {}, {}, {}",
        bs(spec),
        read_pct(spec),
        random_pct(spec),
        qd(spec),
        several(workers as usize, "worker"),
        several(targets, "target")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::profile;

    fn spec_of(name: &str) -> WorkloadSpec {
        let p = profile::builtin(name).unwrap();
        WorkloadSpec {
            targets: vec!["mem:1m".into()],
            size: None,
            offset: Default::default(),
            ramp: std::time::Duration::ZERO,
            run: crate::workload::RunLength::Ios(1),
            seed: 1,
            engine: Default::default(),
            buffered: false,
            connections: 1,
            polling: Default::default(),
            groups: p.phases[0].groups.clone(),
        }
    }

    #[test]
    fn a_mix_reads_as_bssplit_and_weighted_shares() {
        let mut spec = spec_of("quick");
        spec.groups[0].access = vec![
            crate::workload::AccessLine { share: 50.0, bs: crate::units::Bytes(4096), read: 100.0, random: 100.0, align: None },
            crate::workload::AccessLine { share: 50.0, bs: crate::units::Bytes(8192), read: 40.0, random: 0.0, align: None },
        ];
        spec.groups[0].qd = 8;
        spec.groups[0].workers = 2;
        assert_eq!(line(&spec), "bs 4k/50:8k/50, 70% read, 50% random, QD 8, 2 workers, 1 target");
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
