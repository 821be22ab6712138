//! Leftovers of issues 14 and 15 found by a user trial: odd `--cpus` lists and
//! bad `--dist` layout suffixes are refused naming the flag, the value and what
//! is allowed; `--trace` with `--ios N` holds exactly the I/Os the run counted.

use std::path::Path;

use crate::common::*;

/// I/O records of a lunmark trace (time-gap records left out).
fn trace_records(path: &Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"LMTRACE1");
    bytes[16..].chunks_exact(20).filter(|r| r[4] != 2).count()
}

/// Runs `args` (a run that must be refused) and returns its error text, checked
/// to be said once, with exit code 1, before anything was created.
fn refused(args: &[&str], says: &str, never: &Path) -> String {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: wanted '{says}' in: {err}");
    assert_eq!(err.matches(says).count(), 1, "said once: {err}");
    assert!(!never.exists(), "{args:?}: nothing runs, no file is created");
    err
}

#[test]
fn odd_cpu_lists_name_the_flag_the_value_and_what_is_allowed() {
    let dir = shm_dir();
    let file = dir.path().join("never-created.dat");
    let f = file.to_str().unwrap();
    let allowed = "write CPU numbers from 0 and ranges LOW-HIGH";
    for (flag, says) in [
        // A user's trial: this said "'' is not a CPU number".
        ("--cpus=-1", "--cpus -1: '-1' is not a CPU number: CPUs are numbered from 0"),
        ("--cpus=0,,1", "--cpus 0,,1: an entry between two commas (or at either end) is empty"),
        ("--cpus=2-", "--cpus 2-: the range '2-' has no end"),
        ("--cpus=3-1", "--cpus 3-1: the range 3-1 runs backwards; write it low to high, 1-3"),
    ] {
        let err = refused(&["run", "-q", "--no-store", "-t", f, "--size", "1m", "--time", "1s", flag], says, &file);
        assert!(err.contains(allowed) || flag == "--cpus=3-1", "{flag}: {err}");
    }
    // Beyond the host: what is allowed is the online list; a long range is shown as one.
    let err =
        refused(&["run", "-q", "--no-store", "-t", f, "--size", "1m", "--cpus", "99999"], "--cpus 99999: CPU 99999 is not online", &file);
    assert!(err.contains("(online: "), "{err}");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    if online.trim() == "0-1" {
        refused(
            &["run", "-q", "--no-store", "-t", f, "--size", "1m", "--cpus", "0-63"],
            "CPU 2-63 is not online on this host (online: 0-1)",
            &file,
        );
    }
}

#[test]
fn a_bad_dist_layout_suffix_names_the_two_that_fit() {
    let dir = shm_dir();
    let file = dir.path().join("never-created.dat");
    let f = file.to_str().unwrap();
    for (dist, default) in [
        ("zipf:0.9:foo", "zipf's default is scattered"),
        ("pareto:0.8:foo", "pareto's default is scattered"),
        ("normal:10%:foo", "normal's default is contiguous"),
        ("zoned:80/20:20/80:foo", "zoned's default is contiguous"),
        ("hotband:10%/80%/60s:foo", "hotband's default is contiguous"),
    ] {
        let says = format!("--dist: '{dist}': the layout suffix ':foo' is not one");
        let err = refused(&["run", "-q", "--no-store", "-t", f, "--size", "1m", "--time", "1s", "--dist", dist], &says, &file);
        assert!(err.contains("end with :scattered") && err.contains("or :contiguous") && err.contains(default), "{dist}: {err}");
    }
}

/// `--ios N` issues no I/O past the N-th: the trace holds exactly the I/Os the
/// result counts, per worker, at any depth (before, up to QD-1 more that were
/// still in flight when the N-th completed).
#[test]
fn a_trace_of_an_ios_run_holds_exactly_the_counted_ios() {
    let dir = shm_dir();
    for (workers, qd) in [("1", "32"), ("2", "16"), ("1", "1")] {
        let trace = dir.path().join(format!("t-{workers}-{qd}"));
        let json = dir.path().join("r.json");
        let out = run(&[
            "run",
            "-q",
            "--no-store",
            "-t",
            "mem:16m",
            "--bs",
            "4k",
            "--read",
            "70",
            "--workers",
            workers,
            "--qd",
            qd,
            "--ios",
            "1000",
            "--ramp",
            "0",
            "--trace",
            trace.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let s = &read_json(&json)["points"][0]["summary"];
        let counted = s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap();
        let w: usize = workers.parse().unwrap();
        assert_eq!(counted, 1000 * w as u64, "{workers} workers at QD {qd}: {s}");
        assert_eq!(trace_records(&trace), 1000 * w, "{workers} workers at QD {qd}: one record per counted I/O");
    }
}

/// `lab cache` without a 0% point (here with --flush, as in the user's trial)
/// predicts IOPS from the point's own queue: a figure, never NaN, near the
/// measured IOPS since the predicted hit ratio stands beside the measured one.
#[test]
fn the_cache_lab_predicts_iops_without_a_zero_point() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let labs = shm_dir();
    let out = lunmark()
        .env("LUNMARK_LAB_DIR", labs.path())
        .args(["--store", store.to_str().unwrap(), "lab", "cache", "--lun-size", "16m", "--read-delay", "2ms", "--write-delay", "1ms"])
        .args(["--cache-sizes", "50", "--time", "1s", "--ramp", "1s", "-q", "--flush", "4"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(!text.contains("NaN"), "{text}");
    let row: Vec<&str> = text
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("50"))
        .unwrap_or_else(|| panic!("no row: {text}"))
        .split_whitespace()
        .filter(|t| *t != "│")
        .collect();
    let (measured, predicted): (f64, f64) = (row[3].parse().unwrap(), row[9].parse().unwrap());
    assert!(measured > 0.0 && predicted > 0.5 * measured && predicted < 2.0 * measured, "{row:?}");
    assert_eq!((row[4], row[5]), ("-", "-"), "no 0% point: no change against it");
    assert_lab_left_nothing(labs.path());
}
