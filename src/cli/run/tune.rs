//! `--tune` (issue 28 item 3): Jetstress-style thread tuning of a profile that
//! has a `[tune]` section (exchange, jetstress). The profile becomes a knee
//! search of its transactional group's workers (threads), at its own queue
//! depths, with its latency targets as the bounds (`--sla` replaces them) and
//! without its fixed rate (the tuning looks for the most load); the run's
//! search (`run::search`) then reports the mailboxes supported.

use anyhow::{bail, Result};

use super::RunArgs;
use crate::results::model::WorkerRange;
use crate::results::tuning::{TuneSpec, DEFAULT_IOPS_PER_MAILBOX};
use crate::workload::profile::Profile;

/// The most threads --tune tries without --workers MIN-MAX.
pub const DEFAULT_MAX_THREADS: u32 = 64;

impl RunArgs {
    /// The worker counts a search tries: --workers MIN-MAX, else 1 to 64 threads
    /// with --tune. `--workers`' own value is the range's most (the plan is
    /// checked at it), but with --tune, where the range is the tuned group's
    /// and the other groups keep theirs.
    pub(super) fn workers_range(&self, tune: bool) -> Option<WorkerRange> {
        match (self.workers.filter(|w| w.max > w.min), tune) {
            (Some(w), _) => Some(WorkerRange { min: w.min, max: w.max }),
            (None, true) => Some(WorkerRange { min: 1, max: DEFAULT_MAX_THREADS }),
            (None, false) => None,
        }
    }

    /// The tuning --tune asks of `profile` (None without --tune), with the
    /// profile made into its search; every flag that would change what is
    /// tuned is refused here, before anything runs, one error each.
    pub(super) fn tuning(&self, profile: &mut Profile, name: Option<&str>) -> Result<Option<TuneSpec>> {
        if !self.tune {
            return Ok(None);
        }
        let shown = name.unwrap_or(&profile.name);
        let Some(tune) = profile.tune.clone() else {
            bail!(
                "--tune: the profile '{shown}' has no latency targets to tune threads to (no [tune] section): use a profile that has them (exchange, jetstress), or --sla BOUNDS with --workers MIN-MAX"
            );
        };
        let Some(group) = profile.phases.first().and_then(|ph| ph.groups.iter().find(|g| g.name == tune.group)) else {
            bail!("--tune: the profile '{shown}' tunes the group '{}', which it does not have", tune.group);
        };
        if let Some(qd) = self.qd {
            bail!(
                "--tune --qd {qd}: the threads are tuned at the profile's queue depth per thread ({} for {}), and --qd would change every group's: drop --qd",
                group.qd,
                group.name
            );
        }
        if let Some(w) = self.workers.filter(|w| w.min == w.max) {
            bail!("--tune --workers {w}: the tuning chooses the thread count: give the threads to try as a range (for example --workers 1-16), or drop --workers");
        }
        let fixed = [("--rate", self.rate.is_some()), ("--mailboxes", self.mailboxes.is_some())];
        if let Some((flag, _)) = fixed.iter().find(|f| f.1) {
            bail!("--tune finds the most transactional IOPS within the latency targets, and {flag} fixes the load: drop {flag}");
        }
        if let Some(s) = self.sweep.first() {
            bail!("--tune --sweep {s}: the tuning runs one workload at the thread counts it chooses: drop the sweep");
        }
        if self.curve.is_some() {
            bail!("--tune and --curve: the tuning searches the threads and a curve paces one load: use one of them per run");
        }
        if profile.phases.len() > 1 {
            bail!("--tune: the profile '{shown}' has {} phases, and the tuning searches one workload", profile.phases.len());
        }
        let iops_per_mailbox = self.iops_per_mailbox.or(profile.iops_per_mailbox).unwrap_or(DEFAULT_IOPS_PER_MAILBOX);
        let group = tune.group.clone();
        // The search's bounds are the targets (--sla replaces them); the profile's
        // pass criteria and rate are the fixed-load test's, not the tuning's.
        profile.sla = Some(tune.bounds);
        profile.pass = None;
        profile.rate = None;
        profile.mailboxes = None;
        profile.sweep.clear();
        Ok(Some(TuneSpec { group, iops_per_mailbox }))
    }
}
