//! Stops: what a run keeps when it ends before its plan (real runs, real
//! signals). Ctrl-C mid-run, in a ramp, in the set-up, during a repeat or
//! near a point's end, a second Ctrl-C and SIGTERM, and a file target that is
//! deleted or replaced: which points and repeats are kept, the status and its
//! reason, and when a point is cut short (never when it measured its whole
//! plan, and never with a measured window stretched past the plan). SIGHUP (a
//! closed terminal or ssh session) is treated as SIGTERM; a closed stderr
//! neither panics the run nor stops its remaining points; Ctrl-C while lunmark
//! fills a new file stops within a second.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// Ctrl-C mid-run: the result is still written, status "interrupted", covering the time measured.
#[test]
fn sigint_mid_run_keeps_an_interrupted_result() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args(["run", "-q", "-t", "mem:64m", "--read", "70", "--time", "60s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    signal(&child, libc::SIGINT);
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "stopped within a second or so");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "interrupted");
    let s = &r["points"][0]["summary"];
    let d = s["duration_s"].as_f64().unwrap();
    assert!((2.0..4.0).contains(&d), "measured {d}s");
    assert!(s["iops"].as_f64().unwrap() > 0.0);
}

/// Ctrl-C during point 3 keeps points 1 and 2 in the JSON written so far.
#[test]
fn sigint_during_point_three_keeps_points_one_and_two() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args([
            "run",
            "-q",
            "-t",
            "mem:16m",
            "--read",
            "100",
            "--sweep",
            "qd=1,2,4,8",
            "--time",
            "1s",
            "--ramp",
            "0",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r = read_json(&json);
    assert_eq!(r["status"], "interrupted");
    let points = r["points"].as_array().unwrap();
    assert!(points.len() >= 2, "points kept: {}", points.len());
    assert_eq!(points[0]["params"]["qd"], 1);
    assert_eq!(points[1]["params"]["qd"], 2);
    assert!((points[1]["summary"]["duration_s"].as_f64().unwrap() - 1.0).abs() < 0.05, "point 2 complete");
}

/// Starts `lunmark run` with `args` (results in `store`, JSON to `json`),
/// sends SIGINT after `after`, and waits for it.
fn interrupted_run(args: &[&str], store: &std::path::Path, json: &std::path::Path, after: Duration) -> std::process::Output {
    sigint_after(
        lunmark().args(["--store", store.to_str().unwrap(), "run", "-t", "mem:16m", "--json", json.to_str().unwrap()]).args(args),
        after,
    )
}

/// Starts `cmd` (its output piped), sends SIGINT after `after`, and waits for it.
fn sigint_after(cmd: &mut std::process::Command, after: Duration) -> Output {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(after);
    signal(&child, libc::SIGINT);
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

/// Starts `lunmark run` with `args` (store and JSON in `dir`), sends SIGINT
/// after `after`, and waits: (output, the stored result's JSON).
pub(crate) fn interrupted(dir: &std::path::Path, args: &[&str], after: std::time::Duration) -> (std::process::Output, serde_json::Value) {
    let json = dir.join("r.json");
    let run = ["run", "-t", "mem:64m", "--ramp", "0", "--json", json.to_str().unwrap()];
    let out = sigint_after(lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(dir.join("s.db")).args(run).args(args), after);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    (out, read_json(&json))
}

/// Ctrl-C in point 2 of a sweep: its kept part says it was cut short, in the
/// summary, the stored result and `results show`, as the point of a plain run
/// does; the finished point 1 says nothing of the kind.
#[test]
fn an_interrupted_sweep_point_says_it_was_cut_short() {
    let cut = |text: &str| text.matches("cut short: interrupted by Ctrl-C (SIGINT) after ").count();
    let dir = shm_dir();
    let (out, r) = interrupted(dir.path(), &["--sweep", "qd=1,2,4", "--time", "3s"], std::time::Duration::from_millis(4500));
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{}", r["points"]);
    assert!(points[0].get("cut_short").is_none(), "{}", points[0]["cut_short"]);
    let note = points[1]["cut_short"].as_str().unwrap_or_default();
    assert!(note.starts_with("interrupted by Ctrl-C (SIGINT) after ") && note.contains(" s of the 3s planned"), "{note}");
    let text = stdout(&out);
    let point2 = text.split("\npoint 2:").nth(1).unwrap_or_default();
    assert!(cut(&text) == 1 && cut(point2) == 1, "{text}");
    let id = r["id"].as_str().unwrap();
    let (shown, _) = run_in_store(dir.path(), &["results", "show", id]);
    assert!(shown.status.success() && cut(&stdout(&shown)) == 1, "{}{}", stdout(&shown), stderr(&shown));

    // A plain run stopped the same way says it alike.
    let dir = shm_dir();
    let (out, r) = interrupted(dir.path(), &["--time", "10s"], std::time::Duration::from_millis(2000));
    let note = r["points"][0]["cut_short"].as_str().unwrap_or_default();
    assert!(note.contains(" s of the 10s planned: the figures cover that part only"), "{note}");
    assert_eq!(cut(&stdout(&out)), 1, "{}", stdout(&out));
}

/// `lunmark run -t mem:64m --read 100` with `args` (and `--ramp 0` unless
/// they give one), its store and JSON in `dir`.
pub(crate) fn start(dir: &Path, args: &[&str]) -> Child {
    let ramp: &[&str] = if args.contains(&"--ramp") { &[] } else { &["--ramp", "0"] };
    lunmark()
        .env_remove("LUNMARK_STORE")
        .arg("--store")
        .arg(dir.join("s.db"))
        .args(["run", "-t", "mem:64m", "--read", "100", "--json"])
        .arg(dir.join("r.json"))
        .args(ramp)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The one point's measured time, and the end of its last interval row.
fn window(point: &Value) -> (f64, f64) {
    let s = &point["summary"];
    let rows = s["intervals"].as_array().unwrap();
    let last = rows.last().unwrap();
    (s["duration_s"].as_f64().unwrap(), last["t_s"].as_f64().unwrap() + last["duration_s"].as_f64().unwrap())
}

/// Stops the run (SIGSTOP) 0.5 s into its 1 s point, sends Ctrl-C 1.6 s in,
/// while it is stopped, and lets it go on: it sees the stop only past its end.
fn late_ctrl_c(child: &Child, t: Instant) {
    sleep_until(t + Duration::from_millis(500));
    signal(child, libc::SIGSTOP);
    sleep_until(t + Duration::from_millis(1600));
    signal(child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(50));
    signal(child, libc::SIGCONT);
}

/// The process is stopped (SIGSTOP: a host so busy nothing of lunmark runs)
/// across the planned end of a 1 s point, and Ctrl-C arrives while it is
/// stopped: when it runs again the plan is over, so the point ran whole. No
/// cut-short note, a window of exactly 1 s with no row past it (it was 1.4 s
/// with a third row of 0 I/Os), and the run completed: nothing was dropped.
#[test]
fn a_ctrl_c_seen_after_the_planned_end_cuts_nothing_short() {
    for _ in 0..2 {
        let dir = shm_dir();
        let child = start(dir.path(), &["--time", "1s"]);
        let t = worker_started(&child);
        late_ctrl_c(&child, t);
        let out = child.wait_with_output().unwrap();
        let r = read_json(&dir.path().join("r.json"));
        let point = &r["points"][0];
        assert!(point.get("cut_short").is_none(), "{}", point["cut_short"]);
        assert_eq!(window(point), (1.0, 1.0), "{}", point["summary"]["intervals"]);
        assert_eq!(r["status"], "completed", "{}", r["status_reason"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("measured 1.00s") && !text.contains("cut short"), "{text}");
    }
}

/// The same late Ctrl-C in the first of 3 repeats: that repeat ran whole and
/// is kept as the point (it was lost, or kept cut short); the reason says the
/// later repeats did not run.
#[test]
fn a_ctrl_c_seen_after_a_whole_repeat_keeps_it() {
    let dir = shm_dir();
    let child = start(dir.path(), &["--time", "1s", "--repeat", "3"]);
    let t = worker_started(&child);
    late_ctrl_c(&child, t);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&dir.path().join("r.json"));
    assert_eq!(r["points"].as_array().map(Vec::len), Some(1), "{}", r["points"]);
    assert!(r["points"][0].get("cut_short").is_none(), "{}", r["points"][0]["cut_short"]);
    assert_eq!(window(&r["points"][0]), (1.0, 1.0));
    assert_eq!(r["status_reason"], "interrupted by Ctrl-C (SIGINT) after repeat 1 of 3; the 1 finished repeat of this point is kept");
}

/// A run with `args`, Ctrl-C `ms` after its worker started: its output and result.
fn ctrl_c_at(args: &[&str], ms: u64) -> (std::process::Output, Value) {
    let dir = shm_dir();
    let child = start(dir.path(), args);
    let t = worker_started(&child);
    sleep_until(t + Duration::from_millis(ms));
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    (out, read_json(&dir.path().join("r.json")))
}

/// Ctrl-C at several moments around the end of a 1 s point: the measured
/// window never passes the plan (by more than the 0.05 s a busy host may
/// add), no interval row lies past it, the rows add up to the point's I/Os,
/// and a point that measured its whole second carries no cut-short note; one
/// that did not says so and the run exits 130.
#[test]
fn a_ctrl_c_around_the_end_never_stretches_the_measured_window() {
    for ms in [900, 980, 1000, 1010, 1030, 1060, 1120] {
        let (out, r) = ctrl_c_at(&["--time", "1s"], ms);
        let point = &r["points"][0];
        let (measured, rows_end) = window(point);
        assert!(measured <= 1.05 && rows_end <= measured + 1e-9, "SIGINT at {ms} ms: {measured} s, rows to {rows_end} s");
        let s = &point["summary"];
        let rows: f64 =
            s["intervals"].as_array().unwrap().iter().map(|i| i["iops"].as_f64().unwrap() * i["duration_s"].as_f64().unwrap()).sum();
        let total = s["ios_read"].as_f64().unwrap();
        assert!((rows - total).abs() <= 1e-6 * total, "SIGINT at {ms} ms: rows {rows} vs {total} I/Os");
        match point.get("cut_short") {
            None => {
                assert_eq!(measured, 1.0, "SIGINT at {ms} ms: a point not cut short ran its second");
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            }
            Some(note) => {
                assert!(measured < 1.0, "SIGINT at {ms} ms: cut short after its whole second ({measured} s): {note}");
                assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
            }
        }
    }
}

/// An I/O count (200 at 200 IOPS: about 1 s): Ctrl-C at moments around its
/// end. A point that counted all its I/Os is not cut short, whenever the
/// signal was seen.
#[test]
fn a_whole_io_count_is_never_cut_short() {
    for ms in [960, 1000, 1030, 1060, 1100] {
        let (out, r) = ctrl_c_at(&["--ios", "200", "--rate", "200"], ms);
        let point = &r["points"][0];
        let counted = point["summary"]["ios_read"].as_u64().unwrap();
        if counted == 200 {
            assert!(point.get("cut_short").is_none(), "SIGINT at {ms} ms: {}", point["cut_short"]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        } else {
            assert!(point["cut_short"].as_str().is_some_and(|n| n.contains("short of its 200 I/Os per worker")), "{}", point);
        }
    }
}

/// Ctrl-C in the ramp of point 2 of a 3-point sweep: the result keeps point 1,
/// and its reason says point 2 had started (its ramp), measured nothing and was
/// dropped, and point 3 did not run.
#[test]
fn a_ctrl_c_in_the_ramp_of_point_2_says_it_was_dropped() {
    let dir = shm_dir();
    let mut child = start(dir.path(), &["--time", "1s", "--ramp", "2s", "--sweep", "qd=1,2,4"]);
    // The live lines, read to the end (a closed pipe would fail the run's writes).
    let lines = BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || lines.lines().map_while(Result::ok).for_each(|l| drop(tx.send(l))));
    // SIGINT once point 2 is one second into its 2 s ramp.
    let mut seen = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
        let there = line.starts_with("point 2/3 [qd=2] ramp 1s/2s");
        seen.push(line);
        if there {
            signal(&child, libc::SIGINT);
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    assert_eq!(out.status.code(), Some(130), "{seen:?}");
    let r = read_json(&dir.path().join("r.json"));
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["points"].as_array().map(Vec::len), Some(1), "{}", r["points"]);
    let reason = r["status_reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "interrupted by Ctrl-C (SIGINT) before point 2 of 3 measured anything (in its set-up or ramp), so it was dropped; point 3 did not run"
    );
    assert!(stdout(&out).contains(&format!("reason: {reason}")), "{}", stdout(&out));
}

/// Ctrl-C while lunmark creates and fills a new 2 GiB file target, with no
/// ramp: the point never measured, so it is dropped (it was kept as a few
/// microseconds of figures: tens of millions of IOPS).
#[test]
fn a_ctrl_c_in_the_set_up_keeps_no_figures() {
    let dir = shm_dir();
    let file = dir.path().join("new-lun");
    let child = lunmark()
        .env_remove("LUNMARK_STORE")
        .arg("--store")
        .arg(dir.path().join("s.db"))
        .args(["run", "-t", file.to_str().unwrap(), "--size", "2g", "--read", "100", "--time", "1s", "--ramp", "0", "--json"])
        .arg(dir.path().join("r.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let begun = Instant::now();
    while !file.exists() {
        assert!(begun.elapsed() < Duration::from_secs(10), "lunmark did not create {}", file.display());
        std::thread::sleep(Duration::from_millis(2));
    }
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&dir.path().join("r.json"));
    assert_eq!(r["points"].as_array().map(Vec::len), Some(0), "{}", r["points"]);
    assert_eq!(
        r["status_reason"],
        "interrupted by Ctrl-C (SIGINT) before point 1 of 1 measured anything (in its set-up or ramp), so it was dropped"
    );
    // The interrupted result still names the target its set-up was for.
    let t = &r["targets"][0];
    assert_eq!(
        (t["uri"].as_str(), t["kind"].as_str(), t["region_bytes"].as_u64()),
        (file.to_str(), Some("file"), Some(2 << 30)),
        "{}",
        r["targets"]
    );
}

/// Ctrl-C twice on a run whose target never answers: the run still ends
/// promptly, writes its JSON and its store row, status interrupted. SIGTERM is
/// reported as SIGTERM.
#[test]
fn a_second_ctrl_c_keeps_the_result_and_sigterm_is_named() {
    let dir = shm_dir();
    let store = dir.path().join("store.db");
    for (signals, named) in [(&[libc::SIGINT, libc::SIGINT][..], "Ctrl-C (SIGINT)"), (&[libc::SIGTERM][..], "SIGTERM")] {
        let server = crate::stalls::never_answers(dir.path());
        let json = dir.path().join(format!("r-{named}.json"));
        let child = crate::stalls::start(
            &store,
            &server.uri,
            &["-q", "--read", "100", "--time", "30s", "--ramp", "0", "--json", json.to_str().unwrap()],
        );
        std::thread::sleep(Duration::from_millis(1500));
        let sent = Instant::now();
        for &sig in signals {
            signal(&child, sig);
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let took = sent.elapsed();
        assert!(took < Duration::from_millis(1500), "{named}: ended {took:?} after the first signal");
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        let r = read_json(&json);
        assert_eq!(r["status"], "interrupted");
        let reason = r["status_reason"].as_str().unwrap();
        assert!(reason.contains(named), "{reason}");
        if signals.len() > 1 {
            assert!(reason.contains("second signal"), "{reason}");
        }
        assert_eq!(r["points"][0]["summary"]["stalled"], true);
        let row = stored(&store, &saved_id(&out));
        assert_eq!(row["id"], r["id"]);
        assert_eq!(row["status"], "interrupted");
    }
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

/// Ctrl-C before a group that starts late has started (fio's startdelay=3 of
/// a 4 s job beside one without): the point is cut short "of the 7s
/// planned" (the whole span, not one group's 4 s), the late group measured
/// nothing and the summary says it never started.
#[test]
fn a_ctrl_c_before_a_late_group_starts_keeps_the_others_and_says_so() {
    let dir = shm_dir();
    let (job, json) = (dir.path().join("late.fio"), dir.path().join("r.json"));
    std::fs::write(&job, "[global]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\ntime_based\nruntime=4\n[a]\n[b]\nstartdelay=3\n").unwrap();
    let out = sigint_after(
        lunmark().args(["run", "--fio", job.to_str().unwrap(), "--no-store", "--json", json.to_str().unwrap()]),
        Duration::from_millis(1500),
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let r = read_json(&json);
    let p = &r["points"][0];
    assert!(p["cut_short"].as_str().unwrap().contains("of the 7s planned"), "{}", p["cut_short"]);
    assert!(p["groups"][0]["iops"].as_f64().unwrap() > 0.0);
    assert_eq!((p["groups"][1]["iops"].as_f64(), p["groups"][1]["window"]["duration_s"].as_f64()), (Some(0.0), Some(0.0)));
    assert!(stdout(&out).contains("group b (1 worker, to start at 3.0 s: the point ended before)"), "{}", stdout(&out));
}
