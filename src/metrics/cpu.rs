//! CPU accounting over the measured interval: system-wide busy time from
//! /proc/stat (all cores and per core), the process's own from getrusage, and
//! the other user-space processes' (`others.rs`), so a busy neighbour shows.
//! System-wide time is what every efficiency figure uses, because io_uring hands
//! some work to kernel threads that are not charged to the process (METHODOLOGY.md).

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Jiffies of one CPU line of /proc/stat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub busy: u64,
    pub total: u64,
}

impl CpuTicks {
    /// Parses the numbers after "cpu" or "cpuN": user nice system idle iowait irq
    /// softirq steal (guest time is already inside user and is not added again).
    pub fn parse(fields: &[u64]) -> CpuTicks {
        let get = |i: usize| fields.get(i).copied().unwrap_or(0);
        let idle = get(3) + get(4);
        let total: u64 = (0..8).map(get).sum();
        CpuTicks { busy: total - idle, total }
    }
}

#[derive(Clone, Debug)]
pub struct CpuSnapshot {
    pub all: CpuTicks,
    pub cores: Vec<CpuTicks>,
    /// The CPU number of each entry of `cores` (an offline CPU has no line).
    pub core_ids: Vec<u32>,
    /// Process user + system time, seconds.
    pub process_s: f64,
    /// Of which user time, seconds.
    pub process_user_s: f64,
    /// The other user-space processes' times.
    pub others: super::others::ProcessTable,
    /// The times of the processes lunmark started (a lab's target servers).
    pub started: super::others::ProcessTable,
    pub at: Instant,
}

/// Reads /proc/stat, getrusage and the other processes' /proc/[pid]/stat now
/// (a few hundred small reads: taken twice per point, never per I/O).
pub fn snapshot() -> CpuSnapshot {
    let at = Instant::now();
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let (all, cores) = parse_proc_stat(&text);
    let core_ids = core_ids(&text);
    let (process_user_s, process_sys_s) = process_cpu_seconds();
    let (others, started) = super::others::scan_with_started(std::process::id() as i32, ticks_per_second());
    CpuSnapshot { all, cores, core_ids, process_s: process_user_s + process_sys_s, process_user_s, others, started, at }
}

pub fn parse_proc_stat(text: &str) -> (CpuTicks, Vec<CpuTicks>) {
    let mut all = CpuTicks::default();
    let mut cores = Vec::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let Some(name) = parts.next() else { continue };
        if !name.starts_with("cpu") {
            continue;
        }
        let nums: Vec<u64> = parts.filter_map(|p| p.parse().ok()).collect();
        let ticks = CpuTicks::parse(&nums);
        if name == "cpu" {
            all = ticks;
        } else {
            cores.push(ticks);
        }
    }
    (all, cores)
}

/// The N of each "cpuN" line, in the order `parse_proc_stat` lists the cores.
pub fn core_ids(text: &str) -> Vec<u32> {
    text.lines().filter_map(|l| l.split_whitespace().next()?.strip_prefix("cpu")?.parse().ok()).collect()
}

/// Busy time of some CPUs between two snapshots (the pinned ones, --cpus).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SomeCpusUsage {
    /// Average busy share of those CPUs, percent.
    pub utilization_pct: f64,
    /// Busy share of each, percent, in the order asked.
    pub per_cpu_pct: Vec<f64>,
    /// Their busy CPU-seconds.
    pub busy_cpu_s: f64,
}

/// The usage of `cpus` alone from the per-CPU lines of /proc/stat; a CPU
/// without a line in either snapshot counts as idle.
pub fn usage_of(a: &CpuSnapshot, b: &CpuSnapshot, cpus: &[u32]) -> SomeCpusUsage {
    let ticks = |s: &CpuSnapshot, cpu: u32| s.core_ids.iter().position(|&c| c == cpu).map(|i| s.cores[i]).unwrap_or_default();
    let mut busy = 0u64;
    let mut total = 0u64;
    let per_cpu_pct = cpus
        .iter()
        .map(|&c| {
            let (x, y) = (ticks(a, c), ticks(b, c));
            let (db, dt) = (y.busy.saturating_sub(x.busy), y.total.saturating_sub(x.total));
            busy += db;
            total += dt;
            if dt == 0 {
                0.0
            } else {
                db as f64 * 100.0 / dt as f64
            }
        })
        .collect();
    SomeCpusUsage {
        utilization_pct: if total == 0 { 0.0 } else { busy as f64 * 100.0 / total as f64 },
        per_cpu_pct,
        busy_cpu_s: busy as f64 / ticks_per_second(),
    }
}

/// lunmark's own user and system CPU time, seconds.
fn process_cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage writes one rusage struct into the zeroed local we pass.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(usage.ru_utime), tv(usage.ru_stime))
}

pub(crate) fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// CPU use between two snapshots.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// Average busy share of all host CPUs, percent (like Perfmon's total).
    pub utilization_pct: f64,
    /// Busy share of each core, percent.
    pub per_core_pct: Vec<f64>,
    /// lunmark's own user+system time as a share of all host CPUs, percent.
    pub process_pct: f64,
    /// Busy CPU-seconds of the whole host (summed over cores).
    pub busy_cpu_s: f64,
    /// lunmark's own user+system CPU-seconds.
    pub process_cpu_s: f64,
    /// Of which user time (the rest is system time).
    #[serde(default)]
    pub process_user_cpu_s: f64,
    /// CPU-seconds of other user-space processes (kernel threads and what
    /// lunmark started apart); None when /proc could not be read.
    pub other_processes_cpu_s: Option<f64>,
    /// The same as a share of all host CPUs, percent.
    pub other_processes_pct: Option<f64>,
    /// The other processes that used most, by name.
    pub other_processes_top: Vec<super::others::OtherProcess>,
    /// Why the other processes' figures are an estimate, where they are.
    pub other_processes_estimate: Option<String>,
    /// CPU-seconds of the processes lunmark started (a lab's target servers,
    /// a --power-cmd); None when none ran through the interval.
    #[serde(default)]
    pub started_processes_cpu_s: Option<f64>,
    /// The same as a share of all host CPUs, percent.
    #[serde(default)]
    pub started_processes_pct: Option<f64>,
    /// Their names, by CPU used (the same unit as `started_processes_pct`).
    #[serde(default)]
    pub started_processes_top: Vec<super::others::OtherProcess>,
}

pub fn usage_between(a: &CpuSnapshot, b: &CpuSnapshot) -> CpuUsage {
    let pct = |x: CpuTicks, y: CpuTicks| {
        let total = y.total.saturating_sub(x.total);
        if total == 0 {
            0.0
        } else {
            y.busy.saturating_sub(x.busy) as f64 * 100.0 / total as f64
        }
    };
    let per_core_pct: Vec<f64> = a.cores.iter().zip(&b.cores).map(|(x, y)| pct(*x, *y)).collect();
    let ncores = a.cores.len().max(1) as f64;
    let wall = b.at.duration_since(a.at).as_secs_f64();
    let process_cpu_s = (b.process_s - a.process_s).max(0.0);
    let capacity_s = wall * ncores;
    let scanned = !a.others.procs.is_empty() && !b.others.procs.is_empty() && capacity_s > 0.0;
    let others = super::others::between(&a.others, &b.others, ticks_per_second());
    let other_s = others.total_s;
    // Only processes that ran through the interval: a server started for
    // another leg and gone, or none at all, gives no figure (not a zero).
    let started =
        (!b.started.procs.is_empty() && capacity_s > 0.0).then(|| super::others::between(&a.started, &b.started, ticks_per_second()));
    let started = started.as_ref();
    CpuUsage {
        utilization_pct: pct(a.all, b.all),
        per_core_pct,
        process_pct: if wall > 0.0 { process_cpu_s * 100.0 / (wall * ncores) } else { 0.0 },
        busy_cpu_s: b.all.busy.saturating_sub(a.all.busy) as f64 / ticks_per_second(),
        process_cpu_s,
        process_user_cpu_s: (b.process_user_s - a.process_user_s).clamp(0.0, process_cpu_s),
        other_processes_cpu_s: scanned.then_some(other_s),
        other_processes_pct: scanned.then(|| other_s * 100.0 / capacity_s),
        other_processes_top: if scanned { super::others::top(&others.by_name, capacity_s, 3) } else { Vec::new() },
        other_processes_estimate: others.estimate.filter(|_| scanned),
        started_processes_cpu_s: started.map(|s| s.total_s),
        started_processes_pct: started.map(|s| s.total_s * 100.0 / capacity_s),
        started_processes_top: started.map(|s| super::others::top(&s.by_name, capacity_s, 3)).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_parses_busy_and_idle() {
        let text = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1\n";
        let (all, cores) = parse_proc_stat(text);
        assert_eq!(all, CpuTicks { busy: 150, total: 1000 });
        assert_eq!(cores.len(), 2);
        assert_eq!(cores[0].busy, 75);
    }

    #[test]
    fn some_cpus_are_counted_by_number_not_position() {
        let snap = |text: &str| {
            let (all, cores) = parse_proc_stat(text);
            CpuSnapshot {
                all,
                cores,
                core_ids: core_ids(text),
                process_s: 0.0,
                process_user_s: 0.0,
                others: Default::default(),
                started: Default::default(),
                at: Instant::now(),
            }
        };
        // CPU 1 is offline: CPU 2 is the second per-CPU line.
        let a = snap(
            "cpu  0 0 0 0 0 0 0 0
cpu0 0 0 0 0 0 0 0 0
cpu2 0 0 0 0 0 0 0 0
",
        );
        let b = snap(
            "cpu  150 0 0 250 0 0 0 0
cpu0 50 0 0 150 0 0 0 0
cpu2 100 0 0 100 0 0 0 0
",
        );
        let u = usage_of(&a, &b, &[2]);
        assert_eq!(u.per_cpu_pct, vec![50.0]);
        assert_eq!(u.utilization_pct, 50.0);
    }
}
