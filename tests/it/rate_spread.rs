//! A paced worker (a rate, Poisson arrivals, think time) spreads its I/Os over
//! its targets as an unpaced one does, and a sweep whose file target is
//! deleted or replaced between points stops instead of going on with another
//! file.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use lunmark::trace::load_trace;
use serde_json::Value;

use super::common::*;

/// Runs three `mem:` targets with `args` for a second, no ramp; returns the
/// result and the target index of every traced I/O.
fn three_targets(args: &[&str]) -> (Value, Vec<u16>) {
    let dir = shm_dir();
    let (json, trace) = (dir.path().join("r.json"), dir.path().join("io.trace"));
    let out = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:16m", "-t", "mem:16m", "-t", "mem:16m", "--read", "50"])
        .args(["--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap(), "--trace", trace.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let traced = load_trace(&trace).unwrap().1.iter().map(|r| r.target).collect();
    (read_json(&json), traced)
}

/// Each target's measured I/Os, from `points[0].targets[]`.
fn per_target(result: &Value) -> Vec<u64> {
    result["points"][0]["targets"].as_array().unwrap().iter().map(|t| t["ios"].as_u64().unwrap()).collect()
}

/// Asserts the counts are alike: within 3% of their mean, or 2 for small totals.
fn assert_even(counts: &[u64], what: &str) {
    assert_eq!(counts.len(), 3, "{what}: three targets: {counts:?}");
    let (min, max) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
    assert!(min > 0, "{what}: every target gets I/O: {counts:?}");
    assert!((max - min) as f64 <= (mean * 0.03).max(2.0), "{what}: I/Os spread evenly over the targets: {counts:?}");
}

/// The I/Os of each of the three targets in a trace.
fn traced_per_target(targets: &[u16]) -> Vec<u64> {
    (0..3).map(|t| targets.iter().filter(|&&x| x == t).count() as u64).collect()
}

/// At 500 IOPS a RAM target answers each I/O before the next is due: the slot
/// freed last was reused first, and every I/O went to the first target
/// (500 / 0 / 0). At 5000 the spread was uneven (2728 / 1433 / 839).
#[test]
fn a_rate_spreads_a_workers_ios_evenly_over_its_targets() {
    for rate in ["500", "5000"] {
        let (result, traced) = three_targets(&["--rate", rate]);
        let counts = per_target(&result);
        assert_even(&counts, &format!("--rate {rate}"));
        let total: u64 = counts.iter().sum();
        let asked: u64 = rate.parse().unwrap();
        assert!(total.abs_diff(asked) <= asked / 20, "--rate {rate}: the rate still holds: {total} I/Os");
        assert_even(&traced_per_target(&traced), &format!("--rate {rate}, the trace"));
    }
}

/// Think time and Poisson arrivals issue from idle slots too.
#[test]
fn think_time_and_poisson_arrivals_spread_evenly_over_the_targets() {
    for args in [&["--thinktime", "1ms"][..], &["--rate", "600", "--arrivals", "poisson"][..]] {
        let (result, _) = three_targets(args);
        assert_even(&per_target(&result), &format!("{args:?}"));
    }
}

/// Two workers sharing three targets at a rate: each spreads its share, and
/// the totals per target stay alike.
#[test]
fn two_paced_workers_spread_evenly_over_shared_targets() {
    let (result, _) = three_targets(&["--rate", "500", "--workers", "2"]);
    assert_even(&per_target(&result), "--rate 500 --workers 2");
    assert_eq!(result["points"][0]["targets"][0]["workers"], 2, "both workers drive every target");
}

/// Starts a sweep of three one-second points on `file` (created and filled by
/// lunmark) with a store of its own; once its first point is stored, `act`
/// runs on the file. Returns the run's output and the stored result.
fn sweep_then(dir: &Path, file: &Path, act: impl FnOnce(&Path)) -> (Output, Value) {
    let store = dir.join("results.db");
    let child = lunmark()
        .env("LUNMARK_STORE", &store)
        .args(["run", "-q", "-t", file.to_str().unwrap(), "--size", "8m", "--read", "50", "--sweep", "qd=1,2,4"])
        .args(["--time", "1s", "--ramp", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stored = || -> Option<Value> {
        let out = lunmark().env("LUNMARK_STORE", &store).args(["results", "list"]).output().ok()?;
        let list = stdout(&out);
        let row = list.lines().find(|l| ["running", "failed", "completed", "interrupted"].iter().any(|s| l.contains(s)))?;
        let id = row.split_whitespace().nth(1)?.to_string();
        let out = lunmark().env("LUNMARK_STORE", &store).args(["results", "export", &id, "--format", "json"]).output().ok()?;
        serde_json::from_slice(&out.stdout).ok()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while stored().is_none_or(|r| r["points"].as_array().is_none_or(|p| p.is_empty())) {
        assert!(Instant::now() < deadline, "the sweep stored its first point within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    act(file);
    let out = child.wait_with_output().unwrap();
    (out, stored().expect("the result is in the store"))
}

/// The points measured before the file went away are kept; the run failed,
/// naming the target.
fn assert_stopped_keeping_point_one(out: &Output, result: &Value, file: &Path, why: &str) {
    let all = format!("{}{}", stdout(out), stderr(out));
    assert!(!out.status.success(), "the run fails: {all}");
    assert_eq!(result["status"], "failed", "{all}");
    let reason = result["status_reason"].as_str().unwrap();
    assert!(reason.contains(&format!("{}: ", file.display())) && reason.contains(why), "names the target and why: {reason}");
    assert!(all.contains(why), "the user is told: {all}");
    let points = result["points"].as_array().unwrap();
    // Deleted while point 2 ran (its I/O went to the file it opened): point 3 stops.
    assert!((1..3).contains(&points.len()), "the points before the deletion are kept: {}", points.len());
    assert_eq!(points[0]["params"]["qd"], 1);
    assert!(points[0]["summary"]["iops"].as_f64().unwrap() > 0.0);
}

/// Before: the next point created and filled a new file and the run ended
/// `completed`, with no word of it.
#[test]
fn a_sweep_whose_file_target_is_deleted_stops_and_keeps_its_points() {
    let dir = shm_dir();
    let file = dir.path().join("del.dat");
    let (out, result) = sweep_then(dir.path(), &file, |f| std::fs::remove_file(f).unwrap());
    assert_stopped_keeping_point_one(&out, &result, &file, "was deleted or renamed");
    assert!(!file.exists(), "the file is not created again");
}

/// A file put in its place (same size, same name) is another file all the same.
#[test]
fn a_sweep_whose_file_target_is_replaced_stops_and_keeps_its_points() {
    let dir = shm_dir();
    let file = dir.path().join("swap.dat");
    let other = dir.path().join("other.dat");
    let (out, result) = sweep_then(dir.path(), &file, |f| {
        std::fs::copy(f, &other).unwrap();
        std::fs::rename(&other, f).unwrap();
    });
    assert_stopped_keeping_point_one(&out, &result, &file, "the path now names another file");
}

/// The thread id of the run's first worker, once there is one other than `not`.
fn worker_tid(pid: u32, not: Option<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.flatten().collect::<Vec<_>>()).unwrap_or_default();
        let w0 = tasks.iter().find(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "lunmark-w0"));
        if let Some(tid) = w0.map(|t| t.file_name().to_string_lossy().to_string()).filter(|t| Some(t) != not.as_ref()) {
            return tid;
        }
        assert!(Instant::now() < deadline, "no new worker thread within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Deleted while repeat 2 of 3 runs: repeat 3 cannot open it, and the point
/// keeps its 2 finished repeats (they were dropped, with a reason saying
/// points were kept).
#[test]
fn a_file_target_deleted_between_repeats_keeps_the_finished_ones() {
    let dir = shm_dir();
    let file = dir.path().join("rep.dat");
    let json = dir.path().join("r.json");
    let child = lunmark()
        .env("LUNMARK_STORE", dir.path().join("results.db"))
        .args(["run", "-q", "-t", file.to_str().unwrap(), "--size", "8m", "--read", "100", "--repeat", "3"])
        .args(["--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = worker_tid(child.id(), None);
    worker_tid(child.id(), Some(first));
    std::fs::remove_file(&file).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "failed");
    let reason = r["status_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("point 1, repeat 3 of 3: ") && reason.ends_with("the 2 finished repeats of this point are kept"),
        "{reason}"
    );
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{}", r["points"]);
    assert_eq!(points[0]["repeats"]["count"], 2, "{}", points[0]["repeats"]);
    assert!(!file.exists(), "the file is not created again");
}

/// A rate too low to pace (`--rate 1e-300`, `rate = 1e-300` in a profile) or
/// a replay speed out of range is refused with the field and the bound, by
/// the dry run and the run alike, never a panic (exit 101).
#[test]
fn extreme_rates_are_refused_before_anything_runs() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    std::fs::write(&profile, "name = \"s\"\ndescription = \"d\"\n[[phases]]\nname = \"slow\"\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 1\nrate = 1e-300\naccess = [{ share = 100, bs = \"4k\", read = 100, random = 100 }]\n")
        .unwrap();
    let p = profile.to_str().unwrap();
    for args in [&["--rate", "1e-300"][..], &["--profile-file", p]] {
        for dry in [false, true] {
            let mut all = vec!["run", "--no-store", "-t", "mem:16m", "--time", "1s", "--ramp", "0"];
            all.extend_from_slice(args);
            if dry {
                all.push("--dry-run");
            }
            let out = run(&all);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{all:?}: {err}");
            assert!(err.contains("rate 1e-300") && err.contains("at least 0.001"), "{all:?}: {err}");
        }
    }
    let out = run(&["run", "--no-store", "-t", "mem:16m", "--replay", p, "--replay-speed", "1e-300", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("replay speed"), "{}", stderr(&out));
}
