//! Inputs 5: a profile's `[data]` and the data flags checked once, merged;
//! the dry run refuses what the real run refuses for memory; a lab's dry run
//! ends quietly on a closed stdout.

use std::process::Stdio;

use crate::common::*;

/// `lab cache --dry-run | head -0`: the plan is only printed, so a closed
/// stdout ends the process as it ends `run --dry-run` (by SIGPIPE, quietly),
/// never with a panic and exit 101. The reader is closed before lunmark
/// writes, so every write meets a closed pipe.
#[test]
fn a_closed_stdout_ends_a_lab_dry_run_quietly() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    for study in [&["cache", "--cache-sizes", "25.5", "--lun-size", "8m", "--delay", "1ms"][..], &["protocols", "--lun-size", "8m"]] {
        let mut child = lunmark()
            .arg("--store")
            .arg(&store)
            .arg("lab")
            .args(study)
            .args(["--time", "1s", "--dry-run"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert!(!err.contains("panicked") && out.status.code() != Some(101), "lab {study:?}: {err}");
        assert!(err.is_empty(), "lab {study:?} should end quietly: {err}");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "lab {study:?} ends as run --dry-run does: {:?}", out.status);
        assert!(!store.exists(), "a dry run keeps nothing");
    }
}

/// A plan whose buffers do not fit in the memory available: the dry run
/// refuses it with the real run's message and exit 1 (it printed the plan and
/// exited 0), before any of the plan is printed, as the ring limit is refused.
#[test]
fn the_dry_run_refuses_a_plan_the_run_refuses_for_memory() {
    let args = ["run", "-q", "--no-store", "-t", "mem:64m", "--workers", "1", "--bs", "64m", "--qd", "32768", "--time", "1s"];
    let real = run(&args);
    let dry = run(&[&args[..], &["--dry-run"]].concat());
    assert_eq!(real.status.code(), Some(1), "{}", stderr(&real));
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    let said = stderr(&dry);
    assert!(said.contains("I/O buffers 2 TiB (1 worker x 32768 slots x 64 MiB)") && said.contains("MemAvailable"), "{said}");
    assert_eq!(said, stderr(&real), "the dry run says what the run says");
    assert!(stdout(&dry).is_empty(), "refused before the plan is printed: {}", stdout(&dry));
    // A plan that fits still passes the dry run.
    let fits = run(&["run", "--no-store", "-t", "mem:64m", "--bs", "1m", "--qd", "4", "--dry-run"]);
    assert!(fits.status.success() && stdout(&fits).contains("memory: about"), "{}", stderr(&fits));
}
