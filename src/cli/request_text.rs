//! What `run --dry-run` says of the request beyond the plan: where the result
//! goes and under which label, power, what an I/O error does, the safety
//! flags, repeats, the trace and the live view. With the plan, the resources
//! and the verify, cache, link and output lines, every flag of `run` shows in
//! the dry run or is refused (tests/it/lab_flags.rs walks them). Pure: the
//! request in, text out.

use std::path::Path;

use crate::run::plan::RunPlan;
use crate::run::RunContext;

/// `store`: where the result is kept, None with --no-store.
pub fn render(ctx: &RunContext, plan: &RunPlan, store: Option<&Path>) -> String {
    let mut out = Vec::new();
    if let Some(v) = &ctx.verify {
        out.push("verify: every byte read is checked against what lunmark wrote (block header and CRC-32C)".into());
        if v.stop_on_mismatch {
            out.push("verify: the run ends at the first mismatch (--verify-stop)".into());
        }
        if let Some(journal) = &v.journal {
            out.push(format!("verify: every block's write generation is journaled to {}", journal.display()));
        }
    }
    if let Some(c) = &ctx.cache {
        let size = match c.size {
            crate::engine::cache::config::CacheSize::Bytes(b) => crate::units::Bytes(b).to_string(),
            crate::engine::cache::config::CacheSize::Percent(p) => format!("{p}% of each region"),
        };
        let place = c.dev.as_ref().map(|d| d.display().to_string()).unwrap_or_else(|| "RAM".into());
        out.push(format!("cache: {size} in {place}, {}, {}-byte blocks, cold at the start of each point", c.mode, c.block_bytes));
    }
    if let Some(p) = &ctx.pinning {
        out.push(crate::run::pinning::describe(p, plan.points.first().map_or(1, |p| p.spec.total_workers())));
    }
    if let Some(label) = &ctx.label {
        out.push(format!("label: {label}"));
    }
    out.push(match store {
        Some(path) => format!("result: kept in {}", path.display()),
        None => "result: not kept in a store (--no-store)".into(),
    });
    if plan.repeat > 1 {
        out.push(format!(
            "repeats: each point {} times; the {} repeat is reported",
            plan.repeat,
            format!("{:?}", plan.pick).to_lowercase()
        ));
    }
    let p = &ctx.power;
    let source = match (&p.command, &p.log) {
        (Some(c), _) => format!("the command '{c}'"),
        (None, Some(log)) => format!("the log {}", log.display()),
        (None, None) => p.source.clone().unwrap_or_else(|| "auto (RAPL, then IPMI DCMI)".into()),
    };
    let idle = p.idle.map(|d| format!(", idle baseline {} before the run", crate::units::format_duration(d))).unwrap_or_default();
    out.push(format!("power: {source}{idle}"));
    out.push(if ctx.continue_on_error {
        "errors: counted by errno, the run goes on (--continue-on-error)".into()
    } else {
        "errors: the first I/O error fails the point".into()
    });
    if ctx.safety.destructive {
        out.push("safety: writes to block devices allowed (--destructive)".into());
    }
    if ctx.safety.force {
        out.push("safety: even to a device that is mounted or holds data (--force)".into());
    }
    if let Some(trace) = &ctx.trace {
        out.push(format!("trace: every I/O recorded to {}", trace.display()));
    }
    if ctx.quiet {
        out.push("live view: off (--quiet)".into());
    }
    out.join("\n") + "\n"
}
