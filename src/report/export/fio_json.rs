//! fio-shaped JSON: a result in the structure of `fio --output-format=json`,
//! so scripts and plotting tools written for fio (fio-plot and the like) read
//! lunmark results. Pure: result in, text out.
//!
//! One fio job per point (`groupid` = the point's index: each point ran alone,
//! as fio's stonewalled groups do), its I/O of every worker group together, as
//! fio's `group_reporting` gives it. Key names and units are fio's (fio 3.x):
//! `bw` in KiB/s, `bw_bytes` in bytes/s, `runtime` in ms, latencies in ns as
//! integers (the mean as a float), percentiles under fio's keys ("99.000000").
//! What lunmark does not measure is left out rather than filled with zeros
//! (`slat_ns`, `ctx`, `majf`/`minf`, the depth histograms); the sample
//! statistics (`iops_stddev`, `bw_dev`, ...) come from the per-second
//! intervals, `latency_ns`/`_us`/`_ms` from the histogram's buckets and
//! `usr_cpu`/`sys_cpu` from lunmark's own CPU time. docs/fio-json.md lists
//! every field.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::report::rows::{params_text, LatencyFigure};
use crate::report::workload_text;
use crate::results::model::{Interval, LatencyStats, Point, RunResult, LATENCY_BUCKET_BOUNDS_NS};
use crate::workload::WorkloadSpec;

/// fio's percentile keys for the percentiles lunmark keeps, with their figure.
const PERCENTILES: &[(&str, LatencyFigure)] = &[
    ("50.000000", |l| l.p50),
    ("90.000000", |l| l.p90),
    ("99.000000", |l| l.p99),
    ("99.900000", |l| l.p99_9),
    ("99.990000", |l| l.p99_99),
];

/// fio's keys for its latency ranges, ns and µs (each range's upper bound).
const RANGE_KEYS: [&str; 10] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];

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
    /// lunmark's own user and system CPU time, percent of the measured time.
    #[serde(skip_serializing_if = "Option::is_none")]
    usr_cpu: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sys_cpu: Option<f64>,
    /// Percent of the I/Os in each of fio's latency ranges.
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_ns: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_us: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_ms: Option<Map<String, Value>>,
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
    /// Per-second samples of the bandwidth (KiB/s) and IOPS, fio's names.
    #[serde(flatten)]
    samples: Option<Samples>,
}

/// fio's statistics of its bandwidth and IOPS samples, from lunmark's
/// per-second intervals (fio samples every 500 ms by default).
#[derive(Serialize)]
struct Samples {
    bw_min: u64,
    bw_max: u64,
    bw_agg: f64,
    bw_mean: f64,
    bw_dev: f64,
    bw_samples: u64,
    iops_min: u64,
    iops_max: u64,
    iops_mean: f64,
    iops_stddev: f64,
    iops_samples: u64,
}

/// fio's latency object, ns.
#[derive(Serialize)]
struct Latency {
    min: u64,
    max: u64,
    mean: f64,
    #[serde(rename = "N")]
    n: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stddev: Option<f64>,
    /// fio leaves it out of a direction that did no I/O.
    #[serde(skip_serializing_if = "Option::is_none")]
    percentile: Option<Percentiles>,
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
    let side = |bytes: u64, ios: u64, iops: f64, mbps: f64, clat: &LatencyStats, lat: &LatencyStats, samples: Option<Samples>| {
        let bw_bytes = (mbps * 1e6).round() as u64;
        Side {
            io_bytes: bytes,
            io_kbytes: bytes / 1024,
            bw_bytes,
            bw: bw_bytes / 1024,
            iops,
            runtime: if ios > 0 { runtime_ms } else { 0 },
            total_ios: ios,
            clat_ns: latency(clat),
            lat_ns: latency(lat),
            samples,
        }
    };
    let only_reads = s.ios_written == 0 && s.ios_trimmed == 0;
    let only_writes = s.ios_read == 0 && s.ios_trimmed == 0;
    let cpu = |secs: Option<f64>| secs.filter(|_| s.duration_s > 0.0).map(|c| c * 100.0 / s.duration_s);
    let user = s.cpu.process_user_cpu_s;
    let [latency_ns, latency_us, latency_ms] = ranges(&s.latency_buckets).map_or([None, None, None], |r| r.map(Some));
    Job {
        jobname: jobname(result, p),
        groupid: index,
        job_options: workload_text::of_point(result, index).map(|w| options(&w)).unwrap_or_default(),
        read: side(
            s.bytes_read,
            s.ios_read,
            s.read_iops,
            s.read_mbps,
            &service.read,
            &s.latency_us.read,
            samples(&s.intervals, |i| i.read_iops, |i| i.read_mbps.or(only_reads.then_some(i.mbps))),
        ),
        write: side(
            s.bytes_written,
            s.ios_written,
            s.write_iops,
            s.write_mbps,
            &service.write,
            &s.latency_us.write,
            samples(&s.intervals, |i| i.write_iops, |i| i.write_mbps.or(only_writes.then_some(i.mbps))),
        ),
        trim: {
            // Trims have no paced service time of their own: one histogram for both.
            let t = s.latency_us.trim.clone().unwrap_or_default();
            let mbps = if s.duration_s > 0.0 { s.bytes_trimmed as f64 / s.duration_s / 1e6 } else { 0.0 };
            side(s.bytes_trimmed, s.ios_trimmed, s.trim_iops, mbps, &t, &t, None)
        },
        job_runtime: runtime_ms,
        usr_cpu: cpu(user),
        sys_cpu: cpu(user.map(|u| (s.cpu.process_cpu_s - u).max(0.0))),
        latency_ns,
        latency_us,
        latency_ms,
    }
}

/// The job's name: for a point of a profile's phase (a fio job file's jobs),
/// the phase's name, which is the job names as written (`a+b` for two jobs
/// that ran together); for a profile's only point its groups' names (a fio
/// job file's one job); else the point's sweep values, the profile, or lunmark.
fn jobname(result: &RunResult, p: &Point) -> String {
    if let (1, Some(Value::String(phase))) = (p.params.len(), p.params.get("phase")) {
        return phase.clone();
    }
    match params_text(p) {
        t if t == "-" => match (&result.profile, workload_text::of(result, p)) {
            (Some(_), Some(w)) if !w.groups.is_empty() => w.groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join("+"),
            (Some(profile), _) => profile.clone(),
            (None, _) => "lunmark".into(),
        },
        t => t,
    }
}

/// fio's sample statistics of one direction from the per-second intervals:
/// IOPS, and bandwidth in KiB/s where the intervals have the direction's
/// (results before it was kept have only the total, which is the direction's
/// when the point did nothing else). Standard deviations over n - 1, as fio's.
fn samples(intervals: &[Interval], iops: fn(&Interval) -> f64, mbps: impl Fn(&Interval) -> Option<f64>) -> Option<Samples> {
    let bw: Option<Vec<f64>> = intervals.iter().map(|i| mbps(i).map(|m| m * 1e6 / 1024.0)).collect();
    let bw = bw?;
    let io: Vec<f64> = intervals.iter().map(iops).collect();
    let stat = |v: &[f64]| {
        if v.is_empty() {
            return (0.0, 0.0, 0.0, 0.0);
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = if v.len() > 1 { v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
        (v.iter().cloned().fold(f64::MAX, f64::min), v.iter().cloned().fold(0.0, f64::max), mean, var.sqrt())
    };
    let (bmin, bmax, bmean, bdev) = stat(&bw);
    let (imin, imax, imean, idev) = stat(&io);
    Some(Samples {
        bw_min: bmin.round() as u64,
        bw_max: bmax.round() as u64,
        // One job holds the whole point: 100% of its group's bandwidth, as fio writes it for one job.
        bw_agg: if bw.is_empty() || bmean == 0.0 { 0.0 } else { 100.0 },
        bw_mean: bmean,
        bw_dev: bdev,
        bw_samples: bw.len() as u64,
        iops_min: imin.round() as u64,
        iops_max: imax.round() as u64,
        iops_mean: imean,
        iops_stddev: idev,
        iops_samples: io.len() as u64,
    })
}

/// fio's `latency_ns`, `latency_us` and `latency_ms`: percent of the I/Os in
/// each range, from the summary's counts (None in results without them).
fn ranges(counts: &[u64]) -> Option<[Map<String, Value>; 3]> {
    if counts.len() != LATENCY_BUCKET_BOUNDS_NS.len() + 1 {
        return None;
    }
    let total: u64 = counts.iter().sum();
    let pct = |n: u64| json!(if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 });
    let map = |range: std::ops::Range<usize>, keys: &[&str]| -> Map<String, Value> {
        keys.iter().zip(range).map(|(k, i)| (k.to_string(), pct(counts[i]))).collect()
    };
    let mut ms_keys: Vec<&str> = RANGE_KEYS.to_vec();
    ms_keys.extend(["2000", ">=2000"]);
    Some([map(0..10, &RANGE_KEYS), map(10..20, &RANGE_KEYS), map(20..32, &ms_keys)])
}

fn latency(l: &LatencyStats) -> Latency {
    let ns = |us: f64| (us * 1000.0).round() as u64;
    Latency {
        min: ns(l.min),
        max: ns(l.max),
        mean: l.mean * 1000.0,
        n: l.count,
        stddev: l.stddev.map(|sd| sd * 1000.0),
        // fio writes the map with clat_percentiles (its default) and, with
        // lat_percentiles, for lat_ns too; lunmark writes both.
        percentile: (l.count > 0).then(|| percentile_map(l)),
    }
}

/// fio's percentile map, in order of the percentile: the workload's own list
/// (fio's `percentile_list`, which replaces fio's default map), or the
/// percentiles lunmark keeps.
fn percentile_map(l: &LatencyStats) -> Percentiles {
    let ns = |us: f64| (us * 1000.0).round() as u64;
    let mut m: Vec<(f64, u64)> = if l.percentiles.is_empty() {
        let mut m: Vec<(f64, u64)> = PERCENTILES.iter().map(|(k, f)| (k.parse().expect("a number"), ns(f(l)))).collect();
        m.extend(l.p95.map(|p95| (95.0, ns(p95))));
        m
    } else {
        l.percentiles.iter().filter_map(|(k, v)| Some((k.parse().ok()?, ns(*v)))).collect()
    };
    m.sort_by(|a, b| a.0.total_cmp(&b.0));
    Percentiles(m.into_iter().map(|(p, v)| (format!("{p:.6}"), v)).collect())
}

/// fio's `percentile` object: keys in the percentiles' order, as fio writes them.
struct Percentiles(Vec<(String, u64)>);

impl Serialize for Percentiles {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
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

    /// fio-plot reads iops_stddev, lat_ns.stddev, latency_ns/us/ms and
    /// usr_cpu/sys_cpu (it crashed on their absence): each from lunmark's own figures.
    #[test]
    fn sample_statistics_latency_ranges_and_cpu_are_fios_keys() {
        let mut r = fixture();
        let s = &mut r.points[0].summary;
        s.intervals = [(1000.0, 4.0), (3000.0, 12.0)]
            .iter()
            .map(|(iops, mbps)| Interval { read_iops: *iops, read_mbps: Some(*mbps), write_mbps: Some(0.0), ..Default::default() })
            .collect();
        s.latency_us.read.stddev = Some(12.5);
        s.latency_us.read.p95 = Some(70.0);
        let mut counts = vec![0u64; 32];
        (counts[12], counts[13], counts[31]) = (60, 30, 10);
        s.latency_buckets = counts;
        (s.duration_s, s.cpu.process_cpu_s, s.cpu.process_user_cpu_s) = (2.0, 0.5, Some(0.2));
        let doc = document(&r);
        let (job, read) = (&doc["jobs"][0], &doc["jobs"][0]["read"]);
        assert_eq!(
            (read["iops_min"].as_u64(), read["iops_max"].as_u64(), read["iops_mean"].as_f64()),
            (Some(1000), Some(3000), Some(2000.0))
        );
        // Two samples: the standard deviation over n - 1, as fio's.
        assert!((read["iops_stddev"].as_f64().unwrap() - 2e6f64.sqrt()).abs() < 1e-6, "{read}");
        assert_eq!((read["bw_min"].as_u64(), read["bw_max"].as_u64(), read["bw_samples"].as_u64()), (Some(3906), Some(11719), Some(2)));
        assert_eq!(read["lat_ns"]["stddev"].as_f64(), Some(12_500.0));
        assert_eq!(read["clat_ns"]["percentile"]["95.000000"].as_u64(), Some(70_000));
        assert_eq!(job["write"]["iops_samples"].as_u64(), Some(2));
        // 12 and 13 are fio's 10 and 20 µs ranges ([4, 10) and [10, 20) µs); 31 is 2 s and more.
        assert_eq!((job["latency_us"]["10"].as_f64(), job["latency_us"]["20"].as_f64()), (Some(60.0), Some(30.0)));
        assert_eq!((job["latency_ms"][">=2000"].as_f64(), job["latency_ns"]["2"].as_f64()), (Some(10.0), Some(0.0)));
        assert_eq!((job["usr_cpu"].as_f64(), job["sys_cpu"].as_f64()), (Some(10.0), Some(15.0)));
        // A result from before these were kept: left out, not made up.
        let old = document(&fixture());
        for key in ["usr_cpu", "latency_us"] {
            assert!(old["jobs"][0].get(key).is_none(), "{key}");
        }
        assert!(old["jobs"][0]["read"]["lat_ns"].get("stddev").is_none());
    }

    #[test]
    fn a_fio_job_files_points_are_named_by_their_jobs() {
        let mut r = fixture();
        r.points[0].params = [("phase".to_string(), json!("seq-read+rand-write"))].into_iter().collect();
        assert_eq!(document(&r)["jobs"][0]["jobname"], "seq-read+rand-write");
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
