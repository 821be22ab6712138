//! Interrupts and closed pipes: SIGHUP (a closed terminal or ssh session) is
//! treated as SIGTERM (the result kept as interrupted, the scratch file
//! removed); a closed stderr neither panics the run nor stops its remaining
//! points; Ctrl-C while lunmark fills a new file stops within a second.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

/// Waits for `child`, failing the test after `secs` seconds; its output.
fn wait_within(mut child: Child, secs: u64) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            panic!("still running {secs} s after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn only_row(store: &Path) -> serde_json::Value {
    let out = lunmark().arg("--store").arg(store).args(["results", "list", "--format", "json"]).output().unwrap();
    let rows: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    rows[0].clone()
}

/// A run without targets (a scratch file in the working directory) that gets
/// SIGHUP: exit 130, the row saved as interrupted naming SIGHUP, no scratch file left.
#[test]
fn sighup_keeps_the_result_and_removes_the_scratch_file() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let json = dir.path().join("r.json");
    let child = lunmark()
        .current_dir(dir.path())
        .arg("--store")
        .arg(&store)
        .args(["run", "-q", "--size", "16m", "--time", "30s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, libc::SIGHUP);
    let out = wait_within(child, 5);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let row = only_row(&store);
    assert_eq!(row["status"], "interrupted", "{row}");
    let reason = read_json(&json)["status_reason"].as_str().unwrap().to_string();
    assert!(reason.contains("SIGHUP"), "{reason}");
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().contains("scratch")).collect();
    assert!(left.is_empty(), "scratch file left behind: {left:?}");
}

/// `run ... 2>&1 | head -1`: stderr closed from the start. The sweep runs all
/// its points and saves them, without a panic.
#[test]
fn a_closed_stderr_does_not_stop_the_sweep() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let mut child = lunmark()
        .args([
            "run",
            "--no-store",
            "-t",
            "mem:16m",
            "--bs",
            "4k",
            "--read",
            "100",
            "--sweep",
            "qd=1,2,4",
            "--time",
            "1s",
            "--ramp",
            "0",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let out = wait_within(child, 30);
    assert_eq!(out.status.code(), Some(0), "exit {:?}", out.status);
    let r = read_json(&json);
    assert_eq!(r["status"], "completed", "{}", r["status_reason"]);
    assert_eq!(r["points"].as_array().unwrap().len(), 3);
}

/// Ctrl-C while lunmark fills a new 4 GiB file (on disk, seconds of work):
/// the run ends within a second of the signal, as interrupted, and the file
/// it created is removed.
#[test]
fn ctrl_c_during_a_file_fill_stops_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new.dat");
    let store = dir.path().join("s.db");
    let child = lunmark()
        .arg("--store")
        .arg(&store)
        .args(["run", "-q", "-t", file.to_str().unwrap(), "--size", "4g", "--time", "1s", "--ramp", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, libc::SIGINT);
    let sent = Instant::now();
    let out = wait_within(child, 30);
    let took = sent.elapsed();
    assert!(took < Duration::from_millis(1500), "ended {took:?} after Ctrl-C");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!file.exists(), "the half-filled file lunmark created is left behind");
    assert_eq!(only_row(&store)["status"], "interrupted");
}
