//! `lunmark lab protocols`: the papers' protocol comparison on one host. RAM
//! targets reached through each path — lunmark alone (mem:), the local kernel
//! (a file in /dev/shm), NBD over a unix socket and over TCP on 127.0.0.1
//! (nbdkit memory), iSCSI over TCP on 127.0.0.1 (tgtd, its LUN a file in
//! /dev/shm) — run the same workload, each saved with a label, and the
//! comparison is printed: what each protocol costs in IOPS, latency and CPU.
//!
//! With `--link RATE` the two TCP servers run in a network namespace behind a
//! veth pair shaped to that rate each way (`link.rs`), and their legs report
//! their share of it: the line-rate check of a real shaped link.

use anyhow::{Context, Result};

use super::link::ShapedLink;
use super::{servers, Measure};
use crate::results::line_rate::{Link, LinkSetting};
use crate::results::model::RunResult;
use crate::run::request::RunRequest;
use crate::run::RunObserver;
use crate::targets::Target;

/// A target of the study: its label and URI, or why it was skipped.
pub struct Leg {
    pub label: String,
    pub target: Result<String, String>,
    /// A TCP leg: behind the shaped link, when there is one.
    pub tcp: bool,
}

/// The shaped link of `--link`, when one is asked for: one link for the lab's
/// TCP legs (a per-target link has no meaning here, each leg has one target).
pub fn shaped_link(request: &RunRequest) -> Result<Option<ShapedLink>> {
    match one_link(request)? {
        None => Ok(None),
        Some(link) => Ok(Some(ShapedLink::create(link)?)),
    }
}

/// The one link of `--link RATE` (None without it); a link per target is refused.
fn one_link(request: &RunRequest) -> Result<Option<&Link>> {
    match &request.context.link {
        None => Ok(None),
        Some(LinkSetting::Run(link)) => Ok(Some(link)),
        Some(LinkSetting::PerTarget(_)) => {
            anyhow::bail!("lab protocols puts all its TCP servers behind one link: give --link RATE without @TARGET")
        }
    }
}

/// The request of one leg: its target, the lab's size, its label; only the
/// TCP legs cross the shaped link.
fn leg_request(request: &RunRequest, target: &str, size: &str, label: &str, tcp: bool) -> Result<RunRequest> {
    let mut r = request.on(vec![Target::parse(target)?]).sized(crate::units::parse_size(size).context("--lun-size")?);
    r.context.label = Some(format!("{}lab protocols: {label}", request.label_prefix()));
    if !tcp {
        r.context.link = None;
    }
    Ok(r)
}

/// Checks the workload as the first leg (mem:) runs it, before any server starts.
pub fn check(request: &RunRequest, size: &str) -> Result<()> {
    leg_request(request, &format!("mem:{size}"), size, "", false)?.plan().map(drop)
}

/// Runs every leg; each is announced to `observer` as it starts (a note: "== NBD unix socket").
pub fn run(
    request: &RunRequest,
    size: &str,
    shaped: Option<&ShapedLink>,
    measure: &mut Measure,
    observer: &mut dyn RunObserver,
) -> Result<Vec<(String, Result<RunResult, String>)>> {
    let dir = servers::lab_dir()?;
    let file = dir.path().join("lun");
    // Servers live until the end of this function, whatever happens in between.
    let unix = servers::nbdkit_unix(dir.path(), size, &[], &[]);
    let listen = shaped.map(ShapedLink::listen).unwrap_or_else(servers::Listen::loopback);
    let tcp = servers::nbdkit_tcp_on(&listen, size, &[], &[]);
    let tgt_lun = dir.path().join("tgt-lun");
    let tgtd = make_filled(&tgt_lun, size).and_then(|_| servers::tgtd_on(&listen, &tgt_lun, &[]));
    let over = match shaped {
        Some(s) => format!("{} link", s.link.name),
        None => "127.0.0.1".into(),
    };
    let [mem_label, file_label, unix_label, tcp_label, iscsi_label] = leg_labels(&over);
    let legs = vec![
        Leg { label: mem_label, target: Ok(format!("mem:{size}")), tcp: false },
        Leg { label: file_label, target: Ok(file.display().to_string()), tcp: false },
        Leg { label: unix_label, target: unix.as_ref().map(|s| s.uri.clone()).map_err(|e| e.to_string()), tcp: false },
        Leg { label: tcp_label, target: tcp.as_ref().map(|s| s.uri.clone()).map_err(|e| e.to_string()), tcp: true },
        Leg { label: iscsi_label, target: tgtd.as_ref().map(|s| s.uri.clone()).map_err(|e| e.to_string()), tcp: true },
    ];
    let mut out = Vec::new();
    for leg in legs {
        let target = match leg.target {
            Ok(t) => t,
            Err(why) => {
                out.push((leg.label, Err(why)));
                continue;
            }
        };
        let r = leg_request(request, &target, size, &leg.label, leg.tcp)?;
        let plan = r.plan()?;
        let interrupted = crate::run::signals::interrupt_flag().load(std::sync::atomic::Ordering::Relaxed);
        if interrupted {
            break;
        }
        observer.note(&format!("== {}", leg.label));
        let r = measure(&plan, &r.context).map_err(|e| format!("{e:#}"));
        out.push((leg.label, r));
    }
    drop(unix);
    drop(tcp);
    drop(tgtd);
    Ok(out)
}

/// The legs' names, in the order they run; `over` is what the TCP legs cross.
fn leg_labels(over: &str) -> [String; 5] {
    [
        "mem: (lunmark alone)".into(),
        "file in /dev/shm (local kernel)".into(),
        "NBD unix socket".into(),
        format!("NBD TCP {over}"),
        format!("iSCSI TCP {over} (tgtd)"),
    ]
}

/// `lab protocols --dry-run`: the whole study, nothing started or run. The
/// workload is checked as each leg would check it (shown against `mem:`).
pub fn plan_text(request: &RunRequest, size: &str) -> Result<String> {
    let link = one_link(request)?;
    let over = link.as_ref().map(|l| format!("{} link", l.name)).unwrap_or_else(|| "127.0.0.1".into());
    let serves = [
        format!("mem:{size}, inside lunmark"),
        format!("a {size} file in the lab's directory in /dev/shm"),
        format!("nbdkit memory {size} on a unix socket"),
        format!("nbdkit memory {size} on {over}"),
        format!("tgtd serving a {size} file on {over}"),
    ];
    let plan = leg_request(request, &format!("mem:{size}"), size, "", false)?.plan()?;
    let workload = super::plan_view::describe(&plan);
    let prefix = request.label_prefix();
    let json = request.json.as_ref().map(|j| j.to_string());
    Ok(crate::report::lab_plan_text::protocol_study(&crate::report::lab_plan_text::ProtocolStudyView {
        prefix: &prefix,
        size,
        legs: leg_labels(&over).into_iter().zip(serves).collect(),
        link: link.as_ref().map(|l| l.name.as_str()),
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

/// The comparison table: one row per target and point (report::lab_tables renders it).
pub fn render(rows: &[(String, Result<RunResult, String>)], shaped: Option<&ShapedLink>) -> String {
    crate::report::lab_tables::protocols(rows, shaped.map(ShapedLink::describe).as_deref())
}
