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

use anyhow::Result;

use super::link::ShapedLink;
use super::servers;
use crate::cli::run::{measure_and_keep, ResultStore, RunArgs};
use crate::results::line_rate::LinkSetting;
use crate::results::model::RunResult;

/// A target of the study: its label and URI, or why it was skipped.
pub struct Leg {
    pub label: String,
    pub target: Result<String, String>,
    /// A TCP leg: behind the shaped link, when there is one.
    pub tcp: bool,
}

/// The shaped link of `--link`, when one is asked for: one link for the lab's
/// TCP legs (a per-target link has no meaning here, each leg has one target).
pub fn shaped_link(args: &RunArgs) -> Result<Option<ShapedLink>> {
    match args.link_setting()? {
        None => Ok(None),
        Some(LinkSetting::Run(link)) => Ok(Some(ShapedLink::create(&link)?)),
        Some(LinkSetting::PerTarget(_)) => {
            anyhow::bail!("lab protocols puts all its TCP servers behind one link: give --link RATE without @TARGET")
        }
    }
}

pub fn run(
    args: &RunArgs,
    size: &str,
    shaped: Option<&ShapedLink>,
    store: &ResultStore,
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
        let mut a = args.clone();
        a.targets = vec![target.clone()];
        a.size = Some(size.to_string());
        a.label = Some(format!("{}lab protocols: {}", super::label_prefix(args), leg.label));
        // Only the TCP legs cross the shaped link.
        if !leg.tcp {
            a.link.clear();
        }
        let plan = a.to_plan(vec![target])?;
        let ctx = a.context()?;
        let interrupted = crate::run::signals::interrupt_flag().load(std::sync::atomic::Ordering::Relaxed);
        if interrupted {
            break;
        }
        eprintln!("== {}", leg.label);
        let r = measure_and_keep(&plan, &ctx, None, store, false).map(|k| k.result).map_err(|e| format!("{e:#}"));
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
pub fn plan_text(args: &RunArgs, size: &str) -> Result<String> {
    let link = match args.link_setting()? {
        None => None,
        Some(LinkSetting::Run(link)) => Some(link),
        Some(LinkSetting::PerTarget(_)) => {
            anyhow::bail!("lab protocols puts all its TCP servers behind one link: give --link RATE without @TARGET")
        }
    };
    let over = link.as_ref().map(|l| format!("{} link", l.name)).unwrap_or_else(|| "127.0.0.1".into());
    let serves = [
        format!("mem:{size}, inside lunmark"),
        format!("a {size} file in the lab's directory in /dev/shm"),
        format!("nbdkit memory {size} on a unix socket"),
        format!("nbdkit memory {size} on {over}"),
        format!("tgtd serving a {size} file on {over}"),
    ];
    let prefix = super::label_prefix(args);
    let mut text = String::from("lab protocols (dry run: no server started, nothing run)\n");
    text.push_str("each leg runs the workload below as a result of its own, kept in the store:\n");
    for (label, what) in leg_labels(&over).iter().zip(&serves) {
        text.push_str(&format!("  {prefix}lab protocols: {label}  <- {what}\n"));
    }
    if let Some(l) = &link {
        text.push_str(&format!("the TCP legs cross a veth pair shaped to {} each way\n", l.name));
    }
    if let Some(json) = &args.json {
        text.push_str(&format!("--json {json}: the list of the legs' results\n"));
    }
    let mut a = args.clone();
    a.label = None;
    a.link.clear();
    a.size = Some(size.to_string());
    let plan = a.to_plan(vec![format!("mem:{size}")])?;
    text.push_str(&format!("workload of each leg (shown against mem:{size}; each leg runs it on its own target and engine):\n"));
    text.push_str(&super::plan_view::describe(&plan));
    Ok(text)
}

/// A file of `size` for tgtd to serve, written through like lunmark's own file
/// targets, so that no read of the iSCSI leg hits a hole either.
fn make_filled(path: &std::path::Path, size: &str) -> Result<()> {
    let bytes = crate::units::parse_size(size)?.get();
    crate::target::fill_holes(&std::fs::File::create(path)?, bytes, 1)?;
    Ok(())
}

/// The comparison table: one row per target and point (report::lab_tables renders it).
pub fn render(rows: &[(String, Result<RunResult, String>)], shaped: Option<&ShapedLink>) -> String {
    crate::report::lab_tables::protocols(rows, shaped.map(ShapedLink::describe).as_deref())
}
