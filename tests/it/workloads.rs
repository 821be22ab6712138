//! Workloads: built-in profiles, profile files, sweeps, repeats, rate-limited
//! load and pass/fail verdicts.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;
use crate::require_root;

const PROFILES: &[&str] = &[
    "quick",
    "exchange",
    "jetstress",
    "oltp-db",
    "oltp-redo",
    "oltp-archive",
    "data-warehouse",
    "database",
    "fcoe-mix",
    "bandwidth",
    "line-rate",
    "max-iops",
    "service-demand",
];

fn run_json(args: &[&str]) -> (std::process::Output, Value) {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let mut all: Vec<&str> = args.to_vec();
    let j = json.to_str().unwrap().to_string();
    all.extend(["--json", &j, "-q"]);
    let out = run(&all);
    let value = if json.exists() { read_json(&json) } else { Value::Null };
    (out, value)
}

/// Every built-in profile: `profiles show` prints TOML that runs back as the
/// same workload, and a short run of it gives the expected points and groups.
#[test]
fn every_builtin_profile_round_trips_and_runs() {
    let dir = shm_dir();
    for name in PROFILES {
        let shown = run(&["profiles", "show", name]);
        assert!(shown.status.success(), "{name}: {}", stderr(&shown));
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, &shown.stdout).unwrap();
        let common = ["-t", "mem:64m", "-t", "mem:64m", "--dry-run"];
        let from_name = run(&[&["run", name][..], &common].concat());
        let from_file = run(&[&["run", "--profile-file", file.to_str().unwrap()][..], &common].concat());
        assert!(from_name.status.success(), "{name}: {}", stderr(&from_name));
        assert_eq!(plan_text(&stdout(&from_name)), plan_text(&stdout(&from_file)), "{name}: the saved profile runs the same workload");

        let toml: toml::Value = toml::from_str(&stdout(&shown)).unwrap();
        let phases = toml["phases"].as_array().unwrap();
        let sweep_values: usize = toml
            .get("sweep")
            .and_then(|s| s.as_array())
            .map(|s| s.iter().map(|v| v.as_str().unwrap().split(',').count()).product())
            .unwrap_or(1);
        let (out, r) = run_json(&["run", name, "-t", "mem:64m", "--time", "300ms", "--ramp", "0"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let points = r["points"].as_array().unwrap();
        assert_eq!(points.len(), phases.len() * sweep_values, "{name}: points");
        assert_eq!(r["profile"], *name);
        for (i, p) in points.iter().enumerate() {
            let groups = phases[i / sweep_values]["groups"].as_array().unwrap().len();
            let got = p["groups"].as_array().map(|g| g.len()).unwrap_or(1);
            assert_eq!(got, groups, "{name} point {i}: groups");
            assert!(
                p["summary"]["ios_read"].as_u64().unwrap() + p["summary"]["ios_written"].as_u64().unwrap() > 0,
                "{name} point {i} did I/O"
            );
        }
    }
}

/// Exchange: 4 database workers at 8K random 35% read, 1 log worker, DB:log IOPS 4:1.
#[test]
fn exchange_holds_db_to_log_at_four_to_one() {
    let dir = shm_dir();
    let f = dir.path().join("lun");
    let (out, r) =
        run_json(&["run", "exchange", "-t", f.to_str().unwrap(), "--size", "64m", "--sweep", "qd=8", "--time", "2s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let groups = r["points"][0]["groups"].as_array().unwrap();
    let db = groups.iter().find(|g| g["name"] == "db").unwrap();
    let log = groups.iter().find(|g| g["name"] == "log").unwrap();
    let ratio = db["iops"].as_f64().unwrap() / log["iops"].as_f64().unwrap();
    assert!((ratio - 4.0).abs() <= 0.4, "DB:log {ratio}");
    let read_share = db["read_iops"].as_f64().unwrap() / db["iops"].as_f64().unwrap();
    assert!((read_share - 0.35).abs() < 0.02, "db read share {read_share}");
    assert_eq!(db["workers"], 4);
    // The papers' IOmeter set-up: the log worker reads 4K at random.
    assert_eq!(log["read_iops"], log["iops"], "the log only reads");
    assert!((log["follow"]["achieved_ratio"].as_f64().unwrap() - 0.25).abs() < 0.025);
    assert!(stdout(&out).contains("db:log IOPS ratio"));
}

#[test]
fn two_sweeps_give_the_cartesian_product_in_order() {
    let (out, r) =
        run_json(&["run", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,2", "--sweep", "bs=4k,8k", "--time", "300ms", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let params: Vec<(u64, String)> = r["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["params"]["qd"].as_u64().unwrap(), p["params"]["bs"].as_str().unwrap().to_string()))
        .collect();
    let want: Vec<(u64, String)> = vec![(1, "4k".into()), (1, "8k".into()), (2, "4k".into()), (2, "8k".into())];
    assert_eq!(params, want);
    // Each point really ran with its own transfer size.
    for p in r["points"].as_array().unwrap() {
        let bs = if p["params"]["bs"] == "4k" { 4096.0 } else { 8192.0 };
        let s = &p["summary"];
        assert_eq!(s["bytes_read"].as_f64().unwrap() / s["ios_read"].as_f64().unwrap(), bs);
    }
}

#[test]
fn repeats_report_spread_and_the_picked_run() {
    let (out, r) =
        run_json(&["run", "-t", "mem:16m", "--read", "100", "--repeat", "3", "--pick", "best", "--time", "300ms", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &r["points"][0];
    let rep = &p["repeats"];
    assert_eq!(rep["count"], 3);
    let runs: Vec<f64> = rep["runs"].as_array().unwrap().iter().map(|x| x["iops"].as_f64().unwrap()).collect();
    let best = runs.iter().cloned().fold(f64::MIN, f64::max);
    assert_eq!(p["summary"]["iops"].as_f64().unwrap(), best, "best repeat reported");
    assert_eq!(rep["iops"]["max"].as_f64().unwrap(), best);
    let mean = runs.iter().sum::<f64>() / 3.0;
    assert!((rep["iops"]["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
    assert!(stdout(&out).contains("repeats: 3 runs"));
}

/// A fixed rate against mem: is held within 2%.
#[test]
fn rate_limit_is_held_within_two_percent() {
    let (out, r) = run_json(&["run", "-t", "mem:16m", "--read", "70", "--rate", "2000", "--time", "3s", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &r["points"][0]["summary"];
    let iops = s["iops"].as_f64().unwrap();
    assert!((iops - 2000.0).abs() / 2000.0 < 0.02, "achieved {iops}");
    assert_eq!(s["rate"]["held"], true);
    assert!(s["service_latency_us"]["all"]["count"].as_u64().unwrap() > 5000);
}

/// A target made to stall (writes to a frozen ext4 filesystem on a loop device):
/// latency from schedule grows with the backlog, service time does not.
#[test]
fn a_stall_shows_in_latency_from_schedule_not_in_service_time() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 128 << 20);
    assert!(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev.path).status().unwrap().success());
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount").arg(&dev.path).arg(&mnt).status().unwrap().success());
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("fsfreeze").arg("-u").arg(&self.0).stderr(Stdio::null()).status();
            // umount can meet a briefly busy filesystem right after the run:
            // retry, then detach it lazily so the loop device can go.
            for _ in 0..20 {
                if Command::new("umount").arg(&self.0).stderr(Stdio::null()).status().is_ok_and(|s| s.success()) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let file = mnt.join("lun");
    let json = dir.path().join("r.json");
    let child = lunmark()
        .args([
            "run",
            "-q",
            "-t",
            file.to_str().unwrap(),
            "--size",
            "32m",
            "--read",
            "0",
            "--qd",
            "4",
            "--rate",
            "2000",
            "--time",
            "4s",
            "--ramp",
            "0",
        ])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(Command::new("fsfreeze").arg("-f").arg(&mnt).status().unwrap().success());
    std::thread::sleep(Duration::from_millis(1000));
    assert!(Command::new("fsfreeze").arg("-u").arg(&mnt).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &read_json(&json)["points"][0]["summary"];
    let from_schedule = &s["latency_us"]["all"];
    let service = &s["service_latency_us"]["all"];
    // ~2000 I/Os were due during the 1 s freeze and waited for it.
    assert!(from_schedule["p90"].as_f64().unwrap() > 100_000.0, "latency from schedule p90 {}", from_schedule["p90"]);
    assert!(service["p90"].as_f64().unwrap() < 20_000.0, "service p90 {}", service["p90"]);
    assert!(from_schedule["mean"].as_f64().unwrap() > 10.0 * service["mean"].as_f64().unwrap());
}

#[test]
fn a_failed_verdict_exits_with_four() {
    let (out, r) =
        run_json(&["run", "-t", "mem:16m", "--read", "100", "--time", "300ms", "--ramp", "0", "--pass", "read_lat_avg<1us,iops>1"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v = &r["points"][0]["verdict"];
    assert_eq!(v["passed"], false);
    assert_eq!(v["checks"][0]["passed"], false);
    assert_eq!(v["checks"][1]["passed"], true);
    assert!(stdout(&out).contains("verdict: FAIL"));
    let (out, _) = run_json(&["run", "-t", "mem:16m", "--read", "100", "--time", "300ms", "--ramp", "0", "--pass", "read_lat_avg<1s"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn bad_profiles_and_sweeps_get_clear_errors() {
    let dir = shm_dir();
    let check = |args: &[&str], expect: &[&str]| {
        let out = run(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        for e in expect {
            assert!(err.contains(e), "{args:?}: expected '{e}' in: {err}");
        }
    };
    check(&["run", "exchnage", "-t", "mem:1m", "--dry-run"], &["unknown profile 'exchnage'", "did you mean 'exchange'"]);
    check(&["run", "-t", "mem:1m", "--sweep", "depth=1,2", "--dry-run"], &["unknown key 'depth'", "qd"]);
    check(&["run", "-t", "mem:1m", "--sweep", "qd=1,x", "--dry-run"], &["'x' is not a valid qd"]);
    check(&["run", "-t", "mem:1m", "--sweep", "targets=1,2", "--dry-run"], &["only 1 target;"]);
    check(&["run", "-t", "mem:1m", "--pass", "read_lat<2ms", "--dry-run"], &["unknown metric 'read_lat'"]);
    let shown = run(&["profiles", "show", "quick"]);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, stdout(&shown).replacen("read = 100.0", "read = 150.0", 1)).unwrap();
    check(
        &["run", "--profile-file", bad.to_str().unwrap(), "-t", "mem:1m", "--dry-run"],
        &["bad.toml, line 18", "read is 150", "between 0 and 100"],
    );
    std::fs::write(&bad, stdout(&shown).replacen("qd = 32", "depth = 32", 1)).unwrap();
    check(&["run", "--profile-file", bad.to_str().unwrap(), "-t", "mem:1m", "--dry-run"], &["bad.toml, line 13", "unknown field `depth`"]);
    check(&["run", "--profile-file", "/nonexistent/p.toml", "-t", "mem:1m"], &["/nonexistent/p.toml"]);
}

/// Flags override the profile, and --dry-run shows the merge.
#[test]
fn flags_override_the_profile_in_the_dry_run() {
    let out = run(&["run", "database", "-t", "mem:1m", "--qd", "3", "--workers", "2", "--dry-run"]);
    let text = stdout(&out);
    assert!(text.contains("2 workers x 1 target x 3 outstanding"), "{text}");
    assert!(text.contains("66.667% read"), "{text}");
    assert!(!text.contains("x 12 outstanding"), "{text}");
}

/// The terminal, for the two Exchange profiles: each worker group on a line
/// of its own; a paced group's depth below the asked (by design) a note, not
/// a warning (they always warned "held 0.0 of 16"); power not measured said
/// once for the run, not after every point; the dry run the whole run's length.
#[test]
fn multi_group_profiles_read_plainly_on_the_terminal() {
    let dir = shm_dir();
    let args = ["-t", "mem:64m", "--sweep", "qd=2,16", "--time", "300ms", "--ramp", "100ms", "--no-store"];
    // exchange is the papers' IOmeter set-up (a 4K random-read log), jetstress Jetstress's own (sequential log writes).
    for (profile, db, log) in [("exchange", "", "100% read, 100% random"), ("jetstress", ", paced at 1000 IOPS", "0% read, 0% random")] {
        let out = lunmark()
            .env("LUNMARK_SYSFS_ROOT", dir.path())
            .env("LUNMARK_IPMITOOL", "/nonexistent/ipmitool")
            .args(["run", profile])
            .args(args)
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(out.status.code().is_some_and(|c| c == 0 || c == 4), "{profile}: {}", stderr(&out));
        for qd in [2, 16] {
            let groups = format!(
                "workload: 2 groups, 5 workers, 1 target\n  db: 8k, 35% read, 100% random, QD {qd} x 4 workers{db}\n  \
                 log: 4k, {log}, QD {qd} x 1 worker, paced at 0.25 x db's IOPS\n"
            );
            assert!(text.contains(&groups), "{profile}: no group lines {groups:?} in\n{text}");
        }
        assert!(!text.contains("warning: queue depth fell short"), "{profile}: a designed depth warned about:\n{text}");
        assert_eq!(text.matches("power: not measured").count(), 1, "{profile}: said once per run:\n{text}");
        let dry = lunmark().env("LUNMARK_SYSFS_ROOT", dir.path()).args(["run", profile]).args(args).arg("--dry-run").output().unwrap();
        assert!(
            stdout(&dry).contains("duration: 800ms of ramp and measurement over 2 measured runs, plus set-up and any idle baseline"),
            "{profile}: {}",
            stdout(&dry)
        );
    }
    // A depth that falls short without a design reason stays a warning (psync, eight asked).
    let f = dir.path().join("f");
    let out = lunmark()
        .args(["run", "-t", f.to_str().unwrap(), "--size", "8m", "--engine", "psync", "--qd", "8", "--read", "100"])
        .args(["--time", "300ms", "--ramp", "0", "--no-store"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("warning: queue depth fell short"), "{}", stdout(&out));
}

/// A flag that sets what the profile's own sweep sets at every point is
/// refused with the reason and what to give instead (it was accepted and
/// ignored: `exchange --qd 4` ran QD 2..64), by the dry run and the run alike.
#[test]
fn a_flag_a_profiles_sweep_would_overwrite_is_refused_by_dry_run_and_run() {
    let cases: [(&[&str], &str); 3] = [
        (&["exchange", "--qd", "4"], "--qd 4: the profile 'exchange' sweeps qd (qd=2,4,8,16,32,64), which sets it at every point, so --qd would be ignored: give --sweep qd=4"),
        (&["pts-iops", "--read", "100"], "--read 100: the profile 'pts-iops' sweeps read (read=100,95,65,50,35,5,0)"),
        (&["pts-iops", "--bs", "4k"], "--bs 4k: the profile 'pts-iops' sweeps bs"),
    ];
    for (flags, said) in cases {
        for mode in [&["--dry-run"][..], &["--no-store", "--time", "100ms"]] {
            let out = run(&[&["run", "-t", "mem:64m"][..], flags, mode].concat());
            assert_eq!(out.status.code(), Some(1), "{flags:?} {mode:?}: {}", stdout(&out));
            assert!(stderr(&out).contains(said), "{flags:?} {mode:?}: {}", stderr(&out));
        }
    }
    // The one value as a sweep runs, and a flag the sweep leaves alone still applies.
    let out = run(&["run", "exchange", "-t", "mem:64m", "--sweep", "qd=4", "--dry-run"]);
    assert!(out.status.success() && stdout(&out).starts_with("point 1/1: qd=4"), "{}", stderr(&out));
}

/// `pts-iops` on a device without --destructive: the dry run refuses it as
/// the run does (it exited 0), and the refusal suggests what helps (not
/// `--read 100`, which its own sweep and purge would override).
#[test]
fn pts_iops_on_a_device_is_refused_alike_with_a_way_that_helps() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 64 << 20);
    let path = dev.path.to_str().unwrap();
    for mode in [&["--dry-run"][..], &["--no-store"]] {
        let out = run(&[&["run", "pts-iops", "-t", path][..], mode].concat());
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{mode:?}: {e}");
        assert!(e.contains(&format!("{path} is a block device, and this run of rounds writes to it")), "{mode:?}: {e}");
        assert!(e.contains("add --destructive if you mean it, or give a file as the target") && !e.contains("--read 100"), "{mode:?}: {e}");
    }
    // A plain write workload's dry run refuses the device as its run does.
    let out = run(&["run", "-t", path, "--read", "0", "--dry-run"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("Add --destructive"), "{}", stderr(&out));
}
