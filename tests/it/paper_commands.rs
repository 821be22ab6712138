//! The white papers' studies: every command of docs/methodology.md's "One
//! command per paper" table runs end to end (short: `--time 500ms --ramp 0`),
//! keeps a result per row, and leaves nothing behind.

use crate::common::*;
use crate::require_root;

/// The commands of the table, as the page gives them (without `lunmark`).
fn commands() -> Vec<(String, Vec<String>)> {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/methodology.md")).unwrap();
    let section = page.split("## One command per paper").nth(1).expect("the section").split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let cmd = cells.get(2)?.strip_prefix("`lunmark ")?.strip_suffix('`')?;
            Some((cells[1].to_string(), cmd.split_whitespace().map(String::from).collect()))
        })
        .collect()
}

#[test]
fn every_papers_command_runs_end_to_end() {
    require_root!();
    let list = commands();
    assert_eq!(list.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["000", "001", "002", "003", "004"]);
    for (paper, args) in list {
        let (dir, keep) = (shm_dir(), shm_dir());
        let store = keep.path().join("s.db");
        let out = lunmark()
            .env("LUNMARK_LAB_DIR", dir.path())
            .args(&args)
            .args(["--time", "500ms", "--ramp", "0", "-q", "--store", store.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "paper {paper}: lunmark {}:\n{}{}", args.join(" "), stdout(&out), stderr(&out));
        let listed = with_store(&store, &["results", "list", "--format", "json"]);
        let n = serde_json::from_slice::<serde_json::Value>(&listed.stdout).unwrap().as_array().map_or(0, |a| a.len());
        assert!(n >= 1, "paper {paper}: no result kept");
        assert_lab_left_nothing(dir.path());
    }
}
