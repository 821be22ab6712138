//! Servers the labs start on loopback, each stopped by its PID when dropped
//! (also on error and Ctrl-C, since the labs only return through their
//! destructors). Each also dies with lunmark however lunmark ends (a kill, a
//! crash): see `dies_with_lunmark`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

pub struct Server {
    pub name: String,
    pub uri: String,
    child: Option<Child>,
    /// tgtd's management channel (`-C N`), when the server is a tgtd.
    tgtd_control: Option<u16>,
}

impl Server {
    /// The URI of LUN `lun` of a tgtd (counted from 1; the server's own URI is LUN 1's).
    pub fn lun_uri(&self, lun: usize) -> String {
        match self.uri.strip_suffix("/1") {
            Some(base) if self.tgtd_control.is_some() => format!("{base}/{lun}"),
            _ => self.uri.clone(),
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// Runs a `tgtadm` command against this tgtd (for example to add CHAP accounts).
    pub fn tgtadm(&self, args: &[&str]) -> Result<()> {
        match self.tgtd_control {
            Some(port) => tgtadm(port, args),
            None => bail!("{} is not a tgtd", self.name),
        }
    }

    /// Stops the server by its PID (tgtd: its targets are deleted first, since
    /// tgtd ignores SIGTERM while it has targets).
    pub fn stop(&mut self) {
        let Some(mut c) = self.child.take() else { return };
        if let Some(port) = self.tgtd_control {
            let _ = tgtadm(port, &["--op", "delete", "--force", "--mode", "target", "--tid", "1"]);
            // SAFETY: kill(2) on the PID of a child we spawned and have not reaped.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline && matches!(c.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = c.kill();
        let _ = c.wait();
        if let Some(port) = self.tgtd_control {
            for suffix in ["", ".lock"] {
                let _ = std::fs::remove_file(format!("/var/run/tgtd/socket.{port}{suffix}"));
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A fresh directory for a lab's sockets, LUN files and traces (see `LabDir`).
pub fn lab_dir() -> Result<super::lab_dir::LabDir> {
    super::lab_dir::LabDir::new()
}

/// Says which Debian package brings a missing program, or where it is when
/// it is installed off the PATH (an ordinary user's PATH lacks /usr/sbin,
/// where tgtd lives: "not installed" was wrong).
pub fn require(program: &str, package: &str) -> Result<()> {
    let found = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if found {
        return Ok(());
    }
    let sbin = ["/usr/local/sbin", "/usr/sbin", "/sbin"].iter().map(|d| Path::new(d).join(program)).find(|p| p.is_file());
    match sbin {
        Some(path) => bail!(
            "{program} is installed at {} but that directory is not on PATH: add {} to PATH",
            path.display(),
            path.parent().map(|d| d.display().to_string()).unwrap_or_default()
        ),
        None => bail!("{program} is not installed: apt-get install {package}"),
    }
}

/// tgtd runs as root only (it creates /var/run/tgtd and its control socket):
/// said before it is looked for, so an ordinary user learns why, not only that
/// it is off the PATH.
fn require_root_for_tgtd() -> Result<()> {
    // SAFETY: geteuid has no memory effects.
    if unsafe { libc::geteuid() } != 0 {
        bail!("tgtd (the iSCSI target) needs root: it creates /var/run/tgtd and its control socket; run this lab as root");
    }
    Ok(())
}

pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Makes the server `cmd` starts get `signal` when lunmark dies: the kernel's
/// parent-death signal, set in the forked child before exec (it survives exec,
/// and `ip netns exec`, which execs the server in the same process). A parent
/// that died before the setting took is caught by the child itself: its parent
/// is then no longer lunmark, and it exits instead of starting the server.
///
/// The kernel sends the signal when the *thread* that forked the child ends,
/// so servers are started from lunmark's main thread (the labs run there), which
/// lives as long as lunmark does. (The integration tests start servers from
/// their own threads: a server then dies when its test ends, after the test
/// has stopped it anyway.)
///
/// tgtd gets SIGKILL: it ignores SIGTERM while it has targets. nbdkit gets
/// SIGTERM, the signal it sets for itself (with --exit-with-parent, and Debian's
/// 1.32 even without): it then finishes its connections before it exits, which
/// it does at once unless its client is across a link that is gone (the lab's
/// shaped link goes with lunmark); the link's watchdog kills what runs in the
/// lab's namespace for that case (`lab::link`).
fn dies_with_lunmark(cmd: &mut Command, signal: libc::c_int) {
    let lunmark = std::process::id() as libc::pid_t;
    // Built here, in lunmark: the child only hands it to the kernel.
    let cpus = server_cpu_set();
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe calls (prctl, getppid); it allocates nothing (an
    // io::Error from an OS error code holds just the code).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != lunmark {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            // Set before exec, so every thread the server makes inherits it.
            if let Some(set) = &cpus {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// The CPUs the lab's servers are pinned to (`lab protocols --server-cpus`),
/// set once by the lab before it starts any; None: the servers run anywhere.
/// Process-wide because every server of a lab runs apart on the same CPUs.
static SERVER_CPUS: std::sync::Mutex<Option<Vec<usize>>> = std::sync::Mutex::new(None);

/// Pins every server started from now on to `cpus` (empty: anywhere).
pub fn pin_servers_to(cpus: &[usize]) {
    *SERVER_CPUS.lock().unwrap_or_else(|e| e.into_inner()) = (!cpus.is_empty()).then(|| cpus.to_vec());
}

fn server_cpu_set() -> Option<libc::cpu_set_t> {
    let cpus = SERVER_CPUS.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
    // SAFETY: cpu_set_t is a plain bit array, valid all zeroes; CPU_SET writes
    // within it for CPU numbers below CPU_SETSIZE, which the lab checked.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        Some(set)
    }
}

fn wait_until(what: &str, ready: impl Fn() -> bool, child: &mut Child) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready() {
        if let Some(status) = child.try_wait()? {
            bail!("{what} exited at start ({status})");
        }
        if Instant::now() > deadline {
            bail!("{what} did not start within 10 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// `nbdkit memory SIZE` (plus `filters` and their `params`) on a unix socket in `dir`.
pub fn nbdkit_unix(dir: &Path, size: &str, filters: &[String], params: &[String]) -> Result<Server> {
    nbdkit_unix_at(&dir.join("nbdkit.sock"), size, filters, params)
}

/// The same on the unix socket `socket` (a lab with several NBD targets gives each its own).
pub fn nbdkit_unix_at(socket: &Path, size: &str, filters: &[String], params: &[String]) -> Result<Server> {
    require("nbdkit", "nbdkit")?;
    let socket: PathBuf = socket.to_path_buf();
    let mut cmd = Command::new("nbdkit");
    cmd.args(["-f", "--exit-with-parent", "--threads", "128", "-U"])
        .arg(&socket)
        .args(filters)
        .args(["memory", size])
        .args(params)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // --exit-with-parent sets SIGTERM once nbdkit runs; this covers the time before.
    dies_with_lunmark(&mut cmd, libc::SIGTERM);
    let mut child = cmd.spawn().context("starting nbdkit")?;
    wait_until("nbdkit", || socket.exists(), &mut child)?;
    Ok(Server {
        name: "NBD (nbdkit memory, unix socket)".into(),
        uri: format!("nbd+unix:///?socket={}", socket.display()),
        child: Some(child),
        tgtd_control: None,
    })
}

/// Where a TCP server of a lab listens: 127.0.0.1 in lunmark's own network
/// namespace, or an address inside a lab's namespace (`lab::link`).
#[derive(Clone, Debug)]
pub struct Listen {
    pub addr: std::net::Ipv4Addr,
    pub netns: Option<String>,
}

impl Listen {
    pub fn loopback() -> Listen {
        Listen { addr: std::net::Ipv4Addr::LOCALHOST, netns: None }
    }

    /// `program`, started inside the namespace when there is one (`ip netns
    /// exec` execs it: same PID, still lunmark's child).
    fn command(&self, program: &str) -> Command {
        match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, program]);
                c
            }
            None => Command::new(program),
        }
    }

    /// "TCP 127.0.0.1", as the servers' names say it.
    fn text(&self) -> String {
        match &self.netns {
            Some(ns) => format!("TCP {} in {ns}", self.addr),
            None => format!("TCP {}", self.addr),
        }
    }
}

/// `nbdkit memory SIZE` on 127.0.0.1 at a free port.
pub fn nbdkit_tcp(size: &str, filters: &[String], params: &[String]) -> Result<Server> {
    nbdkit_tcp_on(&Listen::loopback(), size, filters, params)
}

/// `nbdkit memory SIZE` at a free port of `listen`.
pub fn nbdkit_tcp_on(listen: &Listen, size: &str, filters: &[String], params: &[String]) -> Result<Server> {
    require("nbdkit", "nbdkit")?;
    let port = free_port()?;
    let addr = listen.addr.to_string();
    let mut cmd = listen.command("nbdkit");
    cmd.args(["-f", "--exit-with-parent", "--threads", "64", "-i", &addr, "-p", &port.to_string()])
        .args(filters)
        .args(["memory", size])
        .args(params)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    dies_with_lunmark(&mut cmd, libc::SIGTERM);
    let mut child = cmd.spawn().context("starting nbdkit")?;
    wait_until("nbdkit", || std::net::TcpStream::connect((listen.addr, port)).is_ok(), &mut child)?;
    Ok(Server {
        name: format!("NBD (nbdkit memory, {})", listen.text()),
        uri: format!("nbd://{addr}:{port}/"),
        child: Some(child),
        tgtd_control: None,
    })
}

/// The IQN of the lab's iSCSI target.
pub const LAB_IQN: &str = "iqn.2026-11.org.lunmark:lab";

/// `tgtd` serving `backing` (a file, normally in /dev/shm) as LUN 1 of one
/// target on 127.0.0.1 at a free port, open to any initiator.
pub fn tgtd(backing: &Path) -> Result<Server> {
    tgtd_with(backing, &[])
}

/// The same, with extra `tgtadm` options for the LUN (for example
/// `--bsoflags direct`).
pub fn tgtd_with(backing: &Path, lun_options: &[&str]) -> Result<Server> {
    tgtd_on(&Listen::loopback(), backing, lun_options)
}

/// The same at a free port of `listen`. Its management channel is a unix
/// socket in /var/run/tgtd, reached from any network namespace.
pub fn tgtd_on(listen: &Listen, backing: &Path, lun_options: &[&str]) -> Result<Server> {
    tgtd_luns_on(listen, &[backing], lun_options)
}

/// The same with one LUN per file of `backings` (LUN 1, 2, ...): the server's
/// URI is LUN 1's; `Server::lun_uri` gives the others'.
pub fn tgtd_luns_on(listen: &Listen, backings: &[&Path], lun_options: &[&str]) -> Result<Server> {
    require_root_for_tgtd()?;
    require("tgtd", "tgt")?;
    require("tgtadm", "tgt")?;
    let port = free_port()?;
    let control = free_control_port();
    let mut cmd = listen.command("tgtd");
    cmd.args(["-f", "-C", &control.to_string(), "--iscsi", &format!("portal={}:{port}", listen.addr)])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    dies_with_lunmark(&mut cmd, libc::SIGKILL);
    let child = cmd.spawn().context("starting tgtd")?;
    let mut server = Server {
        name: format!("iSCSI (tgtd, {})", listen.text()),
        uri: format!("iscsi://{}:{port}/{LAB_IQN}/1", listen.addr),
        child: Some(child),
        tgtd_control: Some(control),
    };
    let child = server.child.as_mut().expect("just spawned");
    wait_until("tgtd", || std::path::Path::new(&format!("/var/run/tgtd/socket.{control}")).exists(), child)?;
    tgtadm(control, &["--op", "new", "--mode", "target", "--tid", "1", "-T", LAB_IQN])?;
    for (n, backing) in backings.iter().enumerate() {
        let backing = backing.to_str().context("the backing file's path is not UTF-8")?;
        let lun = (n + 1).to_string();
        tgtadm(control, &[&["--op", "new", "--mode", "logicalunit", "--tid", "1", "--lun", &lun, "-b", backing], lun_options].concat())?;
    }
    tgtadm(control, &["--op", "bind", "--mode", "target", "--tid", "1", "-I", "ALL"])?;
    wait_until("tgtd", || std::net::TcpStream::connect((listen.addr, port)).is_ok(), child)?;
    Ok(server)
}

/// A number for tgtd's management channel (`-C`, at most 32767), a unix socket
/// /var/run/tgtd/socket.N: one no other tgtd uses, so that two labs (or tests)
/// never share one.
fn free_control_port() -> u16 {
    let mut n = (std::process::id() as u64 ^ free_port().unwrap_or(0) as u64) % 30_000 + 1_000;
    while std::path::Path::new(&format!("/var/run/tgtd/socket.{n}")).exists() {
        n = (n + 7) % 30_000 + 1_000;
    }
    n as u16
}

/// Runs `tgtadm -C CONTROL --lld iscsi ARGS`; its message on failure.
fn tgtadm(control: u16, args: &[&str]) -> Result<()> {
    let out = Command::new("tgtadm").args(["-C", &control.to_string(), "--lld", "iscsi"]).args(args).output().context("running tgtadm")?;
    if !out.status.success() {
        bail!("tgtadm {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}
