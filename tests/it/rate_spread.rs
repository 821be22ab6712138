//! A paced worker (a rate, Poisson arrivals, think time) spreads its I/Os over
//! its targets as an unpaced one does.

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
    // A rate no schedule can keep (an I/O due every picosecond) is refused too, by both.
    for dry in [false, true] {
        let mut all = vec!["run", "--no-store", "-t", "mem:16m", "--time", "1s", "--ramp", "0", "--rate", "1e300"];
        if dry {
            all.push("--dry-run");
        }
        let out = run(&all);
        assert_eq!(out.status.code(), Some(1), "{all:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("rate 1e300 is above the highest rate"), "{all:?}: {}", stderr(&out));
    }
    let out = run(&["run", "--no-store", "-t", "mem:16m", "--replay", p, "--replay-speed", "1e-300", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("replay speed"), "{}", stderr(&out));
}
