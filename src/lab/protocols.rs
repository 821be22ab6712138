//! `lunmark lab protocols`: the papers' protocol comparison on one host. RAM
//! targets reached through each path — lunmark alone (mem:), the local kernel
//! (a file in /dev/shm), NBD over a unix socket and over TCP on 127.0.0.1
//! (nbdkit memory), iSCSI over TCP on 127.0.0.1 (tgtd, its LUN a file in
//! /dev/shm) — run the same workload, each saved with a label, and the
//! comparison is printed: what each protocol costs in IOPS, latency and CPU.
//!
//! With `--link RATE` the two TCP servers run in a network namespace behind a
//! veth pair shaped to that rate each way (`link.rs`), and their legs report
//! their share of it: the line-rate check of a real shaped link. `--link
//! LEG=LINK` gives a leg a link of its own (a namespace each).
//!
//! `--legs` chooses the legs, `--targets N` gives each N targets (N servers,
//! a port each, for NBD; N LUNs of one tgtd for iSCSI), and `--port-limit`
//! holds each NBD target to a port's limit (nbdkit's filters), so that a
//! `--sweep targets=1,2` shows how ports scale (`topology.rs`).

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use super::link::ShapedLink;
use super::topology::{LegKind, LegLinks, PortLimit};
use super::{servers, Measure};
use crate::results::line_rate::{Link, LinkSetting};
use crate::results::model::RunResult;
use crate::run::request::RunRequest;
use crate::run::RunObserver;
use crate::targets::Target;

/// What the lab's flags ask of its legs (`lab::topology` parses them).
#[derive(Clone, Debug)]
pub struct Topology {
    pub legs: Vec<LegKind>,
    /// Targets of every leg (servers or LUNs); a `--sweep targets=...` runs the first K.
    pub targets: u32,
    /// A `--sweep targets=...` was given: each row runs its own count, so no leg label names one.
    pub targets_swept: bool,
    pub port_limit: Option<PortLimit>,
    pub links: LegLinks,
    /// The CPUs the servers run on, apart from lunmark's (empty: anywhere).
    pub server_cpus: Vec<usize>,
    /// The line that says where lunmark and the servers run.
    pub cpus_note: String,
}

impl Topology {
    /// The target count a leg's label names: under a targets sweep each row's
    /// sweep value says its count, and the leg's full count would mislabel the smaller rows.
    pub fn label_count(&self) -> u32 {
        if self.targets_swept {
            1
        } else {
            self.targets
        }
    }
}

/// A target of the study: its label and URIs, or why it was skipped.
pub struct Leg {
    pub kind: LegKind,
    pub label: String,
    pub targets: Result<Vec<String>, String>,
}

/// The shaped links of `--link`: one a distinct link, shared by the legs that name the same one.
#[derive(Default)]
pub struct ShapedLinks {
    made: Vec<ShapedLink>,
    of_leg: BTreeMap<LegKind, usize>,
}

impl ShapedLinks {
    pub fn of(&self, leg: LegKind) -> Option<&ShapedLink> {
        self.of_leg.get(&leg).map(|i| &self.made[*i])
    }

    /// For the lab's output: each link, and the legs that cross it (None: no link).
    pub fn describe(&self) -> Option<String> {
        let lines: Vec<String> = self
            .made
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let legs: Vec<&str> = self.of_leg.iter().filter(|(_, j)| **j == i).map(|(k, _)| k.name()).collect();
                format!("{}: {}", legs.join(" and "), l.describe())
            })
            .collect();
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

/// Creates the links of `--link`, before any server starts; removed when dropped.
pub fn shaped_links(topology: &Topology) -> Result<ShapedLinks> {
    let mut out = ShapedLinks::default();
    for (leg, link) in &topology.links.per_leg {
        let i = match out.made.iter().position(|l| &l.link == link) {
            Some(i) => i,
            None => {
                let tag = if out.made.is_empty() { String::new() } else { (out.made.len() + 1).to_string() };
                out.made.push(ShapedLink::create_tagged(link, &tag)?);
                out.made.len() - 1
            }
        };
        out.of_leg.insert(*leg, i);
    }
    Ok(out)
}

/// The request of one leg: its targets, the lab's size, its label; only a
/// TCP leg with a link has one.
fn leg_request(request: &RunRequest, targets: &[String], size: &str, label: &str, link: Option<&Link>) -> Result<RunRequest> {
    let targets = targets.iter().map(|t| Target::parse(t)).collect::<Result<Vec<_>, _>>()?;
    let mut r = request.on(targets).sized(crate::units::parse_size(size).context("--lun-size")?);
    r.context.label = Some(format!("{}lab protocols: {label}", request.label_prefix()));
    r.context.link = link.map(|l| LinkSetting::Run(l.clone()));
    Ok(r)
}

/// `mem:SIZE` once per target: what the workload is checked against before any server starts.
fn mem_targets(size: &str, n: u32) -> Vec<String> {
    (0..n).map(|_| format!("mem:{size}")).collect()
}

/// Checks the workload as the first leg (mem:) runs it, its memory too, and
/// the RAM of every leg's targets, before any server starts.
pub fn check(request: &RunRequest, size: &str, topology: &Topology) -> Result<()> {
    let plan = leg_request(request, &mem_targets(size, topology.targets), size, "", None)?.plan()?;
    // The mem: leg's LUNs are --lun-size: the refusal names the flag.
    crate::run::resources::preflight(&plan, Default::default()).map_err(|e| anyhow::anyhow!("--lun-size {size}, the mem: leg: {e}"))?;
    match crate::targets::host_memory::HostMemory::read() {
        Some(m) => legs_fit(size, topology, m),
        None => Ok(()),
    }
}

/// Every leg's targets live in RAM: the mem: LUN inside lunmark while its leg
/// runs, the files in /dev/shm (tgtd's filled as the lab starts), nbdkit's
/// memory as lunmark writes it; they stay until the lab ends, so by the last
/// leg all of them are held at once.
fn legs_fit(size: &str, topology: &Topology, m: crate::targets::host_memory::HostMemory) -> Result<()> {
    let each = crate::units::parse_size(size).context("--lun-size")?.get();
    let luns = topology.legs.len() as u64 * u64::from(topology.targets);
    let need = each.saturating_mul(luns);
    if need <= m.usable() {
        return Ok(());
    }
    let human = crate::run::resources::human;
    anyhow::bail!(
        "--lun-size {size}: the lab's {} of {} each (legs {}) hold about {} of RAM by its last leg, but only {} is available \
         (MemAvailable in /proc/meminfo), of which lunmark leaves {} to the rest of the system: use a --lun-size of at most {}, \
         or fewer --legs or --targets",
        crate::units::counted(luns, "RAM target"),
        human(each),
        topology.legs.iter().map(|l| l.name()).collect::<Vec<_>>().join(", "),
        human(need),
        human(m.available),
        human(m.reserve()),
        human(m.usable() / luns.max(1)),
    )
}

/// The servers and files behind one leg: its target URIs (the servers live in `alive`).
fn start_leg(
    kind: LegKind,
    dir: &std::path::Path,
    size: &str,
    topology: &Topology,
    links: &ShapedLinks,
    alive: &mut Vec<servers::Server>,
) -> Result<Vec<String>> {
    let n = topology.targets as usize;
    let (filters, params) = topology.port_limit.map(PortLimit::nbdkit_args).unwrap_or_default();
    let listen = links.of(kind).map(ShapedLink::listen).unwrap_or_else(servers::Listen::loopback);
    // The first target keeps the name a one-target lab always gave it.
    let name = |base: &str, k: usize| if k == 0 { base.to_string() } else { format!("{base}-{}", k + 1) };
    let mut uris = Vec::new();
    match kind {
        LegKind::Mem => uris = mem_targets(size, topology.targets),
        LegKind::File => uris = (0..n).map(|k| dir.join(name("lun", k)).display().to_string()).collect(),
        LegKind::NbdUnix | LegKind::NbdTcp => {
            for k in 0..n {
                let server = match kind {
                    LegKind::NbdUnix => servers::nbdkit_unix_at(&dir.join(name("nbdkit", k) + ".sock"), size, &filters, &params)?,
                    _ => servers::nbdkit_tcp_on(&listen, size, &filters, &params)?,
                };
                uris.push(server.uri.clone());
                alive.push(server);
            }
        }
        LegKind::Iscsi => {
            let files: Vec<std::path::PathBuf> = (0..n).map(|k| dir.join(name("tgt-lun", k))).collect();
            for f in &files {
                make_filled(f, size)?;
            }
            let paths: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
            let server = servers::tgtd_luns_on(&listen, &paths, &[])?;
            uris = (1..=n).map(|lun| server.lun_uri(lun)).collect();
            alive.push(server);
        }
    }
    Ok(uris)
}

/// Runs every leg; each is announced to `observer` as it starts (a note: "== NBD unix socket").
pub fn run(
    request: &RunRequest,
    size: &str,
    topology: &Topology,
    links: &ShapedLinks,
    measure: &mut Measure,
    observer: &mut dyn RunObserver,
) -> Result<Vec<(String, Result<RunResult, String>)>> {
    let dir = servers::lab_dir()?;
    // Servers live until the end of this function, whatever happens in between.
    let mut alive = Vec::new();
    let legs: Vec<Leg> = topology
        .legs
        .iter()
        .map(|&kind| Leg {
            kind,
            label: leg_label(kind, links.of(kind).map(|l| l.link.name.as_str()), topology.label_count()),
            targets: start_leg(kind, dir.path(), size, topology, links, &mut alive).map_err(|e| format!("{e:#}")),
        })
        .collect();
    // One idle baseline for every leg, as the papers measured one: taken
    // before the first leg, with the servers up and idle.
    let note = format!("measured once, before the lab's first leg, for all {} legs", legs.len());
    let interrupt = crate::run::signals::interrupt_flag();
    let baseline = crate::run::power_meter::PowerMeter::shared_baseline(&request.context.power, &note, &interrupt, observer);
    let mut out = Vec::new();
    for leg in legs {
        let targets = match leg.targets {
            Ok(t) => t,
            Err(why) => {
                out.push((leg.label, Err(why)));
                continue;
            }
        };
        let mut r = leg_request(request, &targets, size, &leg.label, links.of(leg.kind).map(|l| &l.link))?;
        r.context.power.baseline = baseline.clone();
        let plan = r.plan()?;
        let interrupted = crate::run::signals::interrupt_flag().load(std::sync::atomic::Ordering::Relaxed);
        if interrupted {
            break;
        }
        observer.note(&format!("== {}", leg.label));
        let r = measure(&plan, &r.context).map_err(|e| format!("{e:#}"));
        out.push((leg.label, r));
    }
    drop(alive);
    Ok(out)
}

/// A leg's name, as its rows and results say it; `link` is the link a TCP leg
/// crosses (None: 127.0.0.1), `targets` how many it has.
fn leg_label(kind: LegKind, link: Option<&str>, targets: u32) -> String {
    let over = link.map(|l| format!("{l} link")).unwrap_or_else(|| "127.0.0.1".into());
    let base = match kind {
        LegKind::Mem => "mem: (lunmark alone)".into(),
        LegKind::File => "file in /dev/shm (local kernel)".into(),
        LegKind::NbdUnix => "NBD unix socket".into(),
        LegKind::NbdTcp => format!("NBD TCP {over}"),
        LegKind::Iscsi => format!("iSCSI TCP {over} (tgtd)"),
    };
    if targets > 1 {
        format!("{base}, {targets} targets")
    } else {
        base
    }
}

/// What serves a leg, for the dry run.
fn serves(kind: LegKind, size: &str, link: Option<&str>, t: &Topology) -> String {
    let over = link.map(|l| format!("{l} link")).unwrap_or_else(|| "127.0.0.1".into());
    let n = t.targets;
    let each = if n > 1 { format!("{n} x ") } else { String::new() };
    let limit = t.port_limit.filter(|_| kind.nbd()).map(|l| format!(", each {}", l.describe())).unwrap_or_default();
    match kind {
        LegKind::Mem => format!("{each}mem:{size}, inside lunmark"),
        LegKind::File => format!("{each}a {size} file in the lab's directory in /dev/shm"),
        LegKind::NbdUnix => format!("{each}nbdkit memory {size} on a unix socket of its own{limit}"),
        LegKind::NbdTcp => format!("{each}nbdkit memory {size} on {over}, a port each{limit}"),
        LegKind::Iscsi if n > 1 => format!("tgtd serving {n} LUNs, a {size} file each, on {over}"),
        LegKind::Iscsi => format!("tgtd serving a {size} file on {over}"),
    }
}

/// `lab protocols --dry-run`: the whole study, nothing started or run. The
/// workload is checked as each leg would check it (shown against `mem:`).
pub fn plan_text(request: &RunRequest, size: &str, topology: &Topology) -> Result<String> {
    // The dry run refuses what the lab would.
    check(request, size, topology)?;
    let link_of = |k: LegKind| topology.links.of(k).map(|l| l.name.as_str());
    let legs =
        topology.legs.iter().map(|&k| (leg_label(k, link_of(k), topology.label_count()), serves(k, size, link_of(k), topology))).collect();
    let links = topology
        .links
        .per_leg
        .iter()
        .map(|(k, l)| format!("the {} leg crosses a veth pair shaped to {} each way", k.name(), l.name))
        .collect();
    let plan = leg_request(request, &mem_targets(size, topology.targets), size, "", None)?.plan()?;
    let workload = super::plan_view::describe(&plan);
    let prefix = request.label_prefix();
    let json = request.json.as_ref().map(|j| j.to_string());
    Ok(crate::report::terminal::lab_plan_text::protocol_study(&crate::report::terminal::lab_plan_text::ProtocolStudyView {
        prefix: &prefix,
        size,
        legs,
        links,
        port_limit: topology.port_limit.map(PortLimit::describe),
        cpus: &topology.cpus_note,
        json: json.as_deref(),
        workload: &workload,
    }))
}

/// A file of `size` for tgtd to serve, written through like lunmark's own file
/// targets, so that no read of the iSCSI leg hits a hole either.
fn make_filled(path: &std::path::Path, size: &str) -> Result<()> {
    let bytes = crate::units::parse_size(size)?.get();
    crate::targets::fill_holes(&std::fs::File::create(path)?, bytes, 1)?;
    Ok(())
}

/// The comparison table: one row per target and point (report::terminal::lab_tables renders it).
pub fn render(rows: &[(String, Result<RunResult, String>)], links: &ShapedLinks, topology: &Topology) -> String {
    let limit = topology.port_limit.map(|l| format!("each NBD target behind its own port limit: {}", l.describe()));
    let notes: Vec<String> = links.describe().into_iter().chain(limit).chain([topology.cpus_note.clone()]).collect();
    crate::report::terminal::lab_tables::protocols(rows, links.describe().is_some(), &notes)
}

#[cfg(test)]
mod label_tests {
    use super::*;

    fn topology(targets: u32, targets_swept: bool) -> Topology {
        Topology {
            legs: vec![LegKind::NbdUnix],
            targets,
            targets_swept,
            port_limit: None,
            links: Default::default(),
            server_cpus: vec![],
            cpus_note: String::new(),
        }
    }

    #[test]
    fn a_targets_sweep_leaves_the_count_out_of_the_leg_label() {
        let swept = topology(2, true);
        assert_eq!(leg_label(LegKind::NbdUnix, None, swept.label_count()), "NBD unix socket");
        let fixed = topology(2, false);
        assert_eq!(leg_label(LegKind::NbdUnix, None, fixed.label_count()), "NBD unix socket, 2 targets");
    }
}
