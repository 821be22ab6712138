//! What `run --dry-run` (and a lab's) says of the request beyond the plan:
//! verification, the cache tier, CPU pinning, the label, where the result
//! goes, repeats, power, what an I/O error does, the safety flags, the trace
//! and the live view. With the plan, the resources and the link and output
//! lines, every flag of `run` shows in the dry run or is refused
//! (tests/it/lab_flags.rs walks them). Pure: a view of the request in, text out.

use std::path::Path;

use crate::metrics::power::PowerRequest;
use crate::results::model::Pick;
use crate::verify::VerifyOptions;
use crate::workload::cpus::{CpuPolicy, Pinning};

/// The request as the dry run states it (`cli::request_text` fills it from the run's context).
#[derive(Clone, Debug)]
pub struct RequestView<'a> {
    pub verify: Option<&'a VerifyOptions>,
    pub cache: Option<CacheView<'a>>,
    /// With --cpus: the pinning, and the workers of the first point it spreads.
    pub pinning: Option<(&'a Pinning, u32)>,
    pub label: Option<&'a str>,
    /// Where the result is kept; None with --no-store.
    pub store: Option<&'a Path>,
    /// Runs of each point (1 = no repeats), and which one a point reports.
    pub repeat: u32,
    pub pick: Pick,
    pub power: &'a PowerRequest,
    pub continue_on_error: bool,
    pub destructive: bool,
    pub force: bool,
    pub trace: Option<&'a Path>,
    pub quiet: bool,
}

/// The host-side cache tier of --cache.
#[derive(Clone, Debug)]
pub struct CacheView<'a> {
    pub size: CacheAmount,
    /// Frames in this file or device instead of RAM.
    pub dev: Option<&'a Path>,
    /// Its mode's name: writethrough, writeback or readonly.
    pub mode: String,
    pub block_bytes: u32,
}

/// How big the cache tier is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheAmount {
    Bytes(u64),
    /// A share of each target's region, %.
    Percent(f64),
}

/// The --cpus line: which CPUs the workers of a point run on.
pub fn pinning(p: &Pinning, workers: u32) -> String {
    match p.policy {
        CpuPolicy::Shared => {
            format!(
                "cpus: every worker pinned to CPU{} {} (--cpus-policy shared); buffers first touched after pinning",
                crate::units::plural(p.cpus.0.len() as u64),
                p.cpus
            )
        }
        CpuPolicy::Split => {
            let each: Vec<String> =
                (0..workers as usize).map(|i| format!("worker {i} on CPU {}", p.cpus.for_worker(p.policy, i)[0])).collect();
            format!("cpus: {} (--cpus-policy split); buffers first touched after pinning", each.join(", "))
        }
    }
}

/// The lines, each ending in a newline.
pub fn render(r: &RequestView) -> String {
    let mut out = Vec::new();
    if let Some(v) = r.verify {
        out.push("verify: every byte read is checked against what lunmark wrote (block header and CRC-32C)".into());
        if v.stop_on_mismatch {
            out.push("verify: the run ends at the first mismatch (--verify-stop)".into());
        }
        if let Some(journal) = &v.journal {
            out.push(format!("verify: every block's write generation is journaled to {}", journal.display()));
        }
    }
    if let Some(c) = &r.cache {
        let size = match c.size {
            CacheAmount::Bytes(b) => crate::units::Bytes(b).to_string(),
            CacheAmount::Percent(p) => format!("{p}% of each region"),
        };
        let place = c.dev.map(|d| d.display().to_string()).unwrap_or_else(|| "RAM".into());
        out.push(format!("cache: {size} in {place}, {}, {}-byte blocks, cold at the start of each point", c.mode, c.block_bytes));
    }
    if let Some((p, workers)) = r.pinning {
        out.push(pinning(p, workers));
    }
    if let Some(label) = r.label {
        out.push(format!("label: {label}"));
    }
    out.push(match r.store {
        Some(path) => format!("result: kept in {}", path.display()),
        None => "result: not kept in a store (--no-store)".into(),
    });
    if r.repeat > 1 {
        out.push(format!("repeats: each point {} times; the {} repeat is reported", r.repeat, format!("{:?}", r.pick).to_lowercase()));
    }
    let p = r.power;
    let source = match (&p.command, &p.log) {
        (Some(c), _) => format!("the command '{c}'"),
        (None, Some(log)) => format!("the log {}", log.display()),
        (None, None) => p.source.clone().unwrap_or_else(|| "auto (RAPL, then IPMI DCMI)".into()),
    };
    let idle = p.idle.map(|d| format!(", idle baseline {} before the run", crate::units::format_duration(d))).unwrap_or_default();
    out.push(format!("power: {source}{idle}"));
    out.push(if r.continue_on_error {
        "errors: counted by errno, the run goes on (--continue-on-error)".into()
    } else {
        "errors: the first I/O error fails the point".into()
    });
    if r.destructive {
        out.push("safety: writes to block devices allowed (--destructive)".into());
    }
    if r.force {
        out.push("safety: even to a device that is mounted or holds data (--force)".into());
    }
    if let Some(trace) = r.trace {
        out.push(format!("trace: every I/O recorded to {}", trace.display()));
    }
    if r.quiet {
        out.push("live view: off (--quiet)".into());
    }
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::check_golden;

    fn plain(power: &PowerRequest) -> RequestView<'_> {
        RequestView {
            verify: None,
            cache: None,
            pinning: None,
            label: None,
            store: None,
            repeat: 1,
            pick: Pick::Mean,
            power,
            continue_on_error: false,
            destructive: false,
            force: false,
            trace: None,
            quiet: false,
        }
    }

    #[test]
    fn a_plain_request_matches_its_snapshot() {
        let power = PowerRequest::default();
        check_golden("request-plain.txt", &render(&plain(&power)));
    }

    #[test]
    fn a_request_with_every_setting_matches_its_snapshot() {
        let power =
            PowerRequest { command: Some("cat /sys/power".into()), idle: Some(std::time::Duration::from_secs(5)), ..Default::default() };
        let verify = VerifyOptions { stop_on_mismatch: true, journal: Some("run.journal".into()) };
        let pinned = Pinning { cpus: crate::workload::cpus::CpuList(vec![0, 1]), policy: CpuPolicy::Split };
        let full = RequestView {
            verify: Some(&verify),
            cache: Some(CacheView {
                size: CacheAmount::Percent(25.0),
                dev: Some(Path::new("/dev/shm/frames")),
                mode: "writeback".into(),
                block_bytes: 4096,
            }),
            pinning: Some((&pinned, 2)),
            label: Some("nightly"),
            store: Some(Path::new("/var/lib/lunmark/results.db")),
            repeat: 3,
            pick: Pick::Best,
            continue_on_error: true,
            destructive: true,
            force: true,
            trace: Some(Path::new("io.lmtrace")),
            quiet: true,
            ..plain(&power)
        };
        check_golden("request-full.txt", &render(&full));
        let shared = Pinning { policy: CpuPolicy::Shared, ..pinned.clone() };
        let bytes = RequestView {
            cache: Some(CacheView { size: CacheAmount::Bytes(64 << 20), dev: None, mode: "writethrough".into(), block_bytes: 4096 }),
            pinning: Some((&shared, 2)),
            ..plain(&power)
        };
        let text = render(&bytes);
        assert!(text.contains("cache: 64m in RAM, writethrough") && text.contains("every worker pinned to CPUs 0-1"), "{text}");
        // One CPU is "CPU 1", not "CPUs 1".
        let one = Pinning { cpus: crate::workload::cpus::CpuList(vec![1]), policy: CpuPolicy::Shared };
        let text = render(&RequestView { pinning: Some((&one, 2)), ..plain(&power) });
        assert!(text.contains("every worker pinned to CPU 1 (--cpus-policy shared)"), "{text}");
    }
}
