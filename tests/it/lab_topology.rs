//! The protocol lab's topology: `--legs`, `--targets N`, `--sweep targets=...`,
//! `--port-limit` and `--link LEG=LINK`, on real nbdkit and tgtd servers (and
//! real shaped links), refused with one clear error when they cannot apply.

use serde_json::Value;

use crate::common::*;
use crate::require_root;

#[test]
fn bad_legs_limits_and_links_are_refused_before_anything_starts() {
    assert_refused(&[
        (
            &["lab", "protocols", "--legs", "nbd-unix,fc"],
            "--legs nbd-unix,fc: 'fc' is not a leg; the legs are mem, file, nbd-unix, nbd-tcp, iscsi",
        ),
        (&["lab", "protocols", "--legs", "iscsi,iscsi"], "'iscsi' is given twice"),
        // tgtd has no per-LUN limit: refused with the alternative.
        (&["lab", "protocols", "--legs", "nbd-tcp,iscsi", "--port-limit", "1ms"], "legs iscsi have none"),
        (
            &["lab", "protocols", "--port-limit", "1ms"],
            "give --legs nbd-unix,nbd-tcp, or shape the iSCSI leg's link with --link iscsi=RATE",
        ),
        (&["lab", "protocols", "--legs", "nbd-unix", "--port-limit", "5000iops"], "1000/k IOPS"),
        (&["lab", "protocols", "--legs", "nbd-unix", "--port-limit", "0iops"], "--port-limit 0iops: an IOPS cap must be above 0"),
        (&["lab", "protocols", "--legs", "nbd-unix", "--port-limit", "fast"], "--port-limit fast: give a service time"),
        (&["lab", "protocols", "--link", "nbd-unix=1gbe"], "the nbd-unix leg crosses no network"),
        (&["lab", "protocols", "--legs", "nbd-tcp", "--link", "iscsi=1gbe"], "the iscsi leg does not run"),
        (&["lab", "protocols", "--link", "iscsi=2furlongs"], "--link iscsi=2furlongs:"),
        (&["lab", "protocols", "--link", "10gbe@1"], "LEG=LINK"),
        (&["lab", "protocols", "--targets", "2", "--sweep", "targets=1,3"], "give --targets 3"),
        (&["lab", "protocols", "--targets", "0"], "--targets 0"),
    ]);
}

#[test]
fn the_dry_run_shows_each_leg_its_targets_limit_and_link() {
    let dir = shm_dir();
    let (out, stored) = run_in_store(
        dir.path(),
        &[
            "lab",
            "protocols",
            "--dry-run",
            "--legs",
            "iscsi,nbd-tcp",
            "--targets",
            "3",
            "--link",
            "iscsi=10gbe,nbd-tcp=8gfc",
            "--lun-size",
            "8m",
        ],
    );
    let text = stdout(&out);
    assert!(out.status.success() && !stored, "{text}{}", stderr(&out));
    assert!(text.contains("lab protocols: NBD TCP 8gfc link, 3 targets  <- 3 x nbdkit memory 8m on 8gfc link, a port each"), "{text}");
    assert!(
        text.contains("lab protocols: iSCSI TCP 10gbe link (tgtd), 3 targets  <- tgtd serving 3 LUNs, a 8m file each, on 10gbe link"),
        "{text}"
    );
    assert!(text.contains("the iscsi leg crosses a veth pair shaped to 10gbe each way"), "{text}");
    assert!(!text.contains("mem: (lunmark alone)") && !text.contains("NBD unix socket"), "legs not asked for are shown:\n{text}");
    let (out, _) = run_in_store(dir.path(), &["lab", "protocols", "--dry-run", "--legs", "nbd-unix", "--port-limit", "500iops"]);
    assert!(
        stdout(&out).contains("each NBD target is held to a port's limit: one I/O at a time, 2 ms each (at most 500 IOPS)"),
        "{}",
        stdout(&out)
    );
}

/// The lab's results, from `--json -`, and the PID the lab ran as.
fn lab_json(args: &[&str]) -> (Vec<Value>, u32) {
    let dir = shm_dir();
    let child = lunmark()
        .env("LUNMARK_LAB_DIR", dir.path())
        .args(["lab", "protocols", "--no-store", "--json", "-"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_lab_left_nothing(dir.path());
    (serde_json::from_str::<Value>(&stdout(&out)).unwrap().as_array().unwrap().clone(), pid)
}

fn iops(point: &Value) -> f64 {
    point["summary"]["iops"].as_f64().unwrap()
}

/// Two NBD targets, each a port that serves one I/O at a time for 2 ms (at most
/// 500 IOPS), give twice the IOPS of one, within 25%; one alone keeps to its cap.
#[test]
fn two_port_limited_targets_give_twice_the_iops_of_one() {
    let before = ["--legs", "nbd-unix", "--sweep", "targets=1,2", "--port-limit", "2ms", "--qd", "4", "--ramp", "0"];
    let (results, _) = lab_json(&lab_reads(&before, "4k", "1s"));
    assert_eq!(results.len(), 1, "one leg");
    let points = results[0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "targets=1 and targets=2");
    let (one, two) = (iops(&points[0]), iops(&points[1]));
    assert!(one > 300.0 && one <= 520.0, "one port held to 500 IOPS: {one}");
    let ratio = two / one;
    assert!((1.5..=2.5).contains(&ratio), "2 ports gave {two} IOPS, 1 port {one}: {ratio:.2}x");
}

/// `--targets 2` gives the iSCSI leg two LUNs of one tgtd and the NBD TCP leg
/// two nbdkit servers, each leg behind its own shaped link; nothing is left.
#[test]
fn each_tcp_leg_gets_n_targets_and_its_own_link() {
    require_root!();
    let before = ["--legs", "nbd-tcp,iscsi", "--targets", "2", "--link", "iscsi=1gbe,nbd-tcp=200mbit", "--lun-size", "8m", "--ramp", "0"];
    let (results, pid) = lab_json(&lab_reads(&before, "64k", "1s"));
    assert_eq!(results.len(), 2, "one result per leg");
    for (r, link, scheme) in [(&results[0], "200mbit", "nbd://"), (&results[1], "1gbe", "iscsi://")] {
        let p = &r["points"][0];
        let uris: Vec<&str> = r["targets"].as_array().unwrap().iter().map(|t| t["uri"].as_str().unwrap()).collect();
        assert_eq!(uris.len(), 2, "{}: two targets: {uris:?}", r["label"]);
        assert!(uris.iter().all(|t| t.starts_with(scheme)) && uris[0] != uris[1], "{uris:?}");
        assert_eq!(p["summary"]["line_rate"]["link"].as_str(), Some(link), "{}", p["summary"]["line_rate"]);
        assert!(iops(p) > 0.0);
    }
    // Two links, two namespaces (lunmark-PID and lunmark-PID2): both gone.
    let ns = stdout(&std::process::Command::new("ip").args(["netns", "list"]).output().unwrap());
    assert!(!ns.contains(&format!("lunmark-{pid}")), "a namespace is left: {ns}");
}

/// The lab's CPUs: on this host's CPUs the servers are set apart or the lab
/// says why not; `--server-cpus` pins them, lunmark takes the rest, and the
/// result keeps the initiator's CPU (its pinned CPUs) and the target side's
/// (the servers' own time) apart.
#[test]
fn the_initiator_and_the_target_sides_cpu_are_reported_apart() {
    let online = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let dir = shm_dir();
    let (out, _) = run_in_store(dir.path(), &["lab", "protocols", "--dry-run", "--legs", "nbd-unix"]);
    let text = stdout(&out);
    if online < 4 {
        assert!(text.contains(&format!("CPUs: none apart (this host has {online} CPUs")), "{text}");
    } else {
        assert!(text.contains("CPUs apart: lunmark (the initiator) on CPUs"), "{text}");
    }
    assert_refused(&[
        (&["lab", "protocols", "--server-cpus", "0", "--cpus", "0"], "CPU 0 is in both"),
        (&["lab", "protocols", "--server-cpus", "4096"], "--server-cpus"),
    ]);
    if online < 2 {
        return;
    }
    // lunmark pinned by --cpus: the servers get the CPUs it leaves, on any host.
    let (out, _) = run_in_store(dir.path(), &["lab", "protocols", "--dry-run", "--legs", "nbd-unix", "--cpus", "0"]);
    let rest = if online == 2 { "1".to_string() } else { format!("1-{}", online - 1) };
    assert!(
        stdout(&out).contains(&format!("CPUs apart: lunmark (the initiator) on CPUs 0, the target servers on CPUs {rest}:")),
        "{}",
        stdout(&out)
    );
    let last = (online - 1).to_string();
    let (results, _) = lab_json(&lab_reads(&["--legs", "nbd-unix", "--server-cpus", &last, "--qd", "4", "--ramp", "0"], "4k", "1s"));
    let cpu = &results[0]["points"][0]["summary"]["cpu"];
    let rest = if online == 2 { "0".to_string() } else { format!("0-{}", online - 2) };
    assert_eq!(cpu["pinned"]["cpus"].as_str(), Some(rest.as_str()), "lunmark on the CPUs the servers left: {cpu}");
    let target = cpu["started_processes_pct"].as_f64().unwrap_or(0.0);
    assert!(target > 1.0, "nbdkit served ~thousands of I/Os and used no CPU? {cpu}");
    assert!(cpu["started_processes_top"][0]["name"].as_str().unwrap_or("").starts_with("nbdkit"), "{cpu}");
}

/// A server the lab starts after `pin_servers_to` runs on those CPUs only.
#[test]
fn lab_servers_run_on_the_cpus_they_are_pinned_to() {
    let dir = shm_dir();
    lunmark::lab::servers::pin_servers_to(&[0]);
    let server = lunmark::lab::servers::nbdkit_unix(dir.path(), "1m", &[], &[]);
    lunmark::lab::servers::pin_servers_to(&[]);
    let server = server.unwrap();
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid().unwrap())).unwrap();
    let allowed = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")).unwrap();
    assert_eq!(allowed.split_whitespace().nth(1), Some("0"), "{allowed}");
}
