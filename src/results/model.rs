//! The result model: what a run produced, as data. Everything after the run
//! (JSON, the store, compare, reports) reads these types and nothing else.
//! Documented field by field in docs/result-schema.md; bump SCHEMA_VERSION on
//! any change that is not a pure addition.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::cpu::CpuUsage;
use crate::metrics::IoErrorRecord;
use crate::targets::TargetFacts;
use crate::workload::WorkloadSpec;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Still running (only seen in results saved point by point).
    Running,
    Completed,
    Interrupted,
    Failed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub id: String,
    pub lunmark_version: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub status: Status,
    /// Why the run failed or stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    pub command_line: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Name of the profile the workload came from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub host: HostFacts,
    /// The effective workload (after profile and flags were merged).
    pub workload: WorkloadSpec,
    pub targets: Vec<TargetFacts>,
    /// Engine used per target kind, for example "io_uring".
    pub engine: String,
    /// With --cpus: the CPU set the workers were pinned to, and how they shared it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<crate::workload::cpus::Pinning>,
    pub points: Vec<Point>,
    /// Under MPI (issue 17): the ranks and hosts of the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<crate::results::cluster::MpiFacts>,
    /// A run made of rounds (the `pts-iops` profile): the watched point's IOPS per round and whether it became steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<crate::results::steady::RoundsOutcome>,
    /// With --sla (issue 28): the knee search, its steps and what it found. Absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchOutcome>,
    /// With --curve (issue 28): the load-latency curve, a maximum-rate point then paced ones. Absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<CurveOutcome>,
    /// The warnings the run raised before its points (its plan's: a device
    /// in use, a size rounded, an engine that cannot hold the depth asked),
    /// as printed. Each point's own warnings stay with its figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// With --live-json: the lines the stream produced and how many of them a
    /// slow or closed reader made it drop (docs/live-json.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_json: Option<LiveJsonCounts>,
}

/// What a --live-json stream produced during the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveJsonCounts {
    /// Lines produced (one a second per point, and per worker with --detail).
    pub lines: u64,
    /// Lines not written: the writer's queue was full (a reader too slow, a
    /// full pipe) or the reader was gone. The run never waits for the reader.
    pub dropped: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cores: u32,
    pub memory_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// What distinguishes this point from the others of the run (sweep values).
    pub params: BTreeMap<String, serde_json::Value>,
    pub summary: Summary,
    /// Per worker group, when the workload has more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSummary>,
    /// With `--repeat`: the spread of the repeats and which one this point reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<RepeatStats>,
    /// With `--pass` (or a profile's criteria): the verdict on this point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The effective workload of this point (sweep values and phase applied), in
    /// the shape of the run's `workload`. Absent in results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// Under MPI (issue 17): each rank's and each machine's figures; `summary` holds their reduction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<crate::results::cluster::PointSpread>,
    /// Each worker's figures (IOmeter's worker rows). Absent in results of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<crate::results::per_worker::WorkerFigures>,
    /// Each target's figures, all workers together. Absent in results of older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<crate::results::per_worker::TargetFigures>,
    /// Set when the point stopped before its planned end (Ctrl-C, a signal) and
    /// its measured part was kept: why, and how much of the plan ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub name: String,
    pub workers: u32,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mbps: f64,
    pub latency_us: LatencyByOp,
    /// For a group that follows another: the IOPS ratio it was to hold and the one it got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow: Option<FollowOutcome>,
    /// For a group that started late (a start delay): where in the point's
    /// measured span it measured; its figures are over this window alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<crate::workload::GroupWindow>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FollowOutcome {
    /// The group followed.
    pub group: String,
    /// This group's IOPS ÷ the followed group's IOPS, as asked.
    pub target_ratio: f64,
    /// The same, as measured.
    pub achieved_ratio: f64,
}

/// For rate-limited points: the schedule asked for against what was done.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateOutcome {
    /// The scheduled rate of the rate-limited groups, I/Os per second.
    pub target_iops: f64,
    /// What those groups completed per second in the measured interval.
    pub achieved_iops: f64,
    /// True when the achieved rate is within 1% of the target.
    pub held: bool,
    /// Said plainly when the rate was not held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
    /// 2^20 bytes per second.
    pub mibps: f64,
    pub read_mibps: f64,
    pub write_mibps: f64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub ios_read: u64,
    pub ios_written: u64,
    /// Trims (discards) completed, their rate and the bytes they covered.
    /// Trims are I/Os: `iops` counts them, `ios_read + ios_written +
    /// ios_trimmed` is every I/O. Absent (0) when the workload trims nothing.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub ios_trimmed: u64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub trim_iops: f64,
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub bytes_trimmed: u64,
    /// Syncs completed (--fsync, --fdatasync, --flush) and their rate. They
    /// move no data and are not counted in `iops`. Absent (0) without syncs.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub ios_synced: u64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub sync_per_s: f64,
    /// Length of the measured interval (ramp excluded).
    pub duration_s: f64,
    /// Latency per I/O. For rate-limited I/O it is counted from the I/O's scheduled
    /// time (no coordinated omission); `service_latency_us` has the time from submission.
    pub latency_us: LatencyByOp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_latency_us: Option<LatencyByOp>,
    /// How many I/Os (all directions) took a latency in each range of
    /// LATENCY_BUCKET_BOUNDS_NS: entry i counts [bound i-1, bound i), the last
    /// entry 2 s and more. Empty in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_buckets: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateOutcome>,
    pub cpu: CpuStats,
    /// Watts and per-watt efficiency (null figures with a reason when there is no source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::metrics::power::PowerStats>,
    pub errors: ErrorSummary,
    /// With --verify: blocks checked, conflicts avoided, mismatches found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifyStats>,
    /// Behind a cache tier (--cache): what it served and how fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheSummary>,
    /// I/Os issued and not completed when the measured interval ended.
    #[serde(default)]
    pub in_flight_at_end: u64,
    /// How long the oldest of those had been outstanding at the end, ms (null when none was).
    #[serde(default)]
    pub oldest_in_flight_ms: Option<f64>,
    /// I/Os that never completed: still in flight when the run stopped waiting
    /// for them (a bounded wait after the end) and abandoned.
    #[serde(default)]
    pub abandoned_ios: u64,
    /// The target stopped answering: an I/O was outstanding for longer than the
    /// measured interval, or none completed while I/Os were in flight.
    #[serde(default)]
    pub stalled: bool,
    /// Why the point is marked stalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_reason: Option<String>,
    /// With --link: read and write MB/s as a share of the link's usable rate per direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_rate: Option<LineRate>,
    /// The queue depth asked for against the one the workers held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<crate::results::per_worker::QueueDepth>,
    /// With --replay: the trace replayed, what was issued, and the replay lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::results::replay::ReplaySummary>,
    /// With --steady: whether and when the point became steady, and its last window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::results::steady::SteadyOutcome>,
    /// One entry per second of the measured interval.
    pub intervals: Vec<Interval>,
    /// The latency histogram of each of those seconds per operation (HdrHistogram,
    /// compressed, base64), for `results percentiles` and `--hdr-log`. Absent in
    /// results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<crate::results::histograms::SecondHistograms>,
}

impl CacheSummary {
    /// "512 dirty cache blocks (2097152 bytes, 2.0 MiB) never reached the target...", or None when none were lost.
    pub fn loss(&self) -> Option<String> {
        (self.dirty_lost_blocks > 0).then(|| {
            format!(
                "{} dirty cache block{} ({} bytes, {:.1} MiB) never reached the target: written only to the write-back cache, lost with it",
                self.dirty_lost_blocks,
                if self.dirty_lost_blocks == 1 { "" } else { "s" },
                self.dirty_lost_bytes,
                self.dirty_lost_bytes as f64 / (1u64 << 20) as f64
            )
        })
    }
}

/// The cache tier of a point: its setting and what it did in the measured interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheSummary {
    pub mode: String,
    pub size_bytes: u64,
    /// The cache's size as a share of the region, %.
    pub size_pct: f64,
    pub block_bytes: u32,
    /// I/Os the cache served / all I/Os.
    pub hit_ratio: f64,
    /// Reads the cache served / all reads.
    pub read_hit_ratio: f64,
    pub reads_from_cache: u64,
    pub reads_from_target: u64,
    /// Writes completed in the cache (writeback).
    pub writes_to_cache: u64,
    pub writes_to_target: u64,
    pub hit_latency_us: LatencyStats,
    pub miss_latency_us: LatencyStats,
    /// Dirty blocks (writeback) that never reached the target: still in the
    /// cache, on their way, or whose write-back failed when the point ended. 0
    /// when the final flush succeeded; else the data an application would have lost.
    #[serde(default)]
    pub dirty_lost_blocks: u64,
    /// The same in bytes (blocks x block size).
    #[serde(default)]
    pub dirty_lost_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyByOp {
    pub read: LatencyStats,
    pub write: LatencyStats,
    /// Reads, writes and trims (syncs apart).
    pub all: LatencyStats,
    /// Trims, when the point issued any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<LatencyStats>,
    /// Syncs (fsync, fdatasync or device flush), when the point issued any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<LatencyStats>,
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

/// The upper bounds (ns) of `Summary::latency_buckets`: fio's latency
/// ranges (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000 in ns, then in µs,
/// then in ms up to 2000 ms), so that fio's `latency_ns`, `latency_us` and
/// `latency_ms` can be filled from them.
pub const LATENCY_BUCKET_BOUNDS_NS: [u64; 31] = {
    const STEPS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut b = [0u64; 31];
    let mut i = 0;
    while i < 10 {
        b[i] = STEPS[i];
        b[10 + i] = STEPS[i] * 1_000;
        b[20 + i] = STEPS[i] * 1_000_000;
        i += 1;
    }
    b[30] = 2_000_000_000;
    b
};

/// Submit-to-completion latency, microseconds. All zero when count is 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    pub count: u64,
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
    /// The 95th percentile, and the standard deviation of the latencies, both
    /// from the histogram (within its 0.1%); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    /// The percentiles the workload asked for besides these (a profile's
    /// `percentiles`, fio's `percentile_list`), from the histogram: the
    /// percentile as written ("99.5") to its latency.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub percentiles: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuStats {
    /// Average busy share of all host CPUs over the measured interval, percent.
    pub utilization_pct: f64,
    /// lunmark's own user+system time as a share of all host CPUs, percent.
    pub process_pct: f64,
    pub per_core_pct: Vec<f64>,
    /// IOPS ÷ utilization_pct (null when utilization is 0).
    pub iops_per_cpu_pct: Option<f64>,
    /// MB/s ÷ utilization_pct.
    pub mbps_per_cpu_pct: Option<f64>,
    /// Busy CPU-seconds × 10^6 ÷ (bytes ÷ 1024): µs of CPU per KB transferred.
    pub service_demand_us_per_kb: Option<f64>,
    /// Busy CPU-seconds of the whole host during the interval.
    pub busy_cpu_s: f64,
    /// lunmark's own CPU-seconds during the interval.
    pub process_cpu_s: f64,
    /// Of which user time (the rest is system time); absent in results
    /// written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_user_cpu_s: Option<f64>,
    /// Other user-space processes' CPU time as a share of all host CPUs, percent
    /// (kernel threads, lunmark and what it started apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes_pct: Option<f64>,
    /// Their CPU-seconds during the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes_cpu_s: Option<f64>,
    /// The other processes that used most, by name, in the same unit as
    /// `other_processes_pct` (share of all host CPUs): they add up to no more than it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_processes_top: Vec<crate::metrics::others::OtherProcess>,
    /// Why the other processes' figures are an estimate, where they are (a
    /// process that exited during the interval whose time could not be placed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_processes_estimate: Option<String>,
    /// Said when other processes used more than `OTHER_PROCESSES_WARN_PCT` of
    /// all cores: the system-wide figures then include their work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// With --cpus: the same figures for the pinned CPUs alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<PinnedCpuStats>,
    /// The processes lunmark started (a lab's target servers, a --power-cmd):
    /// their CPU time over the interval as a share of all host CPUs, percent
    /// (the target side of a lab; not in `process_pct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_processes_pct: Option<f64>,
    /// Their CPU-seconds during the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_processes_cpu_s: Option<f64>,
    /// Which of them used most, by name, in the unit of `started_processes_pct`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub started_processes_top: Vec<crate::metrics::others::OtherProcess>,
}

/// CPU use of the CPUs the workers were pinned to (--cpus), over the measured interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PinnedCpuStats {
    /// The pinned CPUs, as "0-3,8".
    pub cpus: String,
    /// Average busy share of those CPUs, percent.
    pub utilization_pct: f64,
    /// Busy share of each, percent, in the order of `cpus`.
    pub per_cpu_pct: Vec<f64>,
    /// Their busy CPU-seconds.
    pub busy_cpu_s: f64,
    /// IOPS ÷ utilization_pct of the pinned CPUs (null when it is 0).
    pub iops_per_cpu_pct: Option<f64>,
    /// Their busy CPU-seconds × 10^6 ÷ (bytes ÷ 1024): µs of pinned CPU per KB transferred.
    pub service_demand_us_per_kb: Option<f64>,
}

impl PinnedCpuStats {
    pub fn from_usage(cpus: &str, u: &crate::metrics::cpu::SomeCpusUsage, iops: f64, bytes: u64) -> Self {
        PinnedCpuStats {
            cpus: cpus.to_string(),
            utilization_pct: u.utilization_pct,
            per_cpu_pct: u.per_cpu_pct.clone(),
            busy_cpu_s: u.busy_cpu_s,
            iops_per_cpu_pct: (u.utilization_pct > 0.0).then(|| iops / u.utilization_pct),
            service_demand_us_per_kb: (bytes > 0).then(|| u.busy_cpu_s * 1e6 / (bytes as f64 / 1024.0)),
        }
    }
}

/// Other processes above this share of all cores disturb the CPU figures, percent.
pub const OTHER_PROCESSES_WARN_PCT: f64 = 5.0;

impl CpuStats {
    pub fn from_usage(usage: &CpuUsage, iops: f64, mbps: f64, bytes: u64) -> Self {
        let per = |rate: f64| (usage.utilization_pct > 0.0).then(|| rate / usage.utilization_pct);
        CpuStats {
            utilization_pct: usage.utilization_pct,
            process_pct: usage.process_pct,
            per_core_pct: usage.per_core_pct.clone(),
            iops_per_cpu_pct: per(iops),
            mbps_per_cpu_pct: per(mbps),
            service_demand_us_per_kb: (bytes > 0).then(|| usage.busy_cpu_s * 1e6 / (bytes as f64 / 1024.0)),
            busy_cpu_s: usage.busy_cpu_s,
            process_cpu_s: usage.process_cpu_s,
            process_user_cpu_s: Some(usage.process_user_cpu_s),
            other_processes_pct: usage.other_processes_pct,
            other_processes_cpu_s: usage.other_processes_cpu_s,
            other_processes_top: usage.other_processes_top.clone(),
            other_processes_estimate: usage.other_processes_estimate.clone(),
            warning: usage.other_processes_pct.filter(|p| *p > OTHER_PROCESSES_WARN_PCT).map(|p| {
                format!(
                    "other processes used {p:.0}% of all cores during the measured interval{}: CPU utilization, CPU efficiency and service demand include their work and are disturbed",
                    top_names(&usage.other_processes_top)
                )
            }),
            pinned: None,
            started_processes_pct: usage.started_processes_pct,
            started_processes_cpu_s: usage.started_processes_cpu_s,
            started_processes_top: usage.started_processes_top.clone(),
        }
    }
}

/// " (sh 48%, cc1 3%)" for the names that used most; empty when none.
pub fn top_names(top: &[crate::metrics::others::OtherProcess]) -> String {
    if top.is_empty() {
        return String::new();
    }
    format!(" ({})", top.iter().map(|p| format!("{} {:.0}%", p.name, p.cpu_pct)).collect::<Vec<_>>().join(", "))
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorSummary {
    pub total: u64,
    /// Count per error name ("No space left on device", "short transfer ...").
    pub by_errno: BTreeMap<String, u64>,
    /// The first few errors with target and offset.
    pub first: Vec<IoErrorRecord>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Seconds from the start of the measured interval to the start of this slice.
    pub t_s: f64,
    pub duration_s: f64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mbps: f64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
    /// MB/s of reads and of writes in this slice; absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_mbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_mbps: Option<f64>,
    /// Average watts in this second, when power is measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
}
/// The verdict on one point (`--pass`; judged by `results::pass`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub passed: bool,
    pub checks: Vec<Check>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub criterion: String,
    /// Measured value, in `unit`; null when there is nothing to measure (no I/O
    /// of that kind completed, no such group).
    pub value: Option<f64>,
    pub unit: String,
    pub passed: bool,
    /// Why the check failed when the value alone does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

// Repeats of one point (`--repeat`; combined by `results::repeats`).

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    #[default]
    Mean,
    Median,
    Best,
}

impl std::str::FromStr for Pick {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "mean" => Ok(Pick::Mean),
            "median" => Ok(Pick::Median),
            "best" => Ok(Pick::Best),
            _ => Err(format!("unknown pick '{s}': choose mean, median or best")),
        }
    }
}

impl std::fmt::Display for Pick {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            Pick::Mean => "mean",
            Pick::Median => "median",
            Pick::Best => "best",
        })
    }
}

/// Mean, standard deviation (sample), coefficient of variation, min and max.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// How many repeats had this figure (absent in results from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    pub mean: f64,
    pub stdev: f64,
    /// stdev ÷ mean × 100.
    pub cv_pct: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let n = values.len() as f64;
        if values.is_empty() {
            return Spread::default();
        }
        let mean = values.iter().sum::<f64>() / n;
        let var = if values.len() > 1 { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
        let stdev = var.sqrt();
        Spread {
            n: Some(values.len()),
            mean,
            stdev,
            cv_pct: if mean != 0.0 { stdev / mean * 100.0 } else { 0.0 },
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// One repeat's headline figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepeatRun {
    pub iops: f64,
    pub mbps: f64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RepeatStats {
    pub count: usize,
    pub pick: Pick,
    /// Which repeat the point's summary is (1-based).
    pub picked: usize,
    pub iops: Spread,
    pub mbps: Spread,
    pub lat_mean_us: Spread,
    pub lat_p99_us: Spread,
    pub runs: Vec<RepeatRun>,
    /// The spread of every compared metric of `registry::METRICS` that the repeats had, by key
    /// (what compare's significance test reads).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub figures: std::collections::BTreeMap<String, Spread>,
}

impl RepeatStats {
    /// The spread of a figure, also from results stored before `figures` was
    /// kept (their IOPS, MB/s, mean and p99 latency), with its count.
    pub fn spread(&self, key: &str) -> Option<Spread> {
        let old = match key {
            "iops" => Some(&self.iops),
            "mbps" => Some(&self.mbps),
            "latency_us.all.mean" => Some(&self.lat_mean_us),
            "latency_us.all.p99" => Some(&self.lat_p99_us),
            _ => None,
        };
        let mut s = self.figures.get(key).or(old)?.clone();
        s.n = s.n.or(Some(self.count));
        Some(s)
    }
}

/// `summary.line_rate`: a point's share of the link's usable rate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LineRate {
    /// The link as named (`10gbe`) or given (`2.5gbit`).
    pub link: String,
    /// With a per-target link: the target whose link it is (index from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<usize>,
    /// 10^6 bytes per second, each direction.
    pub usable_mbps_per_direction: f64,
    /// read MB/s ÷ the usable rate × 100.
    pub read_pct: f64,
    /// write MB/s ÷ the usable rate × 100.
    pub write_pct: f64,
    /// The busier direction's share: the larger of the two.
    pub pct: f64,
    /// Set when a direction measured more than the link carries: some I/O did
    /// not cross it (a cache, a local device), so the share is not the link's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

// The knee search (`--sla`; chosen and judged by `results::search`).

/// The outcome of a search: the result's `search`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// The bounds as given to `--sla`.
    pub expr: String,
    /// The highest queue depth the search could try, and the most steps it could take.
    pub max_qd: u32,
    pub max_steps: u32,
    /// With `--workers MIN-MAX`: the worker counts searched (before the queue
    /// depth). Absent when the workers were fixed, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkerRange>,
    /// With a worker range and `--qd`: the queue depth per worker held at every step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_qd: Option<u32>,
    /// With --tune (Jetstress-style thread tuning): the threads tuned and the mailboxes they support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<TuningOutcome>,
    /// The step with the most IOPS at which every bound held; null when none held.
    pub found: Option<SearchPoint>,
    /// The step with the least outstanding I/O (workers x queue depth) at which an upper (latency or CPU) bound
    /// failed, else at which any bound failed; null when every step held.
    pub first_failing: Option<SearchPoint>,
    /// Why the search ended, in words.
    pub ended: String,
    /// Every step in the order run.
    pub steps: Vec<SearchPoint>,
}

/// Jetstress-style tuning (`--tune`): the most threads (workers of the
/// database group) at which every bound held, below the fewest that broke one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuningOutcome {
    /// The group whose workers are the threads tuned ("db"); its I/O is the transactional I/O.
    pub group: String,
    /// The threads tuned; null when not even the fewest held every bound.
    pub threads: Option<u32>,
    /// The tuned step's index in `steps`; null with `threads`.
    pub step: Option<usize>,
    /// The tuned step's transactional IOPS: the group's reads and writes (the other groups', the log's, excluded).
    pub transactional_iops: f64,
    pub transactional_read_iops: f64,
    pub transactional_write_iops: f64,
    /// The other groups' IOPS at the tuned step (the log's), not counted as transactional.
    pub excluded_iops: f64,
    /// IOPS each mailbox needs (--iops-per-mailbox, else the profile's, else 0.1).
    pub iops_per_mailbox: f64,
    /// Mailboxes supported: transactional IOPS / IOPS per mailbox, rounded down.
    pub mailboxes: u64,
    /// The step at one thread more, where a bound failed; null when none ran (the most threads held: `limit` says so).
    pub one_more: Option<usize>,
    /// Why the tuning stopped where it did, in words.
    pub limit: String,
}

/// The worker counts a search tries, `--workers MIN-MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerRange {
    pub min: u32,
    pub max: u32,
}

impl SearchOutcome {
    /// True when not even the lightest load (qd 1) met every bound.
    pub fn unmeetable(&self) -> bool {
        self.found.is_none() && !self.steps.is_empty()
    }
}

/// One step of a search: its point and how each bound fared there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchPoint {
    /// Index of the step's point in the result's `points`.
    pub point: usize,
    pub qd: u32,
    pub workers: u32,
    pub iops: f64,
    pub mbps: f64,
    pub p99_us: f64,
    pub passed: bool,
    /// Each bound: its measured value and whether it held.
    pub bounds: Vec<Check>,
    /// A step that did not run to its end: "cut short" (a stop) or "failed: REASON".
    /// It is shown, but neither found nor judged past the knee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfinished: Option<String>,
}

// The load-latency curve (`--curve`; built by `results::curve`).

/// The outcome of a curve: the result's `curve`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveOutcome {
    /// The percentages of the maximum rate asked for, in the order run.
    pub pcts: Vec<f64>,
    /// `--curve-stop`'s bounds as given; null without it.
    pub stop: Option<String>,
    /// The latency bounds of `stop` and their limits, microseconds (what the report draws).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_limits_us: Vec<(String, f64)>,
    /// The IOPS of the first point, run as fast as the queue depth allows.
    pub max_iops: f64,
    /// The maximum-rate point, then each paced point run.
    pub points: Vec<CurvePoint>,
    /// Why the curve ended, in words.
    pub ended: String,
}

/// One point of a curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Index of the point in the result's `points`.
    pub point: usize,
    /// Percentage of `max_iops` it was paced at; null for the maximum-rate point.
    pub pct: Option<f64>,
    /// The total rate asked for, I/Os per second; null for the maximum-rate point.
    pub rate: Option<f64>,
    /// Achieved IOPS, and latency from each I/O's scheduled time (no coordinated omission), microseconds.
    pub iops: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    /// With --curve-stop: whether every bound held (null without it).
    pub passed: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bounds: Vec<Check>,
    /// Set when the point was cut short (Ctrl-C, a signal, a failure): why; its figures cover less than the time planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
}
