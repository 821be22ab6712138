//! Core: counts agree with the kernel, device safety, bad input, and the shape
//! of the result.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use crate::require_root;

/// The I/O counts and bytes in a result match what the kernel saw on a loop
/// device (/sys/block/loopN/stat), within 1%, for reads and for writes.
#[test]
fn result_counts_match_the_kernel_on_a_loop_device() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 256 << 20);
    let json = dir.path().join("r.json");
    let before = dev.stat();
    let out = run(&[
        "run",
        "-q",
        "--target",
        dev.path.to_str().unwrap(),
        "--destructive",
        "--read",
        "60",
        "--random",
        "100",
        "--qd",
        "16",
        "--ramp",
        "0",
        "--ios",
        "60000",
        "--json",
        json.to_str().unwrap(),
    ]);
    let after = dev.stat();
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    let s = &r["points"][0]["summary"];
    let (reads, read_sectors, writes, write_sectors) = (after.0 - before.0, after.1 - before.1, after.2 - before.2, after.3 - before.3);
    let close = |ours: u64, kernel: u64| (ours as f64 - kernel as f64).abs() <= 0.01 * kernel as f64;
    let ios_read = s["ios_read"].as_u64().unwrap();
    let ios_written = s["ios_written"].as_u64().unwrap();
    assert_eq!(ios_read + ios_written, 60_000);
    assert!(close(ios_read, reads), "reads: lunmark {ios_read}, kernel {reads}");
    assert!(close(ios_written, writes), "writes: lunmark {ios_written}, kernel {writes}");
    assert!(close(s["bytes_read"].as_u64().unwrap(), read_sectors * 512), "bytes read vs kernel sectors");
    assert!(close(s["bytes_written"].as_u64().unwrap(), write_sectors * 512), "bytes written vs kernel sectors");
}

#[test]
fn writes_to_a_block_device_need_destructive() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 64 << 20);
    let out = run(&["run", "-q", "--target", dev.path.to_str().unwrap(), "--time", "1s", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("--destructive") && err.contains(dev.path.to_str().unwrap()), "{err}");
    // A read-only run is harmless and allowed.
    let out = run(&["run", "-q", "--target", dev.path.to_str().unwrap(), "--read", "100", "--time", "1s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_device_holding_a_filesystem_is_refused_even_with_destructive() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 64 << 20);
    let mkfs = Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev.path).output().expect("mkfs.ext4");
    assert!(mkfs.status.success(), "{}", stderr(&mkfs));
    let target = dev.path.to_str().unwrap();
    let out = run(&["run", "-q", "--target", target, "--destructive", "--time", "1s", "--ramp", "0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("ext2/3/4 filesystem") && err.contains("--force"), "{err}");

    // Mounted: the message says where.
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount").arg(&dev.path).arg(&mnt).status().unwrap().success());
    let out = run(&["run", "-q", "--target", target, "--destructive", "--time", "1s", "--ramp", "0"]);
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(stderr(&out).contains("mounted on"), "{}", stderr(&out));

    // --force as well: the user insisted.
    let out = run(&["run", "-q", "--target", target, "--destructive", "--force", "--time", "1s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

fn assert_rejected(args: &[&str], expect: &[&str]) {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "args {args:?} should fail with 1; stderr: {err}");
    assert!(!err.contains("panicked"), "panic on {args:?}: {err}");
    for e in expect {
        assert!(err.contains(e), "args {args:?}: message should mention '{e}': {err}");
    }
}

#[test]
fn bad_input_gets_a_clear_message_and_a_nonzero_exit() {
    let dir = shm_dir();
    let f = dir.path().join("f.dat");
    let f = f.to_str().unwrap();
    assert_rejected(&["run", "-t", f, "--size", "0"], &["--size 0", "at least one transfer"]);
    assert_rejected(&["run", "-t", "mem:16m", "--read", "150"], &["--read", "'150'", "0 to 100"]);
    // A choice flag's value is checked where the command line is read: a usage error (2) naming the flag.
    for (args, expect) in [
        (&["--engine", "spdk"][..], &["--engine", "unknown engine 'spdk'", "io_uring"][..]),
        (&["--pick", "last", "--repeat", "2"][..], &["--pick", "'last'", "mean, median or best"][..]),
        (&["--arrivals", "bursty", "--rate", "10"][..], &["--arrivals", "'bursty'", "fixed", "poisson"][..]),
        (&["--steady", "speed"][..], &["--steady", "'speed'", "iops, bw or lat"][..]),
    ] {
        let out = run(&[&["run", "-t", "mem:16m"][..], args].concat());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(expect.iter().all(|e| err.contains(e)) && err.matches("error:").count() == 1, "{args:?}: {err}");
    }
    assert_rejected(&["run", "-t", f, "--read", "100"], &["does not exist", "--size"]);
    assert_rejected(&["run", "-t", dir.path().to_str().unwrap()], &["is a directory"]);
    assert_rejected(&["run", "-t", "mem:16m", "--bs", "4x"], &["--bs", "'4x' is not a size"]);
    assert_rejected(&["run", "-t", "mem:16m", "--qd", "0"], &["--qd 0: the queue depth must be at least 1"]);
    assert_rejected(&["run", "-t", "mem:16m", "--bs", "0"], &["--bs 0: the transfer size must lie between 1 byte and 64m"]);
    // Flags that were accepted and ignored are refused, saying what to add.
    let missing_log = dir.path().join("nope.csv");
    assert_rejected(
        &["run", "-t", "mem:16m", "--power-log", missing_log.to_str().unwrap()],
        &["--power-log", "nope.csv", "does not exist", "read after each point"],
    );
    assert_rejected(&["run", "-t", "mem:16m", "--power-log", dir.path().to_str().unwrap()], &["--power-log", "not a regular file"]);
    assert_rejected(&["run", "-t", "mem:16m", "--iops-per-mailbox", "3"], &["--iops-per-mailbox", "add --mailboxes N"]);
    assert_rejected(&["run", "-t", "mem:16m", "--cache-block", "8k"], &["--cache-block", "add --cache SIZE"]);
    assert_rejected(&["run", "-t", "mem:4k", "--bs", "8k"], &["smaller than the largest transfer"]);
    assert_rejected(&["run", "-t", "nfs://x/y"], &["unknown scheme 'nfs'"]);
    assert_rejected(
        &["run", "-t", f, "--size", "1m", "--bs", "1000"],
        &["not a multiple of the 512-byte logical block size", "--buffered"],
    );
    // --buffered where there is no page cache (it was accepted and ignored).
    assert_rejected(&["run", "-t", "mem:16m", "--buffered"], &["--buffered", "mem:16m (the mem engine)", "drop --buffered"]);
    assert_rejected(&["run", "-t", "null:16m", "--buffered"], &["--buffered", "the null engine"]);
    // Nothing was created by the rejected runs.
    assert!(!std::path::Path::new(f).exists());
}

/// The result carries every field the schema promises.
#[test]
fn the_result_has_the_documented_fields() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let f = dir.path().join("data");
    let out = run(&[
        "run",
        "-q",
        "-t",
        f.to_str().unwrap(),
        "--size",
        "32m",
        "--read",
        "70",
        "--time",
        "2s",
        "--ramp",
        "1s",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    for key in ["schema_version", "id", "lunmark_version", "started_at", "status", "command_line", "host", "workload", "points"] {
        assert!(!r[key].is_null(), "missing {key}");
    }
    assert_eq!(r["status"], "completed");
    for key in ["kernel", "cpu_model", "cores", "memory_bytes"] {
        assert!(!r["host"][key].is_null(), "missing host.{key}");
    }
    let s = &r["points"][0]["summary"];
    for key in [
        "iops",
        "read_iops",
        "write_iops",
        "mbps",
        "read_mbps",
        "write_mbps",
        "bytes_read",
        "bytes_written",
        "ios_read",
        "ios_written",
        "duration_s",
        "errors",
        "intervals",
    ] {
        assert!(!s[key].is_null(), "missing summary.{key}");
    }
    for op in ["read", "write", "all"] {
        for p in ["mean", "p50", "p90", "p99", "p99_9", "p99_99", "max"] {
            assert!(s["latency_us"][op][p].is_number(), "missing latency_us.{op}.{p}");
        }
    }
    for key in ["utilization_pct", "process_pct", "per_core_pct", "iops_per_cpu_pct", "mbps_per_cpu_pct", "service_demand_us_per_kb"] {
        assert!(!s["cpu"][key].is_null(), "missing cpu.{key}");
    }
    let iops = s["iops"].as_f64().unwrap();
    let util = s["cpu"]["utilization_pct"].as_f64().unwrap();
    assert!((s["cpu"]["iops_per_cpu_pct"].as_f64().unwrap() - iops / util).abs() < 1e-6 * iops);
    // 70% read by default: observed within 2 points over a couple of seconds of I/O.
    let reads = s["ios_read"].as_f64().unwrap() / (s["ios_read"].as_f64().unwrap() + s["ios_written"].as_f64().unwrap());
    assert!((reads - 0.70).abs() < 0.02, "read share {reads}");
    let intervals = s["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2, "one interval per measured second");
    assert!(!f.exists() || f.metadata().unwrap().len() == 32 << 20);
}

/// `lunmark run` with no arguments: a real run on a scratch file in the current
/// directory, removed afterwards.
#[test]
fn the_default_run_uses_and_removes_a_scratch_file() {
    let dir = shm_dir();
    let out = lunmark().current_dir(dir.path()).args(["run", "--dry-run"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("lunmark-scratch-") && text.contains("I/Os in flight"), "{text}");
    let out = lunmark().current_dir(dir.path()).args(["run", "-q", "--time", "1s", "--ramp", "0", "--size", "16m"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("IOPS"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "scratch file removed");
}

/// --dry-run prints the effective spec and touches nothing.
#[test]
fn dry_run_describes_the_workload() {
    let out = run(&["run", "--dry-run", "-t", "mem:1g", "-t", "mem:1g", "--workers", "2", "--qd", "8", "--bs", "8k", "--read", "35"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("2 workers x 2 targets x 8 outstanding = 32 I/Os in flight"), "{text}");
    assert!(text.contains("8k transfers, 35% read / 65% write"), "{text}");
}

#[test]
fn psync_with_queue_depth_warns() {
    let dir = shm_dir();
    let f = dir.path().join("data");
    let out =
        run(&["run", "-q", "-t", f.to_str().unwrap(), "--size", "8m", "--engine", "psync", "--qd", "8", "--time", "1s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("psync engine does one I/O at a time"), "{}", stderr(&out));
}

/// utime + stime of one process, seconds, from /proc/[pid]/stat.
fn cpu_seconds_of(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / hz
}

fn cpu_run() -> (String, serde_json::Value) {
    cpu_run_for("2s")
}

fn cpu_run_for(time: &str) -> (String, serde_json::Value) {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let out = lunmark()
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--time", time, "--ramp", "0", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (stdout(&out), read_json(&json)["points"][0]["summary"]["cpu"].clone())
}

/// A busy neighbour (a shell spinning a core) is measured as other processes'
/// CPU, printed, and warned about; lunmark never counts itself as "other".
#[test]
fn other_processes_cpu_is_shown_and_warned_about() {
    let mut neighbour = Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
    let pid = neighbour.id();
    let (before, started) = (cpu_seconds_of(pid), std::time::Instant::now());
    let (text, cpu) = cpu_run();
    let (burnt, window) = (cpu_seconds_of(pid) - before, started.elapsed().as_secs_f64());
    signal_pid(pid, libc::SIGKILL);
    neighbour.wait().unwrap();

    let other = cpu["other_processes_pct"].as_f64().unwrap();
    let other_s = cpu["other_processes_cpu_s"].as_f64().unwrap();
    assert!(other > 30.0, "a shell spinning one of the cores: other processes at {other}%: {cpu}");
    // At least what the neighbour burnt in the 2 s interval (it spins steadily;
    // slack for a host shared with other work, which also shifts its share).
    let in_interval = burnt * 2.0 / window;
    assert!(other_s >= 0.6 * in_interval, "other processes {other_s} CPU-s, the neighbour alone {in_interval}: {cpu}");
    // Named among the top three, unless three others each used more than it did.
    let top = cpu["other_processes_top"].as_array().unwrap();
    let cores = cpu["per_core_pct"].as_array().unwrap().len() as f64;
    let share = in_interval / 2.0 / cores * 100.0;
    assert!(
        top.iter().any(|p| p["name"] == "sh") || (top.len() == 3 && top.iter().all(|p| p["cpu_pct"].as_f64().unwrap() >= 0.6 * share)),
        "the neighbour (about {share:.0}% of all cores) is not named: {cpu}"
    );
    let warning = cpu["warning"].as_str().unwrap();
    assert!(warning.contains("disturbed") && warning.contains("service demand"), "{warning}");
    assert!(text.contains(&format!("other processes: {other:.0}% of all cores")), "{text}");
    assert!(text.contains("warning: other processes used"), "{text}");
}

/// CPU-seconds used by the processes under `roots` (them included) since they
/// started: own and reaped time of every one alive now. Two readings bound
/// what the tree used between them, its reaped children included.
fn tree_cpu_seconds(roots: &[u32]) -> f64 {
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let mut procs = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let f: Vec<String> = stat.rsplit_once(')').unwrap().1.split_whitespace().map(String::from).collect();
        let ticks: u64 = f[11..15].iter().map(|t| t.parse::<u64>().unwrap()).sum();
        procs.insert(pid, (f[1].parse::<u32>().unwrap(), ticks));
    }
    let under = |mut pid: u32| {
        for _ in 0..64 {
            if roots.contains(&pid) {
                return true;
            }
            match procs.get(&pid) {
                Some((ppid, _)) if *ppid > 1 => pid = *ppid,
                _ => return false,
            }
        }
        false
    };
    procs.iter().filter(|(pid, _)| under(**pid)).map(|(_, (_, t))| *t as f64 / hz).sum()
}

/// A busy neighbour that runs CPU burners through a subshell and `timeout`
/// beside a run: the burners alive when the interval starts are reaped, with
/// their whole life, into the loop during it (through the subshell, which
/// exits too). Other processes' names, in the total's unit (share of all host
/// CPUs), add up to no more than the total, and the loop is charged no more
/// than its whole process tree used in a window around the interval: none of
/// the burners' time from before the interval.
#[test]
fn a_neighbour_that_reaps_children_is_charged_only_inside_the_interval() {
    use std::os::unix::process::CommandExt;
    let dir = shm_dir();
    // The loop under a name of its own, to find its charge by name.
    let sh = dir.path().join("nbr-loop");
    std::fs::copy("/bin/sh", &sh).unwrap();
    let script = "while :; do (timeout --foreground 3 sh -c 'while :; do :; done'; :); done";
    let mut loops: Vec<std::process::Child> =
        (0..2).map(|_| Command::new(&sh).args(["-c", script]).process_group(0).spawn().unwrap()).collect();
    let roots: Vec<u32> = loops.iter().map(|c| c.id()).collect();
    // The burners run for 1.5 s before the run starts, and end during its 3 s interval.
    std::thread::sleep(Duration::from_millis(1500));
    let before = tree_cpu_seconds(&roots);
    let (_, cpu) = cpu_run_for("3s");
    let used = tree_cpu_seconds(&roots) - before;
    for (child, pid) in loops.iter_mut().zip(&roots) {
        // SAFETY: kill has no memory effects; the group is our own child's (process_group(0)), its burners with it.
        unsafe { libc::kill(-(*pid as i32), libc::SIGKILL) };
        child.wait().unwrap();
    }
    let total = cpu["other_processes_pct"].as_f64().unwrap();
    let top = cpu["other_processes_top"].as_array().unwrap();
    let named: f64 = top.iter().map(|p| p["cpu_pct"].as_f64().unwrap()).sum();
    // Rounding of the shares only.
    assert!(named <= total + 1e-6, "the names add up to {named}% of all cores, more than the total {total}%: {cpu}");
    let cores = cpu["per_core_pct"].as_array().unwrap().len() as f64;
    let capacity = cpu["busy_cpu_s"].as_f64().unwrap() * 100.0 / cpu["utilization_pct"].as_f64().unwrap().max(1e-9);
    assert!((capacity / cores - 3.0).abs() < 0.5, "interval of about 3 s: {capacity} CPU-s on {cores} cores");
    if let Some(l) = top.iter().find(|p| p["name"] == "nbr-loop") {
        let charged = l["cpu_pct"].as_f64().unwrap() * capacity / 100.0;
        // A tick per process of slack: /proc counts in 10 ms ticks.
        assert!(charged <= used + 0.1, "the loop is charged {charged} CPU-s, its whole tree used {used} around the interval: {cpu}");
    }
}

/// Without a neighbour: lunmark (here spinning a core itself) is not counted,
/// so other processes stay within what the host was busy with besides lunmark.
#[test]
fn other_processes_cpu_leaves_lunmark_out() {
    let (text, cpu) = cpu_run();
    let other = cpu["other_processes_pct"].as_f64().unwrap();
    let util = cpu["utilization_pct"].as_f64().unwrap();
    let own = cpu["process_pct"].as_f64().unwrap();
    // Ticks are 10 ms and /proc/stat samples them: a few points of slack.
    assert!(other <= util - own + 5.0, "other {other}% > host {util}% - lunmark {own}%: {cpu}");
    assert_eq!(cpu["warning"].is_string(), other > 5.0, "{cpu}");
    if util - own < 2.0 {
        // A quiet host: the figure is small and there is no warning.
        assert!(other < 3.0 && !text.contains("warning: other processes"), "{cpu}");
    }
    assert!(text.contains("other processes: "), "{text}");
}
