//! Trial fixes (FX2): a point stopped in its ramp measured nothing and is not
//! kept as a point of zeros; the result, interrupted, keeps the points that finished.

use std::process::Stdio;
use std::time::Duration;

use crate::common::*;

/// Starts `lunmark run` with `args` (results in `store`, JSON to `json`),
/// sends SIGINT after `after`, and waits for it.
fn interrupted_run(args: &[&str], store: &std::path::Path, json: &std::path::Path, after: Duration) -> std::process::Output {
    let child = lunmark()
        .args(["--store", store.to_str().unwrap(), "run", "-t", "mem:16m", "--json", json.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: kill(2) on the PID of the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait_with_output().unwrap()
}

/// Ctrl-C in the ramp of a single point: no point of zeros ("measured 0.00s",
/// 0 IOPS, p99 0.0); the result is interrupted, with no point, and is listed.
#[test]
fn a_point_stopped_in_its_ramp_is_not_kept_as_zeros() {
    let dir = shm_dir();
    let (store, json) = (dir.path().join("store"), dir.path().join("r.json"));
    let out = interrupted_run(&["--ramp", "5s", "--time", "1s"], &store, &json, Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["points"].as_array().map(Vec::len), Some(0), "{}", r["points"]);
    let text = stdout(&out);
    assert!(text.contains("status: Interrupted") && !text.contains("measured 0.00"), "{text}");
    let listed = run(&["--store", store.to_str().unwrap(), "results", "list"]);
    assert!(listed.status.success(), "{}", stderr(&listed));
}

/// `--sweep qd=1,2,4 --ramp 2s`, Ctrl-C in point 2's ramp: point 1 is kept,
/// point 2 (which measured nothing) is not.
#[test]
fn a_sweep_stopped_in_a_later_ramp_keeps_the_finished_points_only() {
    let dir = shm_dir();
    let (store, json) = (dir.path().join("store"), dir.path().join("r.json"));
    let args = ["--sweep", "qd=1,2,4", "--ramp", "2s", "--time", "1s"];
    // Point 1 ends about 3 s in; point 2's ramp runs until about 5 s.
    let out = interrupted_run(&args, &store, &json, Duration::from_millis(4000));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "interrupted");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{}", r["points"]);
    assert!(points[0]["summary"]["iops"].as_f64().unwrap() > 0.0 && points[0]["summary"]["duration_s"].as_f64().unwrap() > 0.9);
}

/// `--repeat 3`, Ctrl-C in the second repeat's measured second: the point is
/// the first, finished repeat (a whole second), not a fraction of the second;
/// the reason says which repeat was cut short.
#[test]
fn a_repeat_cut_short_keeps_the_finished_repeats() {
    let dir = shm_dir();
    let (store, json) = (dir.path().join("store"), dir.path().join("r.json"));
    let args = ["--repeat", "3", "--ramp", "0", "--time", "1s"];
    let out = interrupted_run(&args, &store, &json, Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "interrupted");
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{}", r["points"]);
    let measured = points[0]["summary"]["duration_s"].as_f64().unwrap();
    assert!(measured > 0.9, "the finished repeat's second, not a fragment: {measured}");
    let reason = r["status_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("during repeat 2 of 3") && reason.contains("1 finished repeat of this point is kept"), "{reason}");
}
