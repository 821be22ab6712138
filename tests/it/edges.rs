//! Trust at the edges (issue 12): region arithmetic that cannot wrap, resources
//! checked before the run, files lunmark created and could not fill removed,
//! damaged journals and imports refused with a clear error, reports that finish
//! on extreme values. The dry run refuses what the run would refuse where it
//! is known without opening a target: a region past a target's end, a
//! misaligned offset under direct I/O, buffers beyond the memory available.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use crate::require_root;

fn md5(path: &Path) -> String {
    let out = Command::new("md5sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_string()
}

fn random_file(path: &Path, len: usize) {
    let mut data = vec![0u8; len];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for b in data.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    std::fs::write(path, data).unwrap();
}

/// A filesystem this test mounts in its scratch directory, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(dir: &Path, fstype: &str, options: &str) -> Mount {
        let at = dir.join(format!("{fstype}-mnt"));
        std::fs::create_dir(&at).unwrap();
        let mut cmd = Command::new("mount");
        cmd.args(["-t", fstype]);
        if !options.is_empty() {
            cmd.args(["-o", options]);
        }
        assert!(cmd.arg(fstype).arg(&at).status().unwrap().success(), "mount {fstype}");
        Mount(at)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

// ---- item 2: region arithmetic cannot wrap ----

/// `--offset 2^64-512 --size 8k` on a 1 MiB file once wrote bytes 3584-7679
/// (the check `offset + len > size` overflowed). It is refused before anything
/// runs, naming both flags, and the file keeps every byte.
#[test]
fn an_offset_that_would_wrap_is_refused_and_the_file_untouched() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    random_file(&file, 1 << 20);
    let before = md5(&file);
    let out = run(&[
        "run",
        "-q",
        "-t",
        file.to_str().unwrap(),
        "--offset",
        "18446744073709551104",
        "--size",
        "8k",
        "--read",
        "0",
        "--time",
        "1s",
        "--ramp",
        "0",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--offset 18446744073709551104") && err.contains("--size 8192") && err.contains("2^64"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(md5(&file), before, "not one byte written");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20);
}

/// The same on a `mem:` target and past the end of an existing file: refused
/// with the target's size, before anything runs.
#[test]
fn a_region_past_the_end_names_the_targets_size() {
    let out = run(&["run", "-q", "-t", "mem:1m", "--offset", "1020k", "--size", "8k", "--time", "1s", "--ramp", "0"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--offset 1044480") && err.contains("--size 8192") && err.contains("1048576 bytes"), "{err}");

    let dir = shm_dir();
    let file = dir.path().join("lun");
    random_file(&file, 1 << 20);
    let before = md5(&file);
    let out = run(&["run", "-q", "-t", file.to_str().unwrap(), "--offset", "1m", "--read", "0", "--time", "1s", "--ramp", "0"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--offset 1048576") && err.contains("1048576 bytes"), "{err}");
    assert_eq!(md5(&file), before);
}

/// A loop device: the region is checked against the device's size before it
/// is opened, and a region that would wrap never reaches it.
#[test]
fn a_region_past_the_end_of_a_device_is_refused_before_it_is_opened() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 4 << 20);
    let t = dev.path.to_str().unwrap();
    let before = dev.stat();
    for (offset, size) in [("18446744073709551104", "8k"), ("4m", "4k"), ("3m", "2m")] {
        let out = run(&["run", "-q", "-t", t, "--destructive", "--offset", offset, "--size", size, "--read", "0", "--time", "1s"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{offset} {size}: {err}");
        assert!(err.contains("--offset") && err.contains("--size"), "{err}");
    }
    let after = dev.stat();
    // Reads may come from the signature probe (and udev); writes never.
    assert_eq!((after.2, after.3), (before.2, before.3), "nothing was written to the device");
}

// ---- item 14: files lunmark created and could not fill are removed ----

/// A file lunmark must create and fill on a filesystem that is full: the run
/// fails before measuring, and the partly written file is gone. A file that
/// was there before (and that lunmark had to grow) keeps its length and bytes.
#[test]
fn a_file_that_cannot_be_filled_on_a_full_filesystem_is_removed() {
    require_root!();
    let dir = shm_dir();
    let mnt = Mount::new(dir.path(), "tmpfs", "size=32m");
    let filler = mnt.0.join("filler");
    assert!(Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "count=24", "status=none"])
        .arg(format!("of={}", filler.display()))
        .status()
        .unwrap()
        .success());
    let created = mnt.0.join("lun");
    let out = run(&["run", "-q", "-t", created.to_str().unwrap(), "--size", "16m", "--read", "0", "--time", "1s", "--ramp", "0"]);
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.to_lowercase().contains("no space left"), "{err}");
    assert!(!created.exists(), "the partly filled file lunmark created is removed");

    let existing = mnt.0.join("mine");
    random_file(&existing, 1 << 20);
    let before = md5(&existing);
    let out = run(&["run", "-q", "-t", existing.to_str().unwrap(), "--size", "16m", "--read", "0", "--time", "1s", "--ramp", "0"]);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(existing.exists(), "a file lunmark did not create is never removed");
    assert_eq!(std::fs::metadata(&existing).unwrap().len(), 1 << 20, "cut back to its old length");
    assert_eq!(md5(&existing), before);
}

/// A file created and filled, then refused (ramfs has no direct I/O): removed.
/// An existing file refused the same way stays.
#[test]
fn a_created_file_that_fails_validation_is_removed() {
    require_root!();
    let dir = shm_dir();
    let mnt = Mount::new(dir.path(), "ramfs", "");
    let created = mnt.0.join("lun");
    let out = run(&["run", "-q", "-t", created.to_str().unwrap(), "--size", "1m", "--read", "0", "--time", "1s", "--ramp", "0"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("O_DIRECT"), "{err}");
    assert!(!created.exists(), "the file lunmark created for a refused run is removed");

    let existing = mnt.0.join("mine");
    random_file(&existing, 1 << 20);
    let before = md5(&existing);
    let out = run(&["run", "-q", "-t", existing.to_str().unwrap(), "--read", "0", "--time", "1s", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(md5(&existing), before, "an existing file is never removed");
}

/// Two targets, the second refused: the first, created by this run, is removed
/// too, since nothing ran on it.
#[test]
fn files_created_for_a_run_refused_at_another_target_are_removed() {
    require_root!();
    let dir = shm_dir();
    let mnt = Mount::new(dir.path(), "ramfs", "");
    let first = dir.path().join("first");
    let second = mnt.0.join("second");
    let out = run(&[
        "run",
        "-q",
        "-t",
        first.to_str().unwrap(),
        "-t",
        second.to_str().unwrap(),
        "--size",
        "1m",
        "--read",
        "0",
        "--time",
        "1s",
        "--ramp",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!first.exists() && !second.exists());
}

// ---- item 3: resources are checked before the run ----

fn mem_available() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let line = text.lines().find(|l| l.starts_with("MemAvailable:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// Workers enough that `per_worker` bytes each exceed the memory available
/// here even on a large machine (at least `min`).
fn workers_beyond_memory(per_worker: u64, min: u64) -> String {
    (mem_available() / per_worker + 1).max(min).to_string()
}

/// `--qd 65536` on a file once failed in every worker (the ring cannot be that
/// large) and exited 3. It is refused before the run with the allowed range.
#[test]
fn a_queue_deeper_than_an_io_uring_ring_is_refused_with_the_range() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let out = run(&["run", "-q", "-t", file.to_str().unwrap(), "--size", "1m", "--qd", "65536", "--time", "1s", "--ramp", "0"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--qd 65536") && err.contains("--qd 1 to 32768") && err.contains("io_uring"), "{err}");
    assert!(!file.exists(), "refused before the target was created");

    // Two targets per worker halve the range.
    let second = dir.path().join("lun2");
    let out =
        run(&["run", "-q", "-t", file.to_str().unwrap(), "-t", second.to_str().unwrap(), "--size", "1m", "--qd", "20000", "--time", "1s"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--qd 1 to 16384"), "{err}");
}

/// `--bs 1m --qd 32768` once panicked allocating 32 GiB of buffers and hung.
/// Refused before anything runs, with the figure and the memory available.
#[test]
fn buffers_larger_than_available_memory_are_refused_with_the_figures() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let workers = workers_beyond_memory(32 << 30, 1);
    let out = run(&[
        "run",
        "-q",
        "-t",
        file.to_str().unwrap(),
        "--size",
        "4m",
        "--bs",
        "1m",
        "--qd",
        "32768",
        "--workers",
        &workers,
        "--time",
        "1s",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("x 32768 slots x 1 MiB") && err.contains("MemAvailable") && err.contains("GiB"), "{err}");
    assert!(err.contains("Lower --qd, --bs or --workers"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!file.exists(), "refused before the target was created");
}

/// Thousands of workers: the estimate counts each worker's buffers and
/// histograms (about 1.3 MiB each at 32 x 4 KiB), shown by --dry-run; a run
/// that cannot fit is refused naming the workers, by the dry run too.
#[test]
fn many_workers_are_counted_and_refused_when_they_cannot_fit() {
    let out = run(&["run", "-t", "mem:1m", "--workers", "2000", "--bs", "4k", "--time", "1s", "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let line = text.lines().find(|l| l.starts_with("memory: about ")).expect("a memory line");
    let gib: f64 = line["memory: about ".len()..].split_whitespace().next().unwrap().parse().unwrap();
    assert!(line.contains("GiB") && gib > 2.0, "2000 workers need more than 2 GiB: {line}");

    // Too many to fit: refused by the run, and by the dry run as the run would.
    let workers = workers_beyond_memory(32 << 20, 10_000);
    for dry in [false, true] {
        let args = ["run", "-q", "-t", "mem:1m", "--workers", &workers, "--bs", "1m", "--time", "1s"];
        let out = run(&[&args[..], if dry { &["--dry-run"][..] } else { &[] }].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "dry run {dry}: {err}");
        assert!(err.contains(&format!("{workers} workers x 32 slots x 1 MiB")) && err.contains("latency histograms"), "{err}");
    }
}

/// The estimate covers every point of a sweep: the last one is too large, and
/// the run is refused before the first runs.
#[test]
fn every_point_of_a_sweep_is_checked_before_the_first_runs() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let workers = workers_beyond_memory(32 << 30, 1);
    let out = run(&[
        "run",
        "-q",
        "-t",
        "mem:4m",
        "--bs",
        "1m",
        "--sweep",
        "qd=1,32768",
        "--workers",
        &workers,
        "--time",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("at point 2 (qd=32768)"), "{err}");
    assert!(!json.exists(), "no point ran");
}

/// With a cache tier each worker keeps write-back slots too: a queue that
/// fills the ring on its own is refused with the range that leaves them room.
#[test]
fn a_cache_tier_leaves_room_in_the_ring() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let out = run(&["run", "-q", "-t", file.to_str().unwrap(), "--size", "1m", "--qd", "32768", "--cache", "25%", "--time", "1s"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--cache") && err.contains("--qd 1 to 32704"), "{err}");
    assert!(!file.exists());
}

/// An ordinary run is not affected: it runs, and --dry-run states its memory.
#[test]
fn an_ordinary_run_fits_and_says_what_it_needs() {
    let out = run(&["run", "-t", "mem:16m", "--qd", "8", "--workers", "2", "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success() && text.contains("memory: about ") && text.contains("available"), "{text}");
    let out = run(&["run", "-q", "-t", "mem:16m", "--qd", "8", "--workers", "2", "--time", "300ms", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// MemTotal and MemAvailable, in bytes.
fn host_memory() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib = |name: &str| -> u64 {
        text.lines().find(|l| l.starts_with(name)).unwrap().split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    (kib("MemTotal:"), kib("MemAvailable:"))
}

/// lunmark under `prlimit --data=4G` (anonymous memory counts against it
/// since Linux 4.7: a LUN it would fill fails to map instead of filling the
/// host) and `/usr/bin/time`, with a store in `dir`: the output and the peak
/// resident size in KiB.
fn run_held(dir: &Path, args: &[&str]) -> (std::process::Output, u64) {
    let store = dir.join("s.db");
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak-rss-kib=%M", "prlimit", "--data=4294967296", env!("CARGO_BIN_EXE_lunmark"), "--store"])
        .arg(&store)
        .args(args)
        .env_remove("LUNMARK_STORE")
        .output()
        .expect("run /usr/bin/time prlimit lunmark");
    let err = stderr(&out);
    let peak = err.lines().find_map(|l| l.strip_prefix("peak-rss-kib=")).expect("time's line").trim().parse().unwrap();
    (out, peak)
}

/// A `mem:` LUN that fits in MemAvailable but leaves the rest of the system
/// almost nothing was filled, and lunmark was OOM-killed at 19.6 GB while
/// compilers on the host grew (2026-11-27). It is refused before anything is
/// allocated, naming the LUN and the memory, by the run, its dry run, a sweep,
/// a knee search and a curve; nothing is stored and the process stays small.
#[test]
fn a_mem_lun_that_would_leave_the_host_too_little_is_refused_before_it_is_filled() {
    let dir = shm_dir();
    let (total, available) = host_memory();
    // Half the reserve (a sixteenth of the RAM) below MemAvailable: under it, but not with the reserve.
    let reserve = (total / 16).max(256 << 20);
    let lun = format!("mem:{}m", (available - reserve / 2) >> 20);
    let one = ["run", "-q", "-t", &lun, "--bs", "4k", "--read", "100", "--time", "1s", "--ramp", "0"];
    let cases: [&[&str]; 5] = [&[], &["--dry-run"], &["--sweep", "qd=1,2"], &["--sla", "lat_p99<1s"], &["--curve", "50,100"]];
    for extra in cases {
        let (out, peak_kib) = run_held(dir.path(), &[&one[..], extra].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
        assert!(err.contains(&format!("({lun}, held in RAM")) && err.contains("MemAvailable"), "{extra:?}: {err}");
        assert!(
            err.contains("leaves ") && err.contains("to the rest of the system") && err.contains("Lower the mem: size: at most about"),
            "{err}"
        );
        assert_eq!(err.matches("error:").count(), 1, "{extra:?}: said once: {err}");
        assert!(peak_kib < 256 << 10, "{extra:?}: the refusal allocated nothing: peak {peak_kib} KiB");
        assert!(!dir.path().join("s.db").exists(), "{extra:?}: nothing stored");
    }
    // The lab refuses RAM LUNs that fit one at a time but not as its legs hold them, before any server starts.
    let size = format!("{}m", (available / 3) >> 20);
    let (out, peak_kib) = run_held(dir.path(), &["lab", "protocols", "--lun-size", &size, "--legs", "mem,file,iscsi", "--bs", "4k"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("--lun-size {size}: the lab's 3 RAM targets")) && err.contains("MemAvailable"), "{err}");
    assert!(peak_kib < 256 << 10 && !dir.path().join("s.db").exists(), "{peak_kib} KiB");
}

// ---- item 15: damaged inputs are errors, never panics ----

/// A real journal of a short write run on `dir/lun`, run from `dir` with
/// relative paths, as a user in that directory would.
fn journal_run(dir: &Path) -> (PathBuf, PathBuf) {
    let out = lunmark()
        .current_dir(dir)
        .args(["run", "-q", "-t", "lun", "--size", "1m", "--read", "0", "--random", "0", "--time", "500ms", "--ramp", "0"])
        .args(["--verify", "--journal", "j"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (dir.join("lun"), dir.join("j"))
}

/// (header line, records) of a journal file.
fn split_journal(path: &Path) -> (serde_json::Value, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap();
    let nl = bytes.iter().position(|&b| b == b'\n').unwrap();
    (serde_json::from_slice(&bytes[..nl]).unwrap(), bytes[nl + 1..].to_vec())
}

fn write_journal(path: &Path, header: &serde_json::Value, records: &[u8]) {
    let mut bytes = (header.to_string() + "\n").into_bytes();
    bytes.extend_from_slice(records);
    std::fs::write(path, bytes).unwrap();
}

fn record(kind: u32, target: u32, block: u64, generation: u32) -> Vec<u8> {
    let mut r = Vec::with_capacity(24);
    r.extend_from_slice(&kind.to_le_bytes());
    r.extend_from_slice(&target.to_le_bytes());
    r.extend_from_slice(&block.to_le_bytes());
    r.extend_from_slice(&generation.to_le_bytes());
    r.extend_from_slice(&0u32.to_le_bytes());
    r
}

fn verify_fails_naming(dir: &Path, journal: &Path, where_: &str, what: &str) {
    let out = lunmark().current_dir(dir).args(["verify", "lun", "--journal", journal.to_str().unwrap()]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{where_} {what}: {err}");
    assert!(err.contains(journal.to_str().unwrap()) && err.contains(where_) && err.contains(what), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Block sizes 0, 3 and 2^40 (once a panic at src/verify/block.rs:36, or an
/// abort allocating 1 TiB), a region that wraps, records naming an unknown
/// target or a block whose offset wraps: each a clear error naming the
/// journal and the line or record.
#[test]
fn damaged_journals_are_errors_naming_the_file_and_line() {
    let dir = shm_dir();
    let (_, journal) = journal_run(dir.path());
    let (header, records) = split_journal(&journal);
    assert!(records.len() >= 24 * 10, "the run wrote records");
    let bad = dir.path().join("bad");
    for block in [0u64, 3, 1 << 40] {
        let mut h = header.clone();
        h["block"] = block.into();
        write_journal(&bad, &h, &records);
        verify_fails_naming(dir.path(), &bad, "line 1", &format!("block size {block}"));
    }
    let mut h = header.clone();
    h["targets"][0]["start"] = (u64::MAX - 4095).into();
    write_journal(&bad, &h, &records);
    verify_fails_naming(dir.path(), &bad, "line 1", "wraps past 2^64");

    let mut r = records[..24 * 3].to_vec();
    r.extend(record(2, 7, 0, 1));
    write_journal(&bad, &header, &r);
    verify_fails_naming(dir.path(), &bad, "record 4", "target 7");
    let mut r = records[..24].to_vec();
    r.extend(record(2, 0, (u64::MAX / 4096) + 1, 1));
    write_journal(&bad, &header, &r);
    verify_fails_naming(dir.path(), &bad, "record 2", "beyond its region");
    let mut r = records[..24].to_vec();
    r.extend(record(2, 0, 1 << 40, 1));
    write_journal(&bad, &header, &r);
    verify_fails_naming(dir.path(), &bad, "record 2", "block 1099511627776");

    std::fs::write(&bad, b"\x00\x01garbage").unwrap();
    verify_fails_naming(dir.path(), &bad, "line 1", "not a lunmark journal header");
}

/// A journal whose region does not fit in the target (a length of 2^64-1 on
/// a 1 MiB file once checked only the blocks the records name and passed;
/// one block too long read past the end) is refused naming the journal, the
/// region and the target's size.
#[test]
fn damaged_journals_a_region_beyond_the_target_is_refused() {
    let dir = shm_dir();
    let (lun, journal) = journal_run(dir.path());
    let size = std::fs::metadata(&lun).unwrap().len();
    let (header, records) = split_journal(&journal);
    let bad = dir.path().join("bad");
    for len in [u64::MAX, size + 4096] {
        let mut h = header.clone();
        h["targets"][0]["len"] = len.into();
        write_journal(&bad, &h, &records);
        verify_fails_naming(dir.path(), &bad, &format!("offset 0 length {len}"), &format!("which is {size} bytes"));
    }
    let mut h = header.clone();
    h["targets"][0]["start"] = 4096.into();
    write_journal(&bad, &h, &records);
    verify_fails_naming(dir.path(), &bad, &format!("offset 4096 length {size}"), &format!("ending at byte {}", size + 4096));
}

/// A journal cut short in the middle of a record (truncated, not on a record
/// boundary) was taken whole: the blocks its lost records had rewritten were
/// reported CORRUPT as "stale data (a lost write)", exit 5. It is named as cut
/// short, those blocks and the partial record's block are uncertain, exit 0;
/// a block really damaged is still found.
#[test]
fn damaged_journals_cut_mid_record_are_uncertain_not_corrupt() {
    let dir = shm_dir();
    let (lun, journal) = journal_run(dir.path());
    let bytes = std::fs::read(&journal).unwrap();
    let records_at = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let cut = dir.path().join("cut");
    // 1000 bytes (moved off a boundary if it falls on one), and a cut that
    // leaves enough of the partial record to name its block.
    let at_1000 = if (1000 - records_at) % 24 == 0 { 1001 } else { 1000 };
    let whole = records_at + (at_1000 - records_at) / 24 * 24;
    for len in [at_1000, whole + 20] {
        assert!(bytes.len() > len + 24 * 100, "the run wrote many more records");
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let out = lunmark().current_dir(dir.path()).args(["verify", "lun", "--journal", cut.to_str().unwrap()]).output().unwrap();
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
        assert!(text.contains(" 0 corrupt") && !text.contains("CORRUPT"), "{text}");
        assert!(text.contains(&format!("the journal ends mid-record at byte {whole}")) && text.contains("it was cut short"), "{text}");
        assert!(text.contains("the last write it describes is uncertain"), "{text}");
        assert!(text.contains("uncertain: offset"), "{text}");
        // Each block once: checked, uncertain or not checked, never two of them.
        let blocks = |records: &[u8]| -> std::collections::HashSet<u64> {
            records.chunks(24).filter(|r| r.len() >= 16).map(|r| u64::from_le_bytes(r[8..16].try_into().unwrap())).collect()
        };
        let counted = verify_count(&text, " checked against") + verify_count(&text, " uncertain (") + verify_count(&text, " not checked");
        let (whole_blocks, all_blocks) = (blocks(&bytes[records_at..whole]).len(), blocks(&bytes[records_at..len]).len());
        assert!((whole_blocks..=all_blocks).contains(&counted), "{counted} blocks counted, {whole_blocks} in the journal: {text}");
    }

    // Damage a block the cut journal records: still corrupt, exit 5.
    let block = u64::from_le_bytes(bytes[records_at + 8..records_at + 16].try_into().unwrap());
    let start = split_journal(&journal).0["targets"][0]["start"].as_u64().unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&lun).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[0u8; 4096], start + block * 4096).unwrap();
    let out = lunmark().current_dir(dir.path()).args(["verify", "lun", "--journal", cut.to_str().unwrap()]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(5), "{text}{}", stderr(&out));
    assert!(text.contains(&format!("CORRUPT: offset {}", start + block * 4096)), "{text}");
}

/// The number just before `words` in verify's summary line ("12 blocks checked against": 12).
fn verify_count(text: &str, words: &str) -> usize {
    let before = &text[..text.find(words).unwrap_or_else(|| panic!("no '{words}' in {text}"))];
    let before = before.trim_end_matches(" blocks").trim_end_matches(" block");
    before.rsplit([' ', ',']).next().unwrap().parse().unwrap_or_else(|_| panic!("no count before '{words}' in {text}"))
}

/// `lunmark verify lun` run from another directory checks the `lun` of the
/// run (the journal records its working directory), not a file of the same
/// name here; an absolute path to it is the same target. A journal written
/// before the working directory was recorded still reads.
#[test]
fn verify_resolves_relative_targets_against_the_runs_directory() {
    let run_dir = shm_dir();
    let (lun, journal) = journal_run(run_dir.path());
    let elsewhere = shm_dir();
    random_file(&elsewhere.path().join("lun"), 1 << 20);
    let j = journal.to_str().unwrap();
    let out = lunmark().current_dir(elsewhere.path()).args(["verify", "lun", "--journal", j]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains(" 0 corrupt"), "{}", stdout(&out));
    let out = lunmark().current_dir(elsewhere.path()).args(["verify", lun.to_str().unwrap(), "--journal", j]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // A different file named lun here is not the journal's target.
    let out = lunmark().current_dir(elsewhere.path()).args(["verify", "./lun2", "--journal", j]).output().unwrap();
    assert!(stderr(&out).contains("not a target of this journal"), "{}", stderr(&out));

    let (mut header, records) = split_journal(&journal);
    assert_eq!(header["cwd"], std::fs::canonicalize(run_dir.path()).unwrap().to_str().unwrap());
    header.as_object_mut().unwrap().remove("cwd");
    let old = run_dir.path().join("old-j");
    write_journal(&old, &header, &records);
    let out = lunmark().current_dir(run_dir.path()).args(["verify", "lun", "--journal", old.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}

/// A real result of a short qd sweep, exported: (store path, id, JSON).
fn real_result(dir: &Path) -> (PathBuf, String, serde_json::Value) {
    let store = dir.join("results.db");
    let json = dir.join("r.json");
    let out = lunmark()
        .env("LUNMARK_STORE", &store)
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,4", "--time", "1100ms", "--ramp", "0", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    (store, r["id"].as_str().unwrap().to_string(), r)
}

fn import(dir: &Path, r: &serde_json::Value) -> std::process::Output {
    let file = dir.join("edited.json");
    std::fs::write(&file, serde_json::to_string_pretty(r).unwrap()).unwrap();
    lunmark().env("LUNMARK_STORE", dir.join("import.db")).args(["results", "import"]).arg(&file).output().unwrap()
}

/// `results import` takes a real exported result, and refuses the same with
/// an id that is not 12 hex digits, a newer schema_version, negative or
/// absurd figures, or percentiles out of order, saying which field.
#[test]
fn results_import_refuses_damaged_results_naming_the_field() {
    let dir = shm_dir();
    let (_, id, r) = real_result(dir.path());
    let edited = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut e = r.clone();
        // Each import goes to a store of its own, so ids never collide.
        let _ = std::fs::remove_file(dir.path().join("import.db"));
        edit(&mut e);
        import(dir.path(), &e)
    };
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("id '../../etc/x' is not 12 hex digits", Box::new(|e| e["id"] = "../../etc/x".into())),
        ("id 'D3DB0FD53AD4' is not 12 hex digits", Box::new(|e| e["id"] = "D3DB0FD53AD4".into())),
        ("newer lunmark (schema_version 99", Box::new(|e| e["schema_version"] = 99.into())),
        ("points[0].summary.iops is -5", Box::new(|e| e["points"][0]["summary"]["iops"] = (-5.0).into())),
        (
            "points[1].summary.latency_us.all: the percentiles are out of order",
            Box::new(|e| {
                e["points"][1]["summary"]["latency_us"]["all"]["p50"] = 1e9.into();
            }),
        ),
        ("beyond 10^15", Box::new(|e| e["points"][0]["summary"]["intervals"][0]["iops"] = 1e300.into())),
        ("cpu.utilization_pct is 250", Box::new(|e| e["points"][0]["summary"]["cpu"]["utilization_pct"] = 250.0.into())),
    ];
    for (want, edit) in cases {
        let out = edited(&*edit);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{want}: {err}");
        assert!(err.contains(want) && err.contains("edited.json"), "{want}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = edited(&|_| {});
    assert!(out.status.success(), "the real result imports: {}", stderr(&out));
    assert!(stdout(&out).contains(&id));
}

/// A store holding extreme figures (1.7e308 written by another tool, or a
/// damaged row): `report` finishes within a bound and writes its file. The
/// chart axis once grew to infinity and tick generation never ended.
#[test]
fn report_finishes_on_extreme_values() {
    let dir = shm_dir();
    let (store, id, _) = real_result(dir.path());
    let sql = "UPDATE points SET point = json_set(point, \
        '$.summary.iops', 1.7e308, '$.summary.mbps', 1e308, '$.summary.latency_us.all.mean', 1.7e308, \
        '$.summary.latency_us.all.p99', 1.7e308, '$.summary.cpu.utilization_pct', 1e-320, \
        '$.summary.intervals[0].iops', 1.7e308, '$.summary.intervals[1].iops', 0);";
    let out = Command::new("sqlite3").arg(&store).arg(sql).output().expect("sqlite3 (Debian's sqlite3; scripts/setup.sh installs it)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = dir.path().join("report.html");
    let mut child = lunmark()
        .env("LUNMARK_STORE", &store)
        .args(["report", &id, "-o"])
        .arg(&html)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("report did not finish within 30 s on extreme values");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.matches("<svg").count() >= 4, "the charts are drawn");
}

/// A run refused after its file was created and filled (a cache setting the
/// workload cannot use, a journal that cannot be created): the file is gone.
#[test]
fn a_run_refused_after_its_file_was_made_leaves_no_file() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let t = file.to_str().unwrap();
    let out = run(&["run", "-q", "-t", t, "--size", "1m", "--cache", "50%", "--cache-block", "8k", "--bs", "4k", "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!file.exists(), "refused before the file was created");
    let journal = dir.path().join("no-such-dir").join("j");
    let out = run(&["run", "-q", "-t", t, "--size", "1m", "--verify", "--journal", journal.to_str().unwrap(), "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("journal"), "{}", stderr(&out));
    assert!(!file.exists(), "the file created for the refused run is removed");
}

/// Runs `args` as a dry run and as a run: both refuse, once, with `said`, and run nothing.
fn both_refuse(args: &[&str], said: &[&str]) {
    for dry in [true, false] {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--time", "1s", "--ramp", "0s", "--no-store", "-q"]);
        if dry {
            all.push("--dry-run");
        }
        let out = run(&all);
        let err = stderr(&out);
        assert!(!out.status.success(), "dry={dry} {args:?} passed: {err}{}", crate::common::stdout(&out));
        assert!(said.iter().all(|s| err.contains(s)), "dry={dry} {args:?}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "said once: {err}");
        if dry {
            assert!(crate::common::stdout(&out).is_empty(), "refused before the plan is printed");
        }
    }
}

#[test]
fn a_region_past_the_end_of_a_mem_or_null_target_or_a_file_is_refused_by_the_dry_run() {
    both_refuse(&["-t", "mem:64m", "--offset", "1m", "--size", "64m"], &["mem:64m", "does not fit", "--offset 1048576"]);
    both_refuse(&["-t", "null:64m", "--offset", "1m", "--size", "64m"], &["null:64m", "does not fit"]);
    // An existing file's size is read from its metadata, without opening it.
    let dir = shm_dir();
    let file = dir.path().join("lun");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let f = file.display().to_string();
    both_refuse(&["-t", &f, "--offset", "2m"], &[&f, "at or beyond the end"]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20, "the file is left as it was");
    // What fits passes the dry run.
    let ok = run(&["run", "-t", "mem:64m", "--offset", "1m", "--size", "63m", "--dry-run"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

#[test]
fn a_misaligned_offset_on_a_direct_io_file_is_refused_by_the_dry_run() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let f = file.display().to_string();
    both_refuse(&["-t", &f, "--offset", "3", "--size", "8m"], &[&f, "offset 3 is not a multiple of the 512-byte", "--buffered"]);
    assert!(!file.exists(), "refused before the file was created");
    // Buffered I/O has no alignment rule: the dry run passes it.
    let ok = run(&["run", "-t", &f, "--offset", "3", "--size", "8m", "--buffered", "--dry-run"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

/// A plan whose buffers do not fit in the memory available: the dry run
/// refuses it with the real run's message and exit 1 (it printed the plan and
/// exited 0), before any of the plan is printed, as the ring limit is refused.
#[test]
fn the_dry_run_refuses_a_plan_the_run_refuses_for_memory() {
    let args = ["run", "-q", "--no-store", "-t", "mem:64m", "--workers", "1", "--bs", "64m", "--qd", "32768", "--time", "1s"];
    let real = run(&args);
    let dry = run(&[&args[..], &["--dry-run"]].concat());
    assert_eq!(real.status.code(), Some(1), "{}", stderr(&real));
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    let said = stderr(&dry);
    assert!(said.contains("I/O buffers 2 TiB (1 worker x 32768 slots x 64 MiB)") && said.contains("MemAvailable"), "{said}");
    // The same words; the memory available may move between the two runs.
    let available =
        |t: &str| t.split(" of memory, but only ").next().map(str::to_string).zip(t.split(" is available ").nth(1).map(str::to_string));
    assert_eq!(available(&said), available(&stderr(&real)), "the dry run says what the run says: {said}");
    assert!(stdout(&dry).is_empty(), "refused before the plan is printed: {}", stdout(&dry));
    // A plan that fits still passes the dry run.
    let fits = run(&["run", "--no-store", "-t", "mem:64m", "--bs", "1m", "--qd", "4", "--dry-run"]);
    assert!(fits.status.success() && stdout(&fits).contains("memory: about"), "{}", stderr(&fits));
}

/// The dry run is the run's own check, then the plan: a file lunmark would
/// have to create without a size, or a directory given as a target, is
/// refused by both with the same message and exit code, and nothing is created.
#[test]
fn the_dry_run_refuses_a_target_the_run_refuses() {
    let dir = shm_dir();
    let missing = dir.path().join("not-there");
    let folder = dir.path().to_str().unwrap().to_string();
    for target in [missing.to_str().unwrap(), folder.as_str()] {
        let run_out = run(&["run", "--no-store", "-t", target, "--time", "1s", "--ramp", "0"]);
        let dry_out = run(&["run", "--no-store", "-t", target, "--time", "1s", "--ramp", "0", "--dry-run"]);
        assert_eq!(run_out.status.code(), Some(1), "{target}: {}", stderr(&run_out));
        assert_eq!(dry_out.status.code(), run_out.status.code(), "{target}: {}", stderr(&dry_out));
        assert_eq!(stderr(&dry_out), stderr(&run_out), "{target}");
    }
    assert!(stderr(&run(&["run", "--no-store", "-t", missing.to_str().unwrap(), "--dry-run"])).contains("--size"));
    assert!(!missing.exists());
}
