//! Figures that cannot hide a stall: a target that never answers (nbdkit's
//! delay filter), injected I/O errors (its error filter), and the periodic
//! lines against the stored seconds. (Ctrl-C twice on a run that never
//! answers is in `stops`, with what every stop keeps.)

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use crate::require_root;

/// An nbdkit memory disk on a unix socket whose every read and write takes 10 s.
pub(crate) fn never_answers(dir: &Path) -> Nbdkit {
    Nbdkit::unix(dir, "64M", &["--filter=delay", "rdelay=10", "wdelay=10"])
}

/// A `lunmark run` against `uri` with `args`, started now, output captured.
pub(crate) fn start(store: &Path, uri: &str, args: &[&str]) -> Child {
    lunmark().env("LUNMARK_STORE", store).args(["run", "-t", uri]).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// A target that never answers: the 2 s run ends within a second or so of its
/// planned end, the point is marked stalled with the I/Os in flight, the age of
/// the oldest and how many were abandoned, and a latency criterion fails (exit 4)
/// instead of passing on "0 us".
#[test]
fn a_target_that_never_answers_is_a_stall_not_a_pass() {
    let dir = shm_dir();
    let server = never_answers(dir.path());
    let json = dir.path().join("r.json");
    let store = dir.path().join("store.db");
    let started = Instant::now();
    let child = start(
        &store,
        &server.uri,
        &["--read", "100", "--qd", "8", "--time", "2s", "--ramp", "0", "--pass", "read_lat_max<50ms", "--json", json.to_str().unwrap()],
    );
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(4500), "a 2 s run took {took:?}: the run must end within a second of its planned end");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "completed");
    let p = &r["points"][0];
    let s = &p["summary"];
    assert_eq!(s["ios_read"], 0);
    assert_eq!(s["stalled"], true, "{s}");
    assert_eq!(s["in_flight_at_end"], 8, "{s}");
    assert_eq!(s["abandoned_ios"], 8, "{s}");
    let oldest = s["oldest_in_flight_ms"].as_f64().unwrap();
    assert!((1900.0..2600.0).contains(&oldest), "oldest in flight {oldest} ms in a 2 s interval");
    assert!(s["stall_reason"].as_str().unwrap().contains("no I/O completed"), "{s}");
    let check = &p["verdict"]["checks"][0];
    assert_eq!(p["verdict"]["passed"], false);
    assert_eq!(check["passed"], false);
    assert!(check["note"].as_str().unwrap().contains("no read completed"), "{check}");
    // The summary and the live lines say it too.
    let table = stdout(&out);
    assert!(table.contains("STALLED: no I/O completed") && table.contains("8 never completed and were abandoned"), "{table}");
    assert!(stderr(&out).contains("STALLED: 8 I/Os in flight"), "{}", stderr(&out));
}

/// A loop device over a file that nbdfuse serves from a server that never
/// answers: a block device whose I/Os never complete, driven through io_uring.
/// Torn down in the order that lets nothing wait for the delayed I/Os: the
/// server first (they fail at once), then the loop device and the FUSE mount.
struct StalledDevice {
    dev: String,
    mnt: std::path::PathBuf,
    fuse: Child,
    server: Nbdkit,
}

impl StalledDevice {
    fn new(dir: &Path) -> StalledDevice {
        let server = never_answers(dir);
        let mnt = dir.join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let disk = mnt.join("disk");
        let fuse = Command::new("nbdfuse")
            .arg(&disk)
            .args(["--unix", server.socket.as_ref().unwrap().to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nbdfuse (libnbd-bin)");
        wait_for(|| disk.exists());
        let out = Command::new("losetup").args(["--find", "--show"]).arg(&disk).output().expect("losetup");
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        StalledDevice { dev, mnt, fuse, server }
    }
}

impl Drop for StalledDevice {
    fn drop(&mut self) {
        self.server.kill();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        // A busy loop device is only marked to go: wait until it lets go of the file.
        let backing = format!("/sys/block/{}/loop/backing_file", self.dev.trim_start_matches("/dev/"));
        let mnt = self.mnt.to_string_lossy().into_owned();
        let mounted = || std::fs::read_to_string("/proc/mounts").unwrap_or_default().contains(&mnt);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(&backing).is_ok_and(|b| b.contains(&mnt)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        // SIGTERM to the nbdfuse this test spawned makes it unmount.
        signal(&self.fuse, libc::SIGTERM);
        let _ = self.fuse.wait();
        while mounted() && Instant::now() < deadline {
            let _ = Command::new("umount").arg(&self.mnt).stderr(Stdio::null()).status();
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The same through io_uring on a block device that never completes an I/O:
/// the run ends on time, the I/Os are abandoned (their buffers kept until the
/// ring is torn down), and the process exits cleanly.
#[test]
fn an_io_uring_device_that_never_completes_is_abandoned_on_time() {
    require_root!();
    let dir = shm_dir();
    let dev = StalledDevice::new(dir.path());
    let json = dir.path().join("r.json");
    let store = dir.path().join("store.db");
    let started = Instant::now();
    let child =
        start(&store, &dev.dev, &["-q", "--read", "100", "--qd", "8", "--time", "2s", "--ramp", "0", "--json", json.to_str().unwrap()]);
    let out = child.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(4500), "a 2 s run took {took:?}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["engine"], "io_uring");
    let s = &r["points"][0]["summary"];
    assert_eq!(s["stalled"], true, "{s}");
    assert_eq!(s["in_flight_at_end"], 8, "{s}");
    assert_eq!(s["abandoned_ios"], 8, "{s}");
}

/// Each periodic line (stderr is not a terminal) is a complete second: the
/// IOPS it shows is the one the result stores for that second, within 1%, one
/// line per stored second and no trailing zeros.
#[test]
fn the_periodic_lines_match_the_stored_seconds() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let out =
        run(&["run", "-t", "mem:256m", "--workers", "4", "--read", "100", "--time", "4s", "--ramp", "0", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let intervals = read_json(&json)["points"][0]["summary"]["intervals"].as_array().unwrap().clone();
    // "run 3s/4s      2032424 IOPS   8324.9 MB/s  p99 ..."
    let lines: Vec<(u64, f64)> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("run ") && l.contains(" IOPS"))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let second = words[1].split('s').next().unwrap().parse().unwrap();
            (second, words[2].parse().unwrap())
        })
        .collect();
    assert_eq!(lines.len(), intervals.len(), "one line per stored second: {}", stderr(&out));
    for (second, shown) in lines {
        let stored = intervals[second as usize - 1]["iops"].as_f64().unwrap();
        assert!(stored > 0.0 && shown > 0.0, "second {second}: no zero lines ({shown} shown, {stored} stored)");
        assert!((shown - stored).abs() <= stored * 0.01, "second {second}: {shown} IOPS shown, {stored} stored");
    }
}

/// nbdkit with its error filter, logging every error it injects (-v) to `log`.
fn injecting_errors(dir: &Path, log: &Path) -> Nbdkit {
    let socket = dir.join(format!("nbd-{}.sock", rand_suffix()));
    let child = Command::new("nbdkit")
        .args(["-f", "-v", "--exit-with-parent", "-U"])
        .arg(&socket)
        .args(["--filter=error", "memory", "64M", "error-rate=5%", "error=EIO"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("nbdkit");
    wait_for(|| socket.exists());
    let uri = format!("nbd+unix:///?socket={}", socket.display());
    Nbdkit { child: Some(child), uri, socket: Some(socket) }
}

/// Errors the server says it injected.
fn injected(log: &Path) -> u64 {
    std::fs::read_to_string(log).unwrap().lines().filter(|l| l.contains("injecting EIO error")).count() as u64
}

/// With --continue-on-error the run goes on and counts every error the server
/// injected, those reaped while stopping included, and `--pass errors<1` fails
/// on them; without it the run still stops at the first, and counts what was in
/// flight with it.
#[test]
fn every_injected_error_is_counted() {
    let dir = shm_dir();
    for go_on in [true, false] {
        let log = dir.path().join(format!("nbdkit-{go_on}.log"));
        let mut server = injecting_errors(dir.path(), &log);
        let json = dir.path().join(format!("r-{go_on}.json"));
        let mut args =
            vec!["run", "-q", "-t", &server.uri, "--read", "70", "--time", "1s", "--ramp", "0", "--json", json.to_str().unwrap()];
        if go_on {
            // Now an errors criterion can decide the verdict.
            args.extend(["--continue-on-error", "--pass", "errors<1"]);
        }
        let out = run(&args);
        let r = read_json(&json);
        server.kill();
        let injected = injected(&log);
        let errors = &r["points"][0]["summary"]["errors"];
        assert!(injected > 0, "the server injected no error");
        assert_eq!(errors["total"].as_u64().unwrap(), injected, "--continue-on-error {go_on}: {errors}");
        assert_eq!(errors["by_errno"]["Input/output error"].as_u64().unwrap(), injected);
        if go_on {
            assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
            assert_eq!(r["status"], "completed");
            assert_eq!(r["points"][0]["verdict"]["checks"][0]["value"].as_f64().unwrap(), injected as f64);
            assert!(injected >= 20, "a second at 5% errors injects many: {injected}");
            assert!(r["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 0);
        } else {
            assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
            assert_eq!(r["status"], "failed");
            assert!(r["status_reason"].as_str().unwrap().contains("--continue-on-error"), "{}", r["status_reason"]);
        }
    }
}
