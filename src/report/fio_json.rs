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

use serde_json::{json, Map, Value};

use super::rows::params_text;
use super::workload_text;
use crate::results::model::{LatencyStats, Point, RunResult};
use crate::workload::WorkloadSpec;

/// fio's percentile keys for the percentiles lunmark keeps, with their figure.
const PERCENTILES: &[(&str, fn(&LatencyStats) -> f64)] = &[
    ("50.000000", |l| l.p50),
    ("90.000000", |l| l.p90),
    ("99.000000", |l| l.p99),
    ("99.900000", |l| l.p99_9),
    ("99.990000", |l| l.p99_99),
];

/// One result as one fio JSON document.
pub fn render(result: &RunResult) -> String {
    let mut text = serde_json::to_string_pretty(&document(result)).expect("a JSON value always serialises");
    text.push('\n');
    text
}

/// Several results: an array of fio documents, in the order given.
pub fn render_many(results: &[&RunResult]) -> String {
    let docs: Vec<Value> = results.iter().map(|r| document(r)).collect();
    let mut text = serde_json::to_string_pretty(&docs).expect("a JSON value always serialises");
    text.push('\n');
    text
}

/// The fio document of a result.
pub fn document(result: &RunResult) -> Value {
    let started = chrono::DateTime::parse_from_rfc3339(&result.started_at).ok();
    let jobs: Vec<Value> = result.points.iter().enumerate().map(|(i, p)| job(result, i, p)).collect();
    let mut doc = Map::new();
    doc.insert("fio version".into(), json!(format!("lunmark-{}", result.lunmark_version)));
    if let Some(t) = started {
        doc.insert("timestamp".into(), json!(t.timestamp()));
        doc.insert("timestamp_ms".into(), json!(t.timestamp_millis()));
        doc.insert("time".into(), json!(t.format("%a %b %e %H:%M:%S %Y").to_string()));
    }
    doc.insert("jobs".into(), Value::Array(jobs));
    doc.insert("disk_util".into(), json!([]));
    Value::Object(doc)
}

fn job(result: &RunResult, index: usize, p: &Point) -> Value {
    let s = &p.summary;
    let runtime_ms = (s.duration_s * 1000.0).round() as u64;
    // Rate-limited points: lunmark's latency counts from each I/O's scheduled
    // time; fio's clat is from submission, which is lunmark's service latency.
    let service = s.service_latency_us.as_ref().unwrap_or(&s.latency_us);
    let side = |bytes: u64, ios: u64, iops: f64, mbps: f64, clat: &LatencyStats, lat: &LatencyStats| {
        let bw_bytes = (mbps * 1e6).round() as u64;
        json!({
            "io_bytes": bytes,
            "io_kbytes": bytes / 1024,
            "bw_bytes": bw_bytes,
            "bw": bw_bytes / 1024,
            "iops": iops,
            "runtime": if ios > 0 { runtime_ms } else { 0 },
            "total_ios": ios,
            "clat_ns": latency(clat, true),
            "lat_ns": latency(lat, false),
        })
    };
    let mut job = Map::new();
    let params = params_text(p);
    let name = if params == "-" { result.profile.clone().unwrap_or_else(|| "lunmark".into()) } else { params };
    job.insert("jobname".into(), json!(name));
    job.insert("groupid".into(), json!(index));
    job.insert("job options".into(), Value::Object(workload_text::of_point(result, index).map(|w| options(&w)).unwrap_or_default()));
    job.insert(
        "read".into(),
        side(s.bytes_read, s.ios_read, s.read_iops, s.read_mbps, &service.read, &s.latency_us.read),
    );
    job.insert(
        "write".into(),
        side(s.bytes_written, s.ios_written, s.write_iops, s.write_mbps, &service.write, &s.latency_us.write),
    );
    job.insert("trim".into(), side(0, 0, 0.0, 0.0, &LatencyStats::default(), &LatencyStats::default()));
    job.insert("job_runtime".into(), json!(runtime_ms));
    Value::Object(job)
}

/// fio's latency object, ns. fio leaves `percentile` out of a direction that
/// did no I/O, and so does this.
fn latency(l: &LatencyStats, with_percentiles: bool) -> Value {
    let ns = |us: f64| (us * 1000.0).round() as u64;
    let mut m = Map::new();
    m.insert("min".into(), json!(ns(l.min)));
    m.insert("max".into(), json!(ns(l.max)));
    m.insert("mean".into(), json!(l.mean * 1000.0));
    m.insert("N".into(), json!(l.count));
    if with_percentiles && l.count > 0 {
        let pct: Map<String, Value> = PERCENTILES.iter().map(|(k, f)| (k.to_string(), json!(ns(f(l))))).collect();
        m.insert("percentile".into(), Value::Object(pct));
    }
    Value::Object(m)
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
        let path = format!("{}/tests/golden/result-a.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
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
}
