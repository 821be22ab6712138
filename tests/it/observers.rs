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
