//! Live telemetry (issue 29): `--live-json` holds the stored intervals'
//! figures each second and never holds the run back (a pipe nobody reads, a
//! reader that goes away); `--metrics-listen` is scraped by the real
//! Prometheus server from Debian and its text passes `promtool check
//! metrics`; bad values are refused before anything runs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

/// Runs `run ARGS --quiet --no-store --live-json LIVE`, which must succeed: the lines it wrote.
fn live_lines(live: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let out = run(&[&["run"][..], args, &["--quiet", "--no-store", "--live-json", live.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    json_lines(&std::fs::read_to_string(live).unwrap())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.01 * a.abs().max(b.abs()) + 1e-9
}

/// A two-point sweep with --detail: each measured second's point line holds
/// the figures of the stored interval of that second within 1% (iops, MB/s,
/// latency), its workers' lines add up to it, the ramp's seconds come as
/// progress lines, point/points/remaining say where the run is, and the
/// result counts every line written and none dropped.
#[test]
fn live_json_lines_hold_the_stored_intervals_figures() {
    let dir = shm_dir();
    let (live, json) = (dir.path().join("live.jsonl"), dir.path().join("r.json"));
    let sweep = ["-t", "mem:64m", "--workers", "2", "--qd", "4", "--ramp", "1s", "--time", "3s", "--sweep", "bs=4k,8k", "--detail"];
    let lines = live_lines(&live, &[&sweep[..], &["--json", json.to_str().unwrap()]].concat());
    let result = read_json(&json);
    assert_eq!(result["live_json"]["lines"], lines.len() as u64, "{}", result["live_json"]);
    assert_eq!(result["live_json"]["dropped"], 0);
    for (p, point) in result["points"].as_array().unwrap().iter().enumerate() {
        let mine = |kind: &str, phase: &str| -> Vec<&serde_json::Value> {
            lines.iter().filter(|l| l["kind"] == kind && l["phase"] == phase && l["point"] == p as u64 + 1).collect()
        };
        assert!(!mine("point", "ramp").is_empty(), "the ramp's seconds are told");
        let seconds = mine("point", "run");
        let stored = point["summary"]["intervals"].as_array().unwrap();
        assert!(
            seconds.len() >= stored.len().max(3) - 1 && seconds.len() <= stored.len(),
            "{} lines, {} rows",
            seconds.len(),
            stored.len()
        );
        for l in &seconds {
            assert_eq!((l["points"].as_u64(), l["total_s"].as_f64()), (Some(2), Some(3.0)), "{l}");
            assert!(close(l["remaining_s"].as_f64().unwrap(), 3.0 - l["elapsed_s"].as_f64().unwrap()), "{l}");
            let row = stored.iter().find(|r| r["t_s"] == l["t_s"]).unwrap_or_else(|| panic!("no stored row at {}", l["t_s"]));
            for k in ["iops", "read_iops", "write_iops", "mbps", "lat_mean_us", "lat_p99_us"] {
                assert!(close(l[k].as_f64().unwrap(), row[k].as_f64().unwrap()), "{k}: live {l} stored {row}");
            }
            assert!(l["iops"].as_f64().unwrap() > 0.0, "{l}");
            let workers: Vec<_> = mine("worker", "run").into_iter().filter(|w| w["t_s"] == l["t_s"]).collect();
            assert_eq!(workers.len(), 2, "one line per worker a second (--detail)");
            let sum: f64 = workers.iter().map(|w| w["iops"].as_f64().unwrap()).sum();
            assert!(close(sum, l["iops"].as_f64().unwrap()), "workers {sum} point {l}");
        }
    }
}

/// A load curve runs each point as a part of its own: the live lines number
/// them as the run's points (1, 2, 3 of 3), not each as "point 1 of 1".
#[test]
fn live_json_numbers_a_curves_points_as_the_runs() {
    let dir = shm_dir();
    let live = dir.path().join("live.jsonl");
    let lines = live_lines(&live, &["-t", "mem:16m", "--bs", "4k", "--ramp", "0", "--time", "1s", "--curve", "50,100"]);
    let seen: std::collections::BTreeSet<(u64, u64)> =
        lines.iter().filter(|l| l["kind"] == "point").map(|l| (l["point"].as_u64().unwrap(), l["points"].as_u64().unwrap())).collect();
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![(1, 3), (2, 3), (3, 3)], "{lines:?}");
}

/// A run that fails before its first second (a target nobody serves) leaves an
/// earlier --live-json file as it was; a run that measures replaces it.
#[test]
fn a_run_that_never_starts_leaves_an_earlier_stream_as_it_was() {
    let dir = shm_dir();
    let live = dir.path().join("live.jsonl");
    std::fs::write(&live, "{\"earlier\": true}\n").unwrap();
    let live_arg = live.to_str().unwrap();
    let out = run(&["run", "-t", "nbd://127.0.0.1:1/", "--time", "1s", "--ramp", "0", "--quiet", "--no-store", "--live-json", live_arg]);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&live).unwrap(), "{\"earlier\": true}\n", "{}", stderr(&out));
    let out = run(&["run", "-t", "mem:16m", "--time", "1s", "--ramp", "0", "--quiet", "--no-store", "--live-json", live_arg]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&std::fs::read_to_string(&live).unwrap());
    assert!(!lines.is_empty() && lines.iter().all(|l| l.get("earlier").is_none()), "{lines:?}");
}

/// Spawns `run ARGS --detail --quiet --no-store` with its live lines to
/// `live`, its result to `json` and its /metrics served on `port`.
fn spawn_with_telemetry(args: &[&str], live: &Path, json: &Path, port: u16) -> std::process::Child {
    lunmark()
        .arg("run")
        .args(args)
        .args(["--detail", "--quiet", "--no-store", "--live-json", live.to_str().unwrap(), "--json", json.to_str().unwrap()])
        .args(["--metrics-listen", &format!(":{port}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The /metrics served on `port`, scraped until it holds `series` (the run
/// has counted what the test looks for), or as last scraped after 60 s.
fn scrape_until(port: u16, series: &str) -> String {
    let mut scraped = String::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !scraped.contains(series) && Instant::now() < deadline {
        if let Some((200, body)) = get(port, "/metrics") {
            scraped = body;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    scraped
}

/// Two targets (mem:32m, mem:16m) for 3 s under a profile of one worker, with
/// or without `worker_per_target`, with --detail, --live-json and
/// --metrics-listen: each measured second has a line per target whose I/Os
/// add up to the point's, over the point each target's lines add up to the
/// I/Os the result stores for that target (the last, folded second aside:
/// within 1%), and the last /metrics served while the run went counts each
/// target by its URI, never under one label for all.
fn each_target_is_told_apart(worker_per_target: bool) {
    let dir = shm_dir();
    let (live, json, profile) = (dir.path().join("live.jsonl"), dir.path().join("r.json"), dir.path().join("two.toml"));
    std::fs::write(
        &profile,
        format!(
            "name = \"two\"\ndescription = \"two targets\"\n[[phases]]\nname = \"main\"\n[[phases.groups]]\nname = \"main\"\n\
             workers = 1\nworker_per_target = {worker_per_target}\nqd = 4\n[[phases.groups.access]]\nshare = 100\nbs = \"4k\"\nread = 100\nrandom = 100\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let args = ["--profile-file", profile.to_str().unwrap(), "-t", "mem:32m", "-t", "mem:16m", "--ramp", "0", "--time", "3s"];
    let child = spawn_with_telemetry(&args, &live, &json, port);
    let scraped = scrape_until(port, "lunmark_ios_total{op=\"read\",target=\"mem:16m\",target_index=\"1\"}");
    let out = wait_within(child, 90);
    assert!(out.status.success(), "{}", stderr(&out));
    let counted = |uri: &str| {
        let index = if uri == "mem:32m" { 0 } else { 1 };
        let key = format!("lunmark_ios_total{{op=\"read\",target=\"{uri}\",target_index=\"{index}\"}} ");
        scraped.lines().find_map(|l| l.strip_prefix(&key)).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
    };
    assert!(counted("mem:32m") > 0 && counted("mem:16m") > 0 && !scraped.contains("target=\"all\""), "{scraped}");
    let lines = json_lines(&std::fs::read_to_string(&live).unwrap());
    let ios = |l: &serde_json::Value| ["ios_read", "ios_written", "ios_trimmed"].iter().map(|k| l[k].as_u64().unwrap()).sum::<u64>();
    let seconds: Vec<_> = lines.iter().filter(|l| l["kind"] == "point" && l["phase"] == "run").collect();
    assert!(seconds.len() >= 2, "{lines:?}");
    for p in &seconds {
        let targets: Vec<_> = lines.iter().filter(|l| l["kind"] == "target" && l["t_s"] == p["t_s"]).collect();
        let uris: Vec<&str> = targets.iter().map(|l| l["target"].as_str().unwrap()).collect();
        assert_eq!(uris, ["mem:32m", "mem:16m"], "{p}");
        assert!(targets.iter().all(|l| ios(l) > 0), "{p}");
        assert_eq!(targets.iter().map(|l| ios(l)).sum::<u64>(), ios(p), "{p}");
    }
    let result = read_json(&json);
    for t in result["points"][0]["targets"].as_array().unwrap() {
        let told: u64 = lines.iter().filter(|l| l["kind"] == "target" && l["target"] == t["uri"]).map(ios).sum();
        let stored = t["ios"].as_u64().unwrap();
        assert!(close(told as f64, stored as f64), "{}: told {told}, stored {stored}", t["uri"]);
    }
}

#[test]
fn live_json_and_metrics_tell_each_targets_second_when_each_worker_has_one() {
    each_target_is_told_apart(true);
}

/// Issue 29: one worker driving both targets was counted under target="all" with no target lines.
#[test]
fn live_json_and_metrics_tell_each_targets_second_when_a_worker_drives_several() {
    each_target_is_told_apart(false);
}

/// The same URI given twice (`-t mem:16m -t mem:16m`, two RAM LUNs) with two
/// workers on both: the live lines and the /metrics series are told apart by
/// `target_index` (a line and a series for each), and each index's lines add
/// up to what the result stores for that index.
#[test]
fn the_same_uri_given_twice_is_told_apart_by_its_index() {
    let dir = shm_dir();
    let (live, json) = (dir.path().join("live.jsonl"), dir.path().join("r.json"));
    let port = free_port();
    let args = ["-t", "mem:16m", "-t", "mem:16m", "--workers", "2", "--read", "100", "--ramp", "0", "--time", "2s"];
    let child = spawn_with_telemetry(&args, &live, &json, port);
    let series = |i: u32| format!("lunmark_ios_total{{op=\"read\",target=\"mem:16m\",target_index=\"{i}\"}} ");
    let scraped = scrape_until(port, &series(1));
    let out = wait_within(child, 90);
    assert!(out.status.success(), "{}", stderr(&out));
    let counted = |i| scraped.lines().find_map(|l| l.strip_prefix(&series(i))).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    assert!(counted(0) > 0 && counted(1) > 0, "{scraped}");
    let lines = json_lines(&std::fs::read_to_string(&live).unwrap());
    let ios = |l: &serde_json::Value| l["ios_read"].as_u64().unwrap();
    let seconds: Vec<_> = lines.iter().filter(|l| l["kind"] == "point" && l["phase"] == "run").collect();
    assert!(!seconds.is_empty(), "{lines:?}");
    for p in &seconds {
        let targets: Vec<_> = lines.iter().filter(|l| l["kind"] == "target" && l["t_s"] == p["t_s"]).collect();
        let indexes: Vec<_> = targets.iter().map(|l| l["target_index"].as_u64()).collect();
        assert_eq!(indexes, [Some(0), Some(1)], "{p}");
        assert!(targets.iter().all(|l| l["target"] == "mem:16m" && ios(l) > 0), "{p}");
        assert_eq!(targets.iter().map(|l| ios(l)).sum::<u64>(), ios(p), "{p}");
    }
    let result = read_json(&json);
    let stored = result["points"][0]["targets"].as_array().unwrap();
    assert_eq!(stored.iter().map(|t| t["target"].as_u64()).collect::<Vec<_>>(), [Some(0), Some(1)]);
    for t in stored {
        let told: u64 = lines.iter().filter(|l| l["kind"] == "target" && l["target_index"] == t["target"]).map(ios).sum();
        assert!(close(told as f64, t["ios"].as_u64().unwrap() as f64), "target {}: told {told}, stored {}", t["target"], t["ios"]);
    }
}

/// A pipe of its own whose read end the test keeps, and whose write end is
/// `stdout` for lunmark, already full: nothing lunmark writes to it is taken.
fn full_pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fresh descriptors we then own.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) }, 0);
    // SAFETY: both are fresh descriptors owned by nothing else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut wf = std::fs::File::from(w.try_clone().unwrap());
    while wf.write(&[b'x'; 4096]).is_ok() {}
    // SAFETY: fcntl with integer arguments on a descriptor we own: blocking again, as a shell's pipe is.
    unsafe { libc::fcntl(fds[1], libc::F_SETFL, 0) };
    (r, w)
}

/// `--live-json -` into a full pipe nobody reads, 17 lines a second (16
/// workers and the point, --detail) for 5 s: the run ends in its time, and
/// the lines the queue could not hold are counted as dropped in the result.
#[test]
fn a_pipe_nobody_reads_drops_lines_and_the_run_ends_on_time() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let (_reader, writer) = full_pipe();
    let started = Instant::now();
    let child = lunmark()
        .args(["run", "-t", "mem:64m", "--workers", "16", "--qd", "1", "--ramp", "0", "--time", "5s", "--detail", "--quiet", "--no-store"])
        .args(["--live-json", "-", "--json", json.to_str().unwrap()])
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_within(child, 60);
    assert!(out.status.success(), "{}", stderr(&out));
    // 5 s measured, the writer's 2 s at the end, and a loaded machine's start.
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let result = read_json(&json);
    assert_eq!(result["status"], "completed");
    let (lines, dropped) = (result["live_json"]["lines"].as_u64().unwrap(), result["live_json"]["dropped"].as_u64().unwrap());
    assert!(lines >= 4 * 17, "{lines}");
    // The queue holds 64 lines, the writer blocked in its first write one more.
    assert!(dropped >= lines - 65, "{lines} lines, {dropped} dropped");
    // And the user is told, not only the result.
    assert!(stderr(&out).contains(&format!("--live-json dropped {dropped} of {lines} lines")), "{}", stderr(&out));
}

/// A reader that takes the first line and closes the pipe: the run goes on
/// to its end (lunmark ends on SIGPIPE on a closed stdout otherwise) and the
/// lines written after counted as dropped.
#[test]
fn a_reader_that_closes_leaves_the_run_going_and_the_rest_counted() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let mut child = lunmark()
        .args(["run", "-t", "mem:64m", "--ramp", "0", "--time", "4s", "--quiet", "--no-store", "--live-json", "-"])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    let v: serde_json::Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(v["kind"], "point");
    drop(stdout);
    let out = wait_within(child, 60);
    assert!(out.status.success(), "{:?} {}", out.status, stderr(&out));
    let result = read_json(&json);
    assert_eq!(result["status"], "completed");
    let dropped = result["live_json"]["dropped"].as_u64().unwrap();
    assert!(dropped >= 2, "the seconds after the close: {}", result["live_json"]);
}

/// One HTTP request to the endpoint: (status code, body).
fn http(port: u16, request: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(request.as_bytes()).ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default()))
}

pub(crate) fn get(port: u16, path: &str) -> Option<(u16, String)> {
    http(port, &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
}

/// Prometheus from Debian, on a port of its own with its data in `dir`,
/// scraping 127.0.0.1:`target` every second; stopped (by its PID) when dropped.
struct Prometheus {
    child: std::process::Child,
    port: u16,
}

impl Prometheus {
    fn start(dir: &Path, target: u16) -> Prometheus {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: lunmark\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new("/usr/bin/prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .expect("/usr/bin/prometheus (Debian's prometheus package; scripts/setup.sh installs it)");
        let p = Prometheus { child, port };
        let deadline = Instant::now() + Duration::from_secs(90);
        while get(port, "/-/ready").map(|r| r.0) != Some(200) {
            assert!(Instant::now() < deadline, "prometheus not ready within 90 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    /// The value of an instant PromQL query (one series).
    fn query(&self, promql: &str) -> Option<f64> {
        let q: String = promql
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() || b == b'_' { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let (_, body) = get(self.port, &format!("/api/v1/query?query={q}"))?;
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real Prometheus scrapes a run (the default profile's four points of 2 s) every second: the I/O counter it
/// recorded matches the I/Os the result stores (at most the last second or
/// two unscraped); the text the endpoint served passes `promtool check
/// metrics`; another path is 404, another method 405; the port is closed once the run ended.
#[test]
fn prometheus_scrapes_the_run_and_promtool_accepts_the_text() {
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let port = free_port();
    let prometheus = Prometheus::start(dir.path(), port);
    let child = lunmark()
        .args(["run", "-t", "mem:64m", "--qd", "4", "--ramp", "1s", "--time", "2s", "--quiet", "--no-store"])
        .args(["--metrics-listen", &format!(":{port}"), "--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let text = loop {
        match get(port, "/metrics") {
            Some((200, body)) if body.contains("lunmark_run_state{state=\"run\"} 1") && body.contains("lunmark_ios_total{") => break body,
            _ => assert!(Instant::now() < deadline, "no measured second served within 60 s"),
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let promtool = Command::new("promtool").args(["check", "metrics"]).stdin(Stdio::piped()).output_with_stdin(&text);
    assert!(promtool.status.success(), "promtool: {}{}\n{text}", stdout(&promtool), stderr(&promtool));
    assert_eq!(get(port, "/nothing").map(|r| r.0), Some(404));
    assert_eq!(http(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").map(|r| r.0), Some(405));
    let out = wait_within(child, 90);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err(), "the port is closed after the run");
    let result = read_json(&json);
    let points = result["points"].as_array().unwrap();
    let ios = |p: &serde_json::Value| {
        ["ios_read", "ios_written", "ios_trimmed"].iter().map(|k| p["summary"][k].as_f64().unwrap_or(0.0)).sum::<f64>()
    };
    let stored: f64 = points.iter().map(ios).sum();
    // The series went stale when the endpoint closed: the highest value scraped.
    let scraped = prometheus.query("sum(max_over_time(lunmark_ios_total[10m]))").expect("prometheus has lunmark_ios_total");
    assert!(scraped <= stored * 1.001 && scraped >= stored * 0.5, "scraped {scraped}, stored {stored}");
    drop(prometheus);
}

pub(crate) trait WithStdin {
    fn output_with_stdin(&mut self, text: &str) -> std::process::Output;
}

impl WithStdin for Command {
    /// Runs the command with `text` on its stdin, its output captured.
    fn output_with_stdin(&mut self, text: &str) -> std::process::Output {
        let mut child = self.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("promtool (Debian's prometheus package)");
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }
}

/// Bad values are refused once, naming the flag and the value, before
/// anything runs: an address in use, a bad port, a --live-json path that is
/// a directory or a FIFO, and --live-json - beside the JSON result on stdout.
#[test]
fn telemetry_values_are_refused_before_anything_runs() {
    let dir = shm_dir();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let in_use = format!(":{}", busy.local_addr().unwrap().port());
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let base = ["run", "-t", "mem:8m", "--time", "1s", "--ramp", "0"];
    let with = |extra: &[&str]| base.iter().chain(extra).map(|s| s.to_string()).collect::<Vec<_>>();
    let d = dir.path().to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, String)> = vec![
        (with(&["--metrics-listen", &in_use]), format!("--metrics-listen {in_use} (127.0.0.1:")),
        (with(&["--metrics-listen", &in_use]), "the address is in use".into()),
        (with(&["--metrics-listen", ":99999"]), "--metrics-listen :99999: the port '99999' is not a whole number from 0 to 65535".into()),
        (with(&["--metrics-listen", "localhost"]), "--metrics-listen localhost: no port".into()),
        (with(&["--live-json", &d]), format!("--live-json {d}: that is a directory, not a regular file")),
        (with(&["--live-json", fifo.to_str().unwrap()]), "that is a FIFO (named pipe), not a regular file".into()),
        (with(&["--live-json", "-", "--json", "-"]), "would both write to stdout".into()),
    ];
    let cases: Vec<(Vec<&str>, &str)> = cases.iter().map(|(a, s)| (a.iter().map(String::as_str).collect(), s.as_str())).collect();
    let cases: Vec<(&[&str], &str)> = cases.iter().map(|(a, s)| (a.as_slice(), *s)).collect();
    assert_refused(&cases);
    drop(busy);
}
