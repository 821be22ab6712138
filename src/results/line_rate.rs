//! Share of line rate (paper 003's headline, paper 002's bandwidth analysis):
//! a point's read and write MB/s over the usable rate of the link they cross,
//! per direction (reads and writes travel opposite directions, so a full-duplex
//! link carries its rate each way at once).
//!
//! A link is named (`8gfc`, `10gbe`, ...) or given as a rate (`2.5gbit`,
//! `800MB/s`). Named links use the papers' usable rate where they state one
//! (8GFC 800 MB/s, 10GbE 1,225 MB/s) and otherwise derive it the same way from
//! the signalling rate, the line encoding, the FEC where there is one, and the
//! framing share the papers' figures imply; docs/methodology.md has the table.
//! A rate is taken as the usable rate itself. Pure: no I/O.

use std::collections::BTreeMap;

pub use super::model::LineRate;
use super::model::Summary;
use crate::workload::WorkloadSpec;

/// A link's family: what framing share its usable rate keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Fibre Channel: 8GFC's 800 MB/s of 850 MB/s of data (paper 002) is 16/17.
    FibreChannel,
    /// Ethernet: 10GbE's 1,225 MB/s of 1,250 MB/s of data (paper 002) is 49/50.
    Ethernet,
}

impl Family {
    /// The share of the data rate left after framing, as a fraction (numerator, denominator).
    pub fn framing(self) -> (f64, f64) {
        match self {
            Family::FibreChannel => (16.0, 17.0),
            Family::Ethernet => (49.0, 50.0),
        }
    }
}

/// A named link and how its usable rate is derived.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamedLink {
    pub name: &'static str,
    pub family: Family,
    /// Lanes times baud per lane, 10^9 symbols per second.
    pub lanes: u32,
    pub gbaud_per_lane: f64,
    /// Line encoding: data bits per coded bits (8b/10b is (8, 10)).
    pub encoding: (f64, f64),
    pub encoding_name: &'static str,
    /// Forward error correction that takes line bits (32GFC's RS(528,514)); (1, 1) when none.
    pub fec: (f64, f64),
    /// Where the usable figure comes from.
    pub source: &'static str,
}

impl NamedLink {
    /// Data rate after encoding and FEC, 10^6 bytes per second per direction.
    pub fn data_mbps(&self) -> f64 {
        let bits = self.lanes as f64 * self.gbaud_per_lane * 1e9 * self.encoding.0 * self.fec.0 / (self.encoding.1 * self.fec.1);
        bits / 8.0 / 1e6
    }

    /// Usable rate per direction: the data rate less framing, MB/s (to 0.1 MB/s).
    pub fn usable_mbps(&self) -> f64 {
        let (n, d) = self.family.framing();
        (self.data_mbps() * n / d * 10.0).round() / 10.0
    }

    /// How the usable rate comes about, for `--dry-run`.
    pub fn derivation(&self) -> String {
        let baud = if self.lanes > 1 {
            format!("{} lanes x {} GBd", self.lanes, self.gbaud_per_lane)
        } else {
            format!("{} GBd", self.gbaud_per_lane)
        };
        let (n, d) = self.family.framing();
        let family = match self.family {
            Family::FibreChannel => "Fibre Channel",
            Family::Ethernet => "Ethernet",
        };
        let from = if self.source == "derived" { "derived".to_string() } else { format!("the figure of {}", self.source) };
        format!(
            "{baud}, {}: {} MB/s of data, {n}/{d} of it after {family} framing ({from})",
            self.encoding_name,
            fmt_mbps(self.data_mbps())
        )
    }
}

/// (lanes, GBd per lane) and the rest of a named link: the table below stays one line per link.
const fn link(
    name: &'static str,
    family: Family,
    signalling: (u32, f64),
    encoding: (f64, f64),
    encoding_name: &'static str,
    fec: (f64, f64),
    source: &'static str,
) -> NamedLink {
    NamedLink { name, family, lanes: signalling.0, gbaud_per_lane: signalling.1, encoding, encoding_name, fec, source }
}

use Family::{Ethernet, FibreChannel};

/// The named links `--link` accepts, in the order they are listed.
pub const NAMED_LINKS: &[NamedLink] = &[
    link("8gfc", FibreChannel, (1, 8.5), (8.0, 10.0), "8b/10b", (1.0, 1.0), "paper 002"),
    link("16gfc", FibreChannel, (1, 14.025), (64.0, 66.0), "64b/66b", (1.0, 1.0), "derived"),
    link("32gfc", FibreChannel, (1, 28.05), (256.0, 257.0), "256b/257b, RS(528,514) FEC", (514.0, 528.0), "derived"),
    link("1gbe", Ethernet, (1, 1.25), (8.0, 10.0), "8b/10b", (1.0, 1.0), "derived"),
    link("10gbe", Ethernet, (1, 10.3125), (64.0, 66.0), "64b/66b", (1.0, 1.0), "paper 002"),
    link("25gbe", Ethernet, (1, 25.78125), (64.0, 66.0), "64b/66b", (1.0, 1.0), "derived"),
    link("40gbe", Ethernet, (4, 10.3125), (64.0, 66.0), "64b/66b", (1.0, 1.0), "derived"),
    link("100gbe", Ethernet, (4, 25.78125), (64.0, 66.0), "64b/66b", (1.0, 1.0), "derived"),
];

/// What `--link` accepts, for error messages.
pub fn accepted() -> String {
    format!(
        "{}, or a rate: a number with kbit, mbit, gbit or tbit (bits per second, 10^3 steps, as tc writes them: 2.5gbit) \
         or with KB/s, MB/s, GB/s (10^3 steps) or KiB/s, MiB/s, GiB/s (2^10 steps) (bytes per second: 800MB/s)",
        NAMED_LINKS.iter().map(|l| l.name).collect::<Vec<_>>().join(", ")
    )
}

/// A link: its name as given (or the named link's) and its usable rate per direction.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub name: String,
    /// 10^6 bytes per second, each direction.
    pub usable_mbps: f64,
}

impl Link {
    /// The usable rate in bits per second (what `tc ... rate` takes).
    pub fn bits_per_second(&self) -> u64 {
        (self.usable_mbps * 8e6).round() as u64
    }
}

impl std::str::FromStr for Link {
    type Err = String;
    fn from_str(text: &str) -> Result<Link, String> {
        let t = text.trim();
        if let Some(l) = NAMED_LINKS.iter().find(|l| l.name.eq_ignore_ascii_case(t)) {
            return Ok(Link { name: l.name.to_string(), usable_mbps: l.usable_mbps() });
        }
        let bytes_per_s = parse_rate(t).map_err(|why| format!("'{text}' {why}: write one of {}", accepted()))?;
        Ok(Link { name: t.to_string(), usable_mbps: bytes_per_s / 1e6 })
    }
}

/// "2.5gbit" or "800MB/s" to bytes per second, or why not.
fn parse_rate(t: &str) -> Result<f64, String> {
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err("is not a link name or a rate".into());
    }
    let value: f64 = number.parse().map_err(|_| format!("has no number lunmark can read ('{number}')"))?;
    if !value.is_finite() || value <= 0.0 {
        return Err("is not a rate above zero".into());
    }
    let unit = unit.trim();
    let bits = unit.strip_suffix("/s").unwrap_or(unit).to_ascii_lowercase();
    let bit_scale = match bits.as_str() {
        "bit" => Some(1.0),
        "kbit" => Some(1e3),
        "mbit" => Some(1e6),
        "gbit" => Some(1e9),
        "tbit" => Some(1e12),
        _ => None,
    };
    if let Some(s) = bit_scale {
        return Ok(value * s / 8.0);
    }
    let byte_scale = match unit {
        "B/s" => Some(1.0),
        "KB/s" | "kB/s" => Some(1e3),
        "MB/s" => Some(1e6),
        "GB/s" => Some(1e9),
        "KiB/s" => Some(1024.0),
        "MiB/s" => Some(1024.0 * 1024.0),
        "GiB/s" => Some(1024.0 * 1024.0 * 1024.0),
        _ => None,
    };
    match byte_scale {
        Some(s) => Ok(value * s),
        None if unit.is_empty() => Err("has no unit".into()),
        // "mbps", "Gbps", "mb/s": bits or bytes? tc reads "mbps" as bytes, most people as bits.
        None => Err(format!("has a unit lunmark does not read ('{unit}'; bits or bytes must be plain)")),
    }
}

/// `--link` as given: one link for the whole run, or a link per target.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkSetting {
    /// Every I/O of the run crosses this link.
    Run(Link),
    /// The link each listed target is reached through (index into the targets, from 0).
    PerTarget(BTreeMap<usize, Link>),
}

/// The link a point's figure is computed against.
#[derive(Clone, Debug, PartialEq)]
pub struct PointLink {
    pub link: Link,
    /// The target whose link it is (per-target links only).
    pub target: Option<usize>,
}

impl LinkSetting {
    /// Parses every `--link` value: `LINK` once, or `LINK@TARGET-INDEX` once per target.
    pub fn parse(values: &[String]) -> Result<Option<LinkSetting>, String> {
        let mut run: Option<Link> = None;
        let mut per: BTreeMap<usize, Link> = BTreeMap::new();
        for v in values {
            let (link, index) = match v.rsplit_once('@') {
                Some((l, i)) => {
                    let index: usize = i.trim().parse().map_err(|_| {
                        format!(
                            "--link {v}: '{i}' is not a target index: write LINK@N, N the target's place among the -t flags counted from 0"
                        )
                    })?;
                    (l, Some(index))
                }
                None => (v.as_str(), None),
            };
            let link: Link = link.parse().map_err(|e| format!("--link: {e}"))?;
            match index {
                None if run.is_some() => {
                    return Err(format!(
                        "--link {v}: the run already has a link; give one --link for the run, or LINK@TARGET-INDEX per target"
                    ))
                }
                None => run = Some(link),
                Some(i) if per.contains_key(&i) => return Err(format!("--link {v}: target {i} already has a link")),
                Some(i) => {
                    per.insert(i, link);
                }
            }
        }
        match (run, per.is_empty()) {
            (Some(_), false) => {
                Err("--link: give one link for the whole run (--link 10gbe) or one per target (--link 10gbe@0), not both".into())
            }
            (Some(l), true) => Ok(Some(LinkSetting::Run(l))),
            (None, false) => Ok(Some(LinkSetting::PerTarget(per))),
            (None, true) => Ok(None),
        }
    }

    /// The link of each point (None: the point crosses no named link), or why
    /// the figure cannot be formed honestly. Checked before anything runs.
    pub fn resolve(&self, points: &[&WorkloadSpec]) -> Result<Vec<Option<PointLink>>, String> {
        let per = match self {
            LinkSetting::Run(l) => {
                refuse_in_process(points)?;
                return Ok(points.iter().map(|_| Some(PointLink { link: l.clone(), target: None })).collect());
            }
            LinkSetting::PerTarget(per) => per,
        };
        let targets = points.iter().map(|s| s.targets.len()).max().unwrap_or(0);
        if let Some((i, _)) = per.iter().find(|(i, _)| **i >= targets) {
            return Err(format!(
                "--link ...@{i}: the run has {}, numbered from 0 in the order of the -t flags (0 to {})",
                crate::units::counted(targets as u64, "target"),
                targets.saturating_sub(1)
            ));
        }
        let mut out = Vec::new();
        for (n, spec) in points.iter().enumerate() {
            let mut driven: Vec<usize> = spec.groups.iter().flat_map(|g| spec.group_targets(g)).collect();
            driven.sort_unstable();
            driven.dedup();
            let linked: Vec<usize> = driven.iter().copied().filter(|t| per.contains_key(t)).collect();
            match (driven.len(), linked.as_slice()) {
                (_, []) => out.push(None),
                (1, [t]) => out.push(Some(PointLink { link: per[t].clone(), target: Some(*t) })),
                _ => {
                    return Err(format!(
                        "--link per target: point {} drives targets {}, and lunmark counts bytes per point, not per target, \
                         so it cannot tell how much crossed each link. If these targets share one link, name it for the run \
                         (--link {}); otherwise run the targets apart",
                        n + 1,
                        driven.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "),
                        per[&linked[0]].name
                    ))
                }
            }
        }
        if out.iter().all(Option::is_none) {
            return Err(format!(
                "--link per target: no point drives target{} {}, so there is nothing to compute",
                if per.len() > 1 { "s" } else { "" },
                per.keys().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
            ));
        }
        refuse_in_process(points)?;
        Ok(out)
    }

    /// One line for `--dry-run`.
    pub fn describe(&self) -> String {
        let one = |l: &Link| {
            let how = NAMED_LINKS.iter().find(|n| n.name == l.name).map(|n| format!(": {}", n.derivation())).unwrap_or_default();
            format!("{} ({} MB/s per direction{how})", l.name, fmt_mbps(l.usable_mbps))
        };
        match self {
            LinkSetting::Run(l) => {
                format!("line rate: every I/O crosses {}; each point's read and write MB/s are given as a share of it", one(l))
            }
            LinkSetting::PerTarget(per) => format!(
                "line rate: {}; a point driving one of these targets alone gets its share of that target's link",
                per.iter().map(|(t, l)| format!("target {t} behind {}", one(l))).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// `--link` on a run whose every target is `mem:` or `null:`: refused.
fn refuse_in_process(points: &[&WorkloadSpec]) -> Result<(), String> {
    // mem: and null: live in lunmark's own memory: no byte of theirs crosses
    // any link, so a share of one would be a figure of nothing.
    use crate::targets::{TargetKind, TargetUri};
    let in_process = |t: &String| crate::targets::parse(t).is_ok_and(|u: TargetUri| matches!(u.kind(), TargetKind::Mem | TargetKind::Null));
    let all: Vec<&String> = points.iter().flat_map(|s| s.targets.iter()).collect();
    if !all.is_empty() && all.iter().all(|t| in_process(t)) {
        return Err(format!(
            "--link: every target of this run ({}) is in lunmark's own memory, so no I/O crosses a link and a share of \
             its line rate means nothing; drop --link, or run against a file, a device, an NBD export or an iSCSI LUN \
             reached through that link",
            all.iter().map(|t| t.as_str()).collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(())
}

/// "1,225" or "3,062.5": MB/s with thousands separators, a decimal only where there is one.
pub fn fmt_mbps(v: f64) -> String {
    let whole = v.trunc() as u64;
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let frac = ((v - v.trunc()) * 10.0).round() as u64;
    if frac == 0 {
        grouped
    } else {
        format!("{grouped}.{frac}")
    }
}

impl PointLink {
    /// The point's share of this link.
    pub fn figure(&self, s: &Summary) -> LineRate {
        line_rate(&self.link, self.target, s.read_mbps, s.write_mbps)
    }
}

pub fn line_rate(link: &Link, target: Option<usize>, read_mbps: f64, write_mbps: f64) -> LineRate {
    let share = |mbps: f64| if link.usable_mbps > 0.0 { mbps / link.usable_mbps * 100.0 } else { 0.0 };
    let (read_pct, write_pct) = (share(read_mbps), share(write_mbps));
    let over: Vec<&str> = [("read", read_pct), ("write", write_pct)].iter().filter(|(_, p)| *p > 100.0).map(|(d, _)| *d).collect();
    let note = (!over.is_empty()).then(|| {
        format!("more {} than the link carries was measured: some I/O did not cross it (a cache, a local device)", over.join(" and "))
    });
    LineRate {
        link: link.name.clone(),
        target,
        usable_mbps_per_direction: link.usable_mbps,
        read_pct,
        write_pct,
        pct: read_pct.max(write_pct),
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usable(name: &str) -> f64 {
        name.parse::<Link>().unwrap().usable_mbps
    }

    #[test]
    fn named_links_have_the_papers_figures_and_the_derived_ones() {
        // The papers' values come out of the derivation exactly.
        assert_eq!(usable("8gfc"), 800.0);
        assert_eq!(usable("10gbe"), 1225.0);
        // FC's nominal figures follow from the same framing share.
        assert_eq!(usable("16gfc"), 1600.0);
        assert_eq!(usable("32gfc"), 3200.0);
        assert_eq!(usable("1gbe"), 122.5);
        assert_eq!(usable("25gbe"), 3062.5);
        assert_eq!(usable("40gbe"), 4900.0);
        assert_eq!(usable("100gbe"), 12250.0);
        // Names are read in any case.
        assert_eq!(usable("10GbE"), 1225.0);
        assert_eq!("8GFC".parse::<Link>().unwrap().name, "8gfc");
        // Data rates before framing: the encodings' arithmetic.
        let data = |n: &str| NAMED_LINKS.iter().find(|l| l.name == n).unwrap().data_mbps();
        assert!((data("8gfc") - 850.0).abs() < 1e-9);
        assert!((data("16gfc") - 1700.0).abs() < 1e-9);
        assert!((data("32gfc") - 3400.0).abs() < 0.01);
        assert!((data("100gbe") - 12500.0).abs() < 1e-9);
        let how = NAMED_LINKS[0].derivation();
        assert_eq!(how, "8.5 GBd, 8b/10b: 850 MB/s of data, 16/17 of it after Fibre Channel framing (the figure of paper 002)");
    }

    #[test]
    fn rates_are_read_in_bits_or_bytes_per_second() {
        assert_eq!(usable("2.5gbit"), 312.5);
        assert_eq!(usable("1gbit/s"), 125.0);
        assert_eq!(usable("200mbit"), 25.0);
        assert_eq!(usable("800MB/s"), 800.0);
        assert_eq!(usable("1GB/s"), 1000.0);
        assert!((usable("100MiB/s") - 104.857_6).abs() < 1e-9);
        assert_eq!("2.5gbit".parse::<Link>().unwrap().name, "2.5gbit");
        assert_eq!("200mbit".parse::<Link>().unwrap().bits_per_second(), 200_000_000);
        assert_eq!("1gbe".parse::<Link>().unwrap().bits_per_second(), 980_000_000);
    }

    #[test]
    fn anything_else_is_refused_with_the_list() {
        for bad in ["10g", "fast", "10gbps", "100mb/s", "0gbit", "-1gbit", "gbit", "1..2gbit", "9gfc", ""] {
            let e = bad.parse::<Link>().unwrap_err();
            assert!(e.contains("8gfc, 16gfc, 32gfc, 1gbe, 10gbe, 25gbe, 40gbe, 100gbe"), "{bad}: {e}");
            assert!(e.contains("2.5gbit") && e.contains("800MB/s"), "{bad}: {e}");
        }
    }

    #[test]
    fn shares_are_each_direction_over_the_usable_rate_and_pct_is_the_busier() {
        let l: Link = "10gbe".parse().unwrap();
        let f = line_rate(&l, None, 612.5, 245.0);
        assert_eq!(f.usable_mbps_per_direction, 1225.0);
        assert!((f.read_pct - 50.0).abs() < 1e-9);
        assert!((f.write_pct - 20.0).abs() < 1e-9);
        assert_eq!(f.pct, f.read_pct);
        let w = line_rate(&"8gfc".parse().unwrap(), Some(1), 80.0, 760.0);
        assert!((w.read_pct - 10.0).abs() < 1e-9 && (w.write_pct - 95.0).abs() < 1e-9);
        assert_eq!(w.pct, w.write_pct);
        assert_eq!(w.target, Some(1));
    }

    fn spec(targets: usize, groups: &[&[usize]]) -> WorkloadSpec {
        let group = |t: &[usize]| crate::workload::WorkerGroup {
            name: "g".into(),
            workers: 1,
            qd: 1,
            targets: t.to_vec(),
            rate: None,
            follow: None,
            worker_per_target: false,
            access: vec![crate::workload::AccessLine {
                share: 100.0,
                bs: crate::units::Bytes(4096),
                read: 100.0,
                trim: 0.0,
                random: 100.0,
                align: None,
                ..Default::default()
            }],
            ..Default::default()
        };
        WorkloadSpec::plain((0..targets).map(|i| format!("/dev/shm/lun{i}")).collect(), groups.iter().map(|t| group(t)).collect())
    }

    fn setting(v: &[&str]) -> Result<Option<LinkSetting>, String> {
        LinkSetting::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn per_target_links_apply_to_points_that_drive_one_target_alone() {
        let s = setting(&["10gbe@1"]).unwrap().unwrap();
        // Point 1 drives target 0 only (no link), point 2 target 1 only.
        let (a, b) = (spec(2, &[&[0]]), spec(2, &[&[1]]));
        let links = s.resolve(&[&a, &b]).unwrap();
        assert_eq!(links[0], None);
        assert_eq!(links[1].as_ref().unwrap().target, Some(1));
        // A point over both targets cannot be split per link.
        let both = spec(2, &[&[]]);
        let e = s.resolve(&[&a, &both]).unwrap_err();
        assert!(e.contains("point 2 drives targets 0, 1") && e.contains("--link 10gbe"), "{e}");
        // Two groups on two linked targets: the same.
        let two = setting(&["8gfc@0", "8gfc@1"]).unwrap().unwrap();
        assert!(two.resolve(&[&spec(2, &[&[0], &[1]])]).is_err());
        // An index past the targets, or a link no point uses, is refused.
        assert!(setting(&["10gbe@2"]).unwrap().unwrap().resolve(&[&both]).unwrap_err().contains("0 to 1"));
        assert!(s.resolve(&[&a]).unwrap_err().contains("no point drives target 1"));
        // One link for the run covers every point.
        let run = setting(&["1gbe"]).unwrap().unwrap();
        assert!(run.resolve(&[&both, &a]).unwrap().iter().all(|l| l.as_ref().is_some_and(|l| l.target.is_none())));
    }

    #[test]
    fn link_flags_are_one_for_the_run_or_one_per_target() {
        assert_eq!(setting(&[]).unwrap(), None);
        assert!(setting(&["10gbe", "8gfc"]).unwrap_err().contains("already has a link"));
        assert!(setting(&["10gbe", "8gfc@0"]).unwrap_err().contains("not both"));
        assert!(setting(&["10gbe@0", "8gfc@0"]).unwrap_err().contains("target 0 already"));
        assert!(setting(&["10gbe@x"]).unwrap_err().contains("not a target index"));
        assert!(setting(&["10gbps@0"]).unwrap_err().contains("8gfc, 16gfc"));
    }

    #[test]
    fn mbps_are_written_with_thousands_separators() {
        assert_eq!(fmt_mbps(1225.0), "1,225");
        assert_eq!(fmt_mbps(3062.5), "3,062.5");
        assert_eq!(fmt_mbps(12250.0), "12,250");
        assert_eq!(fmt_mbps(800.0), "800");
        assert_eq!(fmt_mbps(25.0), "25");
    }
}
