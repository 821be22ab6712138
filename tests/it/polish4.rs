//! Polish 4: one reader of cache size lists for `lab cache --cache-sizes` and
//! `cache-curve --sizes`; counts of one in resource errors take the singular;
//! a profile's `[data]` unit beside no reduction is refused as the flags are;
//! `lunmark verify` and a `--cache-dev` file leave the access time alone.

use crate::common::*;

/// `lab cache --cache-sizes` with a size given twice or an empty entry: refused
/// with the flag, the value and what is allowed, before the lab starts its LUN
/// (its directory stays empty, no store is made, no table printed).
#[test]
fn lab_cache_refuses_a_repeated_size_and_an_empty_entry_before_it_starts() {
    let dir = shm_dir();
    let labs = dir.path().join("labs");
    std::fs::create_dir(&labs).unwrap();
    let store = dir.path().join("s.db");
    for (sizes, says) in [("0,50,50%", "--cache-sizes 0,50,50%: 50% is given twice"), ("0,,50", "--cache-sizes 0,,50: there is an empty entry")] {
        let out = lunmark()
            .env("LUNMARK_LAB_DIR", &labs)
            .arg("--store")
            .arg(&store)
            .args(["lab", "cache", "--lun-size", "8m", "--delay", "1ms", "--cache-sizes", sizes, "--time", "1s", "--ramp", "0"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "--cache-sizes {sizes}: {err}");
        assert!(err.contains(says) && err.contains("for example 0,25,50,100"), "--cache-sizes {sizes}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "one error: {err}");
        assert!(stdout(&out).is_empty(), "nothing measured: {}", stdout(&out));
        assert!(!store.exists(), "no store made");
        assert_lab_left_nothing(&labs);
    }
}

/// `cache-curve --sizes` with a size given twice (it was accepted, a row
/// repeated) or an empty entry: refused before the trace is read or any JSON written.
#[test]
fn cache_curve_refuses_a_repeated_size_and_an_empty_entry_before_it_reads() {
    let dir = shm_dir();
    let json = dir.path().join("curve.json");
    for (sizes, says) in [("0,25,25", "--sizes 0,25,25: 25% is given twice"), ("0,25,", "--sizes 0,25,: there is an empty entry")] {
        let out = run(&["cache-curve", "tests/fixtures/blkparse/sample.txt", "--sizes", sizes, "--json", json.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "--sizes {sizes}: {err}");
        assert!(err.contains(says) && err.contains("for example 0,25,50,100"), "--sizes {sizes}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "one error: {err}");
        assert!(stdout(&out).is_empty() && !json.exists(), "no curve computed: {}", stdout(&out));
    }
    // The same list, each size once, gives the curve.
    let out = run(&["cache-curve", "tests/fixtures/blkparse/sample.txt", "--sizes", "0,25", "--json", json.to_str().unwrap()]);
    assert!(out.status.success() && json.exists(), "{}", stderr(&out));
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
