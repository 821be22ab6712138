//! The result store itself: what it accepts as a store, what it says when the
//! file is damaged, full or locked, and that it never changes a database that
//! is not lunmark's. Real SQLite files, checked with the sqlite3 CLI.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

/// Runs lunmark on the store at `db`.
fn on(db: &Path, args: &[&str]) -> Output {
    lunmark().env("LUNMARK_STORE", db).args(args).output().unwrap()
}

/// A short run on memory saved in `db`: its id.
fn measure(db: &Path, label: &str) -> String {
    let out =
        on(db, &["run", "-q", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,2,4", "--time", "100ms", "--ramp", "0", "--label", label]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err.lines().find(|l| l.starts_with("saved as ")).unwrap_or_else(|| panic!("no 'saved as' in: {err}"));
    line.split_whitespace().nth(2).unwrap().to_string()
}

/// The sqlite3 CLI's answer to `sql` on `db` (the tool of record, not lunmark's own reading).
fn sqlite3(db: &Path, sql: &str) -> String {
    let out = std::process::Command::new("sqlite3").arg(db).arg(sql).output().expect("sqlite3 CLI");
    assert!(out.status.success(), "sqlite3 {sql}: {}", stderr(&out));
    stdout(&out).trim().to_string()
}

/// Overwrites `len` bytes at `offset` of page `page` (1-based) with 0xff.
fn flip(db: &Path, page: u64, offset: u64, len: usize) {
    use std::io::{Seek, SeekFrom, Write};
    let size: u64 = sqlite3(db, "PRAGMA page_size").parse().unwrap();
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start((page - 1) * size + offset)).unwrap();
    f.write_all(&vec![0xff; len]).unwrap();
}

/// A store of three runs, checkpointed so that every page is in the file itself.
fn store_of_three(dir: &Path) -> (PathBuf, Vec<String>) {
    let db = dir.join("results.db");
    let ids = ["one", "two", "three"].iter().map(|l| measure(&db, l)).collect();
    sqlite3(&db, "PRAGMA wal_checkpoint(TRUNCATE)");
    (db, ids)
}

/// Every command that reads the store, each with what it needs.
fn readers(ids: &[String], dir: &Path) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        s(&["results", "list"]),
        s(&["results", "list", "--format", "json"]),
        s(&["results", "list", "--format", "csv"]),
        s(&["results", "show", &ids[0]]),
        s(&["results", "export", &ids[0]]),
        s(&["results", "export", "--format", "csv", &ids[0]]),
        s(&["compare", &ids[0], &ids[1]]),
        s(&["report", &ids[0], "-o", dir.join("r.html").to_str().unwrap()]),
    ]
}

#[test]
fn a_damaged_page_of_points_is_named_by_every_reader_and_no_figure_is_shown() {
    let dir = shm_dir();
    let (db, ids) = store_of_three(dir.path());
    let page: u64 =
        sqlite3(&db, "SELECT pageno FROM dbstat WHERE name = 'points' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1").parse().unwrap();
    // The page's header: SQLite can no longer read the page at all.
    flip(&db, page, 0, 64);
    let path = db.display().to_string();
    for args in readers(&ids, dir.path()) {
        let out = on(&db, &args.iter().map(String::as_str).collect::<Vec<_>>());
        let (o, e) = (stdout(&out), stderr(&out));
        assert!(!out.status.success(), "{args:?} exits 0 on a damaged store:\n{o}{e}");
        assert!(e.contains(&format!("the result store {path} is damaged")), "{args:?} does not name the damaged store: {e}");
        assert!(e.contains("SQLite's check finds"), "{args:?}: {e}");
        assert!(!o.contains(" 0.0 ") && !o.contains("-/0") && !o.contains("\"points\": 0"), "{args:?} shows made-up figures:\n{o}");
    }
    // A run refuses the store before it measures anything, and leaves it as it was.
    let before = std::fs::read(&db).unwrap();
    let out = on(&db, &["run", "-t", "mem:16m", "--read", "100", "--time", "100ms", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("the result store {path} is damaged")) && stderr(&out).contains("Nothing was run"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty(), "it ran: {}", stdout(&out));
    assert!(std::fs::read(&db).unwrap() == before, "the damaged store was written");
}

#[test]
fn bytes_changed_inside_a_stored_point_name_its_result_and_spare_the_others() {
    let dir = shm_dir();
    let (db, ids) = store_of_three(dir.path());
    // The middle of the page holding the first result's first point: inside
    // its JSON text, where SQLite's own check sees nothing wrong.
    let page: u64 =
        sqlite3(&db, "SELECT pageno FROM dbstat WHERE name = 'points' AND pagetype = 'leaf' ORDER BY pageno LIMIT 1").parse().unwrap();
    let size: u64 = sqlite3(&db, "PRAGMA page_size").parse().unwrap();
    flip(&db, page, size - 600, 16);
    assert_eq!(sqlite3(&db, "PRAGMA quick_check"), "ok", "the test means damage SQLite does not see");
    let out = on(&db, &["results", "list"]);
    let e = stderr(&out);
    assert!(!out.status.success(), "list exits 0:\n{}", stdout(&out));
    assert!(e.contains(&format!("the result store {} is damaged", db.display())) && e.contains("of result "), "{e}");
    // Which result holds the damage is said; the others still read.
    let damaged = ids.iter().find(|id| e.contains(id.as_str())).unwrap_or_else(|| panic!("no id named: {e}"));
    let out = on(&db, &["results", "show", damaged]);
    assert!(!out.status.success() && stderr(&out).contains("is damaged"), "{}{}", stdout(&out), stderr(&out));
    for id in ids.iter().filter(|id| *id != damaged) {
        let out = on(&db, &["results", "show", id]);
        assert!(out.status.success(), "{id}: {}", stderr(&out));
    }
}
