//! Network LUNs: NBD through libnbd against real nbdkit servers on loopback.
//! A lost connection is named once, without offering --continue-on-error.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// Writes every block of `uri` (sequential passes), then reads each back
/// with --verify; checks the run used `engine` and found every block right.
/// Returns the journal, for checking the server's own copy afterwards.
fn write_then_verify(dir: &std::path::Path, uri: &str, engine: &str) -> (std::path::PathBuf, serde_json::Value) {
    let journal = dir.join("j");
    let json = dir.join("r.json");
    // Point 1 writes every block (sequential, several passes); point 2 reads and checks each.
    let out = run(&[
        "run",
        "-q",
        "-t",
        uri,
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
    assert_eq!(r["engine"], engine);
    let v = &r["points"][1]["summary"]["verify"];
    assert_eq!(v["mismatches"], 0);
    assert!(v["blocks_checked"].as_u64().unwrap() >= 4096, "{v}");
    (journal, r)
}

/// `lunmark verify` of a copy of the LUN taken by the server's side: all 4096 blocks right.
fn server_copy_is_right(uri: &str, journal: &std::path::Path, image: &std::path::Path) {
    let out = run(&["verify", uri, "--journal", journal.to_str().unwrap(), "--from", image.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("4096 blocks checked") && text.contains(" 0 corrupt"), "{text}");
}

/// A known pattern written through lunmark reads back the same through lunmark
/// (a verified read pass) and through the server's own tool (nbdcopy), byte for byte.
#[test]
fn a_pattern_written_over_nbd_reads_back_through_lunmark_and_nbdcopy() {
    let dir = shm_dir();
    let server = Nbdkit::unix(dir.path(), "16M", &[]);
    let (journal, _) = write_then_verify(dir.path(), &server.uri, "nbd");
    let image = dir.path().join("image");
    let copy = Command::new("nbdcopy").arg(&server.uri).arg(&image).output().expect("nbdcopy (libnbd-bin)");
    assert!(copy.status.success(), "{}", stderr(&copy));
    server_copy_is_right(&server.uri, &journal, &image);
}

/// IOPS of a 2 s random read run at queue depth `qd` against `uri`.
fn read_iops_at_qd(dir: &std::path::Path, uri: &str, qd: &str) -> f64 {
    let j = dir.join(format!("qd{qd}.json"));
    let out = run(&["run", "-q", "-t", uri, "--read", "100", "--qd", qd, "--time", "2s", "--ramp", "0", "--json", j.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    read_json(&j)["points"][0]["summary"]["iops"].as_f64().unwrap()
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
    let iops = |qd: &str| read_iops_at_qd(dir.path(), &server.uri, qd);
    let one = iops("1");
    std::fs::write(&log, "").unwrap();
    let many = iops("32");
    assert!(many > 5.0 * one, "QD32 {many:.0} IOPS vs QD1 {one:.0}");
    // The log filter writes a line when each request starts and one ("...") when it returns.
    let (seen, avg) = reads_in_flight(&log);
    assert!(seen > 1000, "requests logged: {seen}");
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
    // The kept part says it is a part: failed after so much of the 30 s planned.
    let note = r["points"][0]["cut_short"].as_str().unwrap_or_default();
    assert!(note.starts_with("failed (") && note.contains("s of the 30s planned: the figures cover that part only"), "{note}");
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
        stdout(&out).contains("nbd://127.0.0.1:10809/disk   (NBD through libnbd: each worker opens 4 connections)"),
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
    let labs = shm_dir();
    let child = lunmark()
        .env("LUNMARK_LAB_DIR", labs.path())
        .args(["lab", "protocols", "--lun-size", "32m", "--time", "500ms", "--ramp", "0", "--read", "100", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    for row in ["mem: (lunmark alone)", "file in /dev/shm", "NBD unix socket", "NBD TCP 127.0.0.1", "iSCSI TCP 127.0.0.1 (tgtd)"] {
        let line = text.lines().find(|l| l.contains(row)).unwrap_or_else(|| panic!("no row {row}: {text}"));
        // Columns: target, point ("-" for a plain run), IOPS, ...
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let at = tokens.iter().position(|t| *t == "-").unwrap();
        let iops: f64 = tokens[at + 1].parse().unwrap();
        assert!(iops > 0.0, "{line}");
    }
    assert!(!text.contains("not measured"), "{text}");
    // No server of the lab (nbdkit, tgtd) is still running, and its files are gone.
    assert_lab_left_nothing(labs.path());
}

/// tgtd serving a file of `size` bytes in `dir` as LUN 1 (lunmark's lab helper,
/// the same code `lab protocols` uses; stopped by PID on drop).
fn tgtd_on_file(dir: &std::path::Path, size: u64) -> (lunmark::lab::servers::Server, std::path::PathBuf) {
    let backing = dir.join("tgt-lun");
    std::fs::File::create(&backing).unwrap().set_len(size).unwrap();
    (lunmark::lab::servers::tgtd(&backing).expect("tgtd (Debian's tgt package; scripts/setup.sh installs it)"), backing)
}

/// iSCSI: a pattern written through lunmark reads back the same through lunmark
/// (a verified read pass) and in tgtd's own backing file, byte for byte.
#[test]
fn a_pattern_written_over_iscsi_reads_back_through_lunmark_and_the_backing_file() {
    let dir = shm_dir();
    let (server, backing) = tgtd_on_file(dir.path(), 16 << 20);
    let (journal, r) = write_then_verify(dir.path(), &server.uri, "iscsi");
    assert_eq!(r["targets"][0]["size_bytes"].as_u64(), Some(16 << 20), "size from READ CAPACITY(16)");
    server_copy_is_right(&server.uri, &journal, &backing);
}

/// Queue depth is honoured over iSCSI: tgtd serves a LUN whose every read takes
/// 1 ms more (nbdkit's delay filter, reached through nbdfuse), and 32
/// outstanding I/Os are several times faster than 1.
#[test]
fn iscsi_queue_depth_reaches_the_server() {
    let dir = shm_dir();
    let nbd = Nbdkit::unix(dir.path(), "64M", &["--threads", "64", "--filter=delay", "rdelay=1ms", "wdelay=1ms"]);
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let disk = mnt.join("disk");
    let mut fuse = Command::new("nbdfuse")
        .args(["-C", "8"])
        .arg(&disk)
        .args(["--unix", nbd.socket.as_ref().unwrap().to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nbdfuse (libnbd-bin)");
    wait_for(|| disk.exists());
    let unmount = |fuse: &mut std::process::Child| {
        // SAFETY (of the test): SIGTERM to the nbdfuse we spawned makes it unmount.
        let _ = Command::new("kill").arg(fuse.id().to_string()).status();
        let _ = fuse.wait();
        let _ = Command::new("umount").arg(&mnt).stderr(Stdio::null()).status();
    };
    let result = std::panic::catch_unwind(|| {
        let mut server = lunmark::lab::servers::tgtd_with(&disk, &["--bsoflags", "direct"]).expect("tgtd");
        let iops = |qd: &str| read_iops_at_qd(dir.path(), &server.uri, qd);
        let one = iops("1");
        let many = iops("32");
        server.stop();
        (one, many)
    });
    unmount(&mut fuse);
    let (one, many) = result.unwrap_or_else(|e| std::panic::resume_unwind(e));
    assert!(one < 1000.0, "QD1 against a 1 ms LUN cannot pass 1000 IOPS: {one:.0}");
    assert!(many > 4.0 * one, "QD32 {many:.0} IOPS vs QD1 {one:.0}");
}

/// tgtd dies mid-run: the run ends within 5 s, status failed, the error names
/// the target, the partial result is saved.
#[test]
fn an_iscsi_target_that_dies_mid_run_fails_the_run_cleanly() {
    let dir = shm_dir();
    let (server, _backing) = tgtd_on_file(dir.path(), 64 << 20);
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args(["run", "-q", "-t", &server.uri, "--read", "70", "--time", "30s", "--ramp", "0", "--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let _ = Command::new("kill").args(["-9", &server.pid().unwrap().to_string()]).status();
    let killed = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(killed.elapsed() < Duration::from_secs(5), "ended {:?} after the target died", killed.elapsed());
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "failed");
    assert!(r["status_reason"].as_str().unwrap().contains(&server.uri), "{}", r["status_reason"]);
    assert!(r["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 0, "the data measured until then is kept");
}

/// A refused connection, an unknown IQN and a silent server are clear errors
/// before any load, never hangs.
#[test]
fn iscsi_connection_errors_are_clear_and_quick() {
    let dir = shm_dir();
    let (server, _backing) = tgtd_on_file(dir.path(), 8 << 20);
    let port = free_port();
    let wrong_iqn = server.uri.replace("lunmark:lab", "lunmark:nothing-here");
    for (uri, expect) in [(format!("iscsi://127.0.0.1:{port}/iqn.2026-11.org.lunmark:x/1"), "cannot log in"), (wrong_iqn, "cannot log in")]
    {
        let started = Instant::now();
        let out = run(&["run", "-q", "-t", &uri, "--read", "100", "--time", "1s"]);
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains(&uri) && err.contains(expect) && err.contains("Is the server running"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(6), "no hang");
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let uri = format!("iscsi://127.0.0.1:{}/iqn.2026-11.org.lunmark:x/1", listener.local_addr().unwrap().port());
    let started = Instant::now();
    let out = run(&["run", "-q", "-t", &uri, "--read", "100", "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&uri), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10), "connect timeout: {:?}", started.elapsed());
    drop(listener);
    // Misaligned I/O is refused before the run, naming the LUN's block size.
    let out = run(&["run", "-q", "-t", &server.uri, "--bs", "1000", "--read", "100", "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not a multiple of the 512-byte logical block size"), "{}", stderr(&out));
}

/// CHAP: the secret in the URI logs in, a wrong one is refused, and the secret
/// is never echoed: not in the output, the JSON, the store or its export.
#[test]
fn chap_secrets_log_in_and_are_never_echoed() {
    let dir = shm_dir();
    let (server, _backing) = tgtd_on_file(dir.path(), 8 << 20);
    server.tgtadm(&["--op", "new", "--mode", "account", "--user", "alice", "--password", "s3cr3t-Chap-pw"]).unwrap();
    server.tgtadm(&["--op", "bind", "--mode", "account", "--tid", "1", "--user", "alice"]).unwrap();
    let with = |secret: &str| server.uri.replace("iscsi://", &format!("iscsi://alice%{secret}@"));
    let store = dir.path().join("s.db");
    let json = dir.path().join("r.json");
    let store_arg = store.to_str().unwrap();
    let out = run(&[
        "--store",
        store_arg,
        "run",
        "-t",
        &with("s3cr3t-Chap-pw"),
        "--read",
        "50",
        "--time",
        "1s",
        "--ramp",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = read_json(&json)["id"].as_str().unwrap().to_string();
    let export = run(&["--store", store_arg, "results", "export", &id]);
    assert!(export.status.success() && stdout(&export).contains("iscsi://alice@127.0.0.1"), "{}", stderr(&export));
    let mut seen = format!("{}{}{}{}", stdout(&out), stderr(&out), std::fs::read_to_string(&json).unwrap(), stdout(&export));
    assert!(seen.contains("iscsi://alice@127.0.0.1"), "the user stays visible: {seen}");
    // Without the secret, and with a wrong one: refused at login.
    for uri in [server.uri.clone(), with("wrong-pw")] {
        let out = run(&["run", "-q", "-t", &uri, "--read", "100", "--time", "1s"]);
        assert_eq!(out.status.code(), Some(1), "{uri} logged in");
        assert!(stderr(&out).contains("cannot log in"), "{}", stderr(&out));
        seen.push_str(&stderr(&out));
    }
    let db = std::fs::read(&store).unwrap();
    assert!(!seen.contains("s3cr3t-Chap-pw") && !seen.contains("wrong-pw"), "a secret was echoed: {seen}");
    assert!(!db.windows(14).any(|w| w == b"s3cr3t-Chap-pw"), "the secret is in the store");
}

#[test]
fn dry_run_shows_the_iscsi_login() {
    let uri = "iscsi://127.0.0.1:3260/iqn.2026-11.org.example:disk/1";
    let out = run(&["run", "--dry-run", "-t", uri, "--connections", "2", "--read", "100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("{uri}   (iSCSI through libiscsi: each worker logs in 2 sessions, READ16/WRITE16)")),
        "{}",
        stdout(&out)
    );
}

/// Ctrl-C stops the protocol lab, in set-up or in a row: no further row runs,
/// the table marks the interrupted row, the lab says it was interrupted and
/// exits 130 (the code of an interrupted run), and leaves nothing running.
#[test]
fn ctrl_c_stops_the_protocol_lab_with_exit_130_in_set_up_and_mid_row() {
    use std::io::BufRead;
    for mid_row in [false, true] {
        let labs = shm_dir();
        let mut child = lunmark()
            .env("LUNMARK_LAB_DIR", labs.path())
            .args(["lab", "protocols", "--lun-size", "64m", "--time", "2s", "--ramp", "0", "--bs", "4k", "--read", "100", "-q"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut errors = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        if mid_row {
            // The third row (NBD over a unix socket) has started measuring.
            while !seen.contains("== NBD unix socket") {
                assert!(errors.read_line(&mut seen).unwrap() > 0, "the lab ended before its third row: {seen}");
            }
            std::thread::sleep(Duration::from_millis(500));
        } else {
            // The lab directory exists (Ctrl-C is caught by then) and the servers are starting.
            wait_for(|| std::fs::read_dir(labs.path()).unwrap().next().is_some());
        }
        signal_pid(pid, libc::SIGINT);
        let out = child.wait_with_output().unwrap();
        std::io::Read::read_to_string(&mut errors, &mut seen).unwrap();
        let text = stdout(&out);
        assert_eq!(out.status.code(), Some(130), "mid row {mid_row}: {text}{seen}");
        assert!(text.contains("lab interrupted by Ctrl-C (SIGINT)"), "mid row {mid_row}: {text}");
        assert!(!seen.contains("== NBD TCP"), "a row ran after Ctrl-C: {seen}");
        if mid_row {
            let line = text.lines().find(|l| l.contains("NBD unix socket")).unwrap_or_else(|| panic!("no interrupted row: {text}"));
            assert!(line.contains("(interrupted)"), "the interrupted row is not marked: {line}");
            let done = text.lines().find(|l| l.contains("mem: (lunmark alone)")).unwrap_or_else(|| panic!("no first row: {text}"));
            assert!(!done.contains("interrupted"), "{done}");
        }
        assert_lab_left_nothing(labs.path());
    }
}

/// A dead NBD server: the reason names the target once and does not offer
/// --continue-on-error (a lost connection is not an I/O error it could count),
/// with or without the flag.
#[test]
fn a_lost_connection_is_named_once_without_offering_continue_on_error() {
    for continue_on_error in [false, true] {
        let dir = shm_dir();
        let mut server = Nbdkit::tcp("64M", &[]);
        let json = dir.path().join("r.json");
        let mut cmd = lunmark();
        cmd.args(["run", "-q", "--no-store", "-t", &server.uri, "--time", "30s", "--ramp", "0s", "--json", json.to_str().unwrap()]);
        if continue_on_error {
            cmd.arg("--continue-on-error");
        }
        let child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        server.kill();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let reason = read_json(&json)["status_reason"].as_str().unwrap().to_string();
        assert_eq!(reason.matches(&server.uri).count(), 1, "continue_on_error {continue_on_error}: {reason}");
        assert!(!reason.contains("--continue-on-error") && reason.contains("connection"), "{reason}");
    }
}
