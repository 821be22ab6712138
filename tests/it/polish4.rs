//! Polish 4: one reader of cache size lists for `lab cache --cache-sizes` and
//! `cache-curve --sizes`; counts of one in resource errors take the singular;
//! a profile's `[data]` unit beside no reduction is refused as the flags are;
//! `lunmark verify` and a `--cache-dev` file leave the access time alone.

use crate::common::*;

/// `lab cache --cache-sizes` with a size given twice or an empty entry: refused
/// with the flag, the value and what is allowed, before the lab starts its LUN
/// (its directory stays empty, no store is made, no table printed).
#[test]
fn lab_cache_refuses_a_repeated_size_and_an_empty_entry_before_it_starts() {
    let dir = shm_dir();
    let labs = dir.path().join("labs");
    std::fs::create_dir(&labs).unwrap();
    let store = dir.path().join("s.db");
    for (sizes, says) in
        [("0,50,50%", "--cache-sizes 0,50,50%: 50% is given twice"), ("0,,50", "--cache-sizes 0,,50: there is an empty entry")]
    {
        let out = lunmark()
            .env("LUNMARK_LAB_DIR", &labs)
            .arg("--store")
            .arg(&store)
            .args(["lab", "cache", "--lun-size", "8m", "--delay", "1ms", "--cache-sizes", sizes, "--time", "1s", "--ramp", "0"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "--cache-sizes {sizes}: {err}");
        assert!(err.contains(says) && err.contains("for example 0,25,50,100"), "--cache-sizes {sizes}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "one error: {err}");
        assert!(stdout(&out).is_empty(), "nothing measured: {}", stdout(&out));
        assert!(!store.exists(), "no store made");
        assert_lab_left_nothing(&labs);
    }
}

/// `cache-curve --sizes` with a size given twice (it was accepted, a row
/// repeated) or an empty entry: refused before the trace is read or any JSON written.
#[test]
fn cache_curve_refuses_a_repeated_size_and_an_empty_entry_before_it_reads() {
    let dir = shm_dir();
    let json = dir.path().join("curve.json");
    for (sizes, says) in [("0,25,25", "--sizes 0,25,25: 25% is given twice"), ("0,25,", "--sizes 0,25,: there is an empty entry")] {
        let out = run(&["cache-curve", "tests/fixtures/blkparse/sample.txt", "--sizes", sizes, "--json", json.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "--sizes {sizes}: {err}");
        assert!(err.contains(says) && err.contains("for example 0,25,50,100"), "--sizes {sizes}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "one error: {err}");
        assert!(stdout(&out).is_empty() && !json.exists(), "no curve computed: {}", stdout(&out));
    }
    // The same list, each size once, gives the curve.
    let out = run(&["cache-curve", "tests/fixtures/blkparse/sample.txt", "--sizes", "0,25", "--json", json.to_str().unwrap()]);
    assert!(out.status.success() && json.exists(), "{}", stderr(&out));
}

/// A run refused for memory with one worker says "1 worker", not "1 worker(s)".
#[test]
fn a_resource_error_with_one_worker_says_one_worker() {
    // 32768 buffers of 64 MiB: 2 TiB, beyond any machine this runs on.
    let out = run(&["run", "-q", "--no-store", "-t", "mem:64m", "--workers", "1", "--bs", "64m", "--qd", "32768", "--time", "1s"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("I/O buffers 2 TiB (1 worker x 32768 slots x 64 MiB)") && err.contains("MemAvailable"), "{err}");
    assert!(!err.contains("(s)"), "{err}");
}

/// A profile whose `[data]` sets `dedupe_unit` beside `dedupe = 0` (or no
/// dedupe) was run as if the unit applied; it is refused as `--dedupe 0
/// --dedupe-unit 4k` is, naming the file and the keys with their values,
/// before anything runs. Beside a share above 0 the same file runs.
#[test]
fn a_profile_data_unit_beside_no_reduction_is_refused_like_the_flags() {
    let dir = shm_dir();
    let profile = dir.path().join("reduce.toml");
    let store = dir.path().join("s.db");
    let write_profile = |data: &str| {
        let text = "name = \"reduce\"\ndescription = \"4k random writes\"\n\n[data]\n".to_string()
            + data
            + "\n\n[[phases]]\nname = \"w\"\n\n[[phases.groups]]\nname = \"main\"\nworkers = 1\nqd = 4\n\n\
               [[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 0.0\nrandom = 100.0\n";
        std::fs::write(&profile, text).unwrap();
    };
    let run_it = || {
        lunmark()
            .arg("--store")
            .arg(&store)
            .args(["run", "-q", "-t", "mem:16m", "--profile-file", profile.to_str().unwrap(), "--time", "300ms", "--ramp", "0"])
            .output()
            .unwrap()
    };
    let p = profile.display();
    for (data, says) in [
        (
            "dedupe = 0\ndedupe_unit = \"4k\"",
            format!("{p}: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and dedupe = 0 reduces no data: set dedupe or compress above 0 in [data], or remove dedupe_unit"),
        ),
        ("dedupe_unit = \"4k\"", format!("{p}: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress: add dedupe = PCT or compress = PCT")),
    ] {
        write_profile(data);
        let out = run_it();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{data}: {err}");
        assert!(err.contains(&says) && err.matches("error:").count() == 1, "{data}: {err}");
        assert!(!store.exists(), "{data}: refused before anything ran, yet a result was stored");
    }
    // The flags are refused in the same words, as flags.
    let out = run(&["run", "-q", "--no-store", "-t", "mem:16m", "--dedupe", "0", "--dedupe-unit", "4k", "--time", "300ms"]);
    assert!(
        stderr(&out).contains("--dedupe-unit 4k sets the unit of --dedupe and --compress, and --dedupe 0 reduces no data"),
        "{}",
        stderr(&out)
    );
    // With a share above 0 the unit applies and the run goes.
    write_profile("dedupe = 30\ndedupe_unit = \"4k\"");
    let out = run_it();
    assert!(out.status.success() && store.exists(), "{}", stderr(&out));
}

/// The access time of a file, to the nanosecond.
fn atime(path: &std::path::Path) -> (i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (m.atime(), m.atime_nsec())
}

/// Sets the access time two days back, as a user would with `touch -a -d`
/// (a relatime mount then updates it on the next read).
fn age_atime(path: &std::path::Path) -> (i64, i64) {
    let out = std::process::Command::new("touch").args(["-a", "-d", "2 days ago"]).arg(path).output().unwrap();
    assert!(out.status.success(), "touch: {}", String::from_utf8_lossy(&out.stderr));
    atime(path)
}

/// A plain `cat` of the file moves its access time on this file system, so
/// the checks that follow would see a read that moves it.
fn assert_cat_moves_atime(path: &std::path::Path) {
    let before = age_atime(path);
    let out = std::process::Command::new("cat").arg(path).output().unwrap();
    assert!(out.status.success() && !out.stdout.is_empty());
    assert_ne!(atime(path), before, "a plain cat should move the access time (relatime)");
}

/// Writes `lun` (1 MiB) under `--verify`, its journal in `journal`.
fn write_verified(lun: &std::path::Path, journal: &std::path::Path) {
    let out = lunmark()
        .args(["run", "-q", "--no-store", "-t", lun.to_str().unwrap(), "--size", "1m", "--read", "0", "--random", "0"])
        .args(["--time", "300ms", "--ramp", "0", "--verify", "--journal", journal.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `lunmark verify` reads every block the journal names, and leaves the
/// file's access time as it was, as the run that wrote it did.
#[test]
fn verify_leaves_the_access_time_of_the_file_it_checks() {
    let dir = shm_dir();
    let lun = dir.path().join("lun");
    let journal = dir.path().join("j");
    let out =
        run(&["run", "-q", "--no-store", "-t", lun.to_str().unwrap(), "--size", "1m", "--read", "0", "--time", "300ms", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    write_verified(&lun, &journal);
    assert_cat_moves_atime(&lun);
    let before = age_atime(&lun);
    let out = run(&["verify", lun.to_str().unwrap(), "--journal", journal.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains(" 0 corrupt") && !stdout(&out).contains(" 0 blocks checked"), "{}", stdout(&out));
    assert_eq!(atime(&lun), before, "lunmark verify moved the access time of {}", lun.display());
}

/// On a file of another user lunmark may not ask for O_NOATIME: `lunmark
/// verify` then opens it as usual and checks it (here as user nobody, on root's file).
#[test]
fn verify_checks_a_file_of_another_user_with_access_times_as_usual() {
    crate::require_root!();
    if std::process::Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs setpriv (util-linux)");
        return;
    }
    let dir = shm_dir();
    let (lun, journal) = (dir.path().join("lun"), dir.path().join("j"));
    write_verified(&lun, &journal);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in [&lun, &journal] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_lunmark")])
        .args(["verify", lun.to_str().unwrap(), "--journal", journal.to_str().unwrap()])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains(" 0 corrupt"), "{}", stdout(&out));
}

/// A cache tier kept in a file (`--cache-dev`) reads its hits from that
/// file, and leaves its access time as it was.
#[test]
fn a_cache_dev_file_keeps_its_access_time_through_a_run() {
    let dir = shm_dir();
    let dev = dir.path().join("ssd");
    std::fs::write(&dev, vec![7u8; 8 << 20]).unwrap();
    let json = dir.path().join("r.json");
    assert_cat_moves_atime(&dev);
    let before = age_atime(&dev);
    let out = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:16m", "--cache", "50%", "--cache-dev", dev.to_str().unwrap()])
        .args(["--read", "100", "--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let hits = read_json(&json)["points"][0]["summary"]["cache"]["reads_from_cache"].as_u64().unwrap();
    assert!(hits > 1000, "the cache served {hits} reads from {}", dev.display());
    assert_eq!(atime(&dev), before, "the run moved the access time of its --cache-dev {}", dev.display());
}
