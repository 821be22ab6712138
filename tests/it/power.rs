//! Power: RAPL through a powercap tree laid out like the kernel's, IPMI DCMI
//! through recorded output, a command, a meter's log, and no source at all;
//! a bad (negative) reading gives no figure and a note naming it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;

fn write_atomically(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(tmp, path).unwrap();
}

fn zone(root: &Path, dir: &str, name: &str, max_uj: u64) {
    let z = root.join("class/powercap").join(dir);
    std::fs::create_dir_all(&z).unwrap();
    std::fs::write(z.join("name"), format!("{name}\n")).unwrap();
    std::fs::write(z.join("max_energy_range_uj"), format!("{max_uj}\n")).unwrap();
    std::fs::write(z.join("energy_uj"), "0\n").unwrap();
}

/// Advances the energy counters of a fake powercap tree at fixed watts until
/// dropped, wrapping them at their max range like the hardware does.
struct Advancer {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<u32>>,
}

impl Advancer {
    fn start(root: &Path, zones: Vec<(&'static str, f64, u64)>) -> Advancer {
        Advancer::stepped(root, zones, Duration::MAX, 1.0)
    }

    /// Like `start`, with every zone's watts multiplied by `factor` from `after` on.
    fn stepped(root: &Path, zones: Vec<(&'static str, f64, u64)>, after: Duration, factor: f64) -> Advancer {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let base = root.join("class/powercap");
        let handle = std::thread::spawn(move || {
            let start = Instant::now();
            let mut wraps = 0;
            let mut last = vec![0u64; zones.len()];
            while !flag.load(Ordering::Relaxed) {
                let t = start.elapsed().as_secs_f64();
                let step = after.as_secs_f64();
                // Energy so far: the first rate up to the step, the stepped rate after it.
                let joules_per_watt = t.min(step) + (t - step).max(0.0) * factor;
                for (i, (dir, watts, max)) in zones.iter().enumerate() {
                    let uj = ((watts * joules_per_watt * 1e6) as u64) % max;
                    if uj < last[i] {
                        wraps += 1;
                    }
                    last[i] = uj;
                    write_atomically(&base.join(dir).join("energy_uj"), &format!("{uj}\n"));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            wraps
        });
        Advancer { stop, handle: Some(handle) }
    }

    fn stop(mut self) -> u32 {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().unwrap().join().unwrap()
    }
}

fn run_json(env: &[(&str, &str)], args: &[&str]) -> (std::process::Output, Value) {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let mut cmd = lunmark();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).args(["-q", "--json", json.to_str().unwrap()]).output().unwrap();
    let v = if json.exists() { read_json(&json) } else { Value::Null };
    (out, v)
}

/// Watts from RAPL counters advanced at known rates, with a wrap-around: the
/// package (40 W) and its DRAM sub-domain (5 W) count; core (inside the package)
/// and psys (the whole platform) do not.
#[test]
fn rapl_watts_match_what_the_counters_say_across_a_wrap() {
    let dir = shm_dir();
    let root = dir.path();
    zone(root, "intel-rapl:0", "package-0", 60_000_000);
    zone(root, "intel-rapl:0:0", "core", 262_143_328_850);
    zone(root, "intel-rapl:0:1", "dram", 262_143_328_850);
    zone(root, "intel-rapl:1", "psys", 262_143_328_850);
    let adv = Advancer::start(
        root,
        vec![
            ("intel-rapl:0", 40.0, 60_000_000),
            ("intel-rapl:0:0", 30.0, 262_143_328_850),
            ("intel-rapl:0:1", 5.0, 262_143_328_850),
            ("intel-rapl:1", 90.0, 262_143_328_850),
        ],
    );
    let (out, r) = run_json(
        &[("LUNMARK_SYSFS_ROOT", root.to_str().unwrap())],
        &["run", "-t", "mem:16m", "--read", "100", "--time", "3s", "--ramp", "0"],
    );
    let wraps = adv.stop();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(wraps >= 2, "the package counter wrapped during the run ({wraps})");
    let p = &r["points"][0]["summary"]["power"];
    assert_eq!(p["source"], "rapl (package-0 + dram)");
    let w = p["avg_watts"].as_f64().unwrap();
    assert!((w - 45.0).abs() / 45.0 < 0.01, "avg {w} W, the counters said 45 W");
    for i in r["points"][0]["summary"]["intervals"].as_array().unwrap() {
        let w = i["watts"].as_f64().unwrap();
        assert!((w - 45.0).abs() / 45.0 < 0.03, "per-second {w} W");
    }
    // The summary prints the same average the JSON holds (one decimal).
    let printed = format!("power {w:.1} W average");
    assert!(stdout(&out).contains(&printed), "expected {printed:?} in\n{}", stdout(&out));
}

/// IPMI DCMI: the watts of recorded `ipmitool dcmi power reading` output; a
/// deactivated reading gives null power with the reason.
#[test]
fn ipmi_dcmi_readings_from_recorded_output() {
    let dir = shm_dir();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ipmi");
    for (fixture, watts) in [("ipmitool-activated.txt", Some(220.0)), ("ipmitool-deactivated.txt", None)] {
        let tool = dir.path().join("ipmitool");
        std::fs::write(&tool, format!("#!/bin/sh\n[ \"$1 $2 $3\" = \"dcmi power reading\" ] || exit 2\ncat {fixtures}/{fixture}\n"))
            .unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let env = [("LUNMARK_SYSFS_ROOT", dir.path().to_str().unwrap()), ("LUNMARK_IPMITOOL", tool.to_str().unwrap())];
        let (out, r) = run_json(&env, &["run", "-t", "mem:16m", "--read", "100", "--time", "1s", "--ramp", "0", "--power", "ipmi"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let p = &r["points"][0]["summary"]["power"];
        match watts {
            Some(w) => {
                assert_eq!(p["avg_watts"].as_f64(), Some(w), "{fixture}");
                assert_eq!(p["source"], "ipmi dcmi");
            }
            None => {
                assert!(p["avg_watts"].is_null(), "{fixture}");
                assert!(p["reason"].as_str().unwrap().contains("deactivated"), "{p}");
            }
        }
    }
}

/// --power-cmd with an idle baseline: idle at 100 W, the run at 160 W, so 60 W
/// above idle and IOPS per delta watt = IOPS / 60.
#[test]
fn power_command_with_an_idle_baseline() {
    let dir = shm_dir();
    let watts = dir.path().join("watts");
    std::fs::write(&watts, "100\n").unwrap();
    let json = dir.path().join("r.json");
    let child = lunmark()
        .env("LUNMARK_SYSFS_ROOT", dir.path())
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--time", "2s", "--ramp", "1500ms", "--idle", "2s"])
        .args(["--power-cmd", &format!("echo $(cat {}) W", watts.display()), "--json", json.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Idle ends 2 s in; the measured interval starts 1.5 s after that.
    std::thread::sleep(Duration::from_millis(2700));
    std::fs::write(&watts, "160\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let s = &read_json(&json)["points"][0]["summary"];
    let p = &s["power"];
    assert!((p["idle_watts"].as_f64().unwrap() - 100.0).abs() < 1.0, "{p}");
    assert!((p["avg_watts"].as_f64().unwrap() - 160.0).abs() < 1.6, "{p}");
    let delta = p["delta_watts"].as_f64().unwrap();
    assert!((delta - 60.0).abs() < 1.7, "{p}");
    let iops = s["iops"].as_f64().unwrap();
    assert!((p["iops_per_delta_watt"].as_f64().unwrap() - iops / delta).abs() < 1e-6 * iops);
    assert!((p["mbps_per_delta_watt"].as_f64().unwrap() - s["mbps"].as_f64().unwrap() / delta).abs() < 1e-6 * iops);
}

/// --power-log: a meter's CSV matched to the measured interval afterwards.
#[test]
fn power_log_is_matched_to_the_measured_interval() {
    let dir = shm_dir();
    let log = dir.path().join("meter.csv");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64();
    let mut csv = String::from("timestamp,watts\n");
    for i in -60..=60 {
        csv += &format!("{:.1},{}\n", now + i as f64, 230 + (i % 2) * 10);
    }
    std::fs::write(&log, csv).unwrap();
    let (out, r) =
        run_json(&[], &["run", "-t", "mem:16m", "--read", "100", "--time", "4s", "--ramp", "0", "--power-log", log.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &r["points"][0]["summary"]["power"];
    // Alternating 230/240 W readings, integrated: 235 W on average.
    assert!((p["avg_watts"].as_f64().unwrap() - 235.0).abs() < 235.0 * 0.01, "{p}");
    assert!(p["source"].as_str().unwrap().starts_with("log: "));
}

#[test]
fn no_source_gives_null_power_with_a_reason() {
    let dir = shm_dir();
    let env = [("LUNMARK_SYSFS_ROOT", dir.path().to_str().unwrap()), ("LUNMARK_IPMITOOL", "/nonexistent/ipmitool")];
    let (out, r) = run_json(&env, &["run", "-t", "mem:16m", "--read", "100", "--time", "500ms", "--ramp", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &r["points"][0]["summary"]["power"];
    assert!(p["avg_watts"].is_null() && p["delta_watts"].is_null() && p["iops_per_delta_watt"].is_null());
    let reason = p["reason"].as_str().unwrap();
    assert!(reason.contains("no RAPL") && reason.contains("no IPMI") && reason.contains("--power-cmd"), "{reason}");
    assert!(r["points"][0]["summary"]["intervals"][0]["watts"].is_null());
}

/// A constant meter (whole watts) with an idle baseline: the run draws what
/// idle drew, so the delta is rounding noise and the per-delta-watt figures are
/// null with the reason, never IOPS divided by 1e-14 W.
#[test]
fn a_constant_meter_gives_no_per_delta_watt_figures() {
    let (out, r) =
        run_json(&[], &["run", "-t", "mem:16m", "--read", "100", "--time", "1s", "--ramp", "0", "--idle", "1s", "--power-cmd", "echo 100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &r["points"][0]["summary"]["power"];
    assert!((p["avg_watts"].as_f64().unwrap() - 100.0).abs() < 1e-6, "{p}");
    assert!((p["idle_watts"].as_f64().unwrap() - 100.0).abs() < 1e-6, "{p}");
    assert_eq!(p["resolution_watts"].as_f64(), Some(1.0), "{p}");
    assert!(p["iops_per_delta_watt"].is_null() && p["mbps_per_delta_watt"].is_null(), "{p}");
    let reason = p["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("resolution of 1 W") || reason.contains("no more than idle"), "{p}");
    // Per watt (no baseline) is still a figure.
    assert!(p["iops_per_watt"].as_f64().unwrap() > 0.0);
    assert!(!stdout(&out).contains("e+"), "{}", stdout(&out));
}

/// PIDs in process group `pgid` that are still alive (zombies are finished).
fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let f: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("").split_whitespace().collect();
            f.len() > 2 && f[2].parse::<i32>() == Ok(pgid) && f[0] != "Z"
        })
        .collect()
}

/// The process groups a `--power-cmd` recorded (each reading's shell writes $$,
/// which is its group id: lunmark starts it as a group leader). Checks none is
/// left; whatever is, is killed by PID so the test leaves nothing behind.
fn assert_no_command_left(pids: &Path) {
    let text = std::fs::read_to_string(pids).unwrap_or_default();
    let groups: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert!(!groups.is_empty(), "the power command never ran");
    // A process lunmark killed takes a moment to become a zombie: allow it 1 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let mut left: Vec<i32> = groups.iter().flat_map(|g| group_members(*g)).collect();
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
        left = groups.iter().flat_map(|g| group_members(*g)).collect();
    }
    for pid in &left {
        // SAFETY: kill has no memory effects; these PIDs were just read as members of the command's group.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "the power command's processes were left running: {left:?}");
}

/// A meter that hangs: the 2 s run ends on time, power is null with the
/// reason, and the command's whole process group is gone.
#[test]
fn a_hung_power_command_does_not_hold_up_the_run() {
    let dir = shm_dir();
    let pids = dir.path().join("pids");
    let cmd = format!("echo $$ >> {}; sleep 100; echo 5", pids.display());
    let started = Instant::now();
    let (out, r) = run_json(&[], &["run", "-t", "mem:16m", "--read", "100", "--time", "2s", "--ramp", "0", "--power-cmd", &cmd]);
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(5), "a 2 s run took {took:?}");
    let p = &r["points"][0]["summary"]["power"];
    assert!(p["avg_watts"].is_null() && p["iops_per_watt"].is_null(), "{p}");
    assert!(p["reason"].as_str().unwrap().contains("did not answer within 2s"), "{p}");
    assert!(stdout(&out).contains("did not answer within 2s"), "{}", stdout(&out));
    assert_no_command_left(&pids);
}

/// Ctrl-C while a reading hangs: lunmark ends promptly and kills the command's group.
#[test]
fn ctrl_c_during_a_hung_power_reading_ends_promptly() {
    let dir = shm_dir();
    let pids = dir.path().join("pids");
    let json = dir.path().join("r.json");
    let cmd = format!("echo $$ >> {}; sleep 100; echo 5", pids.display());
    let child = lunmark()
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--time", "30s", "--ramp", "0", "--power-cmd", &cmd])
        .args(["--json", json.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(|| pids.exists());
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(130));
    assert!(took < Duration::from_millis(1500), "Ctrl-C took {took:?}");
    let p = &read_json(&json)["points"][0]["summary"]["power"];
    assert!(p["avg_watts"].is_null() && p["reason"].is_string(), "{p}");
    assert_no_command_left(&pids);
}

/// `--power-cmd 'echo -5 W'` gave "power 5.00 W average" and per-watt figures:
/// the reading is a bad one, so the point has no power figure and says why.
#[test]
fn a_negative_power_reading_gives_no_figure_and_a_note_naming_it() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let o = lunmark()
        .args(["run", "-t", "mem:16m", "--read", "100", "--time", "1s", "--ramp", "0", "-q", "--power-cmd", "echo -5 W"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&json);
    let power = &r["points"][0]["summary"]["power"];
    assert!(power["avg_watts"].is_null() && power["iops_per_watt"].is_null(), "{power}");
    let reason = power["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("bad reading: '-5'"), "{power}");
}

/// The report puts one power measure on each chart and in each column, named:
/// a result whose draw above idle is a real signal (40 W idle, 100 W running,
/// from a powercap tree like the kernel's) has its IOPS per watt above idle;
/// one without an idle baseline has none, and is shown missing with the
/// reason, never with its per-total-watt figure in its place (the chart that
/// mixed them showed the wrong one as more efficient). Read back from
/// headless Chromium.
#[test]
fn the_report_shows_one_power_measure_per_chart_and_says_what_is_missing() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let measure = |root: &Path, label: &str, more: &[&str]| {
        let out = lunmark()
            .env("LUNMARK_STORE", &store)
            .env("LUNMARK_SYSFS_ROOT", root)
            .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--time", "1s", "--label", label])
            .args(more)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out).lines().find_map(|l| l.strip_prefix("saved as ")).unwrap().split_whitespace().next().unwrap().to_string()
    };
    let (stepped, flat) = (dir.path().join("stepped"), dir.path().join("flat"));
    for root in [&stepped, &flat] {
        zone(root, "intel-rapl:0", "package-0", 262_143_328_850);
    }
    // Idle is the first 2 s; the step comes 2.3 s in, before the measured second that follows a 1 s ramp.
    let adv = Advancer::stepped(&stepped, vec![("intel-rapl:0", 40.0, 262_143_328_850)], Duration::from_millis(2300), 2.5);
    let a = measure(&stepped, "above idle", &["--idle", "2s", "--ramp", "1s"]);
    adv.stop();
    let adv = Advancer::start(&flat, vec![("intel-rapl:0", 40.0, 262_143_328_850)]);
    let b = measure(&flat, "flat", &["--ramp", "0"]);
    adv.stop();

    let html = dir.path().join("power.html");
    let out = lunmark().env("LUNMARK_STORE", &store).args(["report", &a, &b, "-o", html.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = crate::report_page::page_text(&html);
    let rows = crate::report_page::rows_after(&page, "Power");
    let col = |name: &str| rows[0].iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}: {:?}", rows[0]));
    let (per_watt, above, notes) = (col("IOPS per watt"), col("IOPS per watt above idle"), col("notes"));
    let row = |label: &str| rows.iter().find(|r| r[0] == label).unwrap_or_else(|| panic!("no row {label}: {rows:?}"));
    let num = |cell: &str| cell.replace(',', "").parse::<f64>().unwrap_or_else(|_| panic!("not a number: {cell}"));
    // 100 W running, 60 W above the 40 W idle: per watt above idle is 100/60 of per watt.
    let (pw, pa) = (num(row("above idle")[per_watt]), num(row("above idle")[above]));
    assert!((pa / pw - 100.0 / 60.0).abs() < 0.05, "{:?}", row("above idle"));
    assert!(num(row("flat")[per_watt]) > 0.0);
    assert_eq!(row("flat")[above], "-", "{:?}", row("flat"));
    assert!(row("flat")[notes].contains("missing IOPS per watt above idle: no idle baseline was measured (--idle)"), "{:?}", row("flat"));

    let text = std::fs::read_to_string(&html).unwrap();
    let svg = crate::report_page::figure(&text, "power-per-watt-above-idle");
    assert!(svg.contains("IOPS per watt above idle") && svg.contains(">\nmissing\n</text>"), "the flat run is marked missing");
    let caption = page.iter().find(|l| l.starts_with("FIGCAPTION\tIOPS per watt above idle")).unwrap();
    assert!(caption.contains("Missing: flat: no idle baseline was measured (--idle)"), "{caption}");
    // Each chart one measure: the per-watt chart draws both results, and no chart mixes them.
    assert!(!text.contains("chart-power-efficiency"), "the mixed chart is gone");
    let per_watt_svg = crate::report_page::figure(&text, "power-per-watt");
    assert!(per_watt_svg.contains("IOPS per watt (of the whole draw)") && !per_watt_svg.contains(">\nmissing\n</text>"));
}

/// A lab measures one idle baseline for all its legs, before the first (as the
/// papers did), and every leg's result says where its baseline came from.
#[test]
fn a_lab_measures_one_idle_baseline_for_all_its_legs() {
    let dir = shm_dir();
    let json = dir.path().join("lab.json");
    let out = lunmark()
        .env("LUNMARK_LAB_DIR", dir.path())
        .args(lab_reads(&["lab", "protocols", "--legs", "mem,nbd-unix", "--lun-size", "8m", "--ramp", "0"], "4k", "500ms"))
        .args(["--power", "cmd", "--power-cmd", "echo 100", "--idle", "1s", "--no-store", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("measuring idle power").count(), 1, "{}", stderr(&out));
    let results = read_json(&json);
    let results = results.as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let power = &r["points"][0]["summary"]["power"];
        assert_eq!(power["idle_watts"].as_f64(), Some(100.0), "{power}");
        assert_eq!(power["idle_from"].as_str(), Some("measured once, before the lab's first leg, for all 2 legs"), "{power}");
    }
}
