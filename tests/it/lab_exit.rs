//! Servers die with lunmark: a lab killed outright (SIGKILL, so no destructor
//! runs) leaves none of the processes it started behind. Every child of
//! lunmark, and every child of those, is recorded by PID from /proc while the
//! lab runs, so a server is caught whatever its command line says (an nbdkit
//! in the lab's network namespace names no lab directory).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use crate::require_root;

/// A process seen in /proc: its parent, its start time (clock ticks after boot,
/// which tells a reused PID from the process recorded), its name, its state.
struct Seen {
    ppid: u32,
    start: u64,
    comm: String,
    state: char,
}

/// /proc/PID/stat, read once: `pid (comm) state ppid ... starttime (22nd field)`.
fn seen(pid: u32) -> Option<Seen> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (open, close) = (text.find('(')?, text.rfind(')')?);
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state), so field N is rest[N - 3].
    Some(Seen { state: rest.first()?.chars().next()?, ppid: rest.get(1)?.parse().ok()?, start: rest.get(19)?.parse().ok()?, comm })
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc").unwrap().flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect()
}

/// The processes a lunmark started (its children and theirs), recorded by PID
/// and start time while it runs.
pub struct Descendants {
    root: u32,
    /// PID -> (start time, name when last seen).
    known: BTreeMap<u32, (u64, String)>,
    /// The management channels (`-C N`) of the tgtds seen: a tgtd killed
    /// outright leaves its socket in /var/run/tgtd, removed on drop.
    tgtd_controls: Vec<String>,
}

impl Descendants {
    pub fn of(root: u32) -> Descendants {
        Descendants { root, known: BTreeMap::new(), tgtd_controls: Vec::new() }
    }

    /// Adds every process now running whose parent is the root or one recorded
    /// (children of children included), and refreshes the names of those
    /// recorded (a child started as `ip netns exec` becomes the server it execs).
    pub fn record(&mut self) {
        let now: Vec<(u32, Seen)> = all_pids().into_iter().filter_map(|p| Some((p, seen(p)?))).collect();
        loop {
            let before = self.known.len();
            for (pid, s) in &now {
                let parent_known = s.ppid == self.root || self.known.contains_key(&s.ppid);
                match self.known.get_mut(pid) {
                    Some((start, comm)) if *start == s.start => *comm = s.comm.clone(),
                    _ if parent_known && *pid != self.root => {
                        self.known.insert(*pid, (s.start, s.comm.clone()));
                    }
                    _ => {}
                }
            }
            if self.known.len() == before {
                break;
            }
        }
        for (pid, (_, comm)) in &self.known {
            if comm == "tgtd" {
                let args = cmdline(*pid);
                if let Some(n) = args.iter().position(|a| a == "-C").and_then(|i| args.get(i + 1)) {
                    if !self.tgtd_controls.contains(n) {
                        self.tgtd_controls.push(n.clone());
                    }
                }
            }
        }
    }

    /// How many recorded processes have this name (alive or not).
    pub fn named(&self, comm: &str) -> usize {
        self.known.values().filter(|(_, c)| c == comm).count()
    }

    /// Those recorded that still run ("PID name"): same PID and start time, not a zombie.
    pub fn alive(&self) -> Vec<String> {
        self.known
            .iter()
            .filter(|(pid, (start, _))| seen(**pid).is_some_and(|s| s.start == *start && s.state != 'Z'))
            .map(|(pid, (_, comm))| format!("{pid} {comm}"))
            .collect()
    }

    /// Waits up to `limit` for every recorded process to end; those still running after.
    pub fn left_after(&self, limit: Duration) -> Vec<String> {
        let deadline = Instant::now() + limit;
        loop {
            let alive = self.alive();
            if alive.is_empty() || Instant::now() > deadline {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills, by PID, whatever recorded process still runs.
    pub fn kill_left(&self) {
        for (pid, (start, _)) in &self.known {
            if seen(*pid).is_some_and(|s| s.start == *start && s.state != 'Z') {
                // The start time, checked just above, makes the PID still lunmark's descendant.
                signal_pid(*pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Descendants {
    /// A failing test leaves nothing behind either.
    fn drop(&mut self) {
        self.kill_left();
        for n in &self.tgtd_controls {
            for suffix in ["", ".lock"] {
                let _ = std::fs::remove_file(format!("/var/run/tgtd/socket.{n}{suffix}"));
            }
        }
    }
}

/// A process's arguments, from /proc/PID/cmdline.
fn cmdline(pid: u32) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    raw.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
}

/// Runs `lunmark lab ARGS`, recording its descendants, until its stderr says
/// `leg` started and `servers` (name, count) all run; then SIGKILLs it by PID
/// and checks that, within 5 s, none of the processes it started still runs.
/// With `cut_link`, the lab's shaped link goes down just before the kill.
fn killed_mid_leg(args: &[&str], leg: &str, servers: &[(&str, usize)], cut_link: bool) -> u32 {
    let labs = shm_dir();
    let mut child: Child = lunmark()
        .env("LUNMARK_LAB_DIR", labs.path())
        .arg("lab")
        .args(args)
        .args(["--ramp", "0", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut descendants = Descendants::of(pid);
    // The lab's notes ("== LEG") come on stderr; read on a thread so recording goes on meanwhile.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let ready = loop {
        descendants.record();
        while let Ok(line) = rx.try_recv() {
            said.push_str(&line);
            said.push('\n');
        }
        let up = servers.iter().all(|(name, n)| descendants.named(name) >= *n);
        if up && said.lines().any(|l| l.starts_with(&format!("== {leg}"))) {
            break true;
        }
        if Instant::now() > deadline || matches!(child.try_wait(), Ok(Some(_))) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if ready {
        // Well into the leg: its I/Os are in flight.
        std::thread::sleep(Duration::from_millis(500));
        descendants.record();
    }
    // The host end of the pair down: the servers in the namespace no longer
    // hear from lunmark's side, as when its watchdog deletes the pair before
    // lunmark's sockets were closed across it (a race the kill can win).
    let host_if = format!("lm{pid}h");
    let cut = (ready && cut_link).then(|| std::process::Command::new("ip").args(["link", "set", &host_if, "down"]).status());
    signal_pid(pid, libc::SIGKILL);
    let _ = child.wait();
    let _ = reader.join();
    assert!(cut.as_ref().is_none_or(|s| s.as_ref().is_ok_and(|s| s.success())), "ip link set {host_if} down: {cut:?}");
    assert!(ready, "lab {args:?} never reached leg '{leg}' with servers {servers:?} up (recorded: {:?}):\n{said}", descendants.known);
    let left = descendants.left_after(Duration::from_secs(5));
    assert!(left.is_empty(), "lab {args:?} killed during '{leg}': still running 5 s later: {left:?}");
    // Its scratch directory (LUN files in RAM) goes too.
    let kept: Vec<_> = std::fs::read_dir(labs.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(kept.is_empty(), "lab {args:?} killed during '{leg}': left {kept:?} in its lab directory");
    pid
}

/// `lab protocols` on loopback, killed while lunmark reads the tgtd (the
/// nbdkits are idle then, their connections open): both nbdkits and the tgtd
/// die with it.
#[test]
fn the_protocol_labs_servers_die_when_lunmark_is_killed() {
    require_root!();
    let args = ["protocols", "--lun-size", "16m", "--bs", "64k", "--read", "100", "--time", "1s"];
    killed_mid_leg(&args, "iSCSI", &[("nbdkit", 2), ("tgtd", 1)], false);
}

/// `lab protocols --link RATE`: the TCP nbdkit and the tgtd run in the lab's
/// network namespace (started through `ip netns exec`). Killed while lunmark
/// reads either of them through the shaped link, and the link cut, they die
/// with lunmark too: an nbdkit asked to stop with SIGTERM would wait for its
/// connection to lunmark, whose replies no longer go anywhere.
#[test]
fn the_shaped_labs_servers_in_their_namespace_die_when_lunmark_is_killed() {
    require_root!();
    let args = ["protocols", "--link", "100mbit", "--lun-size", "16m", "--bs", "64k", "--read", "100", "--time", "1s"];
    let servers = [("nbdkit", 2), ("tgtd", 1)];
    killed_mid_leg(&args, "NBD TCP", &servers, true);
    killed_mid_leg(&args, "iSCSI", &servers, true);
}

/// `lab cache`: its nbdkits (4 disks, memory behind noparallel and delay, each
/// request held 20 ms) die with lunmark.
#[test]
fn the_cache_labs_server_dies_when_lunmark_is_killed() {
    let args = ["cache", "--lun-size", "16m", "--delay", "20ms", "--cache-sizes", "0,100", "--time", "2s"];
    killed_mid_leg(&args, "cache 0%", &[("nbdkit", 4)], false);
}

/// As an ordinary user (PATH without /usr/sbin, as a user's is), the iSCSI
/// leg said "tgtd is not installed: apt-get install tgt" of an installed
/// tgtd, and never that tgtd needs root. The other legs still run.
#[test]
fn lab_protocols_as_a_user_says_tgtd_needs_root() {
    require_root!();
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_lunmark")])
        .args(["lab", "protocols", "--no-store", "--lun-size", "16m", "--bs", "64k", "--read", "100", "--time", "200ms", "--ramp", "0"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("tgtd (the iSCSI target) needs root"), "{all}");
    assert!(!all.contains("tgtd is not installed"), "{all}");
    assert!(all.contains("NBD unix socket"), "the other legs ran: {all}");
}

/// `lab protocols --targets 2` with a link per TCP leg: four nbdkits (two on
/// unix sockets, two in the first link's namespace) and a tgtd with two LUNs
/// (in the second's). Killed while lunmark reads the tgtd, all die with it and
/// both namespaces go.
#[test]
fn a_labs_servers_per_target_and_links_per_leg_die_when_lunmark_is_killed() {
    require_root!();
    let before =
        ["protocols", "--legs", "nbd-unix,nbd-tcp,iscsi", "--targets", "2", "--link", "nbd-tcp=200mbit,iscsi=100mbit", "--lun-size", "16m"];
    let args = lab_reads(&before, "64k", "1s");
    let pid = killed_mid_leg(&args, "iSCSI", &[("nbdkit", 4), ("tgtd", 1)], false);
    // Its namespaces, lunmark-PID and lunmark-PID2, go with their watchdogs.
    let ns = || String::from_utf8_lossy(&std::process::Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).into_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    while ns().contains(&format!("lunmark-{pid}")) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!ns().contains(&format!("lunmark-{pid}")), "left: {}", ns());
}
