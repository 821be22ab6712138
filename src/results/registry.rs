//! The one list of lunmark's metrics: each figure of a point's summary with its
//! key (its path in the summary), its name and unit for people, which direction
//! is better, and how to read it from a summary (and from a group's, where a
//! group has it). `--pass` criteria name metrics by their pass names, compare
//! tests the compared ones, repeats keep the spread of the same ones, and the
//! wide CSV has a column for each one with a CSV name. Adding a metric is one
//! entry here.

use serde::Serialize;

use super::model::{GroupSummary, LatencyStats, Summary};

/// Which way a metric improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// Neither: a figure that describes the run rather than rates it (its length).
    Neither,
}

/// A figure of a summary; None where it does not apply (no CPU use, no power meter).
pub type Read = fn(&Summary) -> Option<f64>;
/// The same figure of a workload group, for the metrics a group has.
pub type ReadGroup = fn(&GroupSummary) -> f64;

/// One metric of the registry: the one definition `--pass`, compare, repeats
/// and the CSV read (a criterion's `results::pass::Measure` names one of these, or
/// a latency statistic).
pub struct Metric {
    /// The field's path in the summary: `latency_us.all.p99`. Repeats keep spreads by it.
    pub key: &'static str,
    /// What people read: `latency p99`.
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub read: Read,
    /// Per group, where a group has the figure.
    pub group: Option<ReadGroup>,
    /// Compared by `compare` (with its significance), and so its spread kept over repeats.
    pub compared: bool,
    /// Its column in the wide CSV (`report::rows`), if it has one.
    pub csv: Option<&'static str>,
    /// The name a `--pass` criterion gives it, if one can.
    pub pass: Option<&'static str>,
}

use Better::{Higher, Lower, Neither};

/// Every metric, in the order compare and the CSV list them.
pub const METRICS: &[Metric] = &[
    m("iops", "IOPS", "IO/s", Higher, |s| Some(s.iops)).group(|g| g.iops).compared().csv("iops").pass("iops"),
    m("read_iops", "read IOPS", "IO/s", Higher, |s| Some(s.read_iops)).group(|g| g.read_iops).compared().csv("read_iops").pass("read_iops"),
    m("write_iops", "write IOPS", "IO/s", Higher, |s| Some(s.write_iops))
        .group(|g| g.write_iops)
        .compared()
        .csv("write_iops")
        .pass("write_iops"),
    m("mbps", "MB/s", "MB/s", Higher, |s| Some(s.mbps)).group(|g| g.mbps).compared().csv("mbps").pass("mbps"),
    m("read_mbps", "read MB/s", "MB/s", Higher, |s| Some(s.read_mbps)).compared().csv("read_mbps"),
    m("write_mbps", "write MB/s", "MB/s", Higher, |s| Some(s.write_mbps)).compared().csv("write_mbps"),
    m("mibps", "MiB/s", "MiB/s", Higher, |s| Some(s.mibps)).csv("mibps"),
    m("read_mibps", "read MiB/s", "MiB/s", Higher, |s| Some(s.read_mibps)).csv("read_mibps"),
    m("write_mibps", "write MiB/s", "MiB/s", Higher, |s| Some(s.write_mibps)).csv("write_mibps"),
    m("bytes_read", "bytes read", "B", Higher, |s| Some(s.bytes_read as f64)).csv("bytes_read"),
    m("bytes_written", "bytes written", "B", Higher, |s| Some(s.bytes_written as f64)).csv("bytes_written"),
    m("ios_read", "reads", "I/Os", Higher, |s| Some(s.ios_read as f64)).csv("ios_read"),
    m("ios_written", "writes", "I/Os", Higher, |s| Some(s.ios_written as f64)).csv("ios_written"),
    // Trims are I/Os (in `iops`); syncs move no data and are counted apart.
    m("trim_iops", "trim IOPS", "IO/s", Higher, |s| Some(s.trim_iops)).csv("trim_iops"),
    m("ios_trimmed", "trims", "I/Os", Higher, |s| Some(s.ios_trimmed as f64)).csv("ios_trimmed"),
    m("bytes_trimmed", "bytes trimmed", "B", Higher, |s| Some(s.bytes_trimmed as f64)).csv("bytes_trimmed"),
    m("sync_per_s", "syncs per second", "syncs/s", Higher, |s| Some(s.sync_per_s)).csv("sync_per_s"),
    m("ios_synced", "syncs", "syncs", Higher, |s| Some(s.ios_synced as f64)).csv("ios_synced"),
    m("duration_s", "measured time", "s", Neither, |s| Some(s.duration_s)).csv("duration_s"),
    m("latency_us.all.mean", "latency mean", "us", Lower, |s| Some(s.latency_us.all.mean)).compared(),
    m("latency_us.all.p50", "latency p50", "us", Lower, |s| Some(s.latency_us.all.p50)).compared(),
    m("latency_us.all.p90", "latency p90", "us", Lower, |s| Some(s.latency_us.all.p90)).compared(),
    m("latency_us.all.p99", "latency p99", "us", Lower, |s| Some(s.latency_us.all.p99)).compared(),
    m("latency_us.all.p99_9", "latency p99.9", "us", Lower, |s| Some(s.latency_us.all.p99_9)).compared(),
    m("latency_us.all.p99_99", "latency p99.99", "us", Lower, |s| Some(s.latency_us.all.p99_99)).compared(),
    m("latency_us.all.max", "latency max", "us", Lower, |s| Some(s.latency_us.all.max)).compared(),
    m("latency_us.read.mean", "read latency mean", "us", Lower, |s| Some(s.latency_us.read.mean)).compared(),
    m("latency_us.write.mean", "write latency mean", "us", Lower, |s| Some(s.latency_us.write.mean)).compared(),
    m("cpu.utilization_pct", "CPU", "%", Lower, |s| Some(s.cpu.utilization_pct)).compared().csv("cpu_pct").pass("cpu"),
    m("cpu.process_pct", "CPU of lunmark", "%", Lower, |s| Some(s.cpu.process_pct)).csv("cpu_process_pct"),
    m("cpu.iops_per_cpu_pct", "IOPS per CPU%", "IO/s/%", Higher, |s| s.cpu.iops_per_cpu_pct).compared().csv("iops_per_cpu_pct"),
    m("cpu.mbps_per_cpu_pct", "MB/s per CPU%", "MB/s/%", Higher, |s| s.cpu.mbps_per_cpu_pct).compared().csv("mbps_per_cpu_pct"),
    m("cpu.service_demand_us_per_kb", "service demand", "us/KB", Lower, |s| s.cpu.service_demand_us_per_kb)
        .compared()
        .csv("service_demand_us_per_kb"),
    m("errors.total", "errors", "errors", Lower, |s| Some(s.errors.total as f64)).csv("errors").pass("errors"),
    m("power.avg_watts", "power", "W", Lower, |s| s.power.as_ref()?.avg_watts).compared(),
    m("power.iops_per_watt", "IOPS per watt", "IO/s/W", Higher, |s| s.power.as_ref()?.iops_per_watt).compared(),
    m("power.mbps_per_watt", "MB/s per watt", "MB/s/W", Higher, |s| s.power.as_ref()?.mbps_per_watt).compared(),
    m("power.iops_per_delta_watt", "IOPS per watt above idle", "IO/s/W", Higher, |s| s.power.as_ref()?.iops_per_delta_watt).compared(),
    m("power.mbps_per_delta_watt", "MB/s per watt above idle", "MB/s/W", Higher, |s| s.power.as_ref()?.mbps_per_delta_watt).compared(),
    m("line_rate.pct", "line rate (busier direction)", "%", Higher, |s| s.line_rate.as_ref().map(|l| l.pct)).compared(),
    m("cpu.pinned.utilization_pct", "pinned CPU", "%", Lower, |s| Some(s.cpu.pinned.as_ref()?.utilization_pct)).compared(),
    m("cpu.pinned.service_demand_us_per_kb", "service demand (pinned CPUs)", "us/KB", Lower, |s| {
        s.cpu.pinned.as_ref()?.service_demand_us_per_kb
    })
    .compared(),
    m("queue_depth.achieved", "queue depth held", "I/Os", Higher, |s| s.queue_depth.as_ref().map(|q| q.achieved)).compared(),
];

/// One statistic of a latency distribution: its field, the names a `--pass`
/// criterion may give it, and how to read it.
pub struct LatencyStat {
    /// The field of `LatencyStats` (and the CSV's `lat_OP_KEY_us`).
    pub key: &'static str,
    /// Names in `--pass` (`read_lat_p99.9` or `read_lat_p99_9`).
    pub pass: &'static [&'static str],
    pub read: fn(&LatencyStats) -> f64,
}

/// The statistics of every latency distribution (read, write, all), in CSV
/// column order; every one is lower-is-better, in microseconds.
pub const LATENCY_STATS: &[LatencyStat] = &[
    LatencyStat { key: "mean", pass: &["avg", "mean"], read: |l| l.mean },
    LatencyStat { key: "min", pass: &["min"], read: |l| l.min },
    LatencyStat { key: "p50", pass: &["p50"], read: |l| l.p50 },
    LatencyStat { key: "p90", pass: &["p90"], read: |l| l.p90 },
    LatencyStat { key: "p99", pass: &["p99"], read: |l| l.p99 },
    LatencyStat { key: "p99_9", pass: &["p99.9", "p99_9"], read: |l| l.p99_9 },
    LatencyStat { key: "p99_99", pass: &["p99.99", "p99_99"], read: |l| l.p99_99 },
    LatencyStat { key: "max", pass: &["max"], read: |l| l.max },
];

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Metric({})", self.key)
    }
}

/// Metrics are one entry each: the key names it.
impl PartialEq for Metric {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl std::fmt::Debug for LatencyStat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LatencyStat({})", self.key)
    }
}

impl PartialEq for LatencyStat {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

/// The metric of a key (`latency_us.all.p99`).
pub fn by_key(key: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.key == key)
}

/// The metric a `--pass` criterion names (`iops`, `cpu`), latency aside.
pub fn by_pass_name(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.pass == Some(name))
}

/// The latency statistic a `--pass` criterion names after `lat_` (`p99.9`).
pub fn latency_stat(name: &str) -> Option<&'static LatencyStat> {
    LATENCY_STATS.iter().find(|s| s.pass.contains(&name))
}

/// The metrics compare tests and repeats keep the spread of.
pub fn compared() -> impl Iterator<Item = &'static Metric> {
    METRICS.iter().filter(|m| m.compared)
}

/// The metrics with a column in the wide CSV, with their column names.
pub fn csv_columns() -> impl Iterator<Item = (&'static str, &'static Metric)> {
    METRICS.iter().filter_map(|m| Some((m.csv?, m)))
}

/// The names `--pass` accepts, for messages.
pub fn pass_names() -> Vec<&'static str> {
    METRICS.iter().filter_map(|m| m.pass).collect()
}

const fn m(key: &'static str, name: &'static str, unit: &'static str, better: Better, read: Read) -> Metric {
    Metric { key, name, unit, better, read, group: None, compared: false, csv: None, pass: None }
}

impl Metric {
    const fn group(self, group: ReadGroup) -> Self {
        Metric { group: Some(group), ..self }
    }
    const fn compared(self) -> Self {
        Metric { compared: true, ..self }
    }
    const fn csv(self, column: &'static str) -> Self {
        Metric { csv: Some(column), ..self }
    }
    const fn pass(self, name: &'static str) -> Self {
        Metric { pass: Some(name), ..self }
    }

    /// The figure of a summary.
    pub fn get(&self, s: &Summary) -> Option<f64> {
        (self.read)(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_pass_and_csv_names_lead_back_to_them() {
        let mut keys = std::collections::BTreeSet::new();
        for m in METRICS {
            assert!(keys.insert(m.key), "{} twice", m.key);
        }
        let csv: Vec<_> = csv_columns().map(|(c, _)| c).collect();
        assert_eq!(csv.len(), csv.iter().collect::<std::collections::BTreeSet<_>>().len(), "a CSV column twice");
        for name in pass_names() {
            assert_eq!(by_pass_name(name).unwrap().pass, Some(name));
        }
    }

    /// A summary whose every number is different: each metric must read the
    /// field its key names, not a neighbour.
    #[test]
    fn every_metric_reads_the_summary_field_its_key_names() {
        fn number(v: &mut serde_json::Value, next: &mut u64) {
            match v {
                // Whole numbers, so that counters (u64 fields) take them too.
                serde_json::Value::Number(_) => {
                    *next += 1;
                    *v = serde_json::json!(*next);
                }
                serde_json::Value::Object(o) => o.values_mut().for_each(|v| number(v, next)),
                _ => {}
            }
        }
        let mut s = Summary {
            power: Some(Default::default()),
            line_rate: Some(Default::default()),
            queue_depth: Some(Default::default()),
            ..Default::default()
        };
        s.cpu.pinned = Some(crate::results::model::PinnedCpuStats { service_demand_us_per_kb: Some(0.0), ..Default::default() });
        s.cpu.iops_per_cpu_pct = Some(0.0);
        s.cpu.mbps_per_cpu_pct = Some(0.0);
        s.cpu.service_demand_us_per_kb = Some(0.0);
        // Trim and sync counts are left out of a summary while 0.
        (s.ios_trimmed, s.trim_iops, s.bytes_trimmed, s.ios_synced, s.sync_per_s) = (1, 1.0, 1, 1, 1.0);
        let mut json = serde_json::to_value(&s).unwrap();
        if let Some(p) = json.get_mut("power").and_then(|p| p.as_object_mut()) {
            for k in ["avg_watts", "iops_per_watt", "mbps_per_watt", "iops_per_delta_watt", "mbps_per_delta_watt"] {
                p.insert(k.into(), serde_json::json!(0.0));
            }
        }
        number(&mut json, &mut 0);
        let s: Summary = serde_json::from_value(json.clone()).unwrap();
        for m in METRICS {
            let field = m.key.split('.').try_fold(&json, |v, k| v.get(k)).and_then(|v| v.as_f64());
            assert!(field.is_some(), "{} is not a number in a summary", m.key);
            assert_eq!(m.get(&s), field, "{} reads another field", m.key);
        }
    }
}
