//! The protocol lab's topology, as its flags give it: which legs run
//! (`--legs`), how many targets each has (`--targets`), the limit each target
//! sits behind (`--port-limit`) and the link each TCP leg crosses (`--link`).
//! Parsed and checked here, before any server starts; pure (no I/O).

use std::collections::BTreeMap;

use anyhow::{bail, Result};

use crate::results::line_rate::Link;

/// A leg of the protocol lab: one path from lunmark to a RAM target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LegKind {
    Mem,
    File,
    NbdUnix,
    NbdTcp,
    Iscsi,
}

impl LegKind {
    /// Every leg, in the order the lab runs them.
    pub const ALL: [LegKind; 5] = [LegKind::Mem, LegKind::File, LegKind::NbdUnix, LegKind::NbdTcp, LegKind::Iscsi];

    /// The leg's name in `--legs` and `--link LEG=LINK`.
    pub fn name(self) -> &'static str {
        match self {
            LegKind::Mem => "mem",
            LegKind::File => "file",
            LegKind::NbdUnix => "nbd-unix",
            LegKind::NbdTcp => "nbd-tcp",
            LegKind::Iscsi => "iscsi",
        }
    }

    /// A TCP leg: the one kind a shaped link can carry.
    pub fn tcp(self) -> bool {
        matches!(self, LegKind::NbdTcp | LegKind::Iscsi)
    }

    /// An NBD leg: served by nbdkit, whose filters build a port limit.
    pub fn nbd(self) -> bool {
        matches!(self, LegKind::NbdUnix | LegKind::NbdTcp)
    }

    fn parse(flag: &str, given: &str, name: &str) -> Result<LegKind> {
        let name = name.trim();
        match LegKind::ALL.iter().find(|k| k.name() == name) {
            Some(k) => Ok(*k),
            None => bail!("{flag} {given}: '{name}' is not a leg; the legs are {}", names(&LegKind::ALL)),
        }
    }
}

fn names(kinds: &[LegKind]) -> String {
    kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ")
}

/// `--legs LIST`: the legs to run, in the lab's order, each once (None: all).
pub fn parse_legs(text: Option<&str>) -> Result<Vec<LegKind>> {
    let Some(text) = text else { return Ok(LegKind::ALL.to_vec()) };
    let mut legs = Vec::new();
    for name in text.split(',') {
        let k = LegKind::parse("--legs", text, name)?;
        if legs.contains(&k) {
            bail!("--legs {text}: '{}' is given twice", k.name());
        }
        legs.push(k);
    }
    legs.sort();
    Ok(legs)
}

/// `--port-limit`: what each target of an NBD leg is held to, as a port is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PortLimit {
    /// The target serves one I/O at a time, each taking at least this many ms.
    ServiceMs(u64),
    /// The target serves one I/O at a time, at most this many a second.
    Iops(u64),
    /// The target moves at most this many bits a second each way.
    BitsPerSecond(u64),
}

/// What `--port-limit` accepts, for its errors.
const PORT_LIMITS: &str =
    "a service time in whole ms (1ms), an IOPS cap of 1000/k (1000iops, 500iops, 250iops, ...) or a byte rate each way (100MB/s, 800mbit)";

impl PortLimit {
    pub fn parse(text: &str) -> Result<PortLimit> {
        let t = text.trim();
        if let Some(n) = t.strip_suffix("iops").or_else(|| t.strip_suffix("IOPS")) {
            let n: u64 = n
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("--port-limit {text}: '{n}' is not a whole number of IOPS; give {PORT_LIMITS}"))?;
            if n == 0 {
                bail!("--port-limit {text}: an IOPS cap must be above 0 (a port that serves nothing measures nothing); give {PORT_LIMITS}");
            }
            // nbdkit's delay filter counts whole ms: a one-at-a-time port of 1/n s each.
            if n > 1000 || 1000 % n != 0 {
                bail!(
                    "--port-limit {text}: a port serves one I/O at a time, each held by nbdkit's delay filter for whole ms, so its cap is 1000/k IOPS \
                     (1000iops, 500iops, 250iops, 200iops, ...); for a higher cap give a byte rate (5000 IOPS of 4k is 20.48MB/s)"
                );
            }
            return Ok(PortLimit::Iops(n));
        }
        let lower = t.to_ascii_lowercase();
        if lower.ends_with("/s") || lower.ends_with("bit") {
            let link: Link = t.parse().map_err(|e| anyhow::anyhow!("--port-limit {text}: {e}"))?;
            let bits = link.bits_per_second();
            if bits < 8_000 {
                bail!("--port-limit {text}: a byte rate of at least 1KB/s (8kbit)");
            }
            return Ok(PortLimit::BitsPerSecond(bits));
        }
        match super::cache::delay_ms(t) {
            Ok(0) => bail!("--port-limit {text}: a service time of 0ms limits nothing; give {PORT_LIMITS}"),
            Ok(ms) => Ok(PortLimit::ServiceMs(ms)),
            Err(_) => bail!("--port-limit {text}: give {PORT_LIMITS}"),
        }
    }

    /// nbdkit's filters and their parameters for this limit: (filters, params).
    pub fn nbdkit_args(self) -> (Vec<String>, Vec<String>) {
        // One I/O at a time across all connections (noparallel), held by the
        // delay filter behind it: a port's service time, which N ports divide.
        let serial = |ms: u64| {
            (
                vec!["--filter=noparallel".into(), "--filter=delay".into()],
                vec!["serialize=all-requests".into(), format!("rdelay={ms}ms"), format!("wdelay={ms}ms")],
            )
        };
        match self {
            PortLimit::ServiceMs(ms) => serial(ms),
            PortLimit::Iops(n) => serial(1000 / n),
            // The bucket starts full; a short one (0.1 s of the rate) keeps a
            // short run from measuring the burst instead of the rate.
            PortLimit::BitsPerSecond(bits) => (vec!["--filter=rate".into()], vec![format!("rate={bits}"), "burstiness=0.1".into()]),
        }
    }

    /// For the lab's output: "one I/O at a time, 1 ms each (at most 1000 IOPS)".
    pub fn describe(self) -> String {
        match self {
            PortLimit::ServiceMs(ms) => format!("one I/O at a time, {ms} ms each (at most {:.0} IOPS)", 1000.0 / ms as f64),
            PortLimit::Iops(n) => format!("one I/O at a time, {} ms each (at most {n} IOPS)", 1000 / n),
            PortLimit::BitsPerSecond(bits) => {
                format!("{} MB/s each way (nbdkit rate filter)", crate::results::line_rate::fmt_mbps(bits as f64 / 8e6))
            }
        }
    }
}

/// Refuses a port limit on a leg that cannot hold one, naming what can.
pub fn check_port_limit(legs: &[LegKind], limit: Option<&str>) -> Result<Option<PortLimit>> {
    let Some(text) = limit else { return Ok(None) };
    let limit = PortLimit::parse(text)?;
    let unlimited: Vec<LegKind> = legs.iter().copied().filter(|k| !k.nbd()).collect();
    if !unlimited.is_empty() {
        bail!(
            "--port-limit {text}: the limit is built from nbdkit's filters (noparallel + delay, rate), and legs {} have none \
             (mem: and the file have no server; tgtd has no per-LUN delay or rate limit): give --legs nbd-unix,nbd-tcp, \
             or shape the iSCSI leg's link with --link iscsi=RATE",
            names(&unlimited)
        );
    }
    Ok(Some(limit))
}

/// `--link`: the link each TCP leg crosses. `--link RATE` gives every TCP leg
/// the same one; `--link LEG=LINK[,LEG=LINK...]` one per leg; both together:
/// RATE for the TCP legs not named.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LegLinks {
    pub per_leg: BTreeMap<LegKind, Link>,
}

impl LegLinks {
    pub fn parse(values: &[String], legs: &[LegKind]) -> Result<LegLinks> {
        let mut all: Option<Link> = None;
        let mut per_leg = BTreeMap::new();
        for value in values {
            if value.contains('@') {
                bail!(
                    "--link {value}: lab protocols names a leg's link as LEG=LINK (--link iscsi=10gbe,nbd-tcp=8gfc), not LINK@TARGET, or gives one --link RATE for its TCP legs"
                );
            }
            if !value.contains('=') {
                if all.is_some() {
                    bail!("--link {value}: the lab already has a link for its TCP legs; name other legs' links as LEG=LINK");
                }
                all = Some(value.parse().map_err(|e| anyhow::anyhow!("--link: {e}"))?);
                continue;
            }
            for part in value.split(',') {
                let Some((leg, link)) = part.split_once('=') else {
                    bail!("--link {value}: '{part}' is not LEG=LINK (for example iscsi=10gbe)");
                };
                let kind = LegKind::parse("--link", value, leg)?;
                if !kind.tcp() {
                    bail!(
                        "--link {value}: the {} leg crosses no network, so no link; the legs a link can carry are nbd-tcp and iscsi",
                        kind.name()
                    );
                }
                if !legs.contains(&kind) {
                    bail!("--link {value}: the {} leg does not run (--legs {}); add it or drop its link", kind.name(), names(legs));
                }
                let link: Link = link.parse().map_err(|e| anyhow::anyhow!("--link {part}: {e}"))?;
                if per_leg.insert(kind, link).is_some() {
                    bail!("--link {value}: the {} leg is given two links", kind.name());
                }
            }
        }
        if let Some(link) = all {
            for k in legs.iter().filter(|k| k.tcp()) {
                per_leg.entry(*k).or_insert_with(|| link.clone());
            }
        }
        if !values.is_empty() && per_leg.is_empty() {
            bail!(
                "--link {}: none of the legs that run ({}) is a TCP leg (nbd-tcp, iscsi), so no link is crossed",
                values.join(" "),
                names(legs)
            );
        }
        Ok(LegLinks { per_leg })
    }

    pub fn of(&self, leg: LegKind) -> Option<&Link> {
        self.per_leg.get(&leg)
    }
}

/// The number of targets of every leg: `--targets N`, or the largest count of
/// a `--sweep targets=...`, or 1; a sweep beyond N is refused.
pub fn target_count(targets: Option<u32>, sweeps: &[String]) -> Result<u32> {
    let mut most = 0u32;
    for s in sweeps.iter().filter(|s| s.trim_start().starts_with("targets=")) {
        let sweep = crate::workload::sweep::parse(s)?;
        for v in &sweep.values {
            if let crate::workload::sweep::SweepValue::Count(n) = v {
                most = most.max(*n);
            }
        }
    }
    match targets {
        Some(0) => bail!("--targets 0: every leg needs at least 1 target"),
        Some(n) if n > 64 => bail!("--targets {n}: at most 64 targets a leg (each is a server or a LUN of its own)"),
        Some(n) if most > n => {
            bail!("--sweep targets=...{most}: each leg has --targets {n}; give --targets {most} or sweep to {n} at most")
        }
        Some(n) => Ok(n),
        None if most > 64 => bail!("--sweep targets=...{most}: at most 64 targets a leg"),
        None => Ok(most.max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legs_are_named_or_refused_with_the_list() {
        assert_eq!(parse_legs(Some("iscsi,nbd-unix")).unwrap(), vec![LegKind::NbdUnix, LegKind::Iscsi]);
        assert_eq!(parse_legs(None).unwrap().len(), 5);
        let e = parse_legs(Some("nbd-unix,fc")).unwrap_err().to_string();
        assert_eq!(e, "--legs nbd-unix,fc: 'fc' is not a leg; the legs are mem, file, nbd-unix, nbd-tcp, iscsi");
        assert!(parse_legs(Some("mem,mem")).unwrap_err().to_string().contains("given twice"));
    }

    #[test]
    fn port_limits_become_nbdkit_filters_or_are_refused() {
        assert_eq!(PortLimit::parse("2ms").unwrap(), PortLimit::ServiceMs(2));
        assert_eq!(PortLimit::parse("500iops").unwrap().nbdkit_args().1[1], "rdelay=2ms");
        assert_eq!(PortLimit::parse("100MB/s").unwrap(), PortLimit::BitsPerSecond(800_000_000));
        let e = PortLimit::parse("5000iops").unwrap_err().to_string();
        assert!(e.contains("1000/k IOPS") && e.contains("20.48MB/s"), "{e}");
        assert!(PortLimit::parse("banana").unwrap_err().to_string().contains("--port-limit banana: give a service time"));
        let e = check_port_limit(&[LegKind::NbdTcp, LegKind::Iscsi], Some("1ms")).unwrap_err().to_string();
        assert!(e.contains("legs iscsi have none") && e.contains("--legs nbd-unix,nbd-tcp"), "{e}");
    }

    #[test]
    fn links_are_given_per_leg_or_once_for_the_tcp_legs() {
        let legs = LegKind::ALL;
        let l = LegLinks::parse(&["iscsi=10gbe,nbd-tcp=8gfc".into()], &legs).unwrap();
        assert_eq!(l.of(LegKind::Iscsi).unwrap().name, "10gbe");
        assert_eq!(l.of(LegKind::NbdTcp).unwrap().name, "8gfc");
        let l = LegLinks::parse(&["1gbe".into(), "iscsi=10gbe".into()], &legs).unwrap();
        assert_eq!((l.of(LegKind::NbdTcp).unwrap().name.as_str(), l.of(LegKind::Iscsi).unwrap().name.as_str()), ("1gbe", "10gbe"));
        assert!(LegLinks::parse(&["nbd-unix=1gbe".into()], &legs).unwrap_err().to_string().contains("crosses no network"));
        assert!(LegLinks::parse(&["fc=1gbe".into()], &legs).unwrap_err().to_string().contains("'fc' is not a leg"));
        assert!(LegLinks::parse(&["1gbe".into()], &[LegKind::Mem]).is_err());
    }

    #[test]
    fn the_target_count_follows_a_targets_sweep() {
        assert_eq!(target_count(None, &["targets=1,2,4".into()]).unwrap(), 4);
        assert_eq!(target_count(Some(3), &[]).unwrap(), 3);
        assert!(target_count(Some(2), &["targets=1,4".into()]).unwrap_err().to_string().contains("--targets 4"));
    }
}
