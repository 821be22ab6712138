//! The hooks a run offers to a cluster of processes running one plan together
//! (MPI ranks, `src/mpi/`): agree that every process can start, release each
//! point (and its ramp) together, and reduce each point's figures to one
//! result. A single process (`Solo`) agrees with itself, starts at once and
//! keeps its own figures, so a run without MPI is unchanged. Nothing here runs
//! on the I/O path: each hook is called once per point at most.

use std::rc::Rc;

use super::outcome::PointOutcome;

pub trait Cluster {
    /// Whether this process is the one that writes the result (store, JSON, terminal).
    fn is_root(&self) -> bool {
        true
    }

    /// Every process's outcome of a step taken before load (`local` is this
    /// process's error, if any): None when every process succeeded, else one
    /// error naming each process that failed, its host and its reason, the
    /// same on every process.
    fn agree(&self, _step: &str, _local: Option<&anyhow::Error>) -> Option<anyhow::Error> {
        None
    }

    /// Checks that every process planned the same workload as the root (targets
    /// aside, which placeholders make differ): None when they did, else an error
    /// naming the processes whose plan differs.
    fn agree_on_plan(&self, _fingerprint: &str) -> Option<anyhow::Error> {
        None
    }

    /// Returns when every process has reached it: called just before a
    /// point's workers are released, so every process's ramp and measured
    /// interval start together.
    fn barrier(&self) {}

    /// Whether another process asked this one to end its point now (its own
    /// point failed). Polled by the point's main loop at each wake-up, never by
    /// the workers.
    fn stop_requested(&self) -> bool {
        false
    }

    /// Folds every process's figures of a point into `outcome` (on the root)
    /// and gives every process the point's overall status and reason, so all
    /// go on to the next point or all stop.
    fn reduce_point(&self, _index: usize, _outcome: &mut PointOutcome) {}

    /// Rank 0's figures, the same on every process: a knee search's verdict or
    /// a curve's maximum rate is judged on the merged point only rank 0 holds,
    /// and every process must take the next step with it. One process keeps its own.
    fn root_figures(&self, local: Vec<f64>) -> Vec<f64> {
        local
    }

    /// Live telemetry under MPI (issue 29): posts this process's bytes (one
    /// measured second) to the root without waiting for it to receive them.
    /// Called from the point's watch, never from the workers.
    fn post_to_root(&self, _bytes: Vec<u8>) {}

    /// On the root: what the other processes posted so far, as (rank, bytes),
    /// without waiting for more.
    fn posted(&self) -> Vec<(u32, Vec<u8>)> {
        Vec::new()
    }

    /// How many processes share the job's load (a paced rate is split among them).
    fn processes(&self) -> u32 {
        self.facts().map_or(1, |m| m.ranks.max(1))
    }

    /// Facts about the cluster for the result (None for one process).
    fn facts(&self) -> Option<crate::results::cluster::MpiFacts> {
        None
    }
}

/// Under a cluster, a signal that ends a point is how the launcher ends the job
/// when a process died (Open MPI's mpirun sends SIGTERM, then SIGKILL a second
/// later): the reduction that follows may never come back. So the root keeps
/// the points finished so far first, marked interrupted, through the observer
/// that keeps results; when the reduction does come back (a Ctrl-C every rank
/// saw), the run goes on and keeps its full result over this one.
pub fn keep_before_reduction(
    cluster: &dyn Cluster,
    point: &PointOutcome,
    index: usize,
    result: &crate::results::model::RunResult,
    observer: &mut dyn super::RunObserver,
) {
    if point.status != crate::results::model::Status::Interrupted || cluster.facts().is_none() || !cluster.is_root() {
        return;
    }
    let mut kept = result.clone();
    kept.status = crate::results::model::Status::Interrupted;
    kept.status_reason = Some(format!(
        "{} during point {}: the points before it are kept first, before this point's figures are merged across the ranks \
         (when a rank dies, mpirun ends the others this way and no merge follows; otherwise the merged point is saved next)",
        super::signals::reason(),
        index + 1
    ));
    observer.point_finished(&kept);
}

/// One process on its own: every hook does nothing.
pub struct Solo;

impl Cluster for Solo {}

/// The cluster a run belongs to (`Solo` unless set): cheap to clone, shown by name.
#[derive(Clone)]
pub struct ClusterRef(pub Rc<dyn Cluster>);

impl ClusterRef {
    pub fn get(&self) -> &dyn Cluster {
        &*self.0
    }
}

impl Default for ClusterRef {
    fn default() -> Self {
        ClusterRef(Rc::new(Solo))
    }
}

impl std::fmt::Debug for ClusterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.facts() {
            Some(m) => write!(f, "Cluster({} ranks)", m.ranks),
            None => write!(f, "Solo"),
        }
    }
}

/// What a plan asks every process to do, without its targets (placeholders make
/// them differ from rank to rank): equal fingerprints, equal workloads.
pub fn fingerprint(plan: &super::RunPlan) -> String {
    let points: Vec<serde_json::Value> = plan
        .points
        .iter()
        .map(|p| {
            let spec = crate::workload::WorkloadSpec { targets: Vec::new(), ..p.spec.clone() };
            serde_json::json!({ "params": p.params, "spec": spec })
        })
        .collect();
    format!("{} repeat={} pick={:?} criteria={:?}", serde_json::Value::Array(points), plan.repeat, plan.pick, plan.criteria)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{PlannedPoint, RunPlan};

    fn plan(target: &str, qd: u32) -> RunPlan {
        let spec: crate::workload::WorkloadSpec = serde_json::from_value(serde_json::json!({
            "targets": [target], "ramp": "0s", "run": {"time": "1s"}, "seed": 1,
            "groups": [{"name": "main", "workers": 1, "qd": qd, "access": [{"share": 100.0, "bs": "4k", "read": 100.0, "random": 100.0}]}]
        }))
        .unwrap();
        RunPlan {
            points: vec![PlannedPoint::new(
                Default::default(),
                String::new(),
                spec,
                vec![qd],
                vec![crate::targets::Target::parse(target).unwrap()],
            )],
            warnings: vec![],
            repeat: 1,
            pick: Default::default(),
            criteria: vec![],
            profile: None,
            replay: None,
            rounds: None,
            search: None,
            curve: None,
        }
    }

    /// Ranks' targets differ by their placeholders; anything else that differs is a different plan.
    #[test]
    fn plans_that_differ_only_in_targets_have_one_fingerprint() {
        assert_eq!(fingerprint(&plan("/dev/shm/lun0", 8)), fingerprint(&plan("/dev/shm/lun1", 8)));
        assert_ne!(fingerprint(&plan("/dev/shm/lun0", 8)), fingerprint(&plan("/dev/shm/lun0", 16)));
    }
}
