//! Where a worker's I/Os come from: the seeded generator of its access
//! specification, or a recorded trace being replayed (`--replay`). One enum,
//! matched once per I/O (a predictable branch, no indirect call), so the
//! worker's loop is the same for both. A replay always issues from idle slots
//! at each record's due time (at max speed: at once), like a paced run.

use std::time::{Duration, Instant};

use super::pacing::Pacer;
use super::replay::{ReplayCursor, ReplayTally};
use crate::workload::{Generator, IoShape};

pub enum OpSource {
    Generated(Generator),
    Replayed(ReplayCursor),
}

impl OpSource {
    /// The next I/O, and the worker's target it goes to: `target` for the
    /// generator, the record's own target for a replay.
    /// `elapsed_ns` is the time since the point started (a hot band moves with it).
    #[inline]
    pub fn next(&mut self, target: u32, elapsed_ns: u64) -> (IoShape, u32) {
        match self {
            OpSource::Generated(g) => (g.next_at(target as usize, elapsed_ns), target),
            OpSource::Replayed(r) => r.take_next(),
        }
    }

    /// True when the generator's offsets move with time (a hot band); never for a replay.
    #[inline]
    pub fn moves(&self) -> bool {
        matches!(self, OpSource::Generated(g) if g.moves())
    }

    /// True when latency counts from a schedule (a rate, a replay's recorded
    /// times), so the service time from submission is kept beside it.
    pub fn scheduled(&self, pacer: &Pacer) -> bool {
        matches!(self, OpSource::Replayed(_)) || pacer.scheduled()
    }

    /// True when I/Os wait in idle slots for their due time.
    pub fn paced(&self, pacer: &Pacer) -> bool {
        matches!(self, OpSource::Replayed(_)) || pacer.paced()
    }

    /// If an I/O is due now, its due time (the schedule moves on).
    #[inline]
    pub fn take_due(&mut self, pacer: &mut Pacer, now: Instant) -> Option<Instant> {
        match self {
            OpSource::Generated(_) => pacer.take_due(now),
            OpSource::Replayed(r) => r.take_due(now),
        }
    }

    /// How long until the next I/O may be due; `idle` when none ever will be.
    pub fn wait(&self, pacer: &Pacer, now: Instant, idle: Duration) -> Duration {
        match self {
            OpSource::Generated(_) => pacer.wait(now),
            OpSource::Replayed(r) => r.wait(now, idle),
        }
    }

    /// True when a replay has issued its last record (never for the generator).
    pub fn exhausted(&self) -> bool {
        matches!(self, OpSource::Replayed(r) if r.exhausted())
    }

    /// What a replay did (None for the generator).
    pub fn tally(&self) -> Option<ReplayTally> {
        match self {
            OpSource::Generated(_) => None,
            OpSource::Replayed(r) => Some(r.tally),
        }
    }
}
