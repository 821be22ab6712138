//! Servers the labs start on loopback, each stopped by its PID when dropped
//! (also on error and Ctrl-C, since the labs only return through their
//! destructors). nbdkit runs with --exit-with-parent, so it also dies with
//! lunmark if lunmark itself is killed.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

pub struct Server {
    pub name: String,
    pub uri: String,
    child: Option<Child>,
}

impl Server {
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Says which Debian package brings a missing program.
pub fn require(program: &str, package: &str) -> Result<()> {
    let found = std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    if !found {
        bail!("{program} is not installed: apt-get install {package}");
    }
    Ok(())
}

pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
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
    require("nbdkit", "nbdkit")?;
    let socket: PathBuf = dir.join("nbdkit.sock");
    let mut child = Command::new("nbdkit")
        .args(["-f", "--exit-with-parent", "--threads", "64", "-U"])
        .arg(&socket)
        .args(filters)
        .args(["memory", size])
        .args(params)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting nbdkit")?;
    wait_until("nbdkit", || socket.exists(), &mut child)?;
    Ok(Server {
        name: "NBD (nbdkit memory, unix socket)".into(),
        uri: format!("nbd+unix:///?socket={}", socket.display()),
        child: Some(child),
    })
}

/// `nbdkit memory SIZE` on 127.0.0.1 at a free port.
pub fn nbdkit_tcp(size: &str, filters: &[String], params: &[String]) -> Result<Server> {
    require("nbdkit", "nbdkit")?;
    let port = free_port()?;
    let mut child = Command::new("nbdkit")
        .args(["-f", "--exit-with-parent", "--threads", "64", "-i", "127.0.0.1", "-p", &port.to_string()])
        .args(filters)
        .args(["memory", size])
        .args(params)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting nbdkit")?;
    wait_until("nbdkit", || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(), &mut child)?;
    Ok(Server { name: "NBD (nbdkit memory, TCP 127.0.0.1)".into(), uri: format!("nbd://127.0.0.1:{port}/"), child: Some(child) })
}
