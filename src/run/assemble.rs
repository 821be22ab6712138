//! What the run adds to a point's outcome once its workers are done, in one
//! ordered list: the figures kept for a cluster before its reduction, the
//! reduction (under MPI every rank's figures are merged into rank 0's), a
//! write-back cache's lost blocks, the share of line rate and the cache's
//! description. The point's own figures (summary, per worker and target,
//! depth, steady state, pinned CPU, replay, cut short) come from
//! `point::run_point`; power from the session's meter, sampled around it.

use std::sync::Arc;

use super::observer::RunObserver;
use super::point::{Measured, PointOutcome};
use super::session::Session;
use crate::engine::cache::config::CacheConfig;
use crate::engine::cache::TargetCache;
use crate::results::model::{RunResult, Status};
use crate::targets::OpenTarget;

/// What the point's targets bring to its result, taken before they move into the workers.
pub struct Added {
    /// The first target's region, for the cache's description.
    region_bytes: u64,
    /// Each target's cache tier, for the blocks it never wrote back.
    caches: Vec<Arc<TargetCache>>,
}

impl Added {
    pub fn of(targets: &[OpenTarget]) -> Added {
        Added {
            region_bytes: targets.first().map(|t| t.region.len).unwrap_or(0),
            caches: targets.iter().filter_map(|t| t.cache.as_ref().map(|(c, _)| c.clone())).collect(),
        }
    }
}

/// Completes point `index`'s outcome (`result` holds the points before it).
pub fn finish(
    session: &Session,
    index: usize,
    result: &RunResult,
    outcome: &mut PointOutcome,
    added: &Added,
    observer: &mut dyn RunObserver,
) {
    let cluster = session.cluster();
    super::cluster::keep_before_reduction(cluster, outcome, index, result, observer);
    cluster.reduce_point(index, outcome);
    // The raw figures served the reduction: freed here rather than kept through the repeats.
    outcome.measured = Measured::default();
    if let Some(cfg) = session.cache() {
        account_unwritten(cfg, &added.caches, outcome);
    }
    if let Some(link) = session.link(index) {
        outcome.point.summary.line_rate = Some(link.figure(&outcome.point.summary));
    }
    if let (Some(cfg), Some(c)) = (session.cache(), outcome.point.summary.cache.as_mut()) {
        crate::results::summarize::describe_cache(cfg, added.region_bytes, c);
    }
}

/// Dirty blocks a write-back cache never wrote to the target (the target went
/// away): counted in the point's cache summary, and the point fails saying how
/// much data an application would have lost.
fn account_unwritten(cfg: &CacheConfig, caches: &[Arc<TargetCache>], outcome: &mut PointOutcome) {
    let blocks: u64 = caches.iter().map(|c| c.unwritten_blocks()).sum();
    if blocks == 0 {
        return;
    }
    let summary = outcome.point.summary.cache.get_or_insert_with(Default::default);
    summary.dirty_lost_blocks = blocks;
    summary.dirty_lost_bytes = blocks * cfg.block_bytes as u64;
    let loss = summary.loss().unwrap_or_default();
    if outcome.status == Status::Completed {
        outcome.status = Status::Failed;
    }
    outcome.reason = Some(match outcome.reason.take() {
        Some(why) => format!("{why}; {loss}"),
        None => loss,
    });
}
