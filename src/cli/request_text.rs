//! What `run --dry-run` says of the request beyond the plan, as
//! `report::terminal::request_text` renders it: this fills its view from the run's
//! context and plan.

use std::path::Path;

use crate::engine::cache::config::CacheSize;
use crate::report::terminal::request_text::{self, CacheAmount, CacheView, RequestView};
use crate::run::plan::RunPlan;
use crate::run::RunContext;

/// `store`: where the result is kept, None with --no-store.
pub fn render(ctx: &RunContext, plan: &RunPlan, store: Option<&Path>) -> String {
    let view = RequestView {
        verify: ctx.verify.as_ref(),
        cache: ctx.cache.as_ref().map(|c| CacheView {
            size: match c.size {
                CacheSize::Bytes(b) => CacheAmount::Bytes(b),
                CacheSize::Percent(p) => CacheAmount::Percent(p),
            },
            dev: c.dev.as_deref(),
            mode: c.mode.to_string(),
            block_bytes: c.block_bytes,
        }),
        pinning: ctx.pinning.as_ref().map(|p| (p, plan.points.first().map_or(1, |p| p.spec.total_workers()))),
        label: ctx.label.as_deref(),
        store,
        repeat: plan.repeat,
        pick: plan.pick,
        power: &ctx.power,
        continue_on_error: ctx.continue_on_error,
        destructive: ctx.safety.destructive,
        force: ctx.safety.force,
        trace: ctx.trace.as_deref(),
        quiet: ctx.quiet,
    };
    request_text::render(&view)
}
