//! The run plan: the points to run (one for a plain run; sweeps and repeats add
//! more), each with its effective workload, plus the warnings found on the way.
//! Also the `--dry-run` description.

use std::collections::BTreeMap;
use std::fmt::Write;

use thiserror::Error;

use crate::engine::uring;
use crate::target::{self, TargetUri, UriError};
use crate::workload::{EngineChoice, RunLength, SpecError, WorkloadSpec};

#[derive(Clone, Debug)]
pub struct PlannedPoint {
    /// The sweep values of this point (empty for a plain run).
    pub params: BTreeMap<String, serde_json::Value>,
    /// Short text of the params for the live line, "qd=8 bs=4k".
    pub label: String,
    pub spec: WorkloadSpec,
}

#[derive(Clone, Debug)]
pub struct RunPlan {
    pub points: Vec<PlannedPoint>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Error)]
pub enum PlanError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Uri(#[from] UriError),
    #[error("group '{group}' mixes target kinds ({kinds}): one worker drives targets through one engine, so put mem:, local and network targets in separate groups or runs")]
    MixedKinds { group: String, kinds: String },
    #[error("--engine io_uring was asked for, but this kernel refuses io_uring (check /proc/sys/kernel/io_uring_disabled): use --engine psync or auto")]
    NoUring,
}

/// The engine family a target URI runs through, given the user's choice.
pub fn engine_for(uri: &TargetUri, choice: EngineChoice) -> &'static str {
    match uri {
        TargetUri::Mem(_) => "mem",
        TargetUri::Null(_) => "null",
        TargetUri::File(_) | TargetUri::Device(_) => match choice {
            EngineChoice::Psync => "psync",
            EngineChoice::IoUring => "io_uring",
            EngineChoice::Auto if uring::available() => "io_uring",
            EngineChoice::Auto => "psync",
        },
    }
}

/// The engine names a workload uses, joined ("io_uring", "mem").
pub fn engine_name(spec: &WorkloadSpec) -> String {
    let mut names: Vec<&str> = spec.targets.iter().filter_map(|t| target::parse(t).ok()).map(|u| engine_for(&u, spec.engine)).collect();
    names.sort();
    names.dedup();
    names.join("+")
}

/// Validates a workload and adjusts it to what its engines can do. Returns the
/// effective spec and warnings to show the user.
pub fn effective(mut spec: WorkloadSpec) -> Result<(WorkloadSpec, Vec<String>), PlanError> {
    spec.validate()?;
    let uris: Vec<TargetUri> = spec.targets.iter().map(|t| target::parse(t)).collect::<Result<_, _>>()?;
    if spec.engine == EngineChoice::IoUring && !uring::available() {
        return Err(PlanError::NoUring);
    }
    let mut warnings = Vec::new();
    let groups = spec.groups.clone();
    for (gi, g) in groups.iter().enumerate() {
        let mut kinds: Vec<&str> = spec.group_targets(g).iter().map(|&i| engine_for(&uris[i], spec.engine)).collect();
        kinds.sort();
        kinds.dedup();
        if kinds.len() > 1 {
            return Err(PlanError::MixedKinds { group: g.name.clone(), kinds: kinds.join(", ") });
        }
        if kinds == ["psync"] && g.qd > 1 {
            warnings.push(format!(
                "group '{}': the psync engine does one I/O at a time per worker, so {} outstanding I/Os per target become 1. Use --engine io_uring for queue depth, or more --workers",
                g.name, g.qd
            ));
            spec.groups[gi].qd = 1;
        }
    }
    Ok((spec, warnings))
}

/// A plan of one point.
pub fn single(spec: WorkloadSpec) -> Result<RunPlan, PlanError> {
    let (spec, warnings) = effective(spec)?;
    Ok(RunPlan { points: vec![PlannedPoint { params: BTreeMap::new(), label: String::new(), spec }], warnings })
}

/// What `--dry-run` prints: the effective workload, in words a user can check.
pub fn describe(plan: &RunPlan) -> String {
    let mut out = String::new();
    for w in &plan.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let n = plan.points.len();
    for (i, p) in plan.points.iter().enumerate() {
        let s = &p.spec;
        if n > 1 {
            let _ = writeln!(out, "point {}/{}: {}", i + 1, n, p.label);
        }
        let run = match s.run {
            RunLength::Time(d) => format!("{} measured", crate::units::format_duration(d)),
            RunLength::Ios(k) => format!("{k} I/Os per worker measured"),
        };
        let _ = writeln!(
            out,
            "engine: {}   ramp: {} (not measured)   run: {}   seed: {}",
            engine_name(s),
            crate::units::format_duration(s.ramp),
            run,
            s.seed
        );
        let region = match s.size {
            Some(len) => format!("{} from offset {}", len, s.offset),
            None => format!("whole target from offset {}", s.offset),
        };
        let _ = writeln!(
            out,
            "region on each target: {region}{}",
            if s.buffered { "   (buffered: page cache in the path)" } else { "   (direct I/O)" }
        );
        for (ti, t) in s.targets.iter().enumerate() {
            let _ = writeln!(out, "target {ti}: {t}");
        }
        for g in &s.groups {
            let nt = s.group_targets(g).len();
            let _ = writeln!(
                out,
                "group '{}': {} workers x {} targets x {} outstanding = {} I/Os in flight{}",
                g.name,
                g.workers,
                nt,
                g.qd,
                g.workers as u64 * nt as u64 * g.qd as u64,
                g.rate.map(|r| format!(", rate {r} IOPS")).unwrap_or_default()
            );
            for l in &g.access {
                let _ = writeln!(
                    out,
                    "  {:>5.1}% of I/Os: {} transfers, {}% read / {}% write, {}% random / {}% sequential, aligned to {}",
                    l.share,
                    l.bs,
                    l.read,
                    100.0 - l.read,
                    l.random,
                    100.0 - l.random,
                    crate::units::Bytes(l.alignment())
                );
            }
        }
        let _ = writeln!(out, "total: {} workers, {} I/Os in flight", s.total_workers(), s.total_in_flight());
    }
    out
}
