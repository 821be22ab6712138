//! What lunmark says of what it plans and ran: a count of one takes the
//! singular (the dry run, a replay, a trace, the cache curve, an import, a
//! resource error), and swept values print as given, in the dry run and the run alike.

use crate::common::*;

#[test]
fn a_count_of_one_takes_the_singular() {
    // The dry run: one worker, one target, one I/O in flight, one I/O measured.
    let out = run(&["run", "-t", "mem:16m", "--workers", "1", "--qd", "1", "--ios", "1", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for said in
        ["run: 1 I/O per worker measured", "1 worker x 1 target x 1 outstanding = 1 I/O in flight", "total: 1 worker, 1 I/O in flight"]
    {
        assert!(text.contains(said), "{said} in:\n{text}");
    }
    assert!(!text.contains("1 workers") && !text.contains("1 targets") && !text.contains("1 I/Os"), "{text}");

    // A trace of one record: the replay's summary line and the cache curve.
    let dir = shm_dir();
    let csv = dir.path().join("one.csv");
    std::fs::write(&csv, "128166372003061629,usr,0,Read,8192,4096,100\n").unwrap();
    let json = dir.path().join("r.json");
    let (out, _) = run_in_store(dir.path(), &["run", "-t", "mem:16m", "--replay", csv.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("(msr, 1 record, speed 1), QD ") && text.contains(", 1 worker, 1 target"), "{text}");
    assert!(text.contains("replay: 1 of 1 record issued") && text.contains("0 skipped, 0 offsets wrapped"), "{text}");
    let out = run(&["cache-curve", csv.to_str().unwrap(), "--sizes", "0,100", "--region", "1m"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("accesses: 1 block access, 1 distinct block\n"), "{text}");

    // A result of one point, imported into another store.
    let other = dir.path().join("other.db");
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(&other).args(["results", "import"]).arg(&json).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).trim_end().ends_with("(1 point)"), "{}", stdout(&out));
}

/// The trace line of a one-I/O run says "1 I/O" (a user trial found "1 I/Os").
#[test]
fn a_trace_of_one_io_is_said_in_the_singular() {
    let dir = shm_dir();
    let trace = dir.path().join("t1.bin");
    let out = run(&[
        "run",
        "--no-store",
        "-t",
        "mem:1m",
        "--bs",
        "4k",
        "--read",
        "100",
        "--qd",
        "1",
        "--ios",
        "1",
        "--ramp",
        "0",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains(&format!("trace: 1 I/O recorded in {}", trace.display())), "{said}");
}

/// A run refused for memory with one worker says "1 worker", not "1 worker(s)".
#[test]
fn a_resource_error_with_one_worker_says_one_worker() {
    // 32768 buffers of 64 MiB: 2 TiB, beyond any machine this runs on.
    let out = run(&["run", "-q", "--no-store", "-t", "mem:64m", "--workers", "1", "--bs", "64m", "--qd", "32768", "--time", "1s"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("I/O buffers 2 TiB (1 worker x 32768 slots x 64 MiB)") && err.contains("MemAvailable"), "{err}");
    assert!(!err.contains("(s)"), "{err}");
}

#[test]
fn swept_percentages_print_as_given_and_a_single_value_is_a_point_in_both() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let base = ["run", "--target", "mem:1m", "--ios", "50", "--ramp", "0s", "--no-store"];
    let out = lunmark().args(base).args(["--sweep", "read=0,100", "--dry-run"]).output().unwrap();
    let plan = stdout(&out);
    assert!(plan.contains("point 1/2: read=0\n") && plan.contains("point 2/2: read=100\n") && !plan.contains(".0\n"), "{plan}");
    let out = lunmark().args(base).args(["--sweep", "read=0,100", "--json", json.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("point 1: read=0\n") && stdout(&out).contains("point 2: read=100\n"), "{}", stdout(&out));
    let r = read_json(&json);
    assert_eq!(r["points"][0]["params"]["read"].to_string(), "0", "{}", r["points"][0]["params"]);
    // One swept value: the dry run names the point as the run does.
    let out = lunmark().args(base).args(["--sweep", "bs=8k", "--dry-run"]).output().unwrap();
    assert!(stdout(&out).contains("point 1/1: bs=8k\n"), "{}", stdout(&out));
    let out = lunmark().args(base).args(["--sweep", "bs=8k"]).output().unwrap();
    assert!(out.status.success() && stdout(&out).contains("point 1: bs=8k\n"), "{}{}", stdout(&out), stderr(&out));
}
