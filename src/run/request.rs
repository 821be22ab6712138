//! The typed request of a run: what the command line (flags, a profile, a fio
//! job file) asks for, every value parsed and checked where it entered, before
//! anything runs. The plan is built from it (`plan`), the context says who
//! runs it and how, and the labs take it, instead of the command line's flags,
//! and change only what each of their rows sets (targets, size, cache, label).

use anyhow::Result;

use super::plan::{self, PlanRequest, RunPlan};
use super::RunContext;
use crate::targets::Target;
use crate::units::Bytes;
use crate::workload::replay::ReplaySettings;

#[derive(Clone, Debug)]
pub struct RunRequest {
    /// What the points are built from: the profile, the targets (parsed), the
    /// flags' overrides, the sweeps (typed values), repeats and criteria.
    pub plan: PlanRequest,
    /// With --replay (or a profile's replay): the trace every point issues.
    pub replay: Option<ReplaySettings>,
    /// A run length, and a ramp, given by a flag or the profile (a replay
    /// otherwise runs the whole trace without a ramp).
    pub run_given: bool,
    pub ramp_given: bool,
    /// Who runs it and how: safety, power, verification, cache, trace, link, pinning.
    pub context: RunContext,
    /// --json FILE or '-' (a lab: where the list of its results goes).
    pub json: Option<String>,
}

impl RunRequest {
    /// The points to run, each with its effective workload.
    pub fn plan(&self) -> Result<RunPlan> {
        let mut plan = plan::build(self.plan.clone())?;
        plan.search = super::search::spec_of(&self.plan, &plan.points)?;
        // --tune: the plan (memory, mappings, the dry run) is checked at the most threads it may try.
        if let Some((gi, most)) = plan.search.as_ref().and_then(|s| Some((s.group?, s.workers.max))) {
            plan.points[0].spec.groups[gi].workers = most;
        }
        plan.curve = super::curve::spec_of(&self.plan, &plan.points)?;
        if let Some(settings) = &self.replay {
            if let Some(s) = &plan.search {
                anyhow::bail!("--sla {}: a replay issues the trace's I/Os at its own depth and timing, so there is no queue depth to search: drop --replay or --sla", s.expr);
            }
            if plan.curve.is_some() {
                anyhow::bail!("--curve: a replay issues the trace's I/Os at its own timing, so it cannot be paced into a curve: drop --replay or --curve");
            }
            let warnings = super::replay::attach(&mut plan, settings.clone(), self.run_given, self.ramp_given)?;
            plan.warnings.extend(warnings);
        }
        Ok(plan)
    }

    /// The same request against these targets (a lab's server, one leg of a
    /// study): they replace any other, as --target does.
    pub fn on(&self, targets: Vec<Target>) -> RunRequest {
        let mut r = self.clone();
        r.plan.targets = targets;
        r.plan.targets_given = true;
        r
    }

    /// The same request with this region length on each target (as --size).
    pub fn sized(mut self, size: Bytes) -> RunRequest {
        self.plan.overrides.size = Some(size);
        self
    }

    /// What --label puts before the label of each of a lab's results ("" without it).
    pub fn label_prefix(&self) -> String {
        self.context.label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::profile;

    /// The first phase of `quick` on these targets, with these sweeps.
    fn request(targets: &[&str], sweeps: &[&str]) -> RunRequest {
        let mut profile = profile::builtin("quick").unwrap();
        profile.phases.truncate(1);
        RunRequest {
            plan: PlanRequest {
                profile,
                profile_name: Some("quick".into()),
                targets: targets.iter().map(|t| Target::parse(t).unwrap()).collect(),
                targets_given: true,
                overrides: Default::default(),
                sweeps: sweeps.iter().map(|s| crate::workload::sweep::parse(s).unwrap()).collect(),
                repeat: None,
                pick: Default::default(),
                pass: None,
                sla: None,
                curve: None,
                curve_stop: None,
                tune: None,
            },
            replay: None,
            run_given: false,
            ramp_given: false,
            context: Default::default(),
            json: None,
        }
    }

    #[test]
    fn each_point_carries_its_targets_parsed_with_their_kind() {
        use crate::targets::{TargetKind, TargetUri};
        let plan = request(&["mem:1m", "mem:2m"], &["targets=1,2", "bs=4k,8k"]).plan().unwrap();
        // A targets=N sweep keeps the first N, parsed as they were given.
        let sizes: Vec<Vec<u64>> = plan
            .points
            .iter()
            .map(|p| p.targets.iter().map(|t| if let TargetUri::Mem(b) = t.uri { b.get() } else { 0 }).collect())
            .collect();
        assert_eq!(sizes, vec![vec![1 << 20], vec![1 << 20], vec![1 << 20, 2 << 20], vec![1 << 20, 2 << 20]]);
        for p in &plan.points {
            assert_eq!(p.spec.targets, p.targets.iter().map(|t| t.text.clone()).collect::<Vec<_>>());
            assert!(p.targets.iter().all(|t| t.uri.kind() == TargetKind::Mem));
            assert_eq!(p.engine_name(), "mem");
        }
        // The typed sweep value is what the workload gets, and what the result records.
        assert_eq!(plan.points[1].spec.groups[0].access[0].bs, Bytes(8192));
        assert_eq!(plan.points[1].params["bs"], serde_json::Value::from("8k"));
        assert_eq!(plan.points[1].label, "bs=8k targets=1");
    }

    #[test]
    fn a_lab_row_changes_only_what_it_sets() {
        let base = request(&["mem:1m"], &[]);
        let row = base.on(vec![Target::parse("mem:4m").unwrap()]).sized(Bytes(2 << 20));
        let plan = row.plan().unwrap();
        assert_eq!(plan.points[0].spec.targets, vec!["mem:4m".to_string()]);
        assert_eq!(plan.points[0].spec.size, Some(Bytes(2 << 20)));
        assert_eq!(base.plan.overrides.size, None, "the base request is not changed");
        let labelled = RunRequest { context: RunContext { label: Some("rig 2".into()), ..Default::default() }, ..base };
        assert_eq!(labelled.label_prefix(), "rig 2: ");
    }
}
