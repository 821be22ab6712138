//! io_uring polling: `--sqpoll[=CPU]` runs with a kernel submission poller (seen
//! as the `iou-sqp-PID` thread of the run, pinned where asked) on a file and on a
//! loop device and completes its I/O; `--poll` and impossible settings are refused
//! before anything runs, with the reason.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::require_root;

/// The SQ poller threads of process `pid`: (tid, Cpus_allowed_list).
fn sq_pollers(pid: u32) -> Vec<(String, String)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        if comm.starts_with("iou-sqp") {
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let cpus = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap_or("").trim().to_string();
            out.push((t.file_name().to_string_lossy().into_owned(), cpus));
        }
    }
    out
}

/// Runs lunmark on `target` with `extra` flags for 2 s, watching its threads.
/// Returns (the pollers seen, the result JSON).
fn run_watching(target: &str, extra: &[&str], dir: &Path) -> (Vec<(String, String)>, serde_json::Value) {
    let json = dir.join(format!("r-{}.json", rand_suffix()));
    let mut child = lunmark()
        .args(["run", "-q", "--target", target, "--size", "64m", "--read", "100", "--qd", "8", "--time", "2s", "--ramp", "0"])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lunmark");
    let mut seen = Vec::new();
    let start = Instant::now();
    while seen.is_empty() && start.elapsed() < Duration::from_secs(10) && child.try_wait().unwrap().is_none() {
        seen = sq_pollers(child.id());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Looked at again mid-run: a poller is pinned by the thread itself once it
    // starts, and the ring that filled a new file may still be ending.
    std::thread::sleep(Duration::from_millis(700));
    if child.try_wait().unwrap().is_none() {
        seen = sq_pollers(child.id());
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (seen, read_json(&json))
}

#[test]
fn sqpoll_runs_on_a_file_and_a_loop_device_with_a_pinned_poller() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 64 << 20);
    let file = dir.path().join("data");
    for target in [file.to_str().unwrap(), dev.path.to_str().unwrap()] {
        let before = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
        let (pollers, r) = run_watching(target, &["--sqpoll=0"], dir.path());
        assert_eq!(pollers.len(), 1, "{target}: one worker, one SQ poller thread: {pollers:?}");
        assert_eq!(pollers[0].1, "0", "{target}: the poller is pinned to CPU 0 (--sqpoll=0)");
        let s = &r["points"][0]["summary"];
        assert!(s["ios_read"].as_u64().unwrap() > 1000, "{target}: I/O completed: {s}");
        assert_eq!(r["workload"]["polling"]["sqpoll"], 0, "the result records --sqpoll=0");
        if target == dev.path.to_str().unwrap() {
            let after = dev.stat();
            let reads_before: u64 = before.split_whitespace().next().unwrap().parse().unwrap();
            // Within 1%, as in core's kernel-count test (the block layer may merge a few).
            let (kernel, ours) = (after.0 - reads_before, s["ios_read"].as_u64().unwrap());
            assert!(kernel as f64 >= 0.99 * ours as f64, "the kernel saw the reads: kernel {kernel}, lunmark {ours}");
        }
    }
    // Without --sqpoll there is no poller: the check above can fail.
    let (pollers, r) = run_watching(file.to_str().unwrap(), &[], dir.path());
    assert!(pollers.is_empty(), "{pollers:?}");
    assert!(r["workload"].get("polling").is_none(), "no polling recorded when none was asked for");
    // --sqpoll alone: a poller wherever the scheduler puts it.
    let (pollers, r) = run_watching(file.to_str().unwrap(), &["--sqpoll"], dir.path());
    assert_eq!(pollers.len(), 1, "{pollers:?}");
    assert_eq!(r["workload"]["polling"]["sqpoll"], "any");
}

#[test]
fn poll_is_refused_on_a_loop_device_and_a_file_with_the_reason() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 64 << 20);
    let before = dev.stat();
    let out = run(&["run", "-q", "--target", dev.path.to_str().unwrap(), "--read", "100", "--poll", "--time", "1s", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("/sys/block/{}/queue/io_poll is 0", dev.name())), "{err}");
    assert!(err.contains("loop devices never do") && err.contains("Drop --poll") && err.contains("--sqpoll"), "{err}");
    assert_eq!(err.matches("io_poll").count(), 1, "said once: {err}");
    assert_eq!(dev.stat(), before, "nothing ran");
    let file = dir.path().join("data");
    let err = stderr(&run(&["run", "-q", "--target", file.to_str().unwrap(), "--poll", "--dry-run"]));
    assert!(err.contains("not a block device") || err.contains("does not exist yet"), "{err}");
    assert!(!file.exists(), "the refused run created nothing");
}

#[test]
fn impossible_sqpoll_settings_are_refused_before_the_run() {
    let dir = shm_dir();
    let file = dir.path().join("data");
    let f = file.to_str().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["--target", f, "--sqpoll=4095"], &["--sqpoll=4095", "CPU 4095 is not one this process may run on", "allowed: "]),
        (&["--target", f, "--sqpoll=x1"], &["--sqpoll", "'x1' is not a CPU number"]),
        (&["--target", f, "--sqpoll", "--engine", "psync"], &["psync engine", "--engine io_uring"]),
        (&["--target", "mem:64m", "--sqpoll"], &["mem engine", "drop --sqpoll"]),
        (&["--target", "null:64m", "--poll"], &["null engine", "drop --poll"]),
    ];
    for (args, wanted) in cases {
        let out = run(&[&["run", "-q", "--time", "1s", "--ramp", "0"], *args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        for w in *wanted {
            assert!(err.contains(w), "{args:?}: wanted '{w}' in: {err}");
        }
    }
    assert!(!file.exists(), "no refused run created its file");
}

#[test]
fn a_profile_carries_sqpoll_and_the_dry_run_shows_it() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "name = \"p\"\ndescription = \"d\"\nsqpoll = 1\n[[phases]]\nname = \"main\"\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 4\n[[phases.groups.access]]\nshare = 100\nbs = \"4k\"\nread = 100\nrandom = 100\n",
    )
    .unwrap();
    let file = dir.path().join("data");
    // A file lunmark would create needs its size, in the dry run as in the run.
    let out = run(&["run", "--profile-file", profile.to_str().unwrap(), "--target", file.to_str().unwrap(), "--size", "1m", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("polling: submission queue polled by a kernel thread on CPU 1"), "{text}");
    // The flag replaces the profile's CPU.
    let out = run(&[
        "run",
        "--profile-file",
        profile.to_str().unwrap(),
        "--target",
        file.to_str().unwrap(),
        "--size",
        "1m",
        "--sqpoll=0",
        "--dry-run",
    ]);
    assert!(stdout(&out).contains("kernel thread on CPU 0"), "{}", stdout(&out));
}
