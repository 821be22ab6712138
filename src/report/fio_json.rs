//! fio-shaped JSON: a result in the structure of `fio --output-format=json`,
//! so scripts and plotting tools written for fio (fio-plot and the like) read
//! lunmark results. Pure: result in, text out.
//!
//! One fio job per point (`groupid` = the point's index: each point ran alone,
//! as fio's stonewalled groups do), its I/O of every worker group together, as
//! fio's `group_reporting` gives it. Key names and units are fio's (fio 3.x):
//! `bw` in KiB/s, `bw_bytes` in bytes/s, `runtime` in ms, latencies in ns as
//! integers (the mean as a float), percentiles under fio's keys ("99.000000").
//! What lunmark does not measure is left out rather than filled with zeros:
//! `stddev`, `slat_ns`, `usr_cpu`/`sys_cpu`, the `bw_*`/`iops_*` sample
//! statistics and the depth histograms. docs/fio-json.md lists every field.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::rows::{params_text, LatencyFigure};
use super::workload_text;
use crate::results::model::{LatencyStats, Point, RunResult};
use crate::workload::WorkloadSpec;

/// fio's percentile keys for the percentiles lunmark keeps, with their figure.
const PERCENTILES: &[(&str, LatencyFigure)] = &[
    ("50.000000", |l| l.p50),
    ("90.000000", |l| l.p90),
    ("99.000000", |l| l.p99),
    ("99.900000", |l| l.p99_9),
    ("99.990000", |l| l.p99_99),
];

/// fio's document, its fields in fio's order.
#[derive(Serialize)]
struct Document {
    #[serde(rename = "fio version")]
    fio_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<String>,
    jobs: Vec<Job>,
    disk_util: Vec<Value>,
}

#[derive(Serialize)]
struct Job {
    jobname: String,
    groupid: usize,
    #[serde(rename = "job options")]
    job_options: Map<String, Value>,
    read: Side,
    write: Side,
    trim: Side,
    job_runtime: u64,
}

/// One direction's figures (fio's `read`, `write`, `trim`).
#[derive(Serialize)]
struct Side {
    io_bytes: u64,
    io_kbytes: u64,
    bw_bytes: u64,
    bw: u64,
    iops: f64,
    runtime: u64,
    total_ios: u64,
    clat_ns: Latency,
    lat_ns: Latency,
}

/// fio's latency object, ns.
#[derive(Serialize)]
struct Latency {
    min: u64,
    max: u64,
    mean: f64,
    #[serde(rename = "N")]
    n: u64,
    /// fio leaves it out of a direction that did no I/O, and of `lat_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<BTreeMap<&'static str, u64>>,
}

/// One result as one fio JSON document.
pub fn render(result: &RunResult) -> String {
    // Serialised from the structs, not a Value, so the keys keep fio's order.
    let mut text = serde_json::to_string_pretty(&build(result)).expect("the document always serialises");
    text.push('\n');
    text
}

/// Several results: an array of fio documents, in the order given.
pub fn render_many(results: &[&RunResult]) -> String {
    let docs: Vec<Document> = results.iter().map(|r| build(r)).collect();
    let mut text = serde_json::to_string_pretty(&docs).expect("the document always serialises");
    text.push('\n');
    text
}

/// The fio document of a result, as a JSON value (its keys sorted).
pub fn document(result: &RunResult) -> Value {
    serde_json::to_value(build(result)).expect("the document always serialises")
}

fn build(result: &RunResult) -> Document {
    let started = chrono::DateTime::parse_from_rfc3339(&result.started_at).ok();
    Document {
        fio_version: format!("lunmark-{}", result.lunmark_version),
        timestamp: started.map(|t| t.timestamp()),
        timestamp_ms: started.map(|t| t.timestamp_millis()),
        time: started.map(|t| t.format("%a %b %e %H:%M:%S %Y").to_string()),
        jobs: result.points.iter().enumerate().map(|(i, p)| job(result, i, p)).collect(),
        disk_util: Vec::new(),
    }
}

fn job(result: &RunResult, index: usize, p: &Point) -> Job {
    let s = &p.summary;
    let runtime_ms = (s.duration_s * 1000.0).round() as u64;
    // Rate-limited points: lunmark's latency counts from each I/O's scheduled
    // time; fio's clat is from submission, which is lunmark's service latency.
    let service = s.service_latency_us.as_ref().unwrap_or(&s.latency_us);
    let side = |bytes: u64, ios: u64, iops: f64, mbps: f64, clat: &LatencyStats, lat: &LatencyStats| {
        let bw_bytes = (mbps * 1e6).round() as u64;
        Side {
            io_bytes: bytes,
            io_kbytes: bytes / 1024,
            bw_bytes,
            bw: bw_bytes / 1024,
            iops,
            runtime: if ios > 0 { runtime_ms } else { 0 },
            total_ios: ios,
            clat_ns: latency(clat, true),
            lat_ns: latency(lat, false),
        }
    };
    let params = params_text(p);
    Job {
        jobname: if params == "-" { result.profile.clone().unwrap_or_else(|| "lunmark".into()) } else { params },
        groupid: index,
        job_options: workload_text::of_point(result, index).map(|w| options(&w)).unwrap_or_default(),
        read: side(s.bytes_read, s.ios_read, s.read_iops, s.read_mbps, &service.read, &s.latency_us.read),
        write: side(s.bytes_written, s.ios_written, s.write_iops, s.write_mbps, &service.write, &s.latency_us.write),
        trim: {
            // Trims have no paced service time of their own: one histogram for both.
            let t = s.latency_us.trim.clone().unwrap_or_default();
            let mbps = if s.duration_s > 0.0 { s.bytes_trimmed as f64 / s.duration_s / 1e6 } else { 0.0 };
            side(s.bytes_trimmed, s.ios_trimmed, s.trim_iops, mbps, &t, &t)
        },
        job_runtime: runtime_ms,
    }
}

fn latency(l: &LatencyStats, with_percentiles: bool) -> Latency {
    let ns = |us: f64| (us * 1000.0).round() as u64;
    Latency {
        min: ns(l.min),
        max: ns(l.max),
        mean: l.mean * 1000.0,
        n: l.count,
        percentile: (with_percentiles && l.count > 0).then(|| PERCENTILES.iter().map(|(k, f)| (*k, ns(f(l)))).collect()),
    }
}

/// The job options fio would have been given for this workload, as fio's
/// strings, where one value holds for every worker group and access line
/// (a mix of sizes is `bssplit`); what differs between groups is left out.
fn options(spec: &WorkloadSpec) -> Map<String, Value> {
    let mut m = Map::new();
    let same = |f: &dyn Fn(&crate::workload::WorkerGroup) -> String| {
        let v: Vec<String> = spec.groups.iter().map(f).collect();
        v.windows(2).all(|w| w[0] == w[1]).then(|| v.into_iter().next()).flatten()
    };
    let bs = workload_text::bs(spec);
    if !bs.contains(';') {
        let key = if bs.contains('/') { "bssplit" } else { "bs" };
        m.insert(key.into(), json!(bs));
    }
    let read = same(&|g| workload_text::group_read_pct(g).to_string());
    let random = same(&|g| workload_text::group_random_pct(g).to_string());
    if let (Some(read), Some(random)) = (read, random) {
        let (read, random): (f64, f64) = (read.parse().unwrap_or(0.0), random.parse().unwrap_or(0.0));
        let rand = random > 0.0;
        let rw = match (read, rand) {
            (r, false) if r >= 100.0 => "read",
            (r, true) if r >= 100.0 => "randread",
            (r, false) if r <= 0.0 => "write",
            (r, true) if r <= 0.0 => "randwrite",
            (_, false) => "rw",
            (_, true) => "randrw",
        };
        m.insert("rw".into(), json!(rw));
        if rw.ends_with("rw") {
            m.insert("rwmixread".into(), json!(format_pct(read)));
        }
        if rand && random < 100.0 {
            m.insert("percentage_random".into(), json!(format_pct(random)));
        }
    }
    if let Some(qd) = same(&|g| g.qd.to_string()) {
        m.insert("iodepth".into(), json!(qd));
    }
    m.insert("numjobs".into(), json!(spec.total_workers().to_string()));
    m.insert("filename".into(), json!(spec.targets.join(":")));
    if let Some(size) = spec.size {
        m.insert("size".into(), json!(size.to_string()));
    }
    m.insert("direct".into(), json!(if spec.buffered { "0" } else { "1" }));
    m
}

fn format_pct(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> RunResult {
        crate::report::golden_result("result-a.json")
    }

    #[test]
    fn figures_are_the_results_own_in_fios_units() {
        let r = fixture();
        let doc = document(&r);
        assert_eq!(doc["jobs"].as_array().unwrap().len(), r.points.len());
        for (i, p) in r.points.iter().enumerate() {
            let (job, s) = (&doc["jobs"][i], &p.summary);
            assert_eq!(job["groupid"], json!(i));
            assert_eq!(job["read"]["iops"].as_f64().unwrap(), s.read_iops);
            assert_eq!(job["read"]["io_bytes"].as_u64().unwrap(), s.bytes_read);
            assert_eq!(job["read"]["total_ios"].as_u64().unwrap(), s.ios_read);
            assert_eq!(job["read"]["bw"].as_u64().unwrap(), (s.read_mbps * 1e6).round() as u64 / 1024);
            assert_eq!(job["read"]["runtime"].as_u64().unwrap(), (s.duration_s * 1000.0).round() as u64);
            let clat = &job["read"]["clat_ns"];
            assert_eq!(clat["percentile"]["99.000000"].as_u64().unwrap(), (s.latency_us.read.p99 * 1000.0).round() as u64);
            assert_eq!(clat["percentile"]["99.990000"].as_u64().unwrap(), (s.latency_us.read.p99_99 * 1000.0).round() as u64);
            assert_eq!(clat["mean"].as_f64().unwrap(), s.latency_us.read.mean * 1000.0);
            // Reads only: the write side is there, empty, without percentiles (as fio writes it).
            assert_eq!(job["write"]["total_ios"], json!(0));
            assert!(job["write"]["clat_ns"].get("percentile").is_none());
            assert_eq!(job["job options"]["rw"], json!("randread"));
            assert_eq!(job["job options"]["iodepth"], json!("32"));
        }
        assert_eq!(doc["jobs"][1]["job options"]["bs"], json!("64k"));
        assert_eq!(doc["disk_util"], json!([]));
    }

    #[test]
    fn trims_fill_fios_trim_side() {
        let mut r = fixture();
        let s = &mut r.points[0].summary;
        (s.ios_trimmed, s.bytes_trimmed, s.trim_iops) = (500, 500 * 65536, 250.0);
        s.latency_us.trim = Some(crate::results::model::LatencyStats { count: 500, mean: 80.0, p99: 200.0, ..Default::default() });
        let doc = document(&r);
        let trim = &doc["jobs"][0]["trim"];
        assert_eq!(
            (trim["total_ios"].as_u64(), trim["io_bytes"].as_u64(), trim["iops"].as_f64()),
            (Some(500), Some(500 * 65536), Some(250.0))
        );
        assert_eq!(trim["clat_ns"]["percentile"]["99.000000"].as_u64(), Some(200_000));
        assert_eq!(doc["jobs"][1]["trim"]["total_ios"].as_u64(), Some(0), "a point without trims keeps an empty side");
    }
}
