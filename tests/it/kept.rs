//! Nothing measured is lost: the store is proved writable before a run (or
//! skipped with --no-store), a read-only store can still be browsed, runs that
//! create one store at once are all kept, a sweep over targets records every
//! target, and a failed output never hides a failed --pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::*;
use crate::require_root;

/// A small tmpfs this test mounted; unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    fn new(at: PathBuf, size: &str) -> Tmpfs {
        std::fs::create_dir(&at).unwrap();
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&at).status().unwrap();
        assert!(ok.success(), "mount tmpfs at {}", at.display());
        Tmpfs { path: at }
    }

    fn read_only(&self) {
        let ok = Command::new("mount").args(["-o", "remount,ro"]).arg(&self.path).status().unwrap();
        assert!(ok.success(), "remount {} read-only", self.path.display());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

/// A file made immutable (`chattr +i`: even root cannot write it); mutable again when dropped.
struct Immutable(PathBuf);

impl Immutable {
    fn new(path: &Path) -> Immutable {
        assert!(Command::new("chattr").arg("+i").arg(path).status().unwrap().success(), "chattr +i {}", path.display());
        Immutable(path.to_path_buf())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

/// lunmark with its store named by `--store` (the flag, not the environment).
fn with_store_flag(store: &Path, args: &[&str]) -> Output {
    lunmark().arg("--store").arg(store).args(args).output().unwrap()
}

const SHORT_RUN: &[&str] = &["run", "-q", "-t", "mem:4m", "--read", "100", "--time", "200ms", "--ramp", "0"];

/// Refused before anything ran: exit 1, no summary, the store's path, the
/// reason, and both ways out named.
fn assert_refused_before_the_run(out: &Output, store: &Path, reason: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!stdout(out).contains("IOPS"), "nothing ran, nothing is printed: {}", stdout(out));
    assert!(err.contains(store.to_str().unwrap()) && err.contains(reason), "path and reason ({reason}): {err}");
    assert!(err.contains("--no-store") && err.contains("--store PATH") && err.contains("Nothing was run"), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "said once: {err}");
}

#[test]
fn an_unwritable_store_is_refused_before_the_run() {
    require_root!();
    let dir = shm_dir();
    // A store whose parent directory is a file.
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let store = file.join("results.db");
    assert_refused_before_the_run(&with_store_flag(&store, SHORT_RUN), &store, "not a directory");

    // A store on a read-only filesystem, new or existing.
    let fs = Tmpfs::new(dir.path().join("ro"), "4m");
    let existing = fs.path.join("results.db");
    let made = with_store_flag(&existing, SHORT_RUN);
    assert!(made.status.success(), "{}", stderr(&made));
    fs.read_only();
    assert_refused_before_the_run(&with_store_flag(&existing, SHORT_RUN), &existing, "Read-only file system");
    let new = fs.path.join("new.db");
    assert_refused_before_the_run(&with_store_flag(&new, SHORT_RUN), &new, "Read-only file system");
    assert!(!new.exists());

    // An immutable store file (root ignores permission bits, not this).
    let other = dir.path().join("immutable.db");
    assert!(with_store_flag(&other, SHORT_RUN).status.success());
    let _guard = Immutable::new(&other);
    assert_refused_before_the_run(&with_store_flag(&other, SHORT_RUN), &other, "Operation not permitted");

    // --no-store runs anyway, says so, and touches no store (even $LUNMARK_STORE's).
    let json = dir.path().join("r.json");
    let out =
        lunmark().env("LUNMARK_STORE", &store).args(SHORT_RUN).args(["--no-store", "--json", json.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("not kept in a result store (--no-store)"), "{}", stderr(&out));
    assert_eq!(read_json(&json)["status"], "completed");
    // Contradicting flags are refused.
    let out = with_store_flag(&dir.path().join("s.db"), &[SHORT_RUN, &["--no-store"]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--no-store and --store"), "{}", stderr(&out));
}

/// A store on a full filesystem is found before the run, not after it.
#[test]
fn a_store_on_a_full_filesystem_is_refused_before_the_run() {
    require_root!();
    let dir = shm_dir();
    let fs = Tmpfs::new(dir.path().join("full"), "64k");
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k", "status=none"])
        .arg(format!("of={}", fs.path.join("filler").display()))
        .stderr(Stdio::null())
        .status();
    let store = fs.path.join("results.db");
    let out = with_store_flag(&store, SHORT_RUN);
    assert_refused_before_the_run(&out, &store, "full");
}

#[test]
fn a_read_only_store_is_listed_shown_exported_compared_and_reported() {
    require_root!();
    let dir = shm_dir();
    let fs = Tmpfs::new(dir.path().join("ro"), "8m");
    let store = fs.path.join("results.db");
    let a = saved_id(&with_store_flag(&store, SHORT_RUN));
    let b = saved_id(&with_store_flag(&store, SHORT_RUN));
    fs.read_only();
    let ok = |args: &[&str]| {
        let out = with_store_flag(&store, args);
        assert!(out.status.success(), "{args:?} on a read-only store: {}", stderr(&out));
        stdout(&out)
    };
    let list = ok(&["results", "list"]);
    assert!(list.contains(&a) && list.contains(&b), "{list}");
    assert!(ok(&["results", "show", &a]).contains(&a));
    let exported: serde_json::Value = serde_json::from_str(&ok(&["results", "export", &b])).unwrap();
    assert_eq!(exported["id"], b.as_str());
    assert!(ok(&["compare", &a, &b]).contains(&b));
    let report = dir.path().join("report.html");
    ok(&["report", &a, &b, "-o", report.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&report).unwrap().contains(&b));
    // Changing it is refused, naming the store.
    let out = with_store_flag(&store, &["results", "delete", &a]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(store.to_str().unwrap()) && err.contains("cannot be changed") && err.contains("Read-only file system"), "{err}");

    // An immutable store file in a writable directory reads the same way.
    let other = dir.path().join("immutable.db");
    let c = saved_id(&with_store_flag(&other, SHORT_RUN));
    let _guard = Immutable::new(&other);
    let out = with_store_flag(&other, &["results", "list"]);
    assert!(out.status.success() && stdout(&out).contains(&c), "{}", stderr(&out));
    // A store that does not exist lists as empty and is not created.
    let none = dir.path().join("none.db");
    let out = with_store_flag(&none, &["results", "list"]);
    assert!(out.status.success() && stdout(&out).contains("no results yet"), "{}", stderr(&out));
    assert!(!none.exists());
}

/// Eight runs started together on a store that does not exist yet: every one
/// is kept (before, the losers of the race to create the tables lost theirs).
/// Its directory exists: `--store` in a missing directory is refused, as `--json`.
#[test]
fn eight_runs_creating_one_store_at_once_are_all_kept() {
    let dir = shm_dir();
    std::fs::create_dir(dir.path().join("new")).unwrap();
    let store = dir.path().join("new").join("results.db");
    let children: Vec<_> = (0..8)
        .map(|_| {
            lunmark()
                .arg("--store")
                .arg(&store)
                .args(["run", "-q", "-t", "mem:16M", "--time", "1s", "--ramp", "0"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        ids.push(saved_id(&out));
    }
    let list = stdout(&with_store_flag(&store, &["results", "list"]));
    for id in &ids {
        assert!(list.contains(id), "{id} is kept: {list}");
    }
    assert_eq!(list.matches("completed").count(), 8, "{list}");
}

/// `--sweep targets=1,2` records both targets, in `targets` and `workload.targets`.
#[test]
fn a_targets_sweep_records_every_target_it_used() {
    let dir = shm_dir();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let json = dir.path().join("r.json");
    let out = lunmark()
        .args(["run", "-q", "--no-store", "-t", a.to_str().unwrap(), "-t", b.to_str().unwrap(), "--size", "4m"])
        .args(["--read", "100", "--time", "200ms", "--ramp", "0", "--sweep", "targets=1,2", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["points"].as_array().unwrap().len(), 2);
    let uris: Vec<&str> = r["targets"].as_array().unwrap().iter().map(|t| t["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, [a.to_str().unwrap(), b.to_str().unwrap()], "every target a point used");
    assert!(r["targets"][1]["region_bytes"].as_u64().unwrap() > 0, "the second target's facts are its own");
    assert_eq!(r["workload"]["targets"], serde_json::json!([a.to_str().unwrap(), b.to_str().unwrap()]));
}

/// A failed --pass exits 4 even when the --json file cannot be written in the
/// end (its directory vanished during the run), and both problems are reported.
#[test]
fn a_failed_pass_exits_4_even_when_the_json_cannot_be_written() {
    let dir = shm_dir();
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let child = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:4m", "--time", "1s", "--ramp", "0", "--pass", "iops>1000000000000"])
        .arg("--json")
        .arg(gone.join("r.json"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::remove_dir(&gone).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "the failed criterion keeps its code: {err}");
    assert!(stdout(&out).contains("FAIL iops>"), "the verdict is reported: {}", stdout(&out));
    assert!(err.contains(gone.join("r.json").to_str().unwrap()) && err.contains("does not exist"), "{err}");
    // A run that passed but lost its output is not a success.
    let gone2 = dir.path().join("gone2");
    let out = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:4m", "--time", "200ms", "--ramp", "0", "--json"])
        .arg(gone2.join("r.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}
