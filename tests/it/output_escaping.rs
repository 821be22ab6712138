//! User text in every output format: a label (and a profile name) carrying
//! HTML, Markdown, a spreadsheet formula, a carriage return and terminal escape
//! sequences is shown as text in Markdown (report, export, compare), cannot
//! start a formula in CSV (export, list, compare), prints no escape sequence
//! on the terminal (the run's summary, list, show, compare), and is kept in
//! the store as given (JSON export).

use std::path::Path;

use crate::common::*;

const LABEL: &str = "=HYPERLINK(\"http://x\")<img src=x onerror=alert(1)>**b**\r|\x1b[2J\x1b]0;pwned\x07";

fn lm(store: &Path, args: &[&str]) -> std::process::Output {
    let out = lunmark().arg("--store").arg(store).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

/// Two saved runs labelled LABEL; their ids.
fn two_runs(store: &Path) -> Vec<String> {
    (0..2)
        .map(|_| {
            let out = lm(store, &["run", "-t", "mem:16m", "--time", "1s", "--ramp", "0", "--label", LABEL]);
            assert!(!stdout(&out).contains('\x1b') && !stderr(&out).contains('\x1b'), "the run printed an escape sequence");
            let err = stderr(&out);
            let saved = err.lines().find(|l| l.starts_with("saved as ")).unwrap_or_else(|| panic!("{err}"));
            saved.split_whitespace().nth(2).unwrap().to_string()
        })
        .collect()
}

#[test]
fn user_text_is_escaped_for_markdown_csv_and_the_terminal() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let ids = two_runs(&store);
    let (a, b) = (ids[0].as_str(), ids[1].as_str());

    let md_file = dir.path().join("r.md");
    lm(&store, &["report", a, "--format", "md", "-o", md_file.to_str().unwrap()]);
    let report = std::fs::read_to_string(&md_file).unwrap();
    let export = stdout(&lm(&store, &["results", "export", a, "--format", "md"]));
    let compare = stdout(&lm(&store, &["compare", a, b, "--format", "md"]));
    for (what, md) in [("report", &report), ("export", &export), ("compare", &compare)] {
        assert!(!md.contains("<img") && !md.contains("**b**") && !md.contains('\x1b') && !md.contains('\r'), "{what}: {md}");
        assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{what}: the label is missing: {md}");
    }

    for args in
        [&["results", "export", a, "--format", "csv"][..], &["results", "list", "--format", "csv"], &["compare", a, b, "--format", "csv"]]
    {
        let csv = stdout(&lm(&store, args));
        assert!(
            !csv.contains(",=HYPERLINK") && !csv.contains("\"=HYPERLINK") && !csv.lines().any(|l| l.starts_with('=')),
            "{args:?}: {csv}"
        );
        assert!(csv.contains("'=HYPERLINK"), "{args:?}: the label is missing: {csv}");
        // The carriage return is inside a quoted field: every row has the header's field count.
        let header = csv.lines().next().unwrap().split(',').count();
        assert!(csv.contains("\"'=HYPERLINK(\"\"http://x\"\")<img"), "{args:?}: {csv}");
        assert!(header > 3, "{csv}");
    }

    for args in [&["results", "list"][..], &["results", "show", a], &["compare", a, b]] {
        let text = stdout(&lm(&store, args));
        assert!(!text.contains('\x1b') && !text.contains('\x07') && !text.contains('\r'), "{args:?} printed control characters: {text:?}");
    }
    let list = stdout(&lm(&store, &["results", "list"]));
    assert!(list.contains("^[[2J"), "the label is shown with its escapes made visible: {list}");

    // The store keeps the text as given.
    let json = stdout(&lm(&store, &["results", "export", a, "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let label = v.get("label").or_else(|| v[0].get("label")).and_then(|l| l.as_str()).unwrap_or_default().to_string();
    assert_eq!(label, LABEL);
}

/// A figure below zero stays a number in CSV: only text cells are neutralised.
#[test]
fn negative_numbers_stay_numbers_in_csv() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    lm(&store, &["run", "-t", "mem:16m", "--time", "1s", "--ramp", "0", "--label=-5"]);
    let csv = stdout(&lm(&store, &["results", "list", "--format", "csv"]));
    assert!(csv.lines().nth(1).unwrap().contains(",-5,"), "{csv}");
}
