//! The seconds of one point's measured interval as the workers report them.
//! A second is complete only when every worker has reported it (or ended): the
//! live view shows complete seconds only, so each line it prints is the same
//! figure the result stores for that second. Also keeps what each worker last
//! said it had in flight, for the live view's stall warning.

use std::collections::BTreeMap;
use std::time::Instant;

use super::worker::Report;
use crate::metrics::IntervalSlice;

pub struct Progress {
    slices: BTreeMap<u32, IntervalSlice>,
    /// Per worker: every second before this one is finished.
    done_below: Vec<u32>,
    /// Per worker, from its last report: I/Os in flight and when the oldest was submitted.
    in_flight: Vec<(u32, Option<Instant>)>,
    /// Seconds before this one were handed out by `complete`.
    shown_below: u32,
    /// Per worker: when its last report arrived.
    heard: Vec<Option<Instant>>,
    /// Per worker: it has ended (its outcome is in), so nothing of it is in flight.
    ended: Vec<bool>,
    /// Each worker's own slice of the seconds not yet handed out, by (second,
    /// worker), whole and per target: the per-worker and per-target lines of
    /// --live-json. Moved in, never copied.
    by_worker: BTreeMap<(u32, u32), WorkerSecond>,
}

/// One worker's share of a second: whole, and split by its targets when it
/// drives several (see `Report::targets`).
pub struct WorkerSecond {
    pub worker: u32,
    pub slice: IntervalSlice,
    pub targets: Vec<IntervalSlice>,
}

impl WorkerSecond {
    /// Adds a later report of the same second.
    fn merge(&mut self, slice: &IntervalSlice, targets: &[IntervalSlice]) {
        self.slice.merge(slice);
        if self.targets.is_empty() {
            self.targets = targets.to_vec();
        } else {
            self.targets.iter_mut().zip(targets).for_each(|(a, b)| a.merge(b));
        }
    }
}

impl Progress {
    pub fn new(workers: usize) -> Self {
        Progress {
            slices: BTreeMap::new(),
            done_below: vec![0; workers],
            in_flight: vec![(0, None); workers],
            shown_below: 0,
            heard: vec![None; workers],
            ended: vec![false; workers],
            by_worker: BTreeMap::new(),
        }
    }

    pub fn add(&mut self, r: Report) {
        let w = r.worker as usize;
        self.done_below[w] = self.done_below[w].max(r.done_below);
        // A worker's last report can arrive after its outcome: it drained since.
        if !self.ended[w] {
            self.in_flight[w] = (r.in_flight, r.oldest);
        }
        self.heard[w] = Some(Instant::now());
        self.slices.entry(r.slice.index).or_insert_with(|| IntervalSlice::new(r.slice.index)).merge(&r.slice);
        // Only seconds still to be handed out are kept per worker (a late report of an old one is in the total alone).
        if r.slice.index >= self.shown_below {
            match self.by_worker.entry((r.slice.index, r.worker)) {
                std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().merge(&r.slice, &r.targets),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(WorkerSecond { worker: r.worker, slice: r.slice, targets: r.targets });
                }
            }
        }
    }

    /// Each worker's slice of second `index` (workers that completed nothing in
    /// it have none), taken out: called once for each second `complete` handed out.
    pub fn take_workers(&mut self, index: u32) -> Vec<WorkerSecond> {
        let later = self.by_worker.split_off(&(index + 1, 0));
        let mine = std::mem::replace(&mut self.by_worker, later);
        mine.into_iter().filter(|((i, _), _)| *i == index).map(|(_, s)| s).collect()
    }

    /// A worker that ended holds back no second, and has nothing in flight
    /// (a group that starts earlier ends earlier: its last I/Os are not outstanding).
    pub fn worker_ended(&mut self, worker: u32) {
        self.done_below[worker as usize] = u32::MAX;
        self.in_flight[worker as usize] = (0, None);
        self.ended[worker as usize] = true;
    }

    /// Seconds below `limit` that every worker has finished and that were not
    /// handed out before, in order; a second in which nothing completed is an
    /// empty slice.
    pub fn complete(&mut self, limit: u32) -> Vec<IntervalSlice> {
        let below = self.done_below.iter().copied().min().unwrap_or(u32::MAX).min(limit);
        let out = (self.shown_below..below).map(|i| self.slices.get(&i).cloned().unwrap_or_else(|| IntervalSlice::new(i))).collect();
        self.shown_below = self.shown_below.max(below);
        out
    }

    /// I/Os in flight over all workers at their last reports, and the
    /// submission time of the oldest.
    pub fn in_flight(&self) -> (u64, Option<Instant>) {
        let n = self.in_flight.iter().map(|(n, _)| *n as u64).sum();
        (n, self.in_flight.iter().filter_map(|(_, o)| *o).min())
    }

    /// Workers still running that have not reported since `since` (the later of
    /// their last report and `measuring_since`): stuck in the kernel, most likely.
    pub fn silent(&self, measuring_since: Instant, since: Instant) -> usize {
        (0..self.heard.len())
            .filter(|&w| self.done_below[w] != u32::MAX && self.heard[w].map_or(measuring_since, |h| h.max(measuring_since)) < since)
            .count()
    }

    /// What one worker had in flight at its last report.
    pub fn last_in_flight(&self, worker: usize) -> (u32, Option<Instant>) {
        self.in_flight[worker]
    }

    pub fn into_slices(self) -> BTreeMap<u32, IntervalSlice> {
        self.slices
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(worker: u32, index: u32, done_below: u32, ios: u64) -> Report {
        let mut slice = IntervalSlice::new(index);
        for _ in 0..ios {
            slice.record(crate::workload::Op::Read, 4096, 1000);
        }
        Report { worker, slice, targets: Vec::new(), done_below, in_flight: 0, oldest: None }
    }

    #[test]
    fn a_second_is_complete_only_when_every_worker_reported_it() {
        let mut p = Progress::new(2);
        p.add(report(0, 0, 1, 10));
        assert!(p.complete(u32::MAX).is_empty(), "worker 1 has not reported second 0");
        p.add(report(1, 0, 1, 5));
        let c = p.complete(u32::MAX);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].ios_read, 15);
        let workers: Vec<(u32, u64)> = p.take_workers(0).into_iter().map(|w| (w.worker, w.slice.ios_read)).collect();
        assert_eq!(workers, vec![(0, 10), (1, 5)], "each worker's own share of the second");
        assert!(p.complete(u32::MAX).is_empty(), "each second is handed out once");
        // Worker 0 skipped second 1 (a long stall): it still counts as finished, empty.
        p.add(report(0, 1, 3, 0));
        p.worker_ended(1);
        let c = p.complete(2);
        assert_eq!(c.iter().map(|s| s.index).collect::<Vec<_>>(), vec![1]);
        assert_eq!(c[0].ios_read, 0);
    }
}
