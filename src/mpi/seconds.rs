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
    /// Each target's share (URI, slice), when the rank can tell it.
    per_target: Option<Vec<(String, WireSlice)>>,
}

impl RankSecond {
    fn of(f: &LiveFigures<'_>, m: &MeasuredSecond) -> RankSecond {
        RankSecond {
            point: f.point,
            len_s: m.interval.duration_s,
            in_flight: m.in_flight,
            slice: WireSlice::of(&m.slice, None),
            per_target: m.per_target.as_ref().map(|t| t.iter().map(|(u, _, s)| (u.clone(), WireSlice::of(s, None))).collect()),
        }
    }
}

/// A second decoded: its length, in-flight I/O, slice, and per-target slices.
struct Share {
    len_s: f64,
    in_flight: u64,
    slice: IntervalSlice,
    per_target: Option<Vec<(String, IntervalSlice)>>,
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
                    per_target: m.per_target.as_ref().map(|t| t.iter().map(|(u, _, s)| (u.clone(), s.clone())).collect()),
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
        let until = Instant::now() + END_WAIT;
        while self.gathering.values().any(|g| g.shares.len() < self.ranks as usize) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
            self.take_posted(Instant::now());
        }
        self.tell_ready(Instant::now(), true, inner);
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
                let per_target = s
                    .per_target
                    .map(|t| t.into_iter().map(|(u, w)| w.decode().map(|d| (u, d))).collect::<Result<Vec<_>, _>>())
                    .transpose()?;
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
    let mut per_target: Option<Vec<(String, Interval, IntervalSlice)>> = Some(Vec::new());
    let mut ranks = Vec::new();
    for (rank, s) in shares {
        slice.merge(&s.slice);
        in_flight += s.in_flight;
        len_s = len_s.max(s.len_s);
        ranks.push((rank, interval(&s.slice, index as f64 + s.len_s)));
        match (per_target.as_mut(), s.per_target) {
            (Some(all), Some(mine)) => all.extend(mine.into_iter().map(|(u, t)| (u, interval(&t, index as f64 + s.len_s), t))),
            _ => per_target = None,
        }
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
