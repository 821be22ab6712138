//! Histogram logs (issue 29 item 3): `run --hdr-log FILE` read by the real
//! `hdrhistogram` package from PyPI (the venv scripts/setup.sh makes), and
//! `results percentiles` over a window of a real run's stored seconds.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// The venv's Python, with the `hdrhistogram` package (module `hdrh`).
fn python() -> PathBuf {
    let venv = std::env::var_os("LUNMARK_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").expect("HOME")).join(".cache/lunmark-venv"));
    let bin = venv.join("bin/python");
    let ok = Command::new(&bin).args(["-c", "import hdrh"]).status().is_ok_and(|s| s.success());
    assert!(ok, "{} cannot import hdrh: run scripts/setup.sh (it installs hdrhistogram from PyPI into a venv)", bin.display());
    bin
}

/// Reads each log with hdrhistogram's own log reader: every interval's tag,
/// start (s from the log's StartTime), length, count and p50/p99 (ns); and
/// all intervals of all the logs merged: their count and p99.
const READ_LOGS: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
merged = HdrHistogram(1, 3600 * 10**9, 2)
logs = []
for path in sys.argv[1:]:
    reader = HistogramLogReader(path, HdrHistogram(1, 3600 * 10**9, 2))
    rows = []
    while True:
        h = reader.get_next_interval_histogram()
        if h is None:
            break
        merged.add(h)
        rows.append({"tag": h.get_tag(), "start_s": h.get_start_time_stamp() / 1000.0 - reader.get_start_time_sec(),
                     "len_s": (h.get_end_time_stamp() - h.get_start_time_stamp()) / 1000.0, "count": h.get_total_count(),
                     "p50": h.get_value_at_percentile(50), "p99": h.get_value_at_percentile(99)})
    logs.append(rows)
print(json.dumps({"logs": logs, "count": merged.get_total_count(), "p99": merged.get_value_at_percentile(99)}))
"#;

pub(crate) fn read_logs(logs: &[&Path]) -> serde_json::Value {
    let out = Command::new(python()).arg("-c").arg(READ_LOGS).args(logs).output().unwrap();
    assert!(out.status.success(), "hdrhistogram could not read the logs: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A 3-second 70% read run on mem: with its log; its stored result.
fn run_with_log(dir: &Path, name: &str) -> (PathBuf, serde_json::Value, String) {
    let log = dir.join(format!("{name}.hdr"));
    let json = dir.join(format!("{name}.json"));
    let args = ["run", "-t", "mem:32m", "--time", "3s", "--ramp", "0s", "--read", "70", "--qd", "4", "--label", name];
    let (out, _) = run_in_store(dir, &[&args[..], &["--hdr-log", log.to_str().unwrap(), "--json", json.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    (log, read_json(&json), saved_id(&out))
}

/// Within the per-second histograms' precision (2 significant digits: 1%),
/// plus the 0.1% of the point's own 3-digit histogram.
fn agrees(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.011 * b.max(1.0)
}

/// Every interval of the log, as the Python package decodes it: one per
/// second and operation, counts equal to the stored intervals' reads and
/// writes, at the stored seconds; each second's p99 and the whole log's agree
/// with lunmark's within the histograms' precision; two runs' logs merged in
/// Python hold both runs' I/Os.
#[test]
fn pythons_hdrhistogram_reads_the_log_with_the_stored_counts_and_merges_two_runs() {
    let dir = shm_dir();
    let (log_a, a, _) = run_with_log(dir.path(), "a");
    let (log_b, b, _) = run_with_log(dir.path(), "b");
    let text = std::fs::read_to_string(&log_a).unwrap();
    assert!(text.contains("#[StartTime: ") && text.contains("#[BaseTime: "), "{text}");
    assert!(text.contains("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""));
    assert!(text.contains("2 significant digits"), "the header says the precision: {text}");
    let got = read_logs(&[&log_a, &log_b]);
    let s = &a["points"][0]["summary"];
    let intervals = s["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 3, "{intervals:?}");
    let rows = got["logs"][0].as_array().unwrap();
    assert_eq!(rows.len(), 2 * intervals.len(), "a read and a write histogram per second: {rows:?}");
    for (k, iv) in intervals.iter().enumerate() {
        let (r, w) = (&rows[2 * k], &rows[2 * k + 1]);
        assert_eq!((r["tag"].as_str(), w["tag"].as_str()), (Some("read"), Some("write")));
        let len = iv["duration_s"].as_f64().unwrap();
        let ios = |key: &str| (iv[key].as_f64().unwrap() * len).round() as u64;
        assert_eq!(r["count"].as_u64(), Some(ios("read_iops")), "second {k}: {r} vs {iv}");
        assert_eq!(w["count"].as_u64(), Some(ios("write_iops")), "second {k}: {w} vs {iv}");
        assert!((r["start_s"].as_f64().unwrap() - iv["t_s"].as_f64().unwrap()).abs() < 0.002, "{r} vs {iv}");
        assert!((r["len_s"].as_f64().unwrap() - len).abs() < 0.002, "{r} vs {iv}");
    }
    let ios_of = |r: &serde_json::Value| {
        let s = &r["points"][0]["summary"];
        s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap()
    };
    assert_eq!(got["count"].as_u64(), Some(ios_of(&a) + ios_of(&b)), "both runs' I/Os are in the merged log");
    // The whole run's p99 from the log against lunmark's (3 digits) within the log's precision.
    let whole_p99_us = |r: &serde_json::Value| r["points"][0]["summary"]["latency_us"]["all"]["p99"].as_f64().unwrap();
    let one = read_logs(&[&log_a]);
    assert!(agrees(one["p99"].as_f64().unwrap() / 1e3, whole_p99_us(&a)), "{} ns vs {} us", one["p99"], whole_p99_us(&a));
    // The merged logs' p99 lies between the two runs'.
    let (pa, pb) = (whole_p99_us(&a), whole_p99_us(&b));
    let merged_p99_us = got["p99"].as_f64().unwrap() / 1e3;
    assert!(
        merged_p99_us >= pa.min(pb) * 0.989 && merged_p99_us <= pa.max(pb) * 1.011,
        "the merged p99 {merged_p99_us} us lies between the runs' ({pa}, {pb})"
    );
}

/// `results percentiles` on a real run: each one-second window holds that
/// second's stored reads, its p99 agrees with the p99 Python's hdrhistogram
/// reads from the log of the same second, a wider window holds the sum and
/// `--op all` both operations; the table says the same; bad windows,
/// operations and percentiles are refused with one error each.
#[test]
fn results_percentiles_recomputes_any_window_of_a_real_run() {
    let dir = shm_dir();
    let (log, result, id) = run_with_log(dir.path(), "p");
    let store = dir.path().join("s.db");
    let rows = &read_logs(&[&log])["logs"][0];
    let intervals = result["points"][0]["summary"]["intervals"].as_array().unwrap().clone();
    let ios = |iv: &serde_json::Value, key: &str| (iv[key].as_f64().unwrap() * iv["duration_s"].as_f64().unwrap()).round() as u64;
    let window = |from: &str, to: &str, op: &str| {
        let out = with_store(&store, &["results", "percentiles", &id, "--from", from, "--to", to, "--op", op, "--pct", "50,99", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["points"][0].clone()
    };
    for k in 0..2usize {
        let got = window(&k.to_string(), &(k + 1).to_string(), "read");
        assert_eq!(got["ios"].as_u64(), Some(ios(&intervals[k], "read_iops")), "second {k}: {got}");
        let p99_us = got["percentiles_us"][1]["us"].as_f64().unwrap();
        let python_ns = rows[2 * k]["p99"].as_f64().unwrap();
        assert!(agrees(p99_us, python_ns / 1e3), "second {k}: {p99_us} us vs Python's {python_ns} ns");
    }
    let two = window("0", "2", "read");
    assert_eq!(two["ios"].as_u64(), Some(ios(&intervals[0], "read_iops") + ios(&intervals[1], "read_iops")));
    assert_eq!((two["from_s"].as_f64(), two["to_s"].as_f64()), (Some(0.0), Some(2.0)));
    // p100 over every second is the max the summary stores, exactly (not a bucket's middle).
    let end = intervals.len().to_string();
    let out = with_store(&store, &["results", "percentiles", &id, "--from", "0", "--to", &end, "--op", "read", "--pct", "100", "--json"]);
    let whole: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let stored_max = result["points"][0]["summary"]["latency_us"]["read"]["max"].as_f64();
    assert_eq!(whole["points"][0]["percentiles_us"][0]["us"].as_f64(), stored_max, "{whole}");
    assert_eq!(whole["points"][0]["max_us"].as_f64(), stored_max, "{whole}");
    let all = window("0", "1", "all");
    assert_eq!(all["ios"].as_u64(), Some(ios(&intervals[0], "read_iops") + ios(&intervals[0], "write_iops")));
    let table = with_store(&store, &["results", "percentiles", &id, "--from", "0", "--to", "2", "--op", "read"]);
    assert!(table.status.success(), "{}", stderr(&table));
    assert!(stdout(&table).contains(&two["ios"].to_string()) && stdout(&table).contains("p99.9"), "{}", stdout(&table));
    for (args, says) in [
        (["--from", "2", "--to", "2", "--op", "read"], "--from 2 --to 2: the window is empty"),
        (["--from", "1", "--to", "0", "--op", "read"], "--from must be below --to"),
        (["--from", "50", "--to", "60", "--op", "read"], "--from 50: beyond the run"),
        (["--from", "0", "--to", "60", "--op", "read"], "--to 60: beyond the run"),
        (["--from", "0", "--to", "1", "--op", "reads"], "--op reads: choose read, write, trim or all"),
        (["--from", "1.5", "--to", "2", "--op", "read"], "no measured second starts in this window"),
        (["--from", "0", "--to", "1", "--op", "read"], ""),
    ] {
        let out = with_store(&store, &[&["results", "percentiles", id.as_str()][..], &args[..]].concat());
        if says.is_empty() {
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            continue;
        }
        assert!(!out.status.success() && stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).matches("error:").count(), 1, "{}", stderr(&out));
        assert!(stdout(&out).is_empty(), "nothing printed before the refusal: {}", stdout(&out));
    }
    let out = with_store(&store, &["results", "percentiles", &id, "--from", "0", "--to", "1", "--pct", "50,150"]);
    assert!(!out.status.success() && stderr(&out).contains("--pct 150"), "{}", stderr(&out));
}

/// A result kept before lunmark kept per-second histograms (the field absent,
/// as in an older result): imported, and `results percentiles` says they are
/// not kept for it, non-zero, instead of figures.
#[test]
fn results_percentiles_says_an_older_result_kept_no_histograms() {
    let dir = shm_dir();
    let (_, mut result, id) = run_with_log(dir.path(), "old");
    result["points"][0]["summary"].as_object_mut().unwrap().remove("histograms").expect("a new result keeps its histograms");
    let file = dir.path().join("old.json");
    std::fs::write(&file, serde_json::to_vec(&result).unwrap()).unwrap();
    let other = dir.path().join("other.db");
    let out = with_store(&other, &["results", "import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = with_store(&other, &["results", "percentiles", &id, "--from", "0", "--to", "1"]);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(stderr(&out).contains("per-second histograms are not kept for this result"), "{}", stderr(&out));
}

/// --hdr-log is checked with the other outputs before anything runs (a
/// directory is no log file), and a lab, which makes many results, refuses it.
#[test]
fn hdr_log_is_refused_where_it_cannot_be_written_or_applied() {
    let dir = shm_dir();
    let d = dir.path().display().to_string();
    assert_refused(&[
        (&["run", "-t", "mem:1m", "--time", "1s", "--hdr-log", &d], "--hdr-log"),
        (&["lab", "cache", "--hdr-log", "{dir}/x.hdr"], "--hdr-log"),
    ]);
    assert!(!dir.path().join("x.hdr").exists());
}
