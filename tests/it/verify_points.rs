//! --verify across the points of a run: the same targets at every point, one
//! block size for the whole run, and the read/write mix kept when blocks are busy.

use crate::common::*;

/// A sweep of the targets cannot be verified with one set of block tables: it
/// is refused before the run, and the target files are left as they were.
#[test]
fn a_sweep_of_the_targets_is_refused_with_verify_before_the_run() {
    let dir = shm_dir();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, b"").unwrap();
    std::fs::write(&b, b"").unwrap();
    let args = format!(
        "run --no-store --ramp 0 -t {} -t {} --size 16m --sweep targets=1,2 --read 70 --time 1s --verify",
        a.display(),
        b.display()
    );
    let out = run(&args.split(' ').collect::<Vec<_>>());
    // Exit 1: bad input, nothing measured.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("--verify keeps").count(), 1, "said once: {err}");
    assert!(err.contains("--verify") && err.contains("--sweep targets") && err.contains("from 1 target to 2 targets"), "{err}");
    assert_eq!(std::fs::metadata(&a).unwrap().len(), 0, "the refused run grew a target");
}

/// Runs `lunmark run ARGS --verify` (ARGS split at spaces, no store, no ramp)
/// and returns its JSON result; the run must succeed.
fn verified_run(args: &str) -> serde_json::Value {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let out = lunmark()
        .args(["run", "-q", "--no-store", "--ramp", "0", "--verify", "--json", json.to_str().unwrap()])
        .args(args.split(' '))
        .output()
        .unwrap();
    assert!(out.status.success(), "{args}: {}", stderr(&out));
    read_json(&json)
}

/// A sweep of the transfer size down (8k, then 4k) checks 4 KiB blocks at
/// both points: the second point's smaller writes are verified too.
#[test]
fn a_sweep_of_the_block_size_verifies_every_point() {
    let r = verified_run("-t mem:16m --sweep bs=8k,4k --read 50 --time 1s");
    for (i, p) in r["points"].as_array().unwrap().iter().enumerate() {
        let v = &p["summary"]["verify"];
        assert!(v["blocks_written"].as_u64().unwrap() > 1000, "point {}: {v}", i + 1);
        assert!(v["blocks_checked"].as_u64().unwrap() > 1000, "point {}: {v}", i + 1);
        assert_eq!(v["mismatches"], 0, "point {}", i + 1);
    }
}

/// With many I/Os in flight over a small region, verification redraws the
/// I/Os whose blocks are busy: the op stays what was drawn, so the mix stays
/// the one asked for (a write redrawn as a read would skew it to reads).
#[test]
fn busy_blocks_under_verify_keep_the_read_write_mix() {
    let r = verified_run("-t mem:1m --qd 32 --workers 2 --ios 40000 --read 50");
    let s = &r["points"][0]["summary"];
    let (reads, writes) = (s["ios_read"].as_f64().unwrap(), s["ios_written"].as_f64().unwrap());
    let share = 100.0 * reads / (reads + writes);
    assert!(s["verify"]["conflicts"].as_u64().unwrap() > 100, "the test needs busy blocks: {}", s["verify"]);
    assert!((share - 50.0).abs() < 1.5, "read share {share:.1}% where 50% was asked");
}

/// When most writes cannot get their blocks (far more I/Os in flight than
/// blocks), the summary says the mix changed and what to do about it.
#[test]
fn a_mix_changed_by_busy_blocks_is_said() {
    let args = "run --no-store --ramp 0 -t mem:1000k --qd 4096 --workers 4 --ios 20000 --read 50 --verify";
    let out = run(&args.split(' ').collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("ran as unchecked reads, so the read/write mix differs from the one asked for"), "{text}");
    assert!(text.contains("fewer I/Os in flight (--qd, --workers) or a larger region"), "{text}");
}
