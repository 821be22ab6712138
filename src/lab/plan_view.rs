//! The dry run's view of a run plan, for `report::terminal::plan_text`: which engine each
//! point runs through, how each target is reached and what a replay holds
//! (counted when it was loaded),
//! beside the plan's own workload. The labs and `run --dry-run` both print
//! plans; this is the lowest layer that sees the run's plan and the report.

use crate::report::terminal::plan_text::{self, PlanView, PointView, ReplayView, Transport};
use crate::run::plan::RunPlan;
use crate::targets::TargetUri;

/// The plan as the dry run states it.
pub fn view(plan: &RunPlan) -> PlanView<'_> {
    PlanView {
        warnings: &plan.warnings,
        points: plan
            .points
            .iter()
            .map(|p| PointView {
                label: &p.label,
                spec: &p.spec,
                engine: p.engine_name(),
                transports: p
                    .targets
                    .iter()
                    .map(|t| match t.uri {
                        TargetUri::Nbd(_) => Transport::Nbd,
                        TargetUri::Iscsi(_) => Transport::Iscsi,
                        TargetUri::Mem(_) | TargetUri::Null(_) => Transport::InProcess,
                        TargetUri::File(_) | TargetUri::Device(_) => Transport::Local,
                    })
                    .collect(),
                replay: plan.replay.as_deref().map(|r| ReplayView {
                    settings: &r.settings,
                    format: r.kind.name(),
                    records: r.records.len(),
                    reads: r.reads,
                    writes: r.writes,
                    max_len: r.max_len,
                    span_ns: r.span_ns,
                    not_io: r.not_io,
                    unmapped: r.unmapped,
                    mapping: &r.mapping,
                    reach: &r.reach,
                }),
            })
            .collect(),
        rounds: plan.rounds.as_ref(),
        repeat: plan.repeat,
        pick: plan.pick,
        criteria: &plan.criteria,
        search: plan.search.as_ref(),
    }
}

/// What `--dry-run` prints of the plan: the effective workload, in words a user can check.
pub fn describe(plan: &RunPlan) -> String {
    plan_text::render(&view(plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::plan::single;
    use crate::workload::WorkloadSpec;

    fn spec(read: f64, random: f64) -> WorkloadSpec {
        let mut groups = crate::workload::profile::builtin("quick").unwrap().phases[0].groups.clone();
        for l in groups.iter_mut().flat_map(|g| g.access.iter_mut()) {
            l.read = read;
            l.random = random;
            l.dist = Some("zipf:0.9".parse().unwrap());
        }
        WorkloadSpec {
            run: crate::workload::RunLength::Ios(1),
            data: Some(crate::workload::reduction::DataReduction { compress: 50.0, dedupe: 0.0, dedupe_unit: None }),
            ..WorkloadSpec::plain(vec!["mem:1m".into()], groups)
        }
    }

    #[test]
    fn dry_run_says_only_what_applies() {
        // A sequential read-only line: no offsets distribution, no written data.
        let text = describe(&single(spec(100.0, 0.0)).unwrap());
        assert!(!text.contains("random offsets") && !text.contains("data: written units"), "{text}");
        let text = describe(&single(spec(0.0, 100.0)).unwrap());
        assert!(text.contains("random offsets zipf:0.9") && text.contains("data: written units of 4k"), "{text}");
    }

    #[test]
    fn direct_io_is_claimed_only_of_files_and_devices() {
        let region = |targets: &[&str], buffered: bool| {
            let mut s = spec(100.0, 0.0);
            s.targets = targets.iter().map(|t| t.to_string()).collect();
            s.buffered = buffered;
            let text = describe(&single(s).unwrap());
            text.lines().find(|l| l.starts_with("region on each target:")).unwrap_or_default().to_string()
        };
        // No page cache in the path of a RAM LUN, a sink or a network target: neither is said.
        for t in ["mem:1m", "null:1g", "nbd://127.0.0.1:10809/x"] {
            assert_eq!(region(&[t], false), "region on each target: whole target from offset 0", "{t}");
        }
        assert_eq!(region(&["/tmp/lunmark-plan-file"], false), "region on each target: whole target from offset 0   (direct I/O)");
        assert!(region(&["/tmp/lunmark-plan-file"], true).ends_with("(buffered: page cache in the path)"));
    }

    #[test]
    fn network_targets_say_how_they_are_reached() {
        let mut s = spec(100.0, 0.0);
        s.targets = vec!["nbd://127.0.0.1:10809/x".into()];
        s.connections = 3;
        let plan = single(s).unwrap();
        assert_eq!(view(&plan).points[0].transports, vec![Transport::Nbd]);
        assert!(describe(&plan).contains("target 0: nbd://127.0.0.1:10809/x   (NBD through libnbd: each worker opens 3 connections)"));
    }
}
