//! An existing file as a target: it is the user's data. A workload that only
//! reads opens it read-only and never changes it (not its holes, not its
//! length), and a region of it with holes is refused, by the dry run as by the
//! run; a workload that writes fills holes only inside its region.

use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::Path;

use crate::common::*;
use crate::require_root;

/// A file of `size` bytes holding data (0xA5) only in its first `data` bytes: the rest is a hole.
fn sparse_file(path: &Path, size: u64, data: usize) {
    let f = std::fs::File::create(path).unwrap();
    f.set_len(size).unwrap();
    f.write_all_at(&vec![0xA5u8; data], 0).unwrap();
}

/// The file's bytes, length and allocated 512-byte blocks: what a run must leave as they were.
fn state(path: &Path) -> (Vec<u8>, u64, u64) {
    let m = std::fs::metadata(path).unwrap();
    (std::fs::read(path).unwrap(), m.len(), m.blocks())
}

fn read_run(f: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "-q", "--no-store", "-t", f, "--read", "100", "--bs", "4k", "--time", "1s", "--ramp", "0"];
    args.extend_from_slice(extra);
    run(&args)
}

/// A read run on a sparse file the user made: refused, naming the holes, and
/// the file keeps its bytes and its holes (it was filled with random data).
#[test]
fn a_read_run_refuses_holes_and_leaves_the_file_as_it_was() {
    let dir = shm_dir();
    let file = dir.path().join("sparse.dat");
    sparse_file(&file, 8 << 20, 1 << 20);
    let f = file.to_str().unwrap();
    let before = state(&file);

    let out = read_run(f, &[]);
    assert!(!out.status.success(), "a read of holes ran: {}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("holes") && err.contains("first at byte 1048576") && err.contains(f), "{err}");
    assert!(state(&file) == before, "the read run changed the file");

    let dry = read_run(f, &["--dry-run"]);
    assert!(!dry.status.success() && stderr(&dry).contains("holes"), "the dry run passed what the run refuses: {}", stderr(&dry));

    // The part that holds data is read, and the file is still as it was.
    let json = dir.path().join("r.json");
    let ok = read_run(f, &["--size", "1m", "--json", json.to_str().unwrap()]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(read_json(&json)["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 100);
    assert!(state(&file) == before, "the read run changed the file");
}

/// A read-only region past the end of an existing file: refused, and the file is not grown.
#[test]
fn a_read_run_never_grows_an_existing_file() {
    let dir = shm_dir();
    let file = dir.path().join("small.dat");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let f = file.to_str().unwrap();
    for extra in [&["--size", "4m"][..], &["--size", "4m", "--dry-run"][..]] {
        let out = read_run(f, extra);
        let err = stderr(&out);
        assert!(!out.status.success() && err.contains("past the end of this existing file"), "{extra:?}: {err}");
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20, "{extra:?} grew the file");
    }
}

/// A write run on an existing sparse file fills holes inside its region (its
/// reads would hit them otherwise), and not outside it.
#[test]
fn a_write_run_fills_holes_only_inside_its_region() {
    let dir = shm_dir();
    let file = dir.path().join("sparse.dat");
    sparse_file(&file, 16 << 20, 0);
    let f = file.to_str().unwrap();
    let out = run(&["run", "-q", "--no-store", "-t", f, "--read", "50", "--bs", "4k", "--size", "1m", "--time", "1s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!(m.len(), 16 << 20);
    // 1 MiB region = 2048 blocks of 512 bytes; the whole file would be 32768.
    assert!(m.blocks() <= 2048 + 64, "{} blocks allocated: holes outside the region were filled", m.blocks());
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes[1 << 20..].iter().all(|&b| b == 0), "data written outside the region");
}

/// An ordinary user reads a world-readable file of root's (mode 0644): the
/// file is opened read-only, so the run works, and the dry run agrees. A file
/// the user may not read at all is refused by both, alike.
#[test]
fn another_user_reads_a_world_readable_file() {
    require_root!();
    if std::process::Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs setpriv (util-linux)");
        return;
    }
    let dir = shm_dir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("data");
    std::fs::write(&file, vec![3u8; 4 << 20]).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let f = file.to_str().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let as_nobody = |extra: &[&str]| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_lunmark")])
            .args(["run", "-q", "--no-store", "-t", f, "--bs", "4k", "--time", "1s", "--ramp", "0"])
            .args(extra)
            .env("HOME", home.path())
            .output()
            .unwrap()
    };
    let json = home.path().join("r.json");
    let out = as_nobody(&["--read", "100", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read_json(&json)["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 1000);
    let dry = as_nobody(&["--read", "100", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));

    // A workload that writes needs write permission: refused by both, alike.
    let (out, dry) = (as_nobody(&["--read", "50"]), as_nobody(&["--read", "50", "--dry-run"]));
    assert!(!out.status.success() && stderr(&out).contains("ermission denied"), "{}", stderr(&out));
    assert!(
        !dry.status.success() && stderr(&dry).contains("ermission denied"),
        "the dry run passed what the run refuses: {}",
        stderr(&dry)
    );

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (out, dry) = (as_nobody(&["--read", "100"]), as_nobody(&["--read", "100", "--dry-run"]));
    assert!(!out.status.success() && stderr(&out).contains("ermission denied"), "{}", stderr(&out));
    assert!(
        !dry.status.success() && stderr(&dry).contains("ermission denied"),
        "the dry run passed what the run refuses: {}",
        stderr(&dry)
    );
}

/// A FIFO named as a file target is refused at once, by the run and the dry
/// run (opening it to read would wait for a writer forever).
#[test]
fn a_fifo_as_a_target_is_refused_not_opened() {
    let dir = shm_dir();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for extra in [&[][..], &["--dry-run"]] {
        let out = output_within(
            lunmark().args(["run", "-q", "--no-store", "-t", fifo.to_str().unwrap(), "--read", "100", "--time", "1s"]).args(extra),
            20,
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
        assert!(err.contains("neither a regular file nor a block device"), "{extra:?}: {err}");
    }
}
