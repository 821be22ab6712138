//! Pinning (--cpus, --cpus-policy), per-worker and per-target figures, and the
//! queue depth the workers really held (issue 14 items 3-5).

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;

/// The Cpus_allowed_list of each lunmark worker thread (lunmark-wN) of `pid`, by N.
fn worker_cpu_lists(pid: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return found };
    for t in tasks.flatten() {
        let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
        let Some(n) = comm.trim().strip_prefix("lunmark-w").and_then(|n| n.parse().ok()) else { continue };
        let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
        if let Some(list) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) {
            found.push((n, list.trim().to_string()));
        }
    }
    found.sort();
    found
}

fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// With --cpus-policy split each worker thread is allowed exactly its CPU, as
/// the kernel reports it during the run; the result records the set, each
/// worker's CPU, and the utilization of the pinned CPUs beside the host's.
#[test]
fn split_pins_each_worker_thread_to_its_cpu_during_the_run() {
    let cpus = online_cpus();
    if cpus.len() < 2 {
        eprintln!("skipped: needs two online CPUs");
        return;
    }
    let (a, b) = (cpus[0], cpus[1]);
    let list = format!("{a},{b}");
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:16m", "--bs", "4k", "--workers", "2", "--qd", "4", "--ramp", "0", "--time", "3s"])
        .args(["--cpus", &list, "--cpus-policy", "split", "--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    // A thread exists, named, a moment before it pins itself: look until the lists are as expected.
    let expected = vec![(0, a.to_string()), (1, b.to_string())];
    while Instant::now() < deadline && seen != expected {
        seen = worker_cpu_lists(child.id());
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(seen, expected, "worker threads' Cpus_allowed_list during the run");
    let r = read_json(&json);
    assert_eq!(r["cpus"]["cpus"], serde_json::json!([a, b]));
    assert_eq!(r["cpus"]["policy"], "split");
    let p = &r["points"][0];
    assert_eq!(p["workers"][0]["cpus"], serde_json::json!([a]));
    assert_eq!(p["workers"][1]["cpus"], serde_json::json!([b]));
    let pinned = &p["summary"]["cpu"]["pinned"];
    assert_eq!(pinned["cpus"], list.replace(',', if b == a + 1 { "-" } else { "," }));
    assert_eq!(pinned["per_cpu_pct"].as_array().unwrap().len(), 2);
    // Two workers spinning on mem: keep their CPUs busy.
    assert!(pinned["utilization_pct"].as_f64().unwrap() > 50.0, "{pinned}");
    assert!(pinned["service_demand_us_per_kb"].as_f64().unwrap() > 0.0, "{pinned}");
}

/// With the default policy (shared) every worker may run on every listed CPU.
#[test]
fn shared_lets_every_worker_run_on_the_whole_list() {
    let cpus = online_cpus();
    let one = cpus[cpus.len() - 1].to_string();
    let child = lunmark()
        .args([
            "run",
            "-q",
            "--no-store",
            "-t",
            "mem:16m",
            "--bs",
            "4k",
            "--workers",
            "2",
            "--qd",
            "4",
            "--ramp",
            "0",
            "--time",
            "2s",
            "--cpus",
            &one,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    let expected = vec![(0, one.clone()), (1, one)];
    while Instant::now() < deadline && seen != expected {
        seen = worker_cpu_lists(child.id());
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(seen, expected, "worker threads' Cpus_allowed_list during the run");
}

/// A CPU list that is not one, runs backwards or names a CPU the host does not
/// have is refused before anything runs, saying what was wrong, once.
#[test]
fn bad_cpu_lists_are_refused_before_anything_runs() {
    let dir = shm_dir();
    let file = dir.path().join("never-created.dat");
    let mut cases = vec![
        (vec!["--cpus", "99999"], "CPU 99999 is not online"),
        (vec!["--cpus", "3-1"], "runs backwards"),
        (vec!["--cpus", "x"], "'x' is not a CPU number"),
        (vec!["--cpus", "0", "--cpus-policy", "spread"], "use shared"),
        (vec!["--cpus-policy", "split"], "add --cpus LIST"),
    ];
    if !online_cpus().contains(&99) {
        cases.push((vec!["--cpus", "99"], "CPU 99 is not online"));
    }
    for (flags, says) in cases {
        let mut args = vec!["run", "-q", "--no-store", "-t", file.to_str().unwrap(), "--size", "1m", "--time", "1s"];
        args.extend(&flags);
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert_eq!(err.matches(says).count(), 1, "said once: {err}");
        assert!(!file.exists(), "{flags:?}: nothing runs, no file is created");
        // The dry run refuses it as well, before printing anything.
        args.push("--dry-run");
        let dry = run(&args);
        assert_eq!(dry.status.code(), Some(1), "{flags:?} --dry-run");
        assert!(stdout(&dry).is_empty(), "{}", stdout(&dry));
    }
    let dry = run(&["run", "--dry-run", "-t", "mem:1m", "--workers", "2", "--cpus", "0", "--cpus-policy", "split"]);
    assert!(stdout(&dry).contains("worker 0 on CPU 0, worker 1 on CPU 0"), "{}", stdout(&dry));
}

/// Each worker's I/Os and each target's add up to the total exactly (three
/// workers over two targets of different sizes, one of two groups driving one
/// target alone), and --detail prints both tables, in the run and in `results show`.
#[test]
fn worker_and_target_figures_add_up_to_the_total() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        r#"
name = "two-groups"
description = "two groups over two targets"
targets = ["mem:8m", "mem:4m"]
[[phases]]
name = "main"
[[phases.groups]]
name = "both"
workers = 2
qd = 4
access = [{ share = 100.0, bs = "4k", read = 70.0, random = 100.0 }]
[[phases.groups]]
name = "second"
workers = 1
qd = 2
targets = [1]
access = [{ share = 100.0, bs = "8k", read = 100.0, random = 0.0 }]
"#,
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let store = dir.path().join("s.db");
    let out = lunmark()
        .args(["--store", store.to_str().unwrap(), "run", "-q", "--profile-file", profile.to_str().unwrap(), "--ramp", "0"])
        .args(["--ios", "3000", "--detail", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("per worker:") && text.contains("per target:") && text.contains("mem:4m"), "{text}");
    let r = read_json(&json);
    let p = &r["points"][0];
    let s = &p["summary"];
    let total = s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap();
    assert_eq!(total, 9000, "--ios counts per worker");
    let workers = p["workers"].as_array().unwrap();
    let targets = p["targets"].as_array().unwrap();
    assert_eq!(workers.len(), 3);
    assert_eq!(targets.len(), 2);
    let sum = |rows: &[serde_json::Value], key: &str| rows.iter().map(|w| w[key].as_u64().unwrap()).sum::<u64>();
    let fsum = |rows: &[serde_json::Value], key: &str| rows.iter().map(|w| w[key].as_f64().unwrap()).sum::<f64>();
    assert_eq!(sum(workers, "ios"), total);
    assert_eq!(sum(targets, "ios"), total);
    for rows in [workers, targets] {
        assert!((fsum(rows, "iops") - s["iops"].as_f64().unwrap()).abs() < 1e-6 * s["iops"].as_f64().unwrap());
        assert!((fsum(rows, "mbps") - s["mbps"].as_f64().unwrap()).abs() < 1e-6 * s["mbps"].as_f64().unwrap());
    }
    // The group that drives target 1 alone puts all its I/Os there: target 1 got more than target 0.
    assert_eq!(workers[2]["group"], "second");
    assert_eq!(workers[2]["targets"], serde_json::json!([1]));
    assert_eq!(targets[1]["workers"], 3);
    assert!(targets[1]["ios"].as_u64().unwrap() > targets[0]["ios"].as_u64().unwrap());
    for t in targets {
        let (mean, p99) = (t["latency_mean_us"].as_f64().unwrap(), t["latency_p99_us"].as_f64().unwrap());
        assert!(mean > 0.0 && p99 > 0.0, "{t}");
    }
    let shown =
        lunmark().args(["--store", store.to_str().unwrap(), "results", "show", r["id"].as_str().unwrap(), "--detail"]).output().unwrap();
    assert!(stdout(&shown).contains("per worker:") && stdout(&shown).contains("second"), "{}", stdout(&shown));

    // Trims are I/Os (the summary's `iops` counts them) and syncs are not: the
    // worker and target rows count the same, with one target (its tally filled
    // from the recorder) and with two (a tally per I/O).
    for (n, files) in [(1, vec!["t1.dat"]), (2, vec!["t2a.dat", "t2b.dat"])] {
        let json = dir.path().join(format!("trim{n}.json"));
        let mut args: Vec<String> = ["run", "-q", "--no-store", "--size", "16m", "--bs", "4k", "--read", "50", "--trim", "20"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        for f in &files {
            args.extend(["-t".to_string(), dir.path().join(f).to_str().unwrap().to_string()]);
        }
        args.extend(["--fsync", "8", "--ios", "4000", "--ramp", "0", "--json", json.to_str().unwrap()].map(String::from));
        let out = lunmark().args(&args).output().unwrap();
        assert!(out.status.success(), "{n} targets: {}", stderr(&out));
        let r = read_json(&json);
        let p = &r["points"][0];
        let s = &p["summary"];
        let trimmed = s["ios_trimmed"].as_u64().unwrap();
        assert!(trimmed > 0 && s["ios_synced"].as_u64().unwrap() > 0, "{n} targets: {s}");
        let total = s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap() + trimmed;
        let (workers, targets) = (p["workers"].as_array().unwrap(), p["targets"].as_array().unwrap());
        assert_eq!(targets.len(), n);
        assert_eq!(sum(workers, "ios"), total, "{n} targets: worker rows count trims, not syncs");
        assert_eq!(sum(targets, "ios"), total, "{n} targets: target rows count trims, not syncs");
        for rows in [workers, targets] {
            assert!((fsum(rows, "iops") - s["iops"].as_f64().unwrap()).abs() < 1e-6 * s["iops"].as_f64().unwrap());
        }
        if n == 1 {
            let mean = s["latency_us"]["all"]["mean"].as_f64().unwrap();
            for row in [&workers[0], &targets[0]] {
                let m = row["latency_mean_us"].as_f64().unwrap();
                assert!((m - mean).abs() <= 0.01 * mean, "{n} targets: row mean {m} is the summary's all-I/O mean {mean}");
            }
        }
    }
}

/// On mem: nothing holds an I/O back: the depth held is the depth asked, 32, within 5%.
#[test]
fn achieved_depth_on_mem_is_the_requested_depth() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let out = run(&[
        "run",
        "-q",
        "--no-store",
        "-t",
        "mem:16m",
        "--bs",
        "4k",
        "--qd",
        "32",
        "--ramp",
        "0",
        "--time",
        "2s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    let q = &r["points"][0]["summary"]["queue_depth"];
    assert_eq!(q["requested"], 32);
    let held = q["achieved"].as_f64().unwrap();
    assert!((held - 32.0).abs() <= 0.05 * 32.0, "held {held} of 32");
    assert!(q.get("warning").is_none(), "{q}");
    assert_eq!(r["points"][0]["workers"][0]["qd_requested"], 32);
}

/// psync does one I/O at a time: asked for QD 32 it holds 1, and the point says so.
#[test]
fn a_psync_run_asked_for_qd32_warns_that_it_held_less() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let file = dir.path().join("f.dat");
    let out = run(&[
        "run",
        "--no-store",
        "-q",
        "-t",
        file.to_str().unwrap(),
        "--size",
        "8m",
        "--engine",
        "psync",
        "--bs",
        "4k",
        "--qd",
        "32",
        "--ramp",
        "0",
        "--time",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    let q = &r["points"][0]["summary"]["queue_depth"];
    assert_eq!(q["requested"], 32);
    let held = q["achieved"].as_f64().unwrap();
    assert!(held <= 1.05, "psync held {held}");
    let warning = q["warning"].as_str().unwrap();
    assert!(warning.contains("worker 0 held 1.0 of 32") && warning.contains("psync"), "{warning}");
    assert!(stdout(&out).contains("queue depth fell short"), "{}", stdout(&out));
}

/// A paced run keeps only the I/Os that are due in flight: far below the depth
/// asked, by design, so it is a note naming the schedule as the cause, not a
/// warning (the result is what was asked for).
#[test]
fn a_paced_run_notes_that_the_schedule_held_the_depth_down() {
    // A think time holds the depth down too, and the note says so rather than
    // blaming the submitter.
    for (pacing, says) in [(["--rate", "500"], "paced group"), (["--thinktime", "1ms"], "the think time")] {
        let dir = shm_dir();
        let json = dir.path().join("r.json");
        let mut args = vec!["run", "-q", "--no-store", "-t", "mem:16m", "--bs", "4k", "--qd", "32", "--ramp", "0", "--time", "1s"];
        args.extend_from_slice(&pacing);
        args.extend_from_slice(&["--json", json.to_str().unwrap()]);
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let q = &read_json(&json)["points"][0]["summary"]["queue_depth"];
        assert!(q["achieved"].as_f64().unwrap() < 3.2, "{q}");
        assert!(q["warning"].is_null(), "a designed depth is not a warning: {q}");
        let note = q["note"].as_str().unwrap();
        assert!(note.starts_with("queue depth below the asked by design") && note.contains(says), "{note}");
        assert!(!note.contains("did not keep up"), "{note}");
    }
}

/// A lab prints its own table: --detail is refused there, before it starts anything.
#[test]
fn labs_refuse_detail_and_say_where_the_figures_are() {
    for lab in ["protocols", "cache"] {
        let out = run(&["lab", lab, "--detail"]);
        assert_eq!(out.status.code(), Some(1), "lab {lab}");
        assert!(stderr(&out).contains("lunmark results show ID --detail"), "{}", stderr(&out));
    }
}
