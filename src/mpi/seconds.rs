//! Live telemetry of a whole MPI job (issue 29 item 5): every rank posts each
//! measured second (its counts and latency histograms, as the result stores
//! them) to rank 0 without waiting; rank 0 merges each second over the ranks
//! and tells its telemetry observers (--live-json, --metrics-listen) the
//! job's second instead of its own share. All of it runs on each rank's
//! point watch (the main thread, which also does the point's MPI
//! exchanges), never on the workers.
//!
//! Bounded waits only: rank 0 tells a second once every rank's has come, or
//! once `GRACE` has passed since it first held part of it; then the ranks
//! still missing are named in it (`ranks_missing`) and their I/O is not in
//! it. A second that comes after its own was told is counted (`late`), not
//! added. At the end of each point rank 0 waits at most `END_WAIT` for the
//! point's last seconds.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::report::WireSlice;
use crate::metrics::IntervalSlice;
use crate::results::model::Interval;
use crate::results::summarize::interval;
use crate::run::cluster::ClusterRef;
use crate::run::live::{LiveFigures, MeasuredSecond, SecondFigures};
use crate::run::RunObserver;

/// How long rank 0 holds a second for the ranks that have not sent it.
pub const GRACE: Duration = Duration::from_secs(2);

/// How long rank 0 waits at a point's end for the ranks' last seconds.
const END_WAIT: Duration = Duration::from_millis(500);

/// One rank's measured second, as posted to rank 0.
#[derive(Serialize, Deserialize)]
struct RankSecond {
    point: usize,
    /// The second's length (the last one may be partial).
    len_s: f64,
    in_flight: u64,
    slice: WireSlice,
    /// Each target's share (URI, slice).
    per_target: Vec<(String, WireSlice)>,
}

impl RankSecond {
    fn of(f: &LiveFigures<'_>, m: &MeasuredSecond) -> RankSecond {
        RankSecond {
            point: f.point,
            len_s: m.interval.duration_s,
            in_flight: m.in_flight,
            slice: WireSlice::of(&m.slice, None),
            per_target: m.per_target.iter().map(|(u, _, s)| (u.clone(), WireSlice::of(s, None))).collect(),
        }
    }
}

/// A second decoded: its length, in-flight I/O, slice, and per-target slices.
struct Share {
    len_s: f64,
    in_flight: u64,
    slice: IntervalSlice,
    per_target: Vec<(String, IntervalSlice)>,
}

/// What rank 0's own tick said of a point beyond its figures.
#[derive(Clone)]
struct Progress {
    points: usize,
    label: String,
    total: Option<Duration>,
    stall: Option<String>,
    targets: Vec<String>,
}

/// A second of the job being gathered.
struct Gathering {
    since: Instant,
    shares: BTreeMap<u32, Share>,
}

/// Rank 0's merger of the ranks' seconds.
pub struct JobSeconds {
    cluster: ClusterRef,
    ranks: u32,
    /// (point, second) -> the shares come so far.
    gathering: BTreeMap<(usize, u32), Gathering>,
    /// Each point's progress as rank 0 last told it.
    progress: BTreeMap<usize, Progress>,
    last_told: Option<(usize, u32)>,
    /// Seconds of other ranks that came after their second was told (or could not be read).
    pub late: u64,
    /// Seconds told without every rank's share.
    pub partial: u64,
}

impl JobSeconds {
    pub fn new(cluster: ClusterRef, ranks: u32) -> JobSeconds {
        JobSeconds { cluster, ranks, gathering: BTreeMap::new(), progress: BTreeMap::new(), last_told: None, late: 0, partial: 0 }
    }

    /// Rank 0's own tick: a measured second joins its gathering, the rest
    /// (the ramp, a stall) is told at once; then every second ready is told.
    pub fn tick(&mut self, f: &LiveFigures<'_>, inner: &mut dyn RunObserver) {
        let now = Instant::now();
        match f.measured {
            Some(m) => {
                let targets = m.targets.clone();
                let p = Progress { points: f.points, label: f.label.to_string(), total: f.total, stall: f.stall.clone(), targets };
                self.progress.insert(f.point, p);
                let share = Share {
                    len_s: m.interval.duration_s,
                    in_flight: m.in_flight,
                    slice: m.slice.clone(),
                    per_target: m.per_target.iter().map(|(u, _, s)| (u.clone(), s.clone())).collect(),
                };
                self.add(f.point, 0, share, now);
            }
            None => inner.tick(f),
        }
        self.take_posted(now);
        self.tell_ready(now, false, inner);
    }

    /// At a point's end (every rank has posted its seconds before the point's
    /// reduction): waits up to END_WAIT for the missing ones, then tells all.
    pub fn flush(&mut self, inner: &mut dyn RunObserver) {
        self.take_posted(Instant::now());
        let until = Instant::now() + END_WAIT;
        while self.gathering.values().any(|g| g.shares.len() < self.ranks as usize) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            self.take_posted(Instant::now());
        }
        self.tell_ready(Instant::now(), true, inner);
        // The next point (or a repeat of this one, its seconds numbered from 0 again) starts afresh.
        self.last_told = None;
    }

    fn add(&mut self, point: usize, rank: u32, share: Share, now: Instant) {
        if self.last_told.is_some_and(|t| (point, share.slice.index) <= t) {
            self.late += 1;
            return;
        }
        let g = self.gathering.entry((point, share.slice.index)).or_insert_with(|| Gathering { since: now, shares: BTreeMap::new() });
        g.shares.insert(rank, share);
    }

    /// Takes what the other ranks posted.
    fn take_posted(&mut self, now: Instant) {
        for (rank, bytes) in self.cluster.get().posted() {
            let second = serde_json::from_slice::<RankSecond>(&bytes).map_err(|e| e.to_string());
            let share = second.and_then(|s| {
                let per_target = s.per_target.into_iter().map(|(u, w)| w.decode().map(|d| (u, d))).collect::<Result<Vec<_>, _>>()?;
                Ok((s.point, Share { len_s: s.len_s, in_flight: s.in_flight, slice: s.slice.decode()?, per_target }))
            });
            match share {
                Ok((point, share)) => self.add(point, rank, share, now),
                Err(_) => self.late += 1,
            }
        }
    }

    /// Tells the gathered seconds in order: each complete one, or one held
    /// GRACE (or all, with `all`); stops at the first still waiting.
    fn tell_ready(&mut self, now: Instant, all: bool, inner: &mut dyn RunObserver) {
        while let Some((&key, g)) = self.gathering.first_key_value() {
            let complete = g.shares.len() >= self.ranks as usize;
            if !complete && !all && now.saturating_duration_since(g.since) < GRACE {
                return;
            }
            let g = self.gathering.remove(&key).expect("the first entry");
            self.last_told = Some(key);
            // A second rank 0 had no tick of (its point ended first) takes the point's progress.
            let Some(progress) = self.progress.get(&key.0).cloned() else {
                self.late += g.shares.len() as u64;
                continue;
            };
            if !complete {
                self.partial += 1;
            }
            let missing: Vec<u32> = (0..self.ranks).filter(|r| !g.shares.contains_key(r)).collect();
            let measured = MeasuredSecond { targets: progress.targets.clone(), ..merge(g.shares, missing) };
            let i = &measured.interval;
            inner.tick(&LiveFigures {
                point: key.0,
                points: progress.points,
                label: &progress.label,
                phase: "run",
                elapsed: Duration::from_secs_f64(i.t_s + i.duration_s),
                total: progress.total,
                second: Some(SecondFigures { iops: i.iops, mbps: i.mbps, p99_us: i.lat_p99_us }),
                stall: progress.stall.clone(),
                measured: Some(&measured),
            });
        }
    }
}

/// The job's second from the ranks' shares: counts summed, histograms added,
/// each rank's figures kept for --detail.
fn merge(shares: BTreeMap<u32, Share>, ranks_missing: Vec<u32>) -> MeasuredSecond {
    let index = shares.values().next().map_or(0, |s| s.slice.index);
    let mut slice = IntervalSlice::new(index);
    let mut in_flight = 0;
    let mut len_s: f64 = 0.0;
    let mut per_target: Vec<(String, Interval, IntervalSlice)> = Vec::new();
    let mut ranks = Vec::new();
    for (rank, s) in shares {
        slice.merge(&s.slice);
        in_flight += s.in_flight;
        len_s = len_s.max(s.len_s);
        ranks.push((rank, interval(&s.slice, index as f64 + s.len_s)));
        per_target.extend(s.per_target.into_iter().map(|(u, t)| (u, interval(&t, index as f64 + s.len_s), t)));
    }
    MeasuredSecond {
        interval: interval(&slice, index as f64 + len_s),
        slice,
        // Each rank's workers are its own: --detail shows each rank's figures instead.
        workers: Vec::new(),
        in_flight,
        targets: Vec::new(),
        per_target,
        ranks,
        ranks_missing,
    }
}

/// A rank other than 0: posts each measured second to rank 0, tells nothing else.
pub struct PostSeconds(pub ClusterRef);

impl RunObserver for PostSeconds {
    fn tick(&mut self, f: &LiveFigures<'_>) {
        if let Some(m) = f.measured {
            let bytes = serde_json::to_vec(&RankSecond::of(f, m)).expect("a second serializes");
            self.0.get().post_to_root(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use crate::metrics::histogram::LatencyHistogram;
    use crate::run::cluster::Cluster;

    /// Two ranks' exchange without MPI: what "rank 1" posts, rank 0's `posted` takes.
    #[derive(Default)]
    struct Wire(RefCell<Vec<(u32, Vec<u8>)>>);

    impl Cluster for Wire {
        fn post_to_root(&self, bytes: Vec<u8>) {
            self.0.borrow_mut().push((1, bytes));
        }
        fn posted(&self) -> Vec<(u32, Vec<u8>)> {
            std::mem::take(&mut *self.0.borrow_mut())
        }
    }

    /// What the stream was told: (second, IOPS, ranks missing).
    #[derive(Default)]
    struct Told(Vec<(u32, f64, Vec<u32>)>);

    impl RunObserver for Told {
        fn tick(&mut self, f: &LiveFigures<'_>) {
            if let Some(m) = f.measured {
                self.0.push((m.slice.index, m.interval.iops, m.ranks_missing.clone()));
            }
        }
    }

    /// One rank's full second `index` of `reads` reads of 100 us.
    fn second(index: u32, reads: u64) -> MeasuredSecond {
        let mut slice = IntervalSlice::new(index);
        slice.ios_read = reads;
        slice.bytes_read = reads * 4096;
        let mut h = LatencyHistogram::with_digits(2);
        (0..reads).for_each(|_| h.record(100_000));
        slice.read = Some(h);
        MeasuredSecond {
            interval: interval(&slice, index as f64 + 1.0),
            slice,
            workers: Vec::new(),
            in_flight: 1,
            targets: vec!["mem:1m".into()],
            per_target: Vec::new(),
            ranks: Vec::new(),
            ranks_missing: Vec::new(),
        }
    }

    fn tick(m: &MeasuredSecond) -> LiveFigures<'_> {
        let i = &m.interval;
        LiveFigures {
            point: 1,
            points: 1,
            label: "",
            phase: "run",
            elapsed: Duration::from_secs_f64(i.t_s + i.duration_s),
            total: None,
            second: None,
            stall: None,
            measured: Some(m),
        }
    }

    /// A second both ranks sent is told once both are in, their I/O summed; a
    /// second rank 1 never sends is held, told at GRACE naming rank 1 as
    /// missing, and rank 1's copy coming after that is counted late, not told.
    #[test]
    fn a_second_is_told_when_every_rank_s_is_in_or_at_grace_naming_the_missing() {
        let wire = Rc::new(Wire::default());
        let mut job = JobSeconds::new(ClusterRef(wire.clone()), 2);
        let mut told = Told::default();
        let (own0, own1, theirs0, theirs1) = (second(0, 100), second(1, 100), second(0, 300), second(1, 300));
        job.tick(&tick(&own0), &mut told);
        assert!(told.0.is_empty(), "rank 1's share of second 0 has not come: {:?}", told.0);
        PostSeconds(ClusterRef(wire.clone())).tick(&tick(&theirs0));
        job.tick(&tick(&own1), &mut told);
        assert_eq!(told.0.len(), 1, "{:?}", told.0);
        assert_eq!((told.0[0].0, told.0[0].1, told.0[0].2.clone()), (0, 400.0, vec![]), "both ranks' reads in second 0");
        // Second 1 waits for rank 1 until GRACE, then goes without it.
        job.tell_ready(Instant::now() + GRACE / 2, false, &mut told);
        assert_eq!(told.0.len(), 1, "held within GRACE");
        job.tell_ready(Instant::now() + GRACE, false, &mut told);
        assert_eq!((told.0[1].0, told.0[1].1, told.0[1].2.clone()), (1, 100.0, vec![1]), "rank 0's share only, rank 1 named");
        assert_eq!(job.partial, 1);
        PostSeconds(ClusterRef(wire.clone())).tick(&tick(&theirs1));
        job.flush(&mut told);
        job.flush(&mut told);
        assert_eq!(told.0.len(), 2, "a second told is never told again: {:?}", told.0);
        assert_eq!(job.late, 1, "rank 1's second 1 came after it was told");
    }
}
