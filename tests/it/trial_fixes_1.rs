//! Findings of the user trial (fix helper FX1): an output naming an input of
//! the same command, a negative power reading, an empty --label.

use std::path::Path;

use crate::common::*;

fn fixture_trace(dir: &Path) -> std::path::PathBuf {
    let trace = dir.join("t1.trace");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blkparse/sample.txt"), &trace).unwrap();
    trace
}

/// `cache-curve T --json T` replaced the trace with JSON (exit 0), and
/// `run --replay R --json R` the replay trace: both are refused before
/// anything runs, naming both flags and the file, and the trace is left whole.
#[test]
fn an_output_naming_the_commands_input_is_refused_and_the_input_kept() {
    let dir = shm_dir();
    let trace = fixture_trace(dir.path());
    let before = std::fs::read(&trace).unwrap();
    let dotted = dir.path().join(".").join("t1.trace");
    let t = trace.to_str().unwrap();
    let cases: [(Vec<&str>, &str, &str); 3] = [
        (vec!["cache-curve", t, "--json", t], "--json", "the FILE argument"),
        (vec!["run", "-t", "mem:64m", "--time", "1s", "--replay", t, "--json", dotted.to_str().unwrap()], "--json", "--replay"),
        (vec!["run", "-t", "mem:64m", "--time", "1s", "--replay", t, "--journal", t], "--journal", "--replay"),
    ];
    for (args, out_flag, in_flag) in cases {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&format!("error: {out_flag} ")), "{args:?}: {err}");
        assert!(err.contains(&format!("that is also the file this command reads ({in_flag} {t})")), "{args:?}: {err}");
        assert_eq!(err.matches("error").count(), 1, "said once: {err}");
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{args:?} left the trace as it was");
    }
}

/// A profile's [replay] file is known only once the profile is read: --json
/// and --journal naming it are refused there, as --trace was.
#[test]
fn an_output_naming_a_profiles_replay_trace_is_refused() {
    let dir = shm_dir();
    let trace = fixture_trace(dir.path());
    let before = std::fs::read(&trace).unwrap();
    let t = trace.to_str().unwrap();
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"replayed\"\ndescription = \"a replay\"\n[replay]\nfile = \"{t}\"\n\
             [[phases]]\nname = \"main\"\n[[phases.groups]]\nname = \"main\"\nworkers = 1\nqd = 1\n\
             [[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 0.0\n"
        ),
    )
    .unwrap();
    for flag in ["--json", "--journal", "--trace"] {
        let o = run(&["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:1m", "-t", "mem:1m", flag, t]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{flag}: {err}");
        assert!(err.contains(&format!("{flag} {t} names the trace being replayed")), "{flag}: {err}");
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{flag} left the trace as it was");
    }
}

/// `--power-cmd 'echo -5 W'` gave "power 5.00 W average" and per-watt figures:
/// the reading is a bad one, so the point has no power figure and says why.
#[test]
fn a_negative_power_reading_gives_no_figure_and_a_note_naming_it() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let o = lunmark()
        .args(["run", "-t", "mem:16m", "--read", "100", "--time", "1s", "--ramp", "0", "-q", "--power-cmd", "echo -5 W"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&json);
    let power = &r["points"][0]["summary"]["power"];
    assert!(power["avg_watts"].is_null() && power["iops_per_watt"].is_null(), "{power}");
    let reason = power["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("bad reading: '-5'"), "{power}");
}

/// `--label ''` was accepted and labelled lab rows ": lab cache: ...".
#[test]
fn an_empty_label_is_refused_before_anything_runs() {
    for label in ["", "  "] {
        let o = run(&["run", "-t", "mem:16m", "--time", "1s", "--label", label]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{err}");
        assert!(err.contains("--label") && err.contains("a label cannot be empty"), "{err}");
        assert!(stdout(&o).is_empty(), "nothing ran: {}", stdout(&o));
    }
}
