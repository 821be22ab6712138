//! Sizes of inputs: stored texts are bounded with a clear refusal, and what
//! is allowed (or a store written before the bound) lists and plans in time
//! linear in its size.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Runs lunmark on the store at `db`, failing the test if it takes longer
/// than `limit`. Its output goes to files, so a large one never blocks it.
fn bounded(db: &Path, args: &[&str], limit: Duration) -> Output {
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let mut child = lunmark()
        .env("LUNMARK_STORE", db)
        .args(args)
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(err.try_clone().unwrap()))
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("lunmark {:?} took over {limit:?}", &args[..args.len().min(4)]);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut bytes).unwrap();
        bytes
    };
    Output { status, stdout: read(out), stderr: read(err) }
}

#[test]
fn labels_and_names_beyond_their_bound_are_refused_stating_it() {
    let dir = shm_dir();
    let db = dir.path().join("results.db");
    let label = "y".repeat(1001);
    let out = bounded(&db, &["run", "-t", "mem:1m", "--label", &label, "--dry-run"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the label is 1001 characters long; at most 1000 are allowed"), "{}", stderr(&out));
    let profile = dir.path().join("p.toml");
    let name = "q".repeat(201);
    std::fs::write(&profile, format!("name = \"p\"\ndescription = \"d\"\n[[phases]]\nname = \"{name}\"\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 1\n[[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 100.0\n")).unwrap();
    let out = bounded(&db, &["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:1m", "--dry-run"], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("phases[0].name is 201 characters long; at most 200 are allowed"), "{}", stderr(&out));
    let golden = format!("{}/tests/golden/result-a.json", env!("CARGO_MANIFEST_DIR"));
    let mut r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
    r["label"] = "z".repeat(100_000).into();
    let file = dir.path().join("r.json");
    std::fs::write(&file, r.to_string()).unwrap();
    let out = bounded(&db, &["results", "import", file.to_str().unwrap()], Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("label is 100000 characters long; at most 1000 are allowed"), "{}", stderr(&out));
}

/// A store written before labels were bounded (the label set with the sqlite3
/// CLI): the table cuts it with an ellipsis and lists at once; csv keeps it whole.
#[test]
fn a_store_with_a_huge_label_lists_quickly() {
    let dir = shm_dir();
    let db = dir.path().join("results.db");
    let out = lunmark()
        .env("LUNMARK_STORE", &db)
        .args(["run", "-q", "-t", "mem:1m", "--read", "100", "--time", "50ms", "--ramp", "0", "--label", "short"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let set = std::process::Command::new("sqlite3").arg(&db).arg("UPDATE runs SET label = printf('%.*c', 200000, 'x')").output().unwrap();
    assert!(set.status.success(), "{}", stderr(&set));
    // Unbroken, this took minutes: the table's wrapping of one word is quadratic.
    let out = bounded(&db, &["results", "list"], Duration::from_secs(30));
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(
        table.contains('…') && table.matches('x').count() == 200,
        "the label is not cut at 200 characters:\n{}",
        &table[..table.len().min(3000)]
    );
    let out = bounded(&db, &["results", "list", "--format", "csv"], Duration::from_secs(30));
    assert!(stdout(&out).contains(&"x".repeat(200_000)), "csv lost the label");
}

/// A profile of 10 000 phases (each the same workload, so none is folded):
/// the dry run plans every one of them in linear time.
#[test]
fn a_profile_of_many_phases_plans_in_linear_time() {
    let dir = shm_dir();
    let profile = dir.path().join("many.toml");
    let mut text = String::from("name = \"many\"\ndescription = \"d\"\ntime = \"1s\"\n");
    for i in 0..10_000 {
        text += &format!("[[phases]]\nname = \"p{i}\"\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 1\n[[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 100.0\n");
    }
    std::fs::write(&profile, text).unwrap();
    let db = dir.path().join("results.db");
    // Generous: it takes seconds in a debug build; comparing each phase with
    // every other took minutes.
    let out = bounded(&db, &["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:1m", "--dry-run"], Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = stdout(&out);
    assert!(plan.contains("p9999"), "the last phase is not planned:\n{}", &plan[plan.len().saturating_sub(2000)..]);
}
