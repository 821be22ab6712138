//! The one place a plan is checked before it runs: what verification, rounds,
//! links, targets, resources and a cache tier allow. `run::execute` takes only
//! the `ReadyPlan` this returns, so no caller (the command line, a lab, a
//! ranked run, a round of `pts-iops`) can reach the run with a plan that was
//! not checked, and the dry run, which calls the same check, refuses what the
//! run would.

use anyhow::{bail, Result};

use super::{rounds, RunContext, RunPlan};
use crate::results::line_rate::PointLink;
use crate::targets;
use crate::workload::WorkloadSpec;

/// A plan that passed `check`, with what the check worked out for the run.
#[derive(Debug)]
pub struct ReadyPlan {
    plan: RunPlan,
    /// With --link: each point's link (None where the point crosses none).
    pub links: Vec<Option<PointLink>>,
    /// With --verify: the block size verification tracks for the whole run.
    pub verify_block: Option<u64>,
    /// A run of rounds: the point whose figures the rounds watch.
    pub watched_point: Option<usize>,
}

impl std::ops::Deref for ReadyPlan {
    type Target = RunPlan;
    fn deref(&self) -> &RunPlan {
        &self.plan
    }
}

impl ReadyPlan {
    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }
}

/// Checks `plan` for a run in `ctx`: everything the run would refuse before
/// any I/O, in the order a user would fix it. Under MPI every rank checks its
/// own targets and all stop if one cannot start.
pub fn check(plan: RunPlan, ctx: &RunContext) -> Result<ReadyPlan> {
    if plan.points.is_empty() {
        bail!("the plan has no points");
    }
    let watched_point = plan.rounds.as_ref().map(|r| rounds::check(&plan, r, ctx)).transpose()?;
    let specs: Vec<&WorkloadSpec> = plan.points.iter().map(|p| &p.spec).collect();
    if ctx.verify.is_some() {
        check_verify(&plan, &specs)?;
    }
    let links = match &ctx.link {
        Some(l) => l.resolve(&specs).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    let ready = targets::preflight(&specs, ctx.safety)
        .map_err(anyhow::Error::from)
        .and_then(|_| super::resources::preflight(&plan, ctx.resource_extras()).map_err(anyhow::Error::from));
    // Every rank of a cluster checks its own targets: one that cannot start stops them all, before any load.
    if let Some(e) = ctx.cluster.get().agree("checking the targets", ready.as_ref().err()) {
        return Err(e);
    }
    ready?;
    let verify_block = match ctx.verify {
        Some(_) => Some(crate::verify::run_block_size(&specs).map_err(anyhow::Error::msg)?),
        None => None,
    };
    if let Some(cfg) = &ctx.cache {
        // Before any target is created: a refused cache leaves nothing behind.
        for spec in &specs {
            crate::engine::cache::config::check(cfg, spec, ctx.safety)?;
        }
    }
    Ok(ReadyPlan { plan, links, verify_block, watched_point })
}

/// What --verify cannot check: reduced data, a sweep of the targets, trims.
fn check_verify(plan: &RunPlan, specs: &[&WorkloadSpec]) -> Result<()> {
    super::data_fill::refuse_with_verify(plan).map_err(anyhow::Error::msg)?;
    if let Some(w) = specs.windows(2).find(|w| w[0].targets != w[1].targets) {
        bail!(
            "--verify keeps the blocks written to each target for the whole run, so every point must drive the same targets; \
             this sweep goes from {} to {} (--sweep targets=...). Verify each target count in a run of its own, or drop --verify",
            crate::units::counted(w[0].targets.len() as u64, "target"),
            crate::units::counted(w[1].targets.len() as u64, "target")
        );
    }
    if specs.iter().any(|s| s.has_trims()) {
        bail!(
            "--verify with trims: a trimmed block's content is no longer known (zeros on a file or mem:, \
             whatever the device returns after a discard), so reads of it could not be checked. \
             Drop --trim (or the profile's trim shares) for a verified run, or drop --verify"
        );
    }
    Ok(())
}
