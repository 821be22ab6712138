//! What a run says while it runs, now that the run tells observers and the
//! command line prints (issue 13): the plan's warnings, the plain live line
//! each second, the trace's note and where the result was kept, on stderr in
//! that order, with stdout left to the summary; `--quiet` silences the live
//! line and the trace's note, not the warnings.

use crate::common::{run, shm_dir, stderr, stdout};

/// The index of the first stderr line that `pred` accepts.
fn line_of(err: &str, what: &str, pred: impl Fn(&str) -> bool) -> usize {
    err.lines().position(pred).unwrap_or_else(|| panic!("no {what} line in:\n{err}"))
}

#[test]
fn warnings_live_lines_the_trace_note_and_saved_come_in_order_on_stderr() {
    let dir = shm_dir();
    let (file, trace) = (dir.path().join("lun"), dir.path().join("io.trace"));
    let args = |quiet: bool| {
        let mut a: Vec<String> = ["run", "-t", file.to_str().unwrap(), "--size", "8m", "--engine", "psync", "--qd", "4"]
            .into_iter()
            .chain(["--bs", "4k", "--read", "100", "--time", "2s", "--ramp", "0", "--trace", trace.to_str().unwrap()])
            .map(String::from)
            .collect();
        if quiet {
            a.push("--quiet".into());
        }
        a
    };
    let out = run(&args(false).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warning = line_of(&err, "psync warning", |l| l.starts_with("warning: group '") && l.contains("the psync engine does one I/O"));
    let first_second = line_of(&err, "live", |l| l.starts_with("run 1s/2s") && l.contains(" IOPS ") && l.contains(" MB/s  p99 "));
    let last_second = line_of(&err, "live", |l| l.starts_with("run 2s/2s"));
    let traced = line_of(&err, "trace", |l| l.starts_with("trace: ") && l.ends_with(&format!("I/Os recorded in {}", trace.display())));
    let saved = line_of(&err, "saved", |l| l.starts_with("saved as "));
    assert!(warning < first_second && first_second < last_second && last_second < traced && traced < saved, "{err}");
    let table = stdout(&out);
    assert!(!table.lines().any(|l| l.starts_with("run 1s/2s")), "no live line on stdout: {table}");

    let out = run(&args(true).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    line_of(&err, "psync warning", |l| l.starts_with("warning: group '"));
    line_of(&err, "saved", |l| l.starts_with("saved as "));
    assert!(!err.lines().any(|l| l.starts_with("run ") || l.starts_with("trace: ")), "--quiet: no live line, no trace note:\n{err}");
}

/// The figures of a live line's "(whole run 12s of ~18s, ~6s left)", in seconds.
fn whole_run(line: &str) -> Option<(u64, u64, u64)> {
    let rest = line.split("(whole run ").nth(1)?;
    let nums: Vec<u64> = rest.split(|c: char| !c.is_ascii_digit()).filter(|w| !w.is_empty()).filter_map(|w| w.parse().ok()).collect();
    match nums.as_slice() {
        [elapsed, total, left] => Some((*elapsed, *total, *left)),
        _ => None,
    }
}

/// A new 1 GiB file is filled before its point's ramp: the whole run's
/// estimate counts that set-up, so each line's whole is its elapsed plus
/// what is left (within rounding), and the last line is not "of" less than
/// its elapsed time (it read "25s of ~24s" when only the ramps and measured
/// seconds were counted).
#[test]
fn the_whole_run_estimate_counts_the_set_up_spent() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let out = run(&["run", "-t", file.to_str().unwrap(), "--size", "1g", "--read", "100", "--ramp", "1s", "--time", "2s", "--no-store"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let figures: Vec<(u64, u64, u64)> = err.lines().filter_map(whole_run).collect();
    assert!(figures.len() >= 3, "{err}");
    // The fill took a second or more (a release build fills 1 GiB of RAM in about one), or this test says nothing.
    assert!(figures[0].0 >= 1, "the set-up before the first tick: {err}");
    for (elapsed, total, left) in &figures {
        assert!((elapsed + left).abs_diff(*total) <= 1, "{elapsed}s of ~{total}s, ~{left}s left:\n{err}");
    }
    let (elapsed, total, left) = figures[figures.len() - 1];
    assert!(total >= elapsed && left <= 1, "the last line: {elapsed}s of ~{total}s, ~{left}s left:\n{err}");
}
