//! Meeting users where they are: fio-shaped JSON read by the same Python a
//! fio script uses, results listed and exported for scripts, and the smaller
//! things a new user hits (a sweep that gives the setting, the workload
//! restated, fio's flag names and a profile name cut short).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// What a script written for fio does with fio's JSON: the first job's read
/// IOPS, its p99 completion latency (ns) and its bandwidth (KiB/s), printed as JSON.
const FIO_READER: &str = r#"
import json, sys
doc = json.load(open(sys.argv[1]))
job = doc["jobs"][0]
read = job["read"]
print(json.dumps({
    "iops": read["iops"],
    "p99_ns": read["clat_ns"]["percentile"]["99.000000"],
    "p50_ns": read["clat_ns"]["percentile"]["50.000000"],
    "mean_ns": read["clat_ns"]["mean"],
    "bw_kib": read["bw"],
    "io_bytes": read["io_bytes"],
    "runtime_ms": read["runtime"],
    "total_ios": read["total_ios"],
    "write_ios": job["write"]["total_ios"],
    "rw": job["job options"].get("rw"),
    "iodepth": job["job options"].get("iodepth"),
}))
"#;

fn read_like_a_fio_script(dir: &Path, file: &Path) -> Value {
    let script = dir.join("reader.py");
    std::fs::write(&script, FIO_READER).unwrap();
    let out = Command::new("python3").arg(&script).arg(file).output().expect("python3");
    assert!(out.status.success(), "the fio reader failed on {}: {}", file.display(), stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn fio_json_reads_like_fios_own_and_holds_lunmarks_figures() {
    let dir = shm_dir();
    let data = dir.path().join("data");
    // fio itself, on a file of this test: the reader works on the real thing.
    let fio_json = dir.path().join("fio.json");
    let fio = Command::new("fio")
        .args(["--name=x", "--size=16m", "--rw=randread", "--bs=4k", "--iodepth=4", "--ioengine=psync", "--runtime=1"])
        .args(["--time_based", "--output-format=json"])
        .arg(format!("--filename={}", data.display()))
        .arg(format!("--output={}", fio_json.display()))
        .output()
        .expect("fio");
    assert!(fio.status.success(), "{}", stderr(&fio));
    let from_fio = read_like_a_fio_script(dir.path(), &fio_json);
    assert!(from_fio["iops"].as_f64().unwrap() > 0.0 && from_fio["p99_ns"].as_u64().unwrap() > 0, "{from_fio}");

    // lunmark on the same file: --output-format fio-json prints fio's shape on stdout, the summary on stderr.
    let store = dir.path().join("results.db");
    let out = with_store(
        &store,
        &[
            "run",
            "-q",
            "-t",
            data.to_str().unwrap(),
            "--bs",
            "4k",
            "--read",
            "100",
            "--random",
            "100",
            "--qd",
            "4",
            "--time",
            "1s",
            "--ramp",
            "0",
            "--output-format",
            "fio-json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("workload: bs 4k, 100% read, 100% random, QD 4"), "the summary goes to stderr: {}", stderr(&out));
    let printed = dir.path().join("printed.json");
    std::fs::write(&printed, &out.stdout).unwrap();
    let id = saved_id(&out);
    let from_lunmark = read_like_a_fio_script(dir.path(), &printed);

    // The figures are lunmark's own, in fio's units.
    let model: Value = serde_json::from_slice(&with_store(&store, &["results", "export", &id]).stdout).unwrap();
    let s = &model["points"][0]["summary"];
    // Equal to the last bit but for JSON's text round trip (serde_json's default
    // parser may land one ulp away): 1e-12 relative.
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs());
    assert!(same(from_lunmark["iops"].as_f64().unwrap(), s["read_iops"].as_f64().unwrap()), "{from_lunmark} {s}");
    let ns = |us: &Value| (us.as_f64().unwrap() * 1000.0).round() as u64;
    assert_eq!(from_lunmark["p99_ns"].as_u64().unwrap(), ns(&s["latency_us"]["read"]["p99"]));
    assert_eq!(from_lunmark["p50_ns"].as_u64().unwrap(), ns(&s["latency_us"]["read"]["p50"]));
    assert_eq!(from_lunmark["io_bytes"].as_u64().unwrap(), s["bytes_read"].as_u64().unwrap());
    assert_eq!(from_lunmark["total_ios"].as_u64().unwrap(), s["ios_read"].as_u64().unwrap());
    assert_eq!(from_lunmark["bw_kib"].as_u64().unwrap(), (s["read_mbps"].as_f64().unwrap() * 1e6).round() as u64 / 1024);
    assert_eq!(from_lunmark["runtime_ms"].as_u64().unwrap(), (s["duration_s"].as_f64().unwrap() * 1000.0).round() as u64);
    assert_eq!(from_lunmark["write_ios"], 0);
    assert_eq!((from_lunmark["rw"].as_str(), from_lunmark["iodepth"].as_str()), (Some("randread"), Some("4")));

    // The same keys hold the same kind of value as fio's: a script needs no second path.
    for key in ["iops", "p99_ns", "p50_ns", "mean_ns", "bw_kib", "io_bytes", "runtime_ms", "total_ios"] {
        assert_eq!(from_fio[key].is_u64(), from_lunmark[key].is_u64(), "{key}: fio {} lunmark {}", from_fio[key], from_lunmark[key]);
    }
    // The stored result exports to the same document the run printed, and
    // --json FILE with --output-format fio-json writes that shape to FILE.
    let exported = with_store(&store, &["results", "export", &id, "--format", "fio-json"]);
    assert_same_json(&serde_json::from_slice(&exported.stdout).unwrap(), &serde_json::from_slice(&out.stdout).unwrap());
    let file = dir.path().join("as-file.json");
    let out = with_store(
        &store,
        &["run", "-q", "-t", "mem:16m", "--time", "300ms", "--ramp", "0", "--json", file.to_str().unwrap(), "--output-format", "fio-json"],
    );
    assert!(out.status.success() && out.stdout.starts_with(b"lunmark "), "summary on stdout: {}", stderr(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(doc["fio version"].as_str().unwrap().starts_with("lunmark-") && doc["jobs"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
}

/// The same document: same keys, same integers, floats within 1e-12 relative.
fn assert_same_json(a: &Value, b: &Value) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
            x.iter().for_each(|(k, v)| assert_same_json(v, &y[k]));
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).for_each(|(v, w)| assert_same_json(v, w));
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= 1e-12 * x.abs().max(y.abs()), "{x} != {y}");
        }
        _ => assert_eq!(a, b),
    }
}

#[test]
fn output_formats_other_than_normal_json_and_fio_json_are_refused() {
    let out = run(&["run", "-t", "mem:16m", "--output-format", "xml", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("'xml'") && err.contains("normal") && err.contains("fio-json"), "{err}");
    // --dry-run says where the JSON would go, in which shape.
    let out = run(&["run", "-t", "mem:16m", "--output-format", "fio-json", "--dry-run"]);
    assert!(stdout(&out).contains("output: fio-json (fio's JSON shape) to stdout, the summary on stderr"), "{}", stdout(&out));
    let out = run(&["run", "-t", "mem:16m", "--output-format", "json", "--json", "r.json", "--dry-run"]);
    assert!(stdout(&out).contains("output: json (the result model) to r.json, the summary on stdout"), "{}", stdout(&out));
    let out = run(&["lab", "protocols", "--output-format", "json"]);
    assert!(!out.status.success() && stderr(&out).contains("drop --output-format"), "{}", stderr(&out));
}

/// Three results with labels, profiles and targets of their own, in a new store.
fn three_results(dir: &Path) -> (PathBuf, Vec<String>) {
    let store = dir.join("results.db");
    let mut ids = Vec::new();
    for (label, extra) in [
        // 4k gives the most IOPS, 64k the most MB/s: the headline must not mix them.
        ("fc port 1", vec!["-t", "mem:16m", "--sweep", "qd=1,8", "--sweep", "bs=4k,64k"]),
        ("fc port 2", vec!["max-iops", "-t", "null:16m"]),
        ("iscsi lab", vec!["-t", "mem:16m", "--read", "100"]),
    ] {
        let out = with_store(&store, &[&["run", "-q", "--time", "300ms", "--ramp", "0", "--label", label][..], &extra].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        ids.push(saved_id(&out));
    }
    (store, ids)
}

#[test]
fn results_list_filters_and_prints_for_scripts() {
    let dir = shm_dir();
    let (store, ids) = three_results(dir.path());
    let list = |args: &[&str]| -> Value {
        let out = with_store(&store, &[&["results", "list", "--format", "json"][..], args].concat());
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let ids_of = |v: &Value| v.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(ids_of(&list(&[])), ids);
    assert_eq!(ids_of(&list(&["--label", "fc*"])), ids[..2]);
    assert_eq!(ids_of(&list(&["--profile", "max-iops"])), ids[1..2]);
    assert_eq!(ids_of(&list(&["--target", "null:*"])), ids[1..2]);
    assert_eq!(ids_of(&list(&["--last", "2"])), ids[1..]);
    assert_eq!(ids_of(&list(&["--since", "2000-01-01", "--label", "*lab"])), ids[2..]);
    assert!(ids_of(&list(&["--since", "2999-01-01T00:00:00Z"])).is_empty());

    // The headline figures are all of one point: the one with the highest IOPS.
    let all = list(&[]);
    let first = &all[0]["headline"];
    let model: Value = serde_json::from_slice(&with_store(&store, &["results", "export", &ids[0]]).stdout).unwrap();
    let points = model["points"].as_array().unwrap();
    let best = (0..points.len())
        .max_by(|a, b| points[*a]["summary"]["iops"].as_f64().unwrap().total_cmp(&points[*b]["summary"]["iops"].as_f64().unwrap()));
    let best = best.unwrap();
    assert_eq!(first["point"].as_u64().unwrap() as usize, best + 1);
    let s = &points[best]["summary"];
    assert_eq!(first["iops"], s["iops"]);
    assert_eq!(first["mbps"], s["mbps"]);
    assert_eq!(first["p99_us"], s["latency_us"]["all"]["p99"]);
    // The figures above would have caught MB/s taken from another point only if
    // another point moved more: usual for 64k on mem:, but timing (on a loaded
    // host a 64k point of 300 ms moved less than the best 4k one). Said, not failed.
    let most_mbps = points.iter().map(|p| p["summary"]["mbps"].as_f64().unwrap()).fold(0.0, f64::max);
    if first["mbps"].as_f64().unwrap() >= most_mbps {
        eprintln!("note: the headline point also moved the most MB/s this time, so the MB/s check could not tell points apart: {first}");
    }

    let csv = stdout(&with_store(&store, &["results", "list", "--format", "csv", "--label", "fc*"]));
    assert_eq!(csv.lines().count(), 3, "header and two results: {csv}");
    assert!(csv.starts_with("id,started_at,status,label,profile,targets,points,headline_point"), "{csv}");

    // The table fits 100 columns, measured on what is printed.
    let table = stdout(&with_store(&store, &["results", "list"]));
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "{widest} columns:\n{table}");
    assert!(ids.iter().all(|id| table.contains(id.as_str())), "{table}");

    // A date that is not RFC 3339 is refused with an example.
    let out = with_store(&store, &["results", "list", "--since", "yesterday"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--since 'yesterday'") && stderr(&out).contains("2026-11-23T14:00:00Z"), "{}", stderr(&out));
    let out = with_store(&store, &["results", "list", "--label", "nothing*"]);
    assert!(out.status.success() && stdout(&out).contains("no result in") && stdout(&out).contains("--label 'nothing*'"));
}

#[test]
fn several_results_export_at_once() {
    let dir = shm_dir();
    let (store, ids) = three_results(dir.path());
    let out = with_store(&store, &["results", "export", &ids[0], &ids[2]]);
    assert!(out.status.success(), "{}", stderr(&out));
    let arr: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(arr.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect::<Vec<_>>(), [&ids[0], &ids[2]]);

    // CSV: one row per point of all of them, a column per parameter and metric, reads and writes apart.
    let csv = stdout(&with_store(&store, &["results", "export", &ids[0], &ids[1], &ids[2], "--format", "csv"]));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let points: usize = [&ids[0], &ids[1], &ids[2]]
        .iter()
        .map(|id| {
            let v: Value = serde_json::from_slice(&with_store(&store, &["results", "export", id]).stdout).unwrap();
            v["points"].as_array().unwrap().len()
        })
        .sum();
    assert_eq!(rows.len(), points, "{csv}");
    for col in ["param_qd", "qd", "bs", "read_pct", "read_iops", "write_iops", "lat_read_p99_9_us", "lat_write_p99_99_us", "lat_all_p50_us"]
    {
        assert!(header.contains(&col), "{col} missing: {header:?}");
    }
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!((rows[0][at("param_qd")], rows[0][at("param_bs")]), ("1", "4k"));
    assert_eq!((rows[3][at("qd")], rows[3][at("bs")]), ("8", "64k"));
    assert!(rows.iter().all(|r| r.len() == header.len()), "{csv}");

    let fio = stdout(&with_store(&store, &["results", "export", &ids[0], &ids[1], "--format", "fio-json"]));
    let fio: Value = serde_json::from_str(&fio).unwrap();
    assert_eq!(fio.as_array().unwrap().len(), 2);
    assert_eq!(fio[0]["jobs"].as_array().unwrap().len(), 4, "one job per point");
    let out = with_store(&store, &["results", "export", &ids[0], "nothere"]);
    assert!(!out.status.success() && stderr(&out).contains("no result with id 'nothere'"), "{}", stderr(&out));
}

#[test]
fn a_sweep_of_bs_gives_the_transfer_size_so_the_default_profile_stays_out() {
    let out = run(&["run", "-t", "mem:128M", "--sweep", "qd=1,4", "--sweep", "bs=4k,8k", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().filter(|l| l.starts_with("point ")).count(), 4, "{text}");
    assert!(text.contains("point 4/4: bs=8k qd=4") && !text.contains("phase="), "{text}");
    for (key, value) in [("read", "0,100"), ("random", "0,100")] {
        let sweep = format!("{key}={value}");
        let out = run(&["run", "-t", "mem:128M", "--sweep", &sweep, "--dry-run"]);
        assert_eq!(stdout(&out).lines().filter(|l| l.starts_with("point ")).count(), 2, "{}", stdout(&out));
    }
}

#[test]
fn each_point_of_the_summary_restates_its_workload() {
    let out = run(&[
        "run",
        "-t",
        "mem:16m",
        "--no-store",
        "--sweep",
        "qd=1,4",
        "--bs",
        "8k",
        "--read",
        "70",
        "--time",
        "300ms",
        "--ramp",
        "0",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("point 1: qd=1\nworkload: bs 8k, 70% read, 100% random, QD 1, 1 worker, 1 target\n"), "{text}");
    assert!(text.contains("point 2: qd=4\nworkload: bs 8k, 70% read, 100% random, QD 4, 1 worker, 1 target\n"), "{text}");
}

#[test]
fn fio_names_and_short_profile_names_get_lunmarks_names() {
    let out = run(&["run", "-t", "mem:16m", "--iodepth", "32"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--iodepth is fio's option; in lunmark: --qd"), "{}", stderr(&out));
    let out = run(&["run", "-t", "mem:16m", "--numjobs=4"]);
    assert!(stderr(&out).contains("in lunmark: --workers"), "{}", stderr(&out));
    let out = run(&["run", "fcoe", "-t", "mem:16m", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("did you mean 'fcoe-mix'"), "{}", stderr(&out));
}

#[test]
fn lab_cache_does_not_print_the_path_of_a_trace_it_deletes() {
    let (labs, keep) = (shm_dir(), shm_dir());
    let store = keep.path().join("results.db");
    let out = lunmark()
        .env("LUNMARK_LAB_DIR", labs.path())
        .env("LUNMARK_STORE", &store)
        .args(["lab", "cache", "--lun-size", "8m", "--delay", "1ms", "--cache-sizes", "50", "--time", "300ms", "--ramp", "0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // Not quiet, so a trace path would be printed if it were announced.
    assert!(!stderr(&out).contains("recorded in"), "{}", stderr(&out));
    assert_lab_left_nothing(labs.path());
}

/// `--dry-run --json -` said "json to stdout" and printed the plan as text
/// there: a script piping it to a JSON parser failed. The plan is JSON on
/// stdout (each point's values and workload), the text on stderr.
#[test]
fn a_dry_run_with_json_to_stdout_prints_the_plan_as_json() {
    let out = run(&["run", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,4", "--json", "-", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    assert_eq!(plan["dry_run"], true);
    let points = plan["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!((points[0]["params"]["qd"].as_u64(), points[1]["params"]["qd"].as_u64()), (Some(1), Some(4)));
    assert_eq!(points[1]["workload"]["groups"][0]["qd"], 4);
    assert!(stderr(&out).contains("point 2/2: qd=4") && stderr(&out).contains("this dry run's plan as JSON on stdout"), "{}", stderr(&out));
}
