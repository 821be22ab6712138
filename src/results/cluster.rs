//! The result fields of a run spread over MPI ranks (issue 17): which ranks and
//! hosts took part, and per point each rank's own figures and each machine's
//! CPU and power. Machines are told apart by the kernel's boot id, not by host
//! name, so ranks on one kernel (network namespaces, containers) are measured
//! once. Absent from single-process results.

use serde::{Deserialize, Serialize};

/// The run's MPI facts: how many ranks and on which hosts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MpiFacts {
    /// Ranks in the job (MPI_COMM_WORLD's size).
    pub ranks: u32,
    /// The distinct host names of the ranks, in rank order of first appearance.
    pub hosts: Vec<String>,
    /// Distinct machines (kernel boot ids) the ranks ran on.
    pub machines: u32,
}

/// One rank's share of a point, over its own measured interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    pub rank: u32,
    pub host: String,
    pub ios_read: u64,
    pub ios_written: u64,
    /// Trims completed: I/Os counted in `iops` as the summary's are. Absent (0)
    /// when the workload trims nothing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ios_trimmed: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub iops: f64,
    pub mbps: f64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
    /// This rank's measured interval started this long after the earliest rank's, ms.
    pub start_offset_ms: f64,
    /// This rank's measured interval, seconds.
    pub duration_s: f64,
    /// completed, failed or interrupted: this rank's own outcome of the point.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The targets this rank ran the point on, placeholders filled in (the
    /// result's `targets` describe rank 0's). Absent in results of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
}

/// One machine (one kernel): CPU and power measured once, whatever the number of ranks on it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineFigures {
    /// /proc/sys/kernel/random/boot_id of the machine's kernel.
    pub boot_id: String,
    /// The host names of the ranks on this machine.
    pub hosts: Vec<String>,
    /// The ranks on this machine.
    pub ranks: Vec<u32>,
    /// Busy share of all the machine's CPUs over the measured interval, percent.
    pub cpu_utilization_pct: f64,
    /// Busy CPU-seconds of the machine.
    pub busy_cpu_s: f64,
    /// Average watts of the machine, when its power was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_watts: Option<f64>,
}

/// A point's spread over the ranks: figures per rank and per machine, and how far apart the ranks started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointSpread {
    pub ranks: Vec<RankFigures>,
    pub machines: Vec<MachineFigures>,
    /// Latest minus earliest start of the ranks' measured intervals, ms.
    pub start_skew_ms: f64,
    /// The span the point's rates are taken over (earliest start to latest end of the measured intervals), seconds.
    pub span_s: f64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}
