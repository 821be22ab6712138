//! Real servers as people start them: `qemu-nbd -k SOCK IMAGE` serves one
//! client and exits when it leaves; `--shared=N` serves N. lunmark opens every
//! connection a point uses before it starts, probes on one of them, and reuses
//! them from point to point, so a one-client server serves a whole run; a
//! server that takes fewer connections than the run needs is a clear error that
//! says how to start it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// A qemu-nbd this test started on a unix socket in `dir`, over a raw image
/// there; stopped by PID when dropped.
struct QemuNbd {
    child: Child,
    socket: PathBuf,
    uri: String,
}

impl QemuNbd {
    /// `qemu-nbd OPTIONS -k SOCKET -f raw IMAGE`, `options` as a user would give them.
    fn start(dir: &Path, options: &[&str]) -> QemuNbd {
        let image = dir.join("image.raw");
        if !image.exists() {
            std::fs::File::create(&image).unwrap().set_len(64 << 20).unwrap();
        }
        let socket = dir.join(format!("qemu-nbd-{}.sock", rand_suffix()));
        let child = Command::new("qemu-nbd")
            .args(options)
            .arg("-k")
            .arg(&socket)
            .args(["-f", "raw"])
            .arg(&image)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("qemu-nbd (Debian's qemu-utils; scripts/setup.sh installs it)");
        wait_for(|| socket.exists());
        let uri = format!("nbd+unix:///?socket={}", socket.display());
        QemuNbd { child, socket, uri }
    }

    /// Whether the server has exited (within `wait`).
    fn exited_within(&mut self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for QemuNbd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

fn run_against(uri: &str, extra: &[&str], json: &Path) -> Output {
    lunmark()
        .args(["run", "-q", "--no-store", "-t", uri, "--read", "50", "--time", "500ms", "--ramp", "0"])
        .args(extra)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap()
}

/// One-client qemu-nbd, one worker, two points, --verify: the run completes on
/// the one connection it was allowed, and every read checks out.
#[test]
fn a_one_client_qemu_nbd_serves_a_whole_run() {
    let dir = shm_dir();
    let mut server = QemuNbd::start(dir.path(), &[]);
    let json = dir.path().join("r.json");
    let out = run_against(&server.uri, &["--sweep", "qd=1,4", "--verify"], &json);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["status"], "completed");
    for p in r["points"].as_array().unwrap() {
        let s = &p["summary"];
        assert!(s["ios_read"].as_u64().unwrap() > 0 && s["ios_written"].as_u64().unwrap() > 0, "{s}");
        assert!(s["verify"]["blocks_checked"].as_u64().unwrap() > 0, "{}", s["verify"]);
        assert_eq!(s["verify"]["mismatches"], 0);
    }
    // It served one client, lunmark, which used one connection for all of it.
    assert!(server.exited_within(Duration::from_secs(5)), "qemu-nbd ends with its one client");
}

/// More connections than the server takes (two workers, or --connections 3):
/// refused before any load, naming what the run needs and how to start the server.
#[test]
fn a_server_that_takes_fewer_connections_than_the_run_says_how_to_start_it() {
    let dir = shm_dir();
    let cases: [(&[&str], &[&str], &str); 2] = [
        (&[], &["--workers", "2"], "2 workers x 1 connection each"),
        (&["--persistent"], &["--connections", "3"], "1 worker x 3 connections each"),
    ];
    for (options, extra, why) in cases {
        let server = QemuNbd::start(dir.path(), options);
        let json = dir.path().join("refused.json");
        let out = run_against(&server.uri, extra, &json);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{options:?} {extra:?}: {err}");
        let wanted = if extra[0] == "--workers" { 2 } else { 3 };
        assert!(err.contains(&server.uri) && err.contains(why), "{err}");
        assert!(err.contains("accepted 1 connection but not connection 2"), "{err}");
        assert!(err.contains(&format!("--persistent --shared={wanted}")) && err.contains(&format!("-t -e {wanted}")), "{err}");
        assert!(!stdout(&out).contains("IOPS") && !json.exists(), "nothing ran");
        assert_eq!(err.matches("error:").count(), 1, "{err}");
    }
}

/// Started for several clients, qemu-nbd serves several workers and connections.
#[test]
fn a_qemu_nbd_started_for_several_clients_serves_several_workers() {
    let dir = shm_dir();
    let server = QemuNbd::start(dir.path(), &["-t", "-e", "4"]);
    let json = dir.path().join("r.json");
    let out = run_against(&server.uri, &["--workers", "2", "--connections", "2", "--verify"], &json);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &read_json(&json)["points"][0]["summary"];
    assert!(s["ios_read"].as_u64().unwrap() > 0 && s["verify"]["blocks_checked"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["verify"]["mismatches"], 0);
}
