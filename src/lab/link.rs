//! A shaped link for `lab protocols --link RATE`: a network namespace
//! `lunmark-PID` joined to lunmark's own by a veth pair with a private /30 of
//! link-local addresses (169.254.0.0/16, on the veth only: traffic stays inside
//! the machine), each end shaped with `tc qdisc ... tbf` to the link's usable
//! rate, so that what the lab's servers send and receive crosses a link of that
//! rate in each direction.
//!
//! tbf counts the bytes of each Ethernet frame it sends (IP and TCP headers
//! included, preamble and gap not), so TCP payload reaches about 95.6% of the
//! shaped rate at the veth's MTU of 1500 (1,448 bytes of payload, with TCP
//! timestamps, in a frame of 1,514); the share of line rate is computed against
//! the shaped rate itself.
//!
//! Everything is removed when the guard is dropped (normal end, errors, the
//! first Ctrl-C, after which the lab returns through its destructors): deleting
//! the namespace deletes its veth end, which deletes the pair and both qdiscs.
//! A watchdog process, in its own process group, deletes the namespace if
//! lunmark dies without dropping the guard (a second Ctrl-C, a kill), after it
//! kills (SIGKILL, by PID) every process still in it: the servers get their
//! parent-death signal when lunmark dies, but nbdkit's is SIGTERM, on which it
//! waits for its connections, and one whose client went with the link (its
//! replies retransmitted to a veth that no longer exists) would keep it
//! running until TCP gives up, minutes later.

use std::net::Ipv4Addr;
use std::process::{Child, Command, Stdio};

use anyhow::{bail, Context, Result};

use super::servers;
use crate::results::line_rate::Link;

pub struct ShapedLink {
    /// The namespace the lab's network servers run in.
    pub netns: String,
    /// The veth end in lunmark's namespace, and the one in the lab's.
    pub host_if: String,
    pub lab_if: String,
    pub host_addr: Ipv4Addr,
    /// Where the lab's servers listen.
    pub lab_addr: Ipv4Addr,
    pub link: Link,
    /// tbf's settings, as given to tc (for the lab's note).
    pub tbf: String,
    watchdog: Option<Child>,
}

/// Runs `program args`, its stderr in the error when it fails.
fn run(program: &str, args: &[&str]) -> Result<()> {
    let out = Command::new(program).args(args).stdin(Stdio::null()).output().with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// A /30 in 169.254.0.0/16 (avoiding 169.254.0.x and 169.254.169.x, which
/// hosts and clouds use) that no interface here has an address in.
fn free_slash30() -> Result<(Ipv4Addr, Ipv4Addr)> {
    let out = Command::new("ip").args(["-o", "-4", "addr", "show"]).output().context("running ip addr show")?;
    let used: Vec<Ipv4Addr> =
        String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|w| w.split('/').next()?.parse().ok()).collect();
    let start = std::process::id() as usize;
    // 200 third octets x 64 blocks of 4 addresses.
    for k in 0..200 * 64 {
        let n = (start + k) % (200 * 64);
        let (third, block) = (20 + n / 64, (n % 64) * 4);
        if third == 169 {
            continue;
        }
        let net = |host: usize| Ipv4Addr::new(169, 254, third as u8, (block + host) as u8);
        if (0..4).all(|h| !used.contains(&net(h))) {
            return Ok((net(1), net(2)));
        }
    }
    bail!("no free /30 in 169.254.0.0/16 for the lab's link")
}

/// tbf's bucket and queue for a rate, bytes: a bucket of 1 ms of the rate (at
/// least 256 KiB, so that a TSO frame of 64 KiB always fits), a queue of 100 ms
/// (at least 4 MiB, so that the lab's I/Os in flight are queued, never dropped).
fn tbf_args(bits_per_s: u64) -> (u64, u64) {
    let bytes_per_s = bits_per_s / 8;
    let burst = (bytes_per_s / 1000).clamp(256 << 10, u32::MAX as u64 / 2);
    let limit = (bytes_per_s / 10).clamp(4 << 20, u32::MAX as u64 / 2);
    (burst, limit)
}

impl ShapedLink {
    /// Creates the namespace, the veth pair, their addresses and the shaping.
    pub fn create(link: &Link) -> Result<ShapedLink> {
        ShapedLink::create_tagged(link, "")
    }

    /// The same, its namespace and veth names marked with `tag` (a lab with a
    /// link per leg makes several: `lunmark-PID`, `lunmark-PID2`, ...).
    pub fn create_tagged(link: &Link, tag: &str) -> Result<ShapedLink> {
        servers::require("ip", "iproute2")?;
        servers::require("tc", "iproute2")?;
        let pid = std::process::id();
        let (host_addr, lab_addr) = free_slash30()?;
        let bits = link.bits_per_second();
        if bits < 8_000 {
            bail!("--link {}: the lab shapes links of at least 8kbit", link.name);
        }
        let (burst, limit) = tbf_args(bits);
        let mut shaped = ShapedLink {
            netns: format!("lunmark-{pid}{tag}"),
            host_if: format!("lm{pid}{tag}h"),
            lab_if: format!("lm{pid}{tag}n"),
            host_addr,
            lab_addr,
            link: link.clone(),
            tbf: format!("rate {bits}bit burst {burst} limit {limit}"),
            watchdog: None,
        };
        // From here on, dropping `shaped` removes whatever was made.
        run("ip", &["netns", "add", &shaped.netns]).with_context(|| {
            format!(
                "creating the lab's network namespace (this needs root; if {0} exists, it is left from a lunmark that was killed: `ip netns delete {0}`)",
                shaped.netns
            )
        })?;
        shaped.watchdog = Some(watchdog(&shaped.netns, &shaped.host_if)?);
        let (ns, h, n) = (shaped.netns.clone(), shaped.host_if.clone(), shaped.lab_if.clone());
        let host_cidr = format!("{host_addr}/30");
        let lab_cidr = format!("{lab_addr}/30");
        let tbf: Vec<&str> = shaped.tbf.split(' ').collect();
        run("ip", &["link", "add", &h, "type", "veth", "peer", "name", &n])?;
        run("ip", &["link", "set", &n, "netns", &ns])?;
        run("ip", &["addr", "add", &host_cidr, "dev", &h])?;
        run("ip", &["-n", &ns, "addr", "add", &lab_cidr, "dev", &n])?;
        run("tc", &[&["qdisc", "add", "dev", &h, "root", "tbf"][..], &tbf].concat())?;
        run("tc", &[&["-n", &ns, "qdisc", "add", "dev", &n, "root", "tbf"][..], &tbf].concat())?;
        run("ip", &["link", "set", &h, "up"])?;
        run("ip", &["-n", &ns, "link", "set", &n, "up"])?;
        run("ip", &["-n", &ns, "link", "set", "lo", "up"])?;
        Ok(shaped)
    }

    /// Where the lab's servers listen: the lab end of the link, in the namespace.
    pub fn listen(&self) -> servers::Listen {
        servers::Listen { addr: self.lab_addr, netns: Some(self.netns.clone()) }
    }

    /// For the lab's output: what was shaped and what the share is computed against.
    pub fn describe(&self) -> String {
        format!(
            "shaped link: {} ({} MB/s) each way between {} and {} in namespace {} (tc tbf {} on both veth ends); \
             line rate % is of that rate, which tbf counts in Ethernet frames with their headers, so TCP payload tops out near 95.6% of it (1,448 of 1,514 bytes a frame)",
            self.link.name,
            crate::results::line_rate::fmt_mbps(self.link.usable_mbps),
            self.host_addr,
            self.lab_addr,
            self.netns,
            self.tbf
        )
    }

    fn remove(&mut self) {
        let _ = Command::new("ip").args(["netns", "delete", &self.netns]).stderr(Stdio::null()).status();
        // The pair goes with its namespace end; this covers a pair made but not yet moved.
        let _ = Command::new("ip").args(["link", "delete", &self.host_if]).stderr(Stdio::null()).status();
        if let Some(w) = self.watchdog.take() {
            super::watchdog::dismiss(w);
        }
    }
}

impl Drop for ShapedLink {
    fn drop(&mut self) {
        self.remove();
    }
}

/// At lunmark's death: kills the processes in the namespace (the lab's
/// servers: the namespace is this lunmark's own), then deletes the namespace
/// and the pair, in that order, so that no server is left waiting on a link
/// that is gone.
fn watchdog(netns: &str, host_if: &str) -> Result<Child> {
    super::watchdog::start(
        "lunmark-link-watchdog",
        r#"for p in $(ip netns pids "$1"); do kill -9 "$p"; done; ip netns delete "$1"; ip link delete "$2""#,
        &[netns, host_if],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tbf_buckets_hold_a_tso_frame_and_queues_hold_the_ios_in_flight() {
        assert_eq!(tbf_args(200_000_000), (256 << 10, 4 << 20));
        let (burst, limit) = tbf_args(100_000_000_000);
        assert_eq!(burst, 12_500_000);
        assert_eq!(limit, 1_250_000_000);
    }
}
