//! Network LUNs: NBD through libnbd against real nbdkit servers on loopback.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// A known pattern written through lunmark reads back the same through lunmark
/// (a verified read pass) and through the server's own tool (nbdcopy), byte for byte.
#[test]
fn a_pattern_written_over_nbd_reads_back_through_lunmark_and_nbdcopy() {
    let dir = shm_dir();
    let server = Nbdkit::unix(dir.path(), "16M", &[]);
    let journal = dir.path().join("j");
    let json = dir.path().join("r.json");
    // Point 1 writes every block (sequential, several passes); point 2 reads and checks each.
    let out = run(&[
        "run",
        "-q",
        "-t",
        &server.uri,
        "--random",
        "0",
        "--sweep",
        "read=0,100",
        "--time",
        "1s",
        "--ramp",
        "0",
        "--verify",
        "--journal",
        journal.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["engine"], "nbd");
    let v = &r["points"][1]["summary"]["verify"];
    assert_eq!(v["mismatches"], 0);
    assert!(v["blocks_checked"].as_u64().unwrap() >= 4096, "{v}");
    // The server's own view: copy the export out with nbdcopy and check every block.
    let image = dir.path().join("image");
    let copy = Command::new("nbdcopy").arg(&server.uri).arg(&image).output().expect("nbdcopy (libnbd-bin)");
    assert!(copy.status.success(), "{}", stderr(&copy));
    let out = run(&["verify", &server.uri, "--journal", journal.to_str().unwrap(), "--from", image.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("4096 blocks checked") && text.contains(" 0 corrupt"), "{text}");
}

/// Queue depth is honoured on the wire: against a server with 1 ms added
/// latency, 32 outstanding I/Os are several times faster than 1, and the
/// server's log shows at least 16 requests in flight on average.
#[test]
fn queue_depth_reaches_the_server() {
    let dir = shm_dir();
    let log = dir.path().join("nbdkit.log");
    let logarg = format!("logfile={}", log.display());
    let server =
        Nbdkit::unix(dir.path(), "64M", &["--threads", "64", "--filter=log", "--filter=delay", &logarg, "rdelay=1ms", "wdelay=1ms"]);
    let iops = |qd: &str| {
        let j = dir.path().join(format!("qd{qd}.json"));
        let out = run(&[
            "run",
            "-q",
            "-t",
            &server.uri,
            "--read",
            "100",
            "--qd",
            qd,
            "--time",
            "2s",
            "--ramp",
            "0",
            "--json",
            j.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        read_json(&j)["points"][0]["summary"]["iops"].as_f64().unwrap()
    };
    let one = iops("1");
    std::fs::write(&log, "").unwrap();
    let many = iops("32");
    assert!(many > 5.0 * one, "QD32 {many:.0} IOPS vs QD1 {one:.0}");
    // The log filter writes a line when each request starts and one ("...") when it returns.
    let text = std::fs::read_to_string(&log).unwrap();
    let (mut now, mut seen, mut sum) = (0i64, 0i64, 0i64);
    for line in text.lines().filter(|l| l.contains(" Read id=")) {
        if line.contains("...Read") {
            now -= 1;
        } else {
            sum += now;
            seen += 1;
            now += 1;
        }
    }
    assert!(seen > 1000, "requests logged: {seen}");
    let avg = sum as f64 / seen as f64;
    assert!(avg >= 16.0, "average requests in flight at the server: {avg:.1}");
}

/// The server dies mid-run: the run ends within 5 s, status failed, the error
/// names the target, the partial result is saved.
#[test]
fn a_server_that_dies_mid_run_fails_the_run_cleanly() {
    let dir = shm_dir();
    let mut server = Nbdkit::tcp("64M", &[]);
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args(["run", "-q", "-t", &server.uri, "--read", "70", "--time", "30s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    server.kill();
    let killed = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(killed.elapsed() < Duration::from_secs(5), "ended {:?} after the server died", killed.elapsed());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "failed");
    assert!(r["status_reason"].as_str().unwrap().contains(&server.uri), "{}", r["status_reason"]);
    assert!(r["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 0, "the data measured until then is kept");
}

#[test]
fn refused_and_missing_servers_are_clear_errors_before_any_load() {
    let dir = shm_dir();
    let port = free_port();
    for (uri, expect) in [
        (format!("nbd://127.0.0.1:{port}/"), "Connection refused"),
        (format!("nbd+unix:///?socket={}/none.sock", dir.path().display()), "No such file"),
    ] {
        let started = Instant::now();
        let out = run(&["run", "-q", "-t", &uri, "--read", "100", "--time", "1s"]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains(&uri) && err.contains(expect) && err.contains("Is the server running"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(6), "no hang");
    }
    // A server that accepts but never answers: the connect timeout ends it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = format!("nbd://127.0.0.1:{}/", listener.local_addr().unwrap().port());
    let started = Instant::now();
    let out = run(&["run", "-q", "-t", &uri, "--read", "100", "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no answer from the server"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(8));
    drop(listener);
}

#[test]
fn dry_run_shows_what_it_connects_to() {
    let out = run(&["run", "--dry-run", "-t", "nbd://127.0.0.1:10809/disk", "--connections", "4", "--read", "100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nbd://127.0.0.1:10809/disk   (NBD through libnbd: each worker opens 4 connection(s))"),
        "{}",
        stdout(&out)
    );
}

/// --connections spreads one worker's queue over several connections.
#[test]
fn connections_spread_the_queue() {
    let dir = shm_dir();
    let server = Nbdkit::unix(dir.path(), "16M", &[]);
    let out = run(&["run", "-q", "-t", &server.uri, "--read", "50", "--connections", "4", "--qd", "16", "--time", "1s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("engine: nbd"));
}

/// The protocol lab runs end to end and leaves no server behind.
#[test]
fn the_protocol_lab_runs_end_to_end_and_cleans_up() {
    let child = lunmark()
        .args(["lab", "protocols", "--lun-size", "32m", "--time", "500ms", "--ramp", "0", "--read", "100", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    for row in ["mem: (lunmark alone)", "file in /dev/shm", "NBD unix socket", "NBD TCP 127.0.0.1"] {
        let line = text.lines().find(|l| l.contains(row)).unwrap_or_else(|| panic!("no row {row}: {text}"));
        // Columns: target, point ("-" for a plain run), IOPS, ...
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let at = tokens.iter().position(|t| *t == "-").unwrap();
        let iops: f64 = tokens[at + 1].parse().unwrap();
        assert!(iops > 0.0, "{line}");
    }
    assert!(text.contains("iSCSI (tgtd): not measured"), "{text}");
    // No nbdkit whose parent was the lab is still running.
    std::thread::sleep(Duration::from_millis(200));
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        let comm_end = stat.rfind(')').unwrap_or(0);
        let ppid: u32 = stat[comm_end + 2..].split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        assert!(!(stat.contains("(nbdkit)") && ppid == pid), "an nbdkit of the lab is still running: {stat}");
    }
    let leftovers: Vec<_> =
        std::fs::read_dir("/dev/shm").unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with("lunmark-lab-")).collect();
    assert!(leftovers.is_empty(), "lab directories left in /dev/shm");
}
