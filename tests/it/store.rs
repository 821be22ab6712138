//! The result store itself: what it accepts as a store, what it says when the
//! file is damaged, full or locked, and that it never changes a database that
//! is not lunmark's. Real SQLite files, checked with the sqlite3 CLI.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;
use crate::require_root;

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

/// The sqlite3 CLI's view of a database: its tables, user_version and journal mode.
fn what_sqlite3_sees(db: &Path) -> (String, String, String) {
    (
        sqlite3(db, "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)"),
        sqlite3(db, "PRAGMA user_version"),
        sqlite3(db, "PRAGMA journal_mode"),
    )
}

#[test]
fn another_programs_database_is_refused_and_left_unchanged() {
    let dir = shm_dir();
    // One with tables of its own, one that happens to have a `runs` table.
    let cases = [
        (
            "contacts.db",
            "CREATE TABLE contacts (name TEXT, phone TEXT); INSERT INTO contacts VALUES ('a', '1'); PRAGMA user_version = 7;",
            "contacts",
        ),
        ("ci.db", "CREATE TABLE runs (id INTEGER PRIMARY KEY, job TEXT); INSERT INTO runs (job) VALUES ('build');", "runs"),
    ];
    for (name, sql, tables) in cases {
        let db = dir.path().join(name);
        sqlite3(&db, sql);
        let seen = what_sqlite3_sees(&db);
        assert_eq!(seen.2, "delete");
        let bytes = std::fs::read(&db).unwrap();
        let path = db.display().to_string();
        let refusal = format!("{path} is not a lunmark result store: it is a SQLite database of another program (its tables: {tables})");
        let out = on(&db, &["run", "-t", "mem:16m", "--read", "100", "--time", "100ms", "--ramp", "0"]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(&refusal) && stderr(&out).contains("Nothing was run"), "{name}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{name}: it ran: {}", stdout(&out));
        for args in [&["results", "list"][..], &["results", "delete", "abc"], &["results", "show", "abc"]] {
            let out = on(&db, args);
            assert_eq!(out.status.code(), Some(1), "{name} {args:?}: {}{}", stdout(&out), stderr(&out));
            assert!(stderr(&out).contains(&refusal), "{name} {args:?}: {}", stderr(&out));
            assert!(!stdout(&out).contains("no results yet"), "{name} {args:?}: {}", stdout(&out));
        }
        assert_eq!(what_sqlite3_sees(&db), seen, "{name}: lunmark changed another program's database");
        assert!(std::fs::read(&db).unwrap() == bytes, "{name}: its bytes changed");
        assert!(!Path::new(&format!("{path}-wal")).exists(), "{name}: a WAL file was left beside it");
    }
    // A file that is not SQLite at all.
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "shopping list\n".repeat(100)).unwrap();
    let out = on(&notes, &["run", "-t", "mem:16m", "--read", "100", "--time", "100ms", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("{} is not a lunmark result store: SQLite cannot read it", notes.display())),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "shopping list\n".repeat(100));
}

/// A tmpfs of `size` mounted on a directory of its own; unmounted on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn new(size: &str) -> SmallFs {
        let dir = shm_dir();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "mount: {}", stderr(&out));
        SmallFs { dir }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A six-point run whose store fills after a few points: the row is marked
/// failed (not left `running`) and the final error says what the store keeps.
#[test]
fn a_store_that_fills_mid_run_says_what_it_keeps_and_is_not_left_running() {
    require_root!();
    let fs = SmallFs::new("192k");
    let db = fs.dir.path().join("results.db");
    let out = on(&db, &["run", "-q", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,2,4,8,16,32", "--time", "100ms", "--ramp", "0"]);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    let (status, kept) = sqlite3(&db, "SELECT status || ' ' || (SELECT count(*) FROM points) FROM runs")
        .split_once(' ')
        .map(|(s, n)| (s.to_string(), n.parse::<usize>().unwrap()))
        .unwrap();
    assert!(kept < 6, "the store did not fill: {e}");
    assert_eq!(status, "failed", "{e}");
    let id = sqlite3(&db, "SELECT id FROM runs");
    let said = format!("could not save the result in the store {} at the end (database or disk is full", db.display());
    assert!(e.contains(&said), "{e}");
    assert!(e.contains(&format!("it keeps result {id} with {kept} of the 6 points measured, marked failed")), "{e}");
    assert!(!e.contains("saved as"), "{e}");
    let list = on(&db, &["results", "list", "--format", "csv"]);
    assert!(stdout(&list).contains(&format!("{id},")) && stdout(&list).contains(",failed,"), "{}", stdout(&list));
    let leftovers: Vec<_> = std::fs::read_dir(fs.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().contains("reserve"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Polls until the store holds at least `n` points of any run.
fn wait_for_points(db: &Path, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        let count = std::process::Command::new("sqlite3")
            .arg(db)
            .arg("SELECT count(*) FROM points")
            .output()
            .ok()
            .map(|o| stdout(&o).trim().parse::<usize>().unwrap_or(0))
            .unwrap_or(0);
        if count >= n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the store never held {n} points");
}

/// A store held locked by another program longer than lunmark waits: the
/// save after that point fails, later ones keep the whole result, and the end
/// says so (a note, exit 0), not "could not save the result".
#[test]
fn a_store_locked_mid_run_then_saved_is_reported_as_saved() {
    use std::io::Write;
    let dir = shm_dir();
    let db = dir.path().join("results.db");
    let run = lunmark()
        .env("LUNMARK_STORE", &db)
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,2,4,8", "--time", "1s", "--ramp", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_points(&db, 1);
    let mut holder = std::process::Command::new("sqlite3").arg(&db).stdin(std::process::Stdio::piped()).spawn().unwrap();
    let mut stdin = holder.stdin.take().unwrap();
    writeln!(stdin, "BEGIN IMMEDIATE;").unwrap();
    // Longer than lunmark's 30 s busy timeout.
    std::thread::sleep(std::time::Duration::from_secs(32));
    writeln!(stdin, "COMMIT;").unwrap();
    drop(stdin);
    holder.wait().unwrap();
    let out = run.wait_with_output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(!e.contains("could not save"), "{e}");
    assert!(e.contains("failed; the saves after it kept the whole result (4 points) in the store"), "{e}");
    let id = sqlite3(&db, "SELECT id FROM runs");
    assert!(e.contains(&format!("saved as {id} in {}", db.display())), "{e}");
    assert_eq!(sqlite3(&db, "SELECT status || ' ' || (SELECT count(*) FROM points) FROM runs"), "completed 4");
}

/// `results delete` of a result whose run is still going: said plainly, and
/// the run does not bring it back.
#[test]
fn a_result_deleted_during_its_run_stays_deleted_and_both_sides_say_so() {
    let dir = shm_dir();
    let db = dir.path().join("results.db");
    let run = lunmark()
        .env("LUNMARK_STORE", &db)
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,2,4,8", "--time", "500ms", "--ramp", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_points(&db, 1);
    let id = sqlite3(&db, "SELECT id FROM runs");
    let del = on(&db, &["results", "delete", &id]);
    assert!(del.status.success(), "{}", stderr(&del));
    assert!(
        stdout(&del)
            .contains(&format!("deleted {id}\nit was marked running: if its run is still going, that run saves nothing more of it")),
        "{}",
        stdout(&del)
    );
    let out = run.wait_with_output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(
        e.contains(&format!(
            "result {id} was deleted from the store {} during its run (results delete): the rest of the run was not saved there",
            db.display()
        )),
        "{e}"
    );
    assert!(!e.contains("saved as"), "{e}");
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM runs") + &sqlite3(&db, "SELECT count(*) FROM points"),
        "00",
        "the deleted result came back"
    );
}

/// The room a run keeps beside its store is gone when it ends, and one left
/// by a killed run (its process gone) is removed by the next run.
#[test]
fn a_runs_reserve_beside_the_store_is_removed_and_a_killed_runs_too() {
    let dir = shm_dir();
    let db = dir.path().join("results.db");
    let stale = dir.path().join(".results.db.reserve-999999999");
    std::fs::write(&stale, vec![0u8; 65536]).unwrap();
    measure(&db, "one");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("reserve"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
