//! Every output flag of every subcommand goes through one guard: a block
//! device holding ext4, a character device, a FIFO (and a symlink to a device)
//! are refused before anything runs and left exactly as they were; regular
//! files are replaced atomically; symlinks are followed. An output naming a
//! file the same command reads (a trace, a profile's replay file) is refused
//! and the input kept. And messages say what
//! is wrong once (issue 12, items 1 and 16).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::CommandFactory;
use lunmark::cli::paths::{self, Role};

use crate::common::*;
use crate::require_root;

/// What a node is now: "block", "char", "fifo", "file", "dir", "symlink".
fn node_type(path: &Path) -> &'static str {
    let t = std::fs::symlink_metadata(path).expect("the node still exists").file_type();
    match () {
        _ if t.is_block_device() => "block",
        _ if t.is_char_device() => "char",
        _ if t.is_fifo() => "fifo",
        _ if t.is_symlink() => "symlink",
        _ if t.is_dir() => "dir",
        _ => "file",
    }
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

/// `mknod PATH c 1 3`: a character device with /dev/null's numbers, made here.
fn mknod_null(path: &Path) {
    let st = Command::new("mknod").arg(path).args(["c", "1", "3"]).status().expect("mknod");
    assert!(st.success());
}

/// CRC-32C of the loop device's content, read from its backing file after
/// flushing the device (a write to the device may sit in its page cache).
fn device_checksum(dev: &LoopDevice) -> u32 {
    std::fs::OpenOptions::new().write(true).open(&dev.path).and_then(|f| f.sync_all()).expect("flush the loop device");
    crc32c::crc32c(&std::fs::read(dev.backing()).expect("read the backing file"))
}

/// A command line on which `flag` would otherwise do its job: every output
/// flag of every subcommand needs one here, so a new flag cannot go untested.
fn command_line(command: &str, flag: &str, value: &Path, scratch: &Fixture) -> Vec<String> {
    let mut args: Vec<String> = match command {
        "run" => ["run", "-t", "mem:1m", "--time", "1s", "--ramp", "0s", "-q", "--verify"].map(String::from).to_vec(),
        "lab protocols" => ["lab", "protocols", "--lun-size", "1m", "--time", "1s", "-q"].map(String::from).to_vec(),
        "lab cache" => ["lab", "cache", "--lun-size", "1m", "--time", "1s", "-q"].map(String::from).to_vec(),
        "report" => vec!["report".into(), scratch.result_id.clone()],
        "cache-curve" => vec!["cache-curve".into(), scratch.trace.display().to_string()],
        other => panic!(
            "output flag {flag} of '{other}' has no command line in output_guard::command_line: add one so the guard is tested on it"
        ),
    };
    args.push(flag.to_string());
    args.push(value.display().to_string());
    args
}

/// A stored result and a trace for `report` and `cache-curve` to work on.
struct Fixture {
    result_id: String,
    trace: PathBuf,
}

fn fixture(dir: &Path, store: &Path) -> Fixture {
    let trace = dir.join("fixture.trace");
    let json = dir.join("fixture.json");
    let out = lunmark()
        .env("LUNMARK_STORE", store)
        .args(["run", "-t", "mem:1m", "--ios", "2000", "--ramp", "0s", "-q", "--trace"])
        .arg(&trace)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    Fixture { result_id: read_json(&json)["id"].as_str().unwrap().to_string(), trace }
}

/// Every (subcommand, long flag) that writes a path, from the command tree itself.
fn output_flags() -> Vec<(String, String)> {
    paths::path_arguments(&lunmark::cli::Cli::command())
        .into_iter()
        .filter(|(c, id, _)| matches!(paths::role(c, id), Some(Role::Output { .. })))
        .map(|(c, _, shown)| (c, shown.rsplit('/').next().unwrap().to_string()))
        .collect()
}

#[test]
fn every_output_flag_refuses_devices_and_fifos_and_leaves_them_untouched() {
    require_root!();
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let fx = fixture(dir.path(), &store);
    let dev = LoopDevice::new(dir.path(), 16 << 20);
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev.path).output().expect("mkfs.ext4");
    assert!(mkfs.status.success(), "{}", stderr(&mkfs));
    let before = device_checksum(&dev);
    let cdev = dir.path().join("null-like");
    mknod_null(&cdev);
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let link = dir.path().join("link-to-device");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();

    let flags = output_flags();
    assert!(flags.len() >= 11, "run, the two labs, report and cache-curve: {flags:?}");
    let via_link = format!("that is a symbolic link to {}, which is a block device, not a regular file", dev.path.display());
    let nodes: [(&Path, &str, &str); 4] = [
        (&dev.path, "block", "that is a block device, not a regular file"),
        (&cdev, "char", "that is a character device, not a regular file"),
        (&fifo, "fifo", "that is a FIFO (named pipe), not a regular file"),
        (&link, "symlink", &via_link),
    ];
    for (command, flag) in &flags {
        for (node, kind, words) in nodes {
            let args = command_line(command, flag, node, &fx);
            let out = lunmark().env("LUNMARK_STORE", &store).args(&args).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?} must be refused (exit 1): {err}");
            let said = format!("{flag} {}: {words}", node.display());
            assert_eq!(err.matches(&said).count(), 1, "{args:?}: the message names the flag and the node once: {err}");
            assert!(stdout(&out).is_empty(), "{args:?}: refused before anything ran: {}", stdout(&out));
            assert_eq!(node_type(node), kind, "{args:?} changed the node");
            assert_eq!(device_checksum(&dev), before, "{args:?} wrote to the ext4 loop device");
        }
    }
    // The store: --store and LUNMARK_STORE, for a run and for `results list`.
    for (node, kind, words) in nodes {
        for args in [vec!["run", "-t", "mem:1m", "--time", "1s", "-q"], vec!["results", "list"]] {
            let out = lunmark().args(&args).arg("--store").arg(node).output().unwrap();
            let said = format!("--store {}: {words}", node.display());
            assert_eq!(out.status.code(), Some(1), "{args:?} --store {}: {}", node.display(), stderr(&out));
            assert_eq!(stderr(&out).matches(&said).count(), 1, "{}", stderr(&out));
            let out = lunmark().env("LUNMARK_STORE", node).args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "LUNMARK_STORE={}: {}", node.display(), stderr(&out));
            assert!(stderr(&out).contains(words), "{}", stderr(&out));
            assert_eq!(node_type(node), kind);
        }
    }
    assert_eq!(device_checksum(&dev), before, "the store checks wrote to the loop device");
    // The ext4 filesystem is intact: its superblock still checks clean.
    let fsck = Command::new("fsck.ext4").args(["-n", "-f"]).arg(&dev.path).output().expect("fsck.ext4");
    assert!(fsck.status.success(), "fsck: {}{}", stdout(&fsck), stderr(&fsck));
}

#[test]
fn json_cannot_replace_a_null_like_device_and_stdout_still_works() {
    // `--json /dev/null` used to rename a regular file over the node; a node with
    // /dev/null's numbers made here stands in for it.
    require_root!();
    let dir = shm_dir();
    let node = dir.path().join("null");
    mknod_null(&node);
    let out = run(&["run", "-t", "mem:1m", "--time", "1s", "-q", "--json", node.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(node_type(&node), "char");
    assert_eq!(std::fs::symlink_metadata(&node).unwrap().rdev(), libc::makedev(1, 3));
    let out = run(&["run", "-t", "mem:1m", "--time", "1s", "--ramp", "0s", "-q", "--json", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON result");
    assert_eq!(v["status"], "completed");
}

#[test]
fn a_regular_file_is_replaced_atomically_and_symlinks_to_files_are_followed() {
    let dir = shm_dir();
    let real = dir.path().join("result.json");
    std::fs::write(&real, "old").unwrap();
    let inode = std::fs::metadata(&real).unwrap().ino();
    let link = dir.path().join("latest.json");
    std::os::unix::fs::symlink("result.json", &link).unwrap();
    let trace_real = dir.path().join("io.trace");
    std::fs::write(&trace_real, vec![b'x'; 1 << 20]).unwrap();
    let trace_link = dir.path().join("trace-link");
    std::os::unix::fs::symlink(&trace_real, &trace_link).unwrap();
    let out = lunmark()
        .env("LUNMARK_STORE", dir.path().join("results.db"))
        .args(["run", "-t", "mem:1m", "--ios", "1000", "--ramp", "0s", "-q", "--json"])
        .arg(&link)
        .arg("--trace")
        .arg(&trace_link)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(node_type(&link), "symlink", "the link is kept, its target replaced");
    assert_eq!(read_json(&real)["status"], "completed");
    assert_ne!(std::fs::metadata(&real).unwrap().ino(), inode, "replaced by a rename, never rewritten in place");
    assert_eq!(node_type(&trace_link), "symlink");
    let trace = std::fs::read(&trace_real).unwrap();
    assert!(trace.starts_with(b"LMTRACE1"), "the trace went to the link's target, truncated first");
    assert!(trace.len() < 1 << 20 && !trace.ends_with(&[b'x'; 64]), "emptied before writing: nothing of the old content is left");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!names.iter().any(|n| n.contains(".tmp")), "no temporary file left behind: {names:?}");
}

#[test]
fn an_output_in_a_missing_directory_is_refused_before_the_run() {
    let dir = shm_dir();
    let missing = dir.path().join("no-such-dir/result.json");
    let out = lunmark()
        .env("LUNMARK_STORE", dir.path().join("results.db"))
        .args(["run", "-t", "mem:1m", "--time", "2s", "--json"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.matches("does not exist").count(), 1, "{err}");
    assert!(err.contains(&format!("--json {}", missing.display())), "{err}");
    assert!(!err.contains("saved as") && stdout(&out).is_empty(), "nothing ran: {err}");
    // --store in a missing directory: the same refusal, naming --store, and no directory made.
    let json_problem = err.split_once(&format!("--json {}: ", missing.display())).unwrap().1.trim().to_string();
    let store = dir.path().join("no-such-dir/s.db");
    let out = lunmark().args(["run", "-t", "mem:1m", "--time", "2s", "--store"]).arg(&store).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("--store {}: {json_problem}", store.display())), "{err}\nnot as --json's: {json_problem}");
    assert!(!dir.path().join("no-such-dir").exists() && stdout(&out).is_empty(), "nothing made, nothing ran: {err}");
    // A directory whose permission bits pass but which takes no file (root in /proc):
    // refused before the run, not after it (the result was then measured and not written).
    let out = lunmark()
        .env("LUNMARK_STORE", dir.path().join("results.db"))
        .args(["run", "-t", "mem:1m", "--time", "2s", "--json", "/proc/lunmark-result.json"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--json /proc/lunmark-result.json: files cannot be created in the directory /proc"), "{err}");
    assert!(stdout(&out).is_empty(), "nothing ran: {}", stdout(&out));
}

/// The one `error:` line of a refused command, checked to hold `phrase` once.
fn one_error(args: &[&str], phrase: &str) -> String {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1, "{args:?}: one error line: {err}");
    assert_eq!(err.matches(phrase).count(), 1, "{args:?}: '{phrase}' once: {err}");
    assert!(!err.contains("os error"), "{args:?}: no raw errno text: {err}");
    err
}

#[test]
fn messages_say_what_is_wrong_once() {
    let dir = shm_dir();
    let d = dir.path().display().to_string();
    // A missing profile file: once, in words (was "X: No such file or directory (os error 2): No such file ...").
    let err = one_error(&["run", "-t", "mem:1m", "--profile-file", &format!("{d}/missing.toml")], "does not exist");
    assert!(err.contains("--profile-file") && err.contains("missing.toml"), "{err}");
    // A target under a regular file.
    std::fs::write(dir.path().join("plain"), "x").unwrap();
    one_error(&["run", "-t", &format!("{d}/plain/data"), "--size", "1m", "--time", "1s"], "not a directory");
    // A trace that is a directory.
    one_error(&["cache-curve", &d], "directory");
    // A device that is not there says so (was: "is a block device ... add --destructive").
    let missing_dev = format!("/dev/lunmark-missing-{}", rand_suffix());
    let err = one_error(&["run", "-t", &missing_dev, "--time", "1s"], "does not exist");
    assert!(err.contains(&missing_dev) && !err.contains("--destructive"), "{err}");
    one_error(&["run", "-t", &missing_dev, "--read", "100", "--time", "1s"], "does not exist");
    let err = one_error(&["run", "-t", "mem:4m", "--cache", "25%", "--cache-dev", &missing_dev, "--ios", "10"], "does not exist");
    assert!(err.contains(&format!("--cache-dev {missing_dev}")), "{err}");
    assert!(!Path::new(&missing_dev).exists(), "no file made in /dev");
}

#[test]
fn a_size_split_by_a_space_is_named_not_taken_for_a_profile() {
    // What the shell passes for an unquoted `--bs 4 KB`.
    let err = one_error(&["run", "-t", "mem:1m", "--time", "1s", "--bs", "4", "KB"], "--bs 4 KB");
    assert!(err.contains("--bs 4KB") && !err.contains("unknown profile"), "{err}");
    let err = one_error(&["run", "-t", "mem:1m", "--time", "1", "s"], "--time 1 s");
    assert!(err.contains("--time 1s"), "{err}");
    // Quoted, the same size is one value and runs.
    let dir = shm_dir();
    let out = lunmark()
        .env("LUNMARK_STORE", dir.path().join("results.db"))
        .args(["run", "-t", "mem:1m", "--time", "1s", "--ramp", "0s", "-q", "--bs", "4 KB", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["workload"]["groups"][0]["access"][0]["bs"], "4k", "{}", v["workload"]);
}

#[test]
fn a_lab_refuses_the_outputs_it_cannot_honour_rather_than_ignoring_them() {
    // (--json is honoured now: the list of the lab's results, it::lab_flags.)
    let dir = shm_dir();
    let file = dir.path().join("lab.out");
    for (lab, flag, says) in [
        ("protocols", "--journal", "could never be checked"),
        ("cache", "--journal", "could never be checked"),
        ("protocols", "--trace", "overwrite the trace"),
        ("cache", "--trace", "drop --target, --cache and --trace"),
    ] {
        let out = lunmark().env("LUNMARK_STORE", dir.path().join("results.db")).args(["lab", lab, flag]).arg(&file).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "lab {lab} {flag}: {err}");
        assert!(err.contains(says), "lab {lab} {flag}: {err}");
        assert!(!file.exists(), "nothing written");
    }
}

#[test]
fn a_cache_dev_that_is_a_character_device_or_a_fifo_is_refused() {
    require_root!();
    let dir = shm_dir();
    let cdev = dir.path().join("null-like");
    mknod_null(&cdev);
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    for (node, kind, words) in [(&cdev, "char", "a character device"), (&fifo, "fifo", "a FIFO")] {
        let mut child = lunmark()
            .env("LUNMARK_STORE", dir.path().join("results.db"))
            .args(["run", "-t", "mem:4m", "--cache", "25%", "--ios", "1000", "--ramp", "0s", "-q", "--cache-dev"])
            .arg(node)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("--cache-dev {}: still running after 20 s", node.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.matches(&format!("--cache-dev {}: that is {words}", node.display())).count(), 1, "{err}");
        assert_eq!(node_type(node), kind);
    }
}

#[test]
fn an_output_that_is_the_target_is_refused_and_the_target_kept() {
    let dir = shm_dir();
    let data = dir.path().join("data.bin");
    std::fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    let before = crc32c::crc32c(&std::fs::read(&data).unwrap());
    let link = dir.path().join("same-data");
    std::os::unix::fs::symlink(&data, &link).unwrap();
    let t = data.to_str().unwrap();
    for (flag, path) in [("--json", &data), ("--trace", &link), ("--store", &data)] {
        let out = lunmark()
            .env("LUNMARK_STORE", dir.path().join("results.db"))
            .args(["run", "-t", t, "--read", "100", "--ios", "100", "-q", flag])
            .arg(path)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert_eq!(err.matches(&format!("{flag} {}: that is also the target", path.display())).count(), 1, "{err}");
        assert_eq!(crc32c::crc32c(&std::fs::read(&data).unwrap()), before, "{flag}: the target's data is untouched");
    }
}

fn fixture_trace(dir: &Path) -> std::path::PathBuf {
    let trace = dir.join("t1.trace");
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blkparse/sample.txt"), &trace).unwrap();
    trace
}

/// `cache-curve T --json T` replaced the trace with JSON (exit 0), and
/// `run --replay R --json R` the replay trace: both are refused before
/// anything runs, naming both flags and the file, and the trace is left whole.
#[test]
fn an_output_naming_the_commands_input_is_refused_and_the_input_kept() {
    let dir = shm_dir();
    let trace = fixture_trace(dir.path());
    let before = std::fs::read(&trace).unwrap();
    let dotted = dir.path().join(".").join("t1.trace");
    let t = trace.to_str().unwrap();
    let cases: [(Vec<&str>, &str, &str); 3] = [
        (vec!["cache-curve", t, "--json", t], "--json", "the FILE argument"),
        (vec!["run", "-t", "mem:64m", "--time", "1s", "--replay", t, "--json", dotted.to_str().unwrap()], "--json", "--replay"),
        (vec!["run", "-t", "mem:64m", "--time", "1s", "--replay", t, "--journal", t], "--journal", "--replay"),
    ];
    for (args, out_flag, in_flag) in cases {
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&format!("error: {out_flag} ")), "{args:?}: {err}");
        assert!(err.contains(&format!("that is also the file this command reads ({in_flag} {t})")), "{args:?}: {err}");
        assert_eq!(err.matches("error").count(), 1, "said once: {err}");
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{args:?} left the trace as it was");
    }
}

/// A profile's [replay] file is known only once the profile is read: --json
/// and --journal naming it are refused there, as --trace was.
#[test]
fn an_output_naming_a_profiles_replay_trace_is_refused() {
    let dir = shm_dir();
    let trace = fixture_trace(dir.path());
    let before = std::fs::read(&trace).unwrap();
    let t = trace.to_str().unwrap();
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"replayed\"\ndescription = \"a replay\"\n[replay]\nfile = \"{t}\"\n\
             [[phases]]\nname = \"main\"\n[[phases.groups]]\nname = \"main\"\nworkers = 1\nqd = 1\n\
             [[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 0.0\n"
        ),
    )
    .unwrap();
    for flag in ["--json", "--journal", "--trace"] {
        let o = run(&["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:1m", "-t", "mem:1m", flag, t]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{flag}: {err}");
        assert!(err.contains(&format!("{flag} {t} names the trace being replayed")), "{flag}: {err}");
        assert_eq!(std::fs::read(&trace).unwrap(), before, "{flag} left the trace as it was");
    }
}
