//! Shared test helpers: the binary under test (alone, with a store of its own,
//! or with its stdout closed), scratch directories, loop devices that are
//! detached when dropped, nbdkit servers, signals to a run and its worker
//! thread, the id and stored row of a result, and headless Chromium.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A `lunmark` command for the binary built with these tests.
pub fn lunmark() -> Command {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(remove_stale_stores);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lunmark"));
    // Keep every test's results away from the user's store.
    cmd.env("LUNMARK_STORE", std::env::temp_dir().join(format!("lunmark-test-store-{}.db", std::process::id())));
    cmd
}

/// The test store of a test process lives until the process ends (the harness
/// has no teardown), so each run removes those of processes that are gone.
fn remove_stale_stores() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("lunmark-test-store-") else { continue };
        let pid: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if !pid.is_empty() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Runs lunmark with `args`, returning its output.
pub fn run(args: &[&str]) -> Output {
    lunmark().args(args).output().expect("run lunmark")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory in /dev/shm (tmpfs: fast, and O_DIRECT works there).
pub fn shm_dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("lunmark-test-").tempdir_in("/dev/shm").expect("tempdir in /dev/shm")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no memory effects.
    unsafe { libc::geteuid() == 0 }
}

/// Skips a test (returns early) with a message when not root.
#[macro_export]
macro_rules! require_root {
    () => {
        if !$crate::common::is_root() {
            eprintln!("skipped: needs root for loop devices");
            return;
        }
    };
}

/// A loop device over a file this test created; detached on drop.
pub struct LoopDevice {
    pub path: PathBuf,
    _backing: PathBuf,
}

impl LoopDevice {
    /// A loop device over a new file of `size` bytes in `dir`.
    pub fn new(dir: &Path, size: u64) -> LoopDevice {
        let backing = dir.join(format!("loop-backing-{}", rand_suffix()));
        let f = std::fs::File::create(&backing).expect("create loop backing file");
        f.set_len(size).expect("size loop backing file");
        drop(f);
        let out = Command::new("losetup").args(["--find", "--show", "--direct-io=on"]).arg(&backing).output().expect("losetup");
        assert!(out.status.success(), "losetup failed: {}", String::from_utf8_lossy(&out.stderr));
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        LoopDevice { path, _backing: backing }
    }

    /// The file the loop device reads and writes.
    pub fn backing(&self) -> &Path {
        &self._backing
    }

    /// Kernel name, "loop3".
    pub fn name(&self) -> String {
        self.path.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// (reads completed, sectors read, writes completed, sectors written) from /sys/block/NAME/stat.
    pub fn stat(&self) -> (u64, u64, u64, u64) {
        let text = std::fs::read_to_string(format!("/sys/block/{}/stat", self.name())).expect("read loop stat");
        let f: Vec<u64> = text.split_whitespace().map(|v| v.parse().unwrap()).collect();
        (f[0], f[2], f[4], f[6])
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

pub fn rand_suffix() -> String {
    format!("{}-{}", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos())
}

/// Parses the JSON result a run wrote.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("result JSON exists")).expect("result is JSON")
}

/// An nbdkit server this test started (on its own unix socket or a free TCP
/// port on 127.0.0.1), stopped by PID when dropped.
pub struct Nbdkit {
    pub child: Option<std::process::Child>,
    pub uri: String,
    pub socket: Option<PathBuf>,
}

impl Nbdkit {
    /// `nbdkit OPTIONS memory SIZE PARAMS` on a unix socket in `dir`: `extra`
    /// holds options (--threads, --filter=...) and then `key=value` parameters
    /// (the plugin's and filters'), which nbdkit wants after the plugin name.
    pub fn unix(dir: &Path, size: &str, extra: &[&str]) -> Nbdkit {
        let (params, options): (Vec<&str>, Vec<&str>) = extra.iter().partition(|a| a.contains('=') && !a.starts_with("--"));
        let socket = dir.join(format!("nbd-{}.sock", rand_suffix()));
        let child = Command::new("nbdkit")
            .args(["-f", "--exit-with-parent", "-U"])
            .arg(&socket)
            .args(&options)
            .args(["memory", size])
            .args(&params)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nbdkit (Debian's nbdkit package; scripts/setup.sh installs it)");
        wait_for(|| socket.exists());
        let uri = format!("nbd+unix:///?socket={}", socket.display());
        Nbdkit { child: Some(child), uri, socket: Some(socket) }
    }

    /// The same on 127.0.0.1 at a free port.
    pub fn tcp(size: &str, extra: &[&str]) -> Nbdkit {
        let (params, options): (Vec<&str>, Vec<&str>) = extra.iter().partition(|a| a.contains('=') && !a.starts_with("--"));
        let port = free_port();
        let child = Command::new("nbdkit")
            .args(["-f", "--exit-with-parent", "-i", "127.0.0.1", "-p", &port.to_string()])
            .args(&options)
            .args(["memory", size])
            .args(&params)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("nbdkit");
        wait_for(|| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
        Nbdkit { child: Some(child), uri: format!("nbd://127.0.0.1:{port}/"), socket: None }
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        self.kill();
        if let Some(s) = &self.socket {
            let _ = std::fs::remove_file(s);
        }
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn wait_for(ready: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ready() {
        assert!(std::time::Instant::now() < deadline, "server did not start within 10 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// From nbdkit's log filter (a line when a request starts, one with "..." when
/// it returns): (reads logged, average reads already in flight when one started).
pub fn reads_in_flight(log: &Path) -> (i64, f64) {
    let text = std::fs::read_to_string(log).unwrap();
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
    (seen, if seen > 0 { sum as f64 / seen as f64 } else { 0.0 })
}

/// Nothing left of a lab that ran with LUNMARK_LAB_DIR=`dir`: no process has
/// that directory on its command line or a file in it open, and the directory is empty.
pub fn assert_lab_left_nothing(dir: &Path) {
    let marker = dir.to_string_lossy().into_owned();
    let me = std::process::id().to_string();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default();
        assert!(!cmdline.contains(&marker), "process {pid} of the lab is still running: {cmdline}");
        for fd in std::fs::read_dir(e.path().join("fd")).into_iter().flatten().flatten() {
            let target = std::fs::read_link(fd.path()).unwrap_or_default();
            assert!(!target.starts_with(dir), "process {pid} ({cmdline}) still holds {}", target.display());
        }
    }
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "the lab left {left:?}");
}

/// A dry run's text without its `memory:` line: the memory available moves
/// between two calls, so comparing two dry runs compares what they plan.
pub fn plan_text(dry_run_stdout: &str) -> String {
    dry_run_stdout.lines().filter(|l| !l.starts_with("memory:")).map(|l| format!("{l}\n")).collect()
}

/// Runs lunmark with a store of its own in `dir` (`{dir}` in `args` is
/// `dir`): the output, and whether the store was created.
pub fn run_in_store(dir: &Path, args: &[&str]) -> (Output, bool) {
    let d = dir.display().to_string();
    let store = dir.join("s.db");
    let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", &d)).collect();
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(&store).args(&args).output().unwrap();
    (out, store.exists())
}

/// Each case is refused with its message, once, exit non-zero, nothing kept.
pub fn assert_refused(cases: &[(&[&str], &str)]) {
    let dir = shm_dir();
    for (args, says) in cases {
        let (out, stored) = run_in_store(dir.path(), args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} was accepted:\n{}{err}", stdout(&out));
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "{args:?}: said once: {err}");
        assert!(!stored, "{args:?}: a result was kept before the refusal");
    }
}

/// The id a run saved its result as ("saved as ID in PATH").
pub fn saved_id(out: &Output) -> String {
    let err = stderr(out);
    let line = err.lines().find(|l| l.starts_with("saved as ")).unwrap_or_else(|| panic!("no 'saved as' in: {err}"));
    line.split_whitespace().nth(2).unwrap().to_string()
}

/// The result the store at `store` keeps under `id`.
pub fn stored(store: &Path, id: &str) -> serde_json::Value {
    let out = lunmark().env("LUNMARK_STORE", store).args(["results", "export", id]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Sends `sig` to a child this test spawned.
pub fn signal(child: &std::process::Child, sig: i32) {
    signal_pid(child.id(), sig);
}

/// Sends `sig` to the process `pid`, which this test started (directly or
/// through a child of its own).
pub fn signal_pid(pid: u32, sig: i32) {
    // SAFETY: kill(2) has no memory effects; the callers name processes they started.
    unsafe { libc::kill(pid as libc::pid_t, sig) };
}

pub fn sleep_until(t: std::time::Instant) {
    std::thread::sleep(t.saturating_duration_since(std::time::Instant::now()));
}

/// The thread id of the run's first worker (`lunmark-w0`) in process `pid`,
/// once there is one other than `not`.
pub fn worker_tid(pid: u32, not: Option<String>) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).map(|d| d.flatten().collect::<Vec<_>>()).unwrap_or_default();
        let w0 = tasks.iter().find(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "lunmark-w0"));
        if let Some(tid) = w0.map(|t| t.file_name().to_string_lossy().to_string()).filter(|t| Some(t) != not.as_ref()) {
            return tid;
        }
        assert!(std::time::Instant::now() < deadline, "no new worker thread within 60 s");
        // Short, since the stop tests time their signals from this moment.
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// When the run's first worker thread appeared: its point starts within
/// moments (the workers are released once each has its buffers).
pub fn worker_started(child: &std::process::Child) -> std::time::Instant {
    worker_tid(child.id(), None);
    std::time::Instant::now()
}

/// Runs `cmd` with its stdout closed from the start (a reader that went away,
/// as with `| head -0`).
pub fn with_stdout_closed(cmd: &mut Command) -> Output {
    let mut child = cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

/// Headless Chromium with a profile of its own, run with `args`.
pub fn chromium(args: &[&str]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"])
        .args(["--disable-sync", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .expect("chromium (Debian's chromium package; scripts/setup.sh installs it)")
}

/// Runs lunmark with the store at `store` (by `LUNMARK_STORE`).
pub fn with_store(store: &Path, args: &[&str]) -> Output {
    lunmark().env("LUNMARK_STORE", store).args(args).output().unwrap()
}

/// Runs `cmd` with its output piped, killing it (by its own handle) and
/// failing the test if it has not ended within `secs` seconds.
pub fn output_within(cmd: &mut Command, secs: u64) -> Output {
    use std::process::Stdio;
    wait_within(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(), secs)
}

/// Waits for `child`, killing it (by its own handle) and failing the test if it
/// has not ended within `secs` seconds; its output.
pub fn wait_within(mut child: std::process::Child, secs: u64) -> Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().unwrap();
            let _ = child.wait();
            panic!("still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The texts of an SVG chart (axis labels, legend, title), trimmed.
pub fn texts(svg: &str) -> Vec<String> {
    svg.split("<text").skip(1).filter_map(|t| Some(t.split_once('>')?.1.split("</text>").next()?.trim().to_string())).collect()
}

/// Markers of one colour in an SVG chart (the legend's one included).
pub fn markers(svg: &str, fill: &str) -> usize {
    svg.split("<circle").skip(1).filter(|c| c.split('>').next().unwrap().contains(&format!("fill=\"{fill}\""))).count()
}

/// The report's chart colours, in the order of its lines.
pub const COLORS: [&str; 4] = ["#1F77B4", "#FF7F0E", "#2CA02C", "#D62728"];

/// A lab's arguments as the lab tests give them: `before` (legs, targets,
/// links, sizes), then all reads of `bs` for `time` at each point.
pub fn lab_reads<'a>(before: &[&'a str], bs: &'a str, time: &'a str) -> Vec<&'a str> {
    [before, &["--bs", bs, "--read", "100", "--time", time]].concat()
}

/// `lunmark --store STORE lab cache ARGS` with its servers' files under `labs`
/// (LUNMARK_LAB_DIR), to be run or spawned.
pub fn lab_cache(labs: &Path, store: &Path, args: &[&str]) -> Command {
    let mut cmd = lunmark();
    cmd.env("LUNMARK_LAB_DIR", labs).arg("--store").arg(store).args(["lab", "cache"]).args(args);
    cmd
}

/// The rows of `lab cache`'s table for `pcts`, each cell without the borders:
/// pct, size (two words: "8 MiB"), read lat ms, IOPS, lat reduction, IOPS increase, hit, predicted hit, predicted lat.
pub fn cache_table_rows(text: &str, pcts: &[&str]) -> Vec<Vec<String>> {
    pcts.iter()
        .map(|p| {
            let line = text.lines().find(|l| l.split_whitespace().nth(1) == Some(p)).unwrap_or_else(|| panic!("no row {p}: {text}"));
            // Cells are parted by two spaces or more (the table draws no inner
            // borders); a size's number and unit by one.
            let inner = line.trim().trim_matches('│');
            let cells: Vec<String> = inner.split("  ").map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
            assert_eq!(cells.len(), 9, "{cells:?}");
            cells
        })
        .collect()
}
