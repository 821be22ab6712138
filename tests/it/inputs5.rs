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
        let out = with_stdout_closed(lunmark().arg("--store").arg(&store).arg("lab").args(study).args(["--time", "1s", "--dry-run"]));
        let err = stderr(&out);
        assert!(!err.contains("panicked") && out.status.code() != Some(101), "lab {study:?}: {err}");
        assert!(err.is_empty(), "lab {study:?} should end quietly: {err}");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "lab {study:?} ends as run --dry-run does: {:?}", out.status);
        assert!(!store.exists(), "a dry run keeps nothing");
    }
}

/// `cache-curve --json FILE` with its stdout closed: the table cannot be
/// printed, which is reported (exit 1, as a run reports it), not a panic, and
/// the JSON file is still written.
#[test]
fn a_closed_stdout_does_not_cost_cache_curve_its_json() {
    let dir = shm_dir();
    let json = dir.path().join("curve.json");
    let out = with_stdout_closed(lunmark().args([
        "cache-curve",
        "tests/fixtures/blkparse/sample.txt",
        "--sizes",
        "0,50,100",
        "--json",
        json.to_str().unwrap(),
    ]));
    let err = stderr(&out);
    assert!(!err.contains("panicked") && out.status.code() == Some(1), "{:?}: {err}", out.status);
    assert_eq!(err.trim_end(), "error: the summary was not printed: stdout was closed (broken pipe)");
    assert_eq!(read_json(&json)["rows"].as_array().map(|r| r.len()), Some(3), "the JSON is written all the same");
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

/// A profile file of 4 KiB random writes with this `[data]`, in `dir`.
fn data_profile(dir: &std::path::Path, data: &str) -> std::path::PathBuf {
    let path = dir.join(format!("data-{}.toml", rand_suffix()));
    let text = format!(
        "name = \"reduce\"\ndescription = \"4k random writes\"\n\n[data]\n{data}\n\n[[phases]]\nname = \"w\"\n\n[[phases.groups]]\n\
         name = \"main\"\nworkers = 1\nqd = 4\n\n[[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 0.0\nrandom = 100.0\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The data settings are checked once, on what applies: the flags over the
/// profile's `[data]`. A flag that gives the profile's unit a share makes it
/// apply (it was refused); a flag that takes the share away leaves it idle
/// (it ran); a bad unit in the file is named as the file's key, not as a flag.
#[test]
fn the_data_settings_are_checked_as_they_apply_flags_over_the_profile() {
    let dir = shm_dir();
    let dry = |profile: &std::path::Path, flags: &[&str]| {
        run(&[&["run", "--no-store", "-t", "mem:16m", "--profile-file", profile.to_str().unwrap()][..], flags, &["--dry-run"]].concat())
    };
    let data_line = |out: &std::process::Output| stdout(out).lines().find(|l| l.starts_with("data: ")).unwrap_or_default().to_string();

    // The profile's unit beside a share given by a flag applies.
    let unit_only = data_profile(dir.path(), "dedupe_unit = \"4k\"");
    for (flags, says) in [(&["--dedupe", "30"], "0% compressible"), (&["--compress", "40"], "40% compressible")] {
        let out = dry(&unit_only, flags);
        assert!(out.status.success(), "{flags:?}: {}", stderr(&out));
        assert!(
            data_line(&out).starts_with("data: written units of 4k: ") && data_line(&out).contains(says),
            "{flags:?}: {}",
            data_line(&out)
        );
    }
    assert!(data_line(&dry(&unit_only, &["--dedupe", "30"])).contains("30% repeat"));

    // The profile's share taken away by --dedupe 0: refused as --dedupe 0 --dedupe-unit 4k is, each named where written.
    let with_share = data_profile(dir.path(), "dedupe = 30\ndedupe_unit = \"4k\"");
    let out = dry(&with_share, &["--dedupe", "0"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "error: {}: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and --dedupe 0 reduces no data: \
             give --dedupe PCT or --compress PCT above 0, or remove dedupe_unit from [data]",
            with_share.display()
        )
    );
    assert!(stdout(&out).is_empty(), "refused before the plan: {}", stdout(&out));
    assert!(dry(&with_share, &[]).status.success());

    // A unit that does not divide the writes, written in the file: named as the file's key.
    let odd = data_profile(dir.path(), "dedupe = 30\ndedupe_unit = \"3k\"");
    let out = dry(&odd, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("--dedupe-unit"), "no flag was given: {err}");
    assert!(
        err.contains(&format!(
            "{}: [data] dedupe_unit = \"3k\": every write must be made of whole units, but a 4k write is not",
            odd.display()
        )),
        "{err}"
    );
    // A flag over it is the flag's, and named as one.
    assert!(dry(&odd, &["--dedupe-unit", "4k"]).status.success());
    let out = dry(&with_share, &["--dedupe-unit", "3k"]);
    assert!(stderr(&out).contains("error: --dedupe-unit 3k: every write must be made of whole units"), "{}", stderr(&out));
}

/// Runs `cmd` with its stdout closed from the start (a reader that went away).
fn with_stdout_closed(cmd: &mut std::process::Command) -> std::process::Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}
