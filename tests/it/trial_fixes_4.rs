//! A user trial's findings on messages (fix helper FX4): errors name the flag
//! or key the user gave, negative values reach lunmark's own parsers, sweep
//! values print as given, and counts take their plural.

use crate::common::*;

/// The message of a refused dry run: a non-zero exit (2 from a flag's own parser), no plan printed.
fn refused(args: &[&str]) -> String {
    let out = lunmark().args(["run", "--target", "mem:1m", "--dry-run"]).args(args).output().unwrap();
    assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?} was accepted: {}", stdout(&out));
    assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    stderr(&out)
}

#[test]
fn zero_run_lengths_and_sweeps_name_the_flag_and_the_range() {
    for (args, says) in [
        (&["--ios", "0"][..], "--ios 0: give at least 1 I/O"),
        (&["--time", "0s"], "--time 0s: the measured time must be above 0"),
        (&["--sweep", "bs=1t"], "--sweep bs=1t: '1t' is not a valid bs: a transfer size must lie between 1 byte and 64m"),
        (&["--bs", "4k,1t"], "--bs 4k,1t: '1t' is not a valid bs"),
        (&["--qd", "70000"], "--qd 70000: the queue depth may be at most 65536"),
    ] {
        let e = refused(args);
        assert!(e.contains(says) && !e.contains("run.") && !e.contains("access line"), "{args:?}: {e}");
    }
}

#[test]
fn negative_values_reach_the_flag_s_own_message() {
    let dir = shm_dir();
    let trace = dir.path().join("t.csv");
    std::fs::write(&trace, "").unwrap();
    let trace = trace.to_str().unwrap();
    for (args, says) in [
        (&["--cpus", "-1"][..], "--cpus -1: '-1' is not a CPU number"),
        (&["--replay", trace, "--replay-speed", "-1"], "--replay-speed: '-1' is not a replay speed"),
        (&["--ramp", "-1s"], "--ramp: '-1s' is not a duration"),
        (&["--time", "-1s"], "--time: '-1s' is not a duration"),
        (&["--size", "-1g"], "--size: '-1g' is not a size"),
        (&["--read", "-5"], "--read: '-5' is not a percentage: use a number from 0 to 100"),
        (&["--workers", "-1"], "'-1' for '--workers <N>': a negative number is not allowed here: give a whole number from 0"),
        (&["--ios", "-1"], "'-1' for '--ios <N>': a negative number"),
        (&["--rate", "-1"], "--rate -1: give a positive number of I/Os per second"),
    ] {
        let e = refused(args);
        assert!(e.contains(says) && !e.contains("unexpected argument"), "{args:?}: {e}");
    }
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

/// A dead NBD server: the reason names the target once and does not offer
/// --continue-on-error (a lost connection is not an I/O error it could count),
/// with or without the flag.
#[test]
fn a_lost_connection_is_named_once_without_offering_continue_on_error() {
    for continue_on_error in [false, true] {
        let dir = shm_dir();
        let mut server = Nbdkit::tcp("64M", &[]);
        let json = dir.path().join("r.json");
        let mut cmd = lunmark();
        cmd.args(["run", "-q", "--no-store", "-t", &server.uri, "--time", "30s", "--ramp", "0s", "--json", json.to_str().unwrap()]);
        if continue_on_error {
            cmd.arg("--continue-on-error");
        }
        let child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        server.kill();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let reason = read_json(&json)["status_reason"].as_str().unwrap().to_string();
        assert_eq!(reason.matches(&server.uri).count(), 1, "continue_on_error {continue_on_error}: {reason}");
        assert!(!reason.contains("--continue-on-error") && reason.contains("connection"), "{reason}");
    }
}
