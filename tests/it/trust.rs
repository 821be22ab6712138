//! Trust: corruption is caught at the exact offset, no false positives under
//! heavy overlapping load, a journal survives kill -9, and faults (ENOSPC, a
//! vanished loop device, a truncated file) end the run cleanly with the result kept.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use crate::require_root;

fn flip_byte(path: &Path, offset: u64) {
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, offset).unwrap();
    b[0] ^= 0x5a;
    f.write_all_at(&b, offset).unwrap();
}

/// A byte changed behind lunmark's back between its write (point 1) and its
/// reads (point 2) is reported at exactly that offset.
#[test]
fn corruption_is_reported_at_the_exact_offset() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args([
            "run",
            "-q",
            "-t",
            file.to_str().unwrap(),
            "--size",
            "1m",
            "--random",
            "0",
            "--sweep",
            "read=0,100",
            "--time",
            "1500ms",
            "--ramp",
            "0",
        ])
        .args(["--verify", "--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Point 1 writes the whole 1 MiB region many times over; point 2 only reads.
    std::thread::sleep(Duration::from_millis(2200));
    let bad = 300_001;
    flip_byte(&file, bad);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(5), "a mismatch exits with 5");
    let r = read_json(&json);
    let v = &r["points"][1]["summary"]["verify"];
    assert!(v["mismatches"].as_u64().unwrap() >= 1);
    let m = &v["first"][0];
    assert_eq!(m["first_bad_byte"], bad);
    assert_eq!(m["offset"], bad / 4096 * 4096);
    assert!(m["what"].as_str().unwrap().contains("checksum"));
    assert_eq!(r["points"][0]["summary"]["verify"]["mismatches"], 0, "nothing was wrong before the flip");
}

/// The same through the journal: a write pass, a flipped byte, `lunmark verify`.
#[test]
fn the_journal_finds_corruption_after_the_run() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let journal = dir.path().join("j");
    let t = file.to_str().unwrap();
    let out = run(&[
        "run",
        "-q",
        "-t",
        t,
        "--size",
        "2m",
        "--read",
        "0",
        "--random",
        "0",
        "--time",
        "1s",
        "--ramp",
        "0",
        "--verify",
        "--journal",
        journal.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(&["verify", t, "--journal", journal.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("512 blocks checked") && stdout(&out).contains("0 corrupt"), "{}", stdout(&out));
    flip_byte(&file, 1_000_003);
    let out = run(&["verify", t, "--journal", journal.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(5));
    let text = stdout(&out);
    assert!(
        text.contains("1 corrupt") && text.contains("CORRUPT: offset 999424") && text.contains("first differing byte at 1000003"),
        "{text}"
    );
    let out = run(&["verify", "/elsewhere", "--journal", journal.to_str().unwrap()]);
    assert!(stderr(&out).contains("not a target of this journal"), "{}", stderr(&out));
}

/// 60 s of 50/50 random reads and writes at 64 outstanding across 4 workers on
/// one small region (blocks are hit often and overlap constantly): no false mismatch.
fn no_false_positives_on(target: &str, extra: &[&str]) {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let out = run(&[
        &[
            "run",
            "-q",
            "-t",
            target,
            "--read",
            "50",
            "--random",
            "100",
            "--qd",
            "64",
            "--workers",
            "4",
            "--size",
            "8m",
            "--time",
            "60s",
            "--ramp",
            "0",
        ][..],
        extra,
        &["--verify", "--json", json.to_str().unwrap()],
    ]
    .concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let v = &read_json(&json)["points"][0]["summary"]["verify"];
    assert_eq!(v["mismatches"], 0, "{v}");
    assert!(v["blocks_checked"].as_u64().unwrap() > 100_000, "{v}");
    assert!(v["conflicts"].as_u64().unwrap() > 0, "blocks overlapped: the rule was exercised ({v})");
}

#[test]
fn no_false_positives_on_a_tmpfs_file() {
    let dir = shm_dir();
    no_false_positives_on(dir.path().join("lun").to_str().unwrap(), &[]);
}

#[test]
fn no_false_positives_on_a_loop_device() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 8 << 20);
    no_false_positives_on(dev.path.to_str().unwrap(), &["--destructive"]);
}

/// kill -9 in the middle of a run with a journal: `lunmark verify` finds no
/// corrupt block; writes in flight at the kill are reported as uncertain.
#[test]
fn kill_nine_then_verify_finds_nothing_corrupt() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let journal = dir.path().join("j");
    let child = lunmark()
        .args([
            "run",
            "-q",
            "-t",
            file.to_str().unwrap(),
            "--size",
            "8m",
            "--read",
            "30",
            "--qd",
            "32",
            "--workers",
            "2",
            "--time",
            "30s",
            "--ramp",
            "0",
        ])
        .args(["--verify", "--journal", journal.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the journal holds a few thousand records (not after a fixed
    // sleep: on a loaded machine the run may not have written its journal yet).
    let deadline = std::time::Instant::now() + Duration::from_secs(25);
    while std::fs::metadata(&journal).map_or(0, |m| m.len()) < 200_000 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output();
    let out = run(&["verify", file.to_str().unwrap(), "--journal", journal.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains(" 0 corrupt"), "{text}");
    let checked: u64 = text.split(": ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(checked > 1000, "{text}");
}

fn run_json_failing(args: &[&str], during: impl FnOnce()) -> (std::process::Output, serde_json::Value) {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let child =
        lunmark().args(args).args(["-q", "--json", json.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    during();
    let started = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(8), "no hang");
    (out, read_json(&json))
}

/// `messages`: what the failed I/O may say (the kernel's answer can vary with timing).
fn assert_failed_naming(out: &std::process::Output, r: &serde_json::Value, target: &str, messages: &[&str]) {
    assert_eq!(out.status.code(), Some(3), "{}", stderr(out));
    assert_eq!(r["status"], "failed");
    let reason = r["status_reason"].as_str().unwrap();
    assert!(reason.contains(target) && reason.contains("offset") && messages.iter().any(|m| reason.contains(m)), "{reason}");
    let s = &r["points"][0]["summary"];
    assert!(s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap() > 0, "data measured until the fault is kept");
    assert_eq!(s["errors"]["first"][0]["target"], target);
}

#[test]
fn a_file_truncated_under_the_run_fails_cleanly() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let t = file.to_str().unwrap().to_string();
    let (out, r) = run_json_failing(&["run", "-t", &t, "--size", "64m", "--read", "100", "--time", "6s", "--ramp", "0"], || {
        std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(1 << 20).unwrap();
    });
    assert_failed_naming(&out, &r, &t, &["short transfer"]);
}

#[test]
fn a_loop_device_that_vanishes_fails_cleanly() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 64 << 20);
    let t = dev.path.to_str().unwrap().to_string();
    let backing = std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", dev.name())).unwrap();
    let (out, r) = run_json_failing(&["run", "-t", &t, "--destructive", "--read", "50", "--time", "6s", "--ramp", "0"], || {
        // Detach it and take its storage away: the device shrinks to nothing under the run.
        let _ = Command::new("losetup").arg("-d").arg(&t).status();
        std::fs::OpenOptions::new().write(true).open(backing.trim()).unwrap().set_len(0).unwrap();
        let _ = Command::new("losetup").arg("-c").arg(&t).status();
    });
    // A loop device whose backing file shrank to nothing answers EIO, or ENOSPC
    // for a write that would grow it again (seen both), or a short transfer.
    assert_failed_naming(&out, &r, &t, &["Input/output error", "No space left on device", "short transfer"]);
}

#[test]
fn a_full_filesystem_fails_cleanly() {
    require_root!();
    let dir = shm_dir();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount").args(["-t", "tmpfs", "-o", "size=32m", "tmpfs"]).arg(&mnt).status().unwrap().success());
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _u = Unmount(mnt.clone());
    let file = mnt.join("lun");
    let t = file.to_str().unwrap().to_string();
    let (out, r) = run_json_failing(&["run", "-t", &t, "--size", "16m", "--read", "0", "--time", "6s", "--ramp", "0"], || {
        // Give the file's space away to another file: its next writes need new pages.
        assert!(Command::new("fallocate").args(["-p", "-o", "0", "-l", "16m"]).arg(&file).status().unwrap().success());
        let _ = Command::new("dd")
            .args(["if=/dev/zero", "bs=1M", "count=64", "status=none"])
            .arg(format!("of={}", mnt.join("filler").display()))
            .status();
    });
    assert_failed_naming(&out, &r, &t, &["No space left on device"]);
}

/// A RAM LUN keeps its data for the whole run, as a file does: what one point
/// writes, the next point reads and checks, with no false mismatch (each point
/// used to get a new, empty LUN, and every read after a write point "failed").
#[test]
fn a_ram_lun_keeps_its_data_from_point_to_point() {
    let dir = shm_dir();
    for (name, extra) in [("quick profile", &[][..]), ("read sweep", &["--sweep", "read=0,100", "--bs", "4k"][..])] {
        let json = dir.path().join("r.json");
        let out =
            run(&[&["run", "-q", "-t", "mem:16m", "--verify", "--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap()][..], extra]
                .concat());
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let points = read_json(&json)["points"].as_array().unwrap().clone();
        assert!(points.len() > 1, "{name}: several points");
        let verify: Vec<&serde_json::Value> = points.iter().map(|p| &p["summary"]["verify"]).collect();
        for v in &verify {
            assert_eq!(v["mismatches"], 0, "{name}: {v}");
        }
        let checked: u64 = verify.iter().map(|v| v["blocks_checked"].as_u64().unwrap()).sum();
        assert!(checked > 0, "{name}: a later point read back what an earlier one wrote: {verify:?}");
    }
}

/// --verify-stop and --journal each turn verification on, and the dry run says so.
#[test]
fn verify_stop_and_journal_imply_verify_in_the_dry_run() {
    let dir = shm_dir();
    let journal = dir.path().join("j");
    for (flags, also) in
        [(&["--verify-stop"][..], "ends at the first mismatch"), (&["--journal", journal.to_str().unwrap()][..], "journaled to")]
    {
        let out = run(&[&["run", "-t", "mem:16m", "--dry-run"][..], flags].concat());
        assert!(out.status.success(), "{flags:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("verify: every byte read is checked"), "{flags:?} turns verify on: {text}");
        assert!(text.contains(also), "{flags:?}: {text}");
    }
    assert!(!journal.exists(), "a dry run writes no journal");
}
