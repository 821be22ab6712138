//! What a Ctrl-C near the end of a point does (real runs, real signals): a
//! point that measured its whole plan is never cut short and its measured
//! window ends at the plan, whenever the signal is seen; a stop in the ramp of
//! a later point says that point was dropped; `compare` and the CSV export say
//! which points were cut short.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

/// `lunmark run -t mem:64m --read 100` with `args` (and `--ramp 0` unless
/// they give one), its store and JSON in `dir`.
fn start(dir: &Path, args: &[&str]) -> Child {
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

/// When the run's first worker thread appeared: its point starts within
/// moments (the workers are released once each has its buffers).
fn worker_started(child: &Child) -> Instant {
    let tasks = format!("/proc/{}/task", child.id());
    let seen = || {
        std::fs::read_dir(&tasks)
            .map(|d| d.flatten().any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "lunmark-w0")))
            .unwrap_or(false)
    };
    let begun = Instant::now();
    while !seen() {
        assert!(begun.elapsed() < Duration::from_secs(10), "no worker thread in {tasks}");
        std::thread::sleep(Duration::from_millis(2));
    }
    Instant::now()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, sig) };
}

fn sleep_until(t: Instant) {
    std::thread::sleep(t.saturating_duration_since(Instant::now()));
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

/// `lunmark` on the store in `dir`, which must succeed.
fn in_store(dir: &Path, args: &[&str]) -> String {
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(dir.join("s.db")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The fields of one CSV line (quoted fields may hold commas).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// A (3 s planned, Ctrl-C after about 1.5 s) against B (1 s, whole): compare
/// notes A's point as cut short with its measured time against the plan, in
/// its text and JSON, naming A as the baseline or not; B gets no note. The CSV
/// export ends each row with `cut_short`: A's note, empty for B.
#[test]
fn compare_and_the_csv_export_say_which_point_was_cut_short() {
    let dir = shm_dir();
    let child = start(dir.path(), &["--time", "3s", "--label", "A"]);
    let t = worker_started(&child);
    sleep_until(t + Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let a = read_json(&dir.path().join("r.json"));
    let note = a["points"][0]["cut_short"].as_str().unwrap().to_string();
    let child = start(dir.path(), &["--time", "1s", "--label", "B"]);
    assert!(child.wait_with_output().unwrap().status.success());
    let b = read_json(&dir.path().join("r.json"));
    let (ida, idb) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());

    let want = format!("the baseline A, point 1, was cut short: {note}");
    assert!(note.contains(" s of the 3s planned"), "{note}");
    let text = in_store(dir.path(), &["compare", ida, idb]);
    assert!(text.contains(&format!("note: {want}\n")), "{text}");
    assert_eq!(text.matches("cut short").count(), 1, "{text}");
    let json: Value = serde_json::from_str(&in_store(dir.path(), &["compare", ida, idb, "--format", "json"])).unwrap();
    let notes: Vec<&str> = json["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(notes.iter().copied().filter(|n| n.contains("cut short")).collect::<Vec<_>>(), vec![want.as_str()], "{notes:?}");
    let md = in_store(dir.path(), &["compare", idb, ida, "--format", "md"]);
    assert!(md.contains(&format!("note: A, point 1, was cut short: {note}")), "{md}");

    let csv = in_store(dir.path(), &["results", "export", ida, idb, "--format", "csv"]);
    let lines: Vec<Vec<String>> = csv.lines().map(csv_fields).collect();
    assert_eq!(lines.len(), 3, "{csv}");
    let at = lines[0].iter().position(|c| c == "cut_short").unwrap_or_else(|| panic!("no cut_short column: {:?}", lines[0]));
    assert_eq!(lines[0][at + 1], "repeats", "the columns after cut_short are the ones added later");
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{csv}");
    assert_eq!(lines[1][0], ida);
    assert_eq!(lines[1][at], note);
    assert_eq!(lines[2][at], "");
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
}
