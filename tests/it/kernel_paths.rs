//! What lunmark asks of the kernel on the I/O path (issue 14): files opened
//! without access-time updates (by a run, `lunmark verify` and a `--cache-dev`
//! file; a file of another user is opened as usual), a psync worker's own
//! descriptor table, `mem:` LUNs in huge pages, and a dry run that claims
//! direct I/O only where there is a page cache to bypass.

use std::os::unix::fs::MetadataExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::require_root;

/// The file's access time, in seconds.
fn atime(path: &std::path::Path) -> i64 {
    std::fs::metadata(path).unwrap().atime()
}

/// Sets the file's access time two days back (so a relatime mount would
/// update it on the next read), leaving its modification time alone.
fn age_atime(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let times = [libc::timespec { tv_sec: now - 2 * 86_400, tv_nsec: 0 }, libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_OMIT }];
    // SAFETY: a valid C path and two timespecs, for the call only.
    assert_eq!(unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) }, 0);
}

/// A read run, with either engine, leaves the file's access time as it was,
/// where a plain read of the same file moves it (so the test would see it).
#[test]
fn a_read_run_leaves_the_access_time_of_its_file_as_it_was() {
    let dir = shm_dir();
    let file = dir.path().join("data");
    let f = file.to_str().unwrap();
    let made = run(&["run", "-q", "--no-store", "-t", f, "--size", "4m", "--time", "1s", "--ramp", "0"]);
    assert!(made.status.success(), "{}", stderr(&made));
    age_atime(&file);
    let before = atime(&file);
    std::fs::read(&file).unwrap();
    assert_ne!(atime(&file), before, "a plain read should move the access time on this file system (relatime)");
    for engine in ["io_uring", "psync"] {
        age_atime(&file);
        let before = atime(&file);
        let json = dir.path().join(format!("{engine}.json"));
        let out = lunmark()
            .args(["run", "-q", "--no-store", "-t", f, "--engine", engine, "--read", "100", "--bs", "4k", "--qd", "1"])
            .args(["--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{engine}: {}", stderr(&out));
        assert!(read_json(&json)["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 1000, "{engine} read little");
        assert_eq!(atime(&file), before, "{engine}: the run changed the file's access time");
    }
}

/// Someone who does not own the file may not ask for O_NOATIME: lunmark then
/// opens it as usual and the run goes on (here as user nobody, on root's file).
#[test]
fn a_file_of_another_user_is_read_with_access_times_as_usual() {
    require_root!();
    if std::process::Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs setpriv (util-linux)");
        return;
    }
    let dir = shm_dir();
    let file = dir.path().join("data");
    let f = file.to_str().unwrap();
    let made = run(&["run", "-q", "--no-store", "-t", f, "--size", "4m", "--time", "1s", "--ramp", "0"]);
    assert!(made.status.success(), "{}", stderr(&made));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let json = dir.path().join("r.json");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_lunmark")])
        .args(["run", "-q", "--no-store", "-t", f, "--read", "100", "--bs", "4k", "--time", "1s", "--ramp", "0"])
        .args(["--json", json.to_str().unwrap()])
        .env("HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read_json(&json)["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 1000);
}

/// kcmp(2) KCMP_FILES: 0 when the two tasks share one descriptor table.
fn same_fd_table(pid: u32, tid: u32) -> bool {
    // SAFETY: kcmp reads no memory of ours; KCMP_FILES (2) takes no more arguments.
    let r = unsafe { libc::syscall(libc::SYS_kcmp, pid as libc::pid_t, tid as libc::pid_t, 2, 0, 0) };
    assert!(r >= 0, "kcmp failed: {}", std::io::Error::last_os_error());
    r == 0
}

/// A psync worker runs with a descriptor table of its own (the kernel then
/// takes no file reference per pread); an io_uring worker, which names its
/// files by registered index, shares the process's. Both runs complete.
#[test]
fn a_psync_worker_has_a_descriptor_table_of_its_own() {
    require_root!();
    let dir = shm_dir();
    let file = dir.path().join("data");
    let f = file.to_str().unwrap();
    for (engine, own) in [("psync", true), ("io_uring", false)] {
        let child = lunmark()
            .args(["run", "-q", "--no-store", "-t", f, "--size", "4m", "--engine", engine, "--read", "100", "--qd", "1"])
            .args(["--time", "2s", "--ramp", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let tid = worker_tid(child.id(), None).parse::<u32>().ok();
        // Compared while the worker runs (it starts a moment after it is named).
        std::thread::sleep(Duration::from_millis(300));
        let shared = tid.map(|t| same_fd_table(child.id(), t));
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{engine}: {}", stderr(&out));
        assert_eq!(shared, Some(!own), "{engine}: worker shares the process's descriptor table");
    }
}

/// AnonHugePages of `pid`, in KiB (0 when not found).
fn anon_huge_kib(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A `mem:` LUN asks for transparent huge pages (where the kernel gives them
/// only on request, Debian's default): during the run most of a 256 MiB LUN
/// sits in huge pages.
#[test]
fn a_mem_lun_sits_in_huge_pages() {
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.is_empty() || thp.contains("[never]") {
        eprintln!("skipped: transparent huge pages are off on this kernel ({})", thp.trim());
        return;
    }
    let child = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:256m", "--bs", "4k", "--read", "100", "--time", "2s", "--ramp", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut most = 0;
    while Instant::now() < deadline && most < 128 * 1024 {
        most = most.max(anon_huge_kib(child.id()));
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(most >= 128 * 1024, "AnonHugePages during the run: {most} kB, expected most of the 256 MiB LUN");
}

#[test]
fn the_dry_run_claims_direct_io_only_with_a_page_cache() {
    let region = |target: &str, extra: &[&str]| {
        let out = run(&[&["run", "-t", target, "--size", "16m", "--dry-run"][..], extra].concat());
        assert!(out.status.success(), "{target}: {}", stderr(&out));
        stdout(&out).lines().find(|l| l.starts_with("region on each target:")).unwrap_or_default().to_string()
    };
    for t in ["mem:64m", "null:1g"] {
        let line = region(t, &[]);
        assert_eq!(line, "region on each target: 16m from offset 0", "{t}");
    }
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let file = file.to_str().unwrap();
    assert!(region(file, &[]).ends_with("16m from offset 0   (direct I/O)"));
    assert!(region(file, &["--buffered"]).ends_with("16m from offset 0   (buffered: page cache in the path)"));
}

/// The access time of a file, to the nanosecond.
fn atime_ns(path: &std::path::Path) -> (i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (m.atime(), m.atime_nsec())
}

/// Sets the access time two days back, as a user would with `touch -a -d`
/// (a relatime mount then updates it on the next read).
fn age_atime_by_touch(path: &std::path::Path) -> (i64, i64) {
    let out = std::process::Command::new("touch").args(["-a", "-d", "2 days ago"]).arg(path).output().unwrap();
    assert!(out.status.success(), "touch: {}", String::from_utf8_lossy(&out.stderr));
    atime_ns(path)
}

/// A plain `cat` of the file moves its access time on this file system, so
/// the checks that follow would see a read that moves it.
fn assert_cat_moves_atime(path: &std::path::Path) {
    let before = age_atime_by_touch(path);
    let out = std::process::Command::new("cat").arg(path).output().unwrap();
    assert!(out.status.success() && !out.stdout.is_empty());
    assert_ne!(atime_ns(path), before, "a plain cat should move the access time (relatime)");
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
    let before = age_atime_by_touch(&lun);
    let out = run(&["verify", lun.to_str().unwrap(), "--journal", journal.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains(" 0 corrupt") && !stdout(&out).contains(" 0 blocks checked"), "{}", stdout(&out));
    assert_eq!(atime_ns(&lun), before, "lunmark verify moved the access time of {}", lun.display());
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
    let before = age_atime_by_touch(&dev);
    let out = lunmark()
        .args(["run", "-q", "--no-store", "-t", "mem:16m", "--cache", "50%", "--cache-dev", dev.to_str().unwrap()])
        .args(["--read", "100", "--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let hits = read_json(&json)["points"][0]["summary"]["cache"]["reads_from_cache"].as_u64().unwrap();
    assert!(hits > 1000, "the cache served {hits} reads from {}", dev.display());
    assert_eq!(atime_ns(&dev), before, "the run moved the access time of its --cache-dev {}", dev.display());
}
