//! The knee search (`--sla EXPR`, issue 28): the most IOPS a target gives with
//! every latency bound held. What the search is asked (`SearchSpec`), how it
//! chooses the next queue depth from the steps so far (`next_qd`: doubling
//! from 1 until a bound fails, then bisection between the last pass and the
//! first fail), and what it found (`SearchOutcome`, the result's `search`).
//! Pure: the run (`run::search`) runs the points this chooses.

use super::model::Point;
pub use super::model::{SearchOutcome, SearchPoint, WorkerRange};
use super::pass::{self, Criterion};

/// The highest queue depth per worker per target a search tries: past it the
/// knee is reported as beyond (the workers multiply it, and more of them
/// usually serve a target better than a deeper queue).
pub const MAX_SEARCH_QD: u32 = 1024;

/// The most steps a queue-depth search takes: doubling from 1 to the highest
/// queue depth (11 steps to 1024) and bisecting the last doubling (9 more) fit.
/// A search of the workers adds its own worst case to it.
pub const MAX_STEPS: u32 = 20;

/// What `--sla` asks: the bounds (the `--pass` grammar), the worker counts and
/// how far the queue depth may go.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSpec {
    /// The expression as given.
    pub expr: String,
    pub criteria: Vec<Criterion>,
    /// The highest queue depth per worker per target tried (the engine's or lunmark's limit).
    pub max_qd: u32,
    pub max_steps: u32,
    /// The worker counts searched first (`--workers MIN-MAX`); min = max when the workers are fixed.
    pub workers: WorkerRange,
    /// With a worker range and `--qd`: the queue depth held at every step (only the workers are searched).
    pub fixed_qd: Option<u32>,
    /// With --tune: the group whose workers (threads) are searched, the others left as they are; None: every group's.
    pub group: Option<usize>,
    pub tune: Option<super::tuning::TuneSpec>,
}

/// A step's load: its workers and queue depth per worker per target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    pub workers: u32,
    pub qd: u32,
}

impl Load {
    /// The outstanding I/O per target: what orders the loads of a search.
    pub fn outstanding(&self) -> u64 {
        u64::from(self.workers) * u64::from(self.qd)
    }

    /// The step's name wherever it is shown (the point's label, the search's
    /// ending, the report): "workers=4 qd=2" when the workers are searched,
    /// "qd=2" when not (the workers are then the same at every step).
    pub fn label(&self, workers_searched: bool) -> String {
        if workers_searched {
            format!("workers={} qd={}", self.workers, self.qd)
        } else {
            format!("qd={}", self.qd)
        }
    }
}

impl SearchPoint {
    /// The load the step ran at.
    pub fn load(&self) -> Load {
        Load { workers: self.workers, qd: self.qd }
    }
}

/// The next value of a search over `lo..=hi`, from the steps so far as (value,
/// every bound held): doubled from `lo` until a bound fails, then bisected
/// between the last pass and the first fail. None: this search is over.
fn next_in(lo: u32, hi: u32, steps: &[(u32, bool)]) -> Option<u32> {
    let Some(&(last, _)) = steps.last() else { return Some(lo) };
    let pass = steps.iter().filter(|s| s.1).map(|s| s.0).max();
    let fail = steps.iter().filter(|s| !s.1).map(|s| s.0).min();
    match (pass, fail) {
        // Not met at the lightest load: no load meets it.
        (None, _) => None,
        (Some(p), None) if p >= hi || last >= hi => None,
        (Some(p), None) => Some(p.saturating_mul(2).min(hi)),
        // A pass above a fail (noise near the knee): the last pass below the fail bounds it.
        (Some(_), Some(f)) => {
            let lo = steps.iter().filter(|s| s.1 && s.0 < f).map(|s| s.0).max()?;
            (f - lo > 1).then_some(lo + (f - lo) / 2)
        }
    }
}

/// The worst-case number of steps of `next_in(lo, hi, ..)`: doubling to `hi`, then bisecting the last doubling.
fn worst_in(lo: u32, hi: u32) -> u32 {
    let (mut v, mut below, mut n) = (lo.max(1), lo.max(1), 1);
    while v < hi {
        below = v;
        v = v.saturating_mul(2).min(hi);
        n += 1;
    }
    // The widest gap bisected is the last doubling's: from the value below `hi` to `hi`.
    let gap = hi.saturating_sub(below);
    n + if gap > 1 { (gap - 1).ilog2() + 1 } else { 0 }
}

impl SearchSpec {
    /// The bounds of `expr`, parsed as `--pass` parses its criteria (the same
    /// errors), for a queue-depth search at `workers` fixed.
    pub fn parse(expr: &str, max_qd: u32, workers: u32) -> Result<SearchSpec, pass::PassError> {
        Ok(SearchSpec {
            expr: expr.to_string(),
            criteria: pass::parse(expr)?,
            max_qd: max_qd.max(1),
            max_steps: MAX_STEPS,
            workers: WorkerRange { min: workers, max: workers },
            fixed_qd: None,
            group: None,
            tune: None,
        })
    }

    /// True when the search grows the workers (a range of them).
    pub fn searches_workers(&self) -> bool {
        self.workers.max > self.workers.min
    }

    /// The queue depth of the workers phase: --qd's, else 1.
    fn first_qd(&self) -> u32 {
        self.fixed_qd.unwrap_or(1)
    }

    /// The load of the next step, from the steps so far as (load, every bound
    /// held); None: the search is over. The workers first, each at the first
    /// queue depth (1, or --qd); when every worker count held up to the most,
    /// the queue depth per worker at the most workers (unless --qd fixed it).
    /// Without a range of workers this is the queue-depth search alone.
    pub fn next(&self, steps: &[(Load, bool)]) -> Option<Load> {
        if steps.len() as u32 >= self.max_steps {
            return None;
        }
        let q0 = self.first_qd();
        let phase_w: Vec<(u32, bool)> = steps.iter().filter(|(l, _)| l.qd == q0).map(|(l, p)| (l.workers, *p)).collect();
        if let Some(workers) = next_in(self.workers.min, self.workers.max, &phase_w) {
            return Some(Load { workers, qd: q0 });
        }
        if self.fixed_qd.is_some() || phase_w.is_empty() || phase_w.iter().any(|s| !s.1) {
            return None;
        }
        // Every worker count held: the queue depth from the step already run at the most workers.
        let mut phase_q = vec![(q0, true)];
        phase_q.extend(steps.iter().filter(|(l, _)| l.qd != q0).map(|(l, p)| (l.qd, *p)));
        next_in(q0, self.max_qd, &phase_q).map(|qd| Load { workers: self.workers.max, qd })
    }

    /// The queue depth of the next step of a search at fixed workers (the steps as (qd, every bound held)).
    pub fn next_qd(&self, steps: &[(u32, bool)]) -> Option<u32> {
        let w = self.workers.min;
        let loads: Vec<(Load, bool)> = steps.iter().map(|&(qd, p)| (Load { workers: w, qd }, p)).collect();
        SearchSpec { workers: WorkerRange { min: w, max: w }, fixed_qd: None, ..self.clone() }.next(&loads).map(|l| l.qd)
    }

    /// The worst-case number of steps: the workers' doubling and bisection,
    /// then (unless --qd fixed it) the queue depth's from the step at the most workers.
    pub fn worst_steps(&self) -> u32 {
        let workers = worst_in(self.workers.min, self.workers.max);
        let qd = if self.fixed_qd.is_some() { 0 } else { worst_in(1, self.max_qd.max(1)) - 1 };
        (workers + qd).min(self.max_steps)
    }

    /// The most steps a search of these workers and queue depths may take (its worst case, at least MAX_STEPS).
    pub fn steps_cap(workers: WorkerRange, max_qd: u32, fixed_qd: Option<u32>) -> u32 {
        let qd = if fixed_qd.is_some() { 0 } else { worst_in(1, max_qd.max(1)) - 1 };
        (worst_in(workers.min, workers.max) + qd).max(MAX_STEPS)
    }

    /// "workers=4 qd=2" when the workers are searched, "qd=2" when not.
    pub fn label(&self, l: Load) -> String {
        l.label(self.searches_workers())
    }

    /// Why a search that tried `tried` ended, in words; `completed` false when its last step did not complete.
    pub fn ended(&self, tried: &[(Load, bool)], status: super::model::Status) -> String {
        use super::model::Status;
        let fail = tried.iter().filter(|s| !s.1).map(|s| s.0).min_by_key(Load::outstanding);
        match (status, tried.first(), fail) {
            (Status::Interrupted, ..) => "interrupted: the steps so far are kept, the knee was not reached".into(),
            (Status::Failed, ..) => "a step failed: the steps so far are kept, the knee was not reached".into(),
            (_, Some((l, false)), _) => format!("not met at the lightest load ({}): no load meets these bounds", self.label(*l)),
            // It would have gone on, but for the cap on steps.
            _ if SearchSpec { max_steps: u32::MAX, ..self.clone() }.next(tried).is_some() => {
                format!("the cap of {} steps was reached before the knee was bracketed", self.max_steps)
            }
            (_, _, None) if self.searches_workers() && self.fixed_qd.is_some() => format!(
                "every bound held up to the most workers tried ({}): the knee is beyond it",
                self.label(Load { workers: self.workers.max, qd: self.first_qd() })
            ),
            (_, _, None) if self.searches_workers() => format!(
                "every bound held up to the most workers and the highest queue depth tried ({}): the knee is beyond it",
                self.label(Load { workers: self.workers.max, qd: self.max_qd })
            ),
            (_, _, None) => format!(
                "every bound held up to the highest queue depth tried ({}): the knee is beyond it",
                self.label(Load { workers: self.workers.max, qd: self.max_qd })
            ),
            (_, _, Some(f)) if self.searches_workers() && f.qd == self.first_qd() => {
                format!("the bounds fail from {}; bisected to within one worker", self.label(f))
            }
            (_, _, Some(f)) => format!("the bounds fail from {}; bisected to within one queue depth", self.label(f)),
        }
    }
}

/// Why `c` cannot bound a knee search (None: it can). More load raises latency
/// and, up to the knee, IOPS and MB/s: a bound the search can find the most load
/// within caps what gets worse (latency, CPU) from above and what gets better
/// (IOPS, MB/s) from below; the other way round, the lightest or every load meets it.
pub fn senseless_bound(c: &Criterion) -> Option<String> {
    use super::registry::Better;
    let upper = matches!(c.cmp, pass::Cmp::Lt | pass::Cmp::Le);
    let (worse_with_load, what) = match c.measure {
        pass::Measure::Latency { .. } => (true, "latency".to_string()),
        pass::Measure::Figure(m) => (m.better == Better::Lower, m.name.to_string()),
    };
    if worse_with_load == upper {
        return None;
    }
    let (bound, why) = if upper {
        ("an upper bound", "the lightest load meets it best, so there is no most load within it")
    } else {
        ("a lower bound", "more load only helps meet it, so there is no most load within it")
    };
    Some(format!(
        "{} is {bound} on {what}: {why}. A knee bound caps latency (and CPU) from above, like lat_p99<5ms, and IOPS or MB/s from below, like iops>1000",
        c.text
    ))
}

/// True when `c` steers the search: an upper bound (on latency or CPU), which
/// more load breaks, so a step failing it is past the knee. A lower bound (on
/// IOPS or MB/s) is met by more load, so a step failing only it has too little
/// load: the search grows past it and judges it at the point found.
pub fn steers(c: &Criterion) -> bool {
    matches!(c.cmp, pass::Cmp::Lt | pass::Cmp::Le)
}

/// Refuses bounds of which none steers the search (only lower bounds on IOPS
/// or MB/s): more load always meets them better, so nothing would stop it.
pub fn needs_a_steering_bound(criteria: &[Criterion]) -> Option<String> {
    (!criteria.iter().any(steers)).then(|| "--sla needs a latency bound to stop the search; add e.g. lat_p99<5ms".to_string())
}

impl SearchSpec {
    /// True when every bound that steers the search held at `p` (the lower
    /// bounds on throughput may still fail there: the load was too little).
    pub fn steering_held(&self, p: &SearchPoint) -> bool {
        self.criteria.iter().zip(&p.bounds).all(|(c, b)| b.passed || !steers(c))
    }
}

impl SearchPoint {
    /// Judges `point` (the `index`-th of the result) at queue depth `qd` against the bounds.
    pub fn judge(spec: &SearchSpec, index: usize, point: &Point, qd: u32, workers: u32) -> SearchPoint {
        let verdict = pass::judge(&spec.criteria, &point.summary, &point.groups);
        let s = &point.summary;
        SearchPoint {
            point: index,
            qd,
            workers,
            iops: s.iops,
            mbps: s.mbps,
            p99_us: s.latency_us.all.p99,
            passed: verdict.passed,
            bounds: verdict.checks,
            unfinished: None,
        }
    }
}

/// The outcome of these steps: the best passing one, the first failing one, and why it ended.
pub fn outcome(spec: &SearchSpec, steps: Vec<SearchPoint>, ended: String) -> SearchOutcome {
    // A step that did not run to its end is shown but judges nothing.
    let finished = || steps.iter().filter(|s| s.unfinished.is_none());
    let found = finished().filter(|s| s.passed).max_by(|a, b| a.iops.total_cmp(&b.iops)).cloned();
    let load = |s: &&SearchPoint| u64::from(s.qd) * u64::from(s.workers);
    // The first step past the knee (a steering bound failed), else the first to fail any bound.
    let first_failing = finished()
        .filter(|s| !spec.steering_held(s))
        .min_by_key(load)
        .or_else(|| finished().filter(|s| !s.passed).min_by_key(load))
        .cloned();
    // Every step within the steering bounds failed a lower bound: the load the latency allows gives too little.
    let ended = match (&found, steps.first()) {
        (None, Some(first)) if spec.steering_held(first) => {
            let lower: Vec<&str> = spec.criteria.iter().filter(|c| !steers(c)).map(|c| c.text.as_str()).collect();
            format!("{ended}; no step met every bound: {} was not met at any load within the other bounds", lower.join(", "))
        }
        _ => ended,
    };
    SearchOutcome {
        expr: spec.expr.clone(),
        max_qd: spec.max_qd,
        max_steps: spec.max_steps,
        workers: spec.searches_workers().then_some(spec.workers),
        fixed_qd: spec.fixed_qd.filter(|_| spec.searches_workers()),
        tuning: None,
        found,
        first_failing,
        ended,
        steps,
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::Status;
    use super::*;

    /// Runs the search against a target whose bound holds up to `knee`.
    fn walk(spec: &SearchSpec, knee: u32) -> Vec<u32> {
        let mut steps = Vec::new();
        while let Some(qd) = spec.next_qd(&steps) {
            steps.push((qd, qd <= knee));
        }
        steps.iter().map(|s| s.0).collect()
    }

    #[test]
    fn doubles_until_a_fail_then_bisects_to_the_knee() {
        let spec = SearchSpec::parse("lat_p99<5ms", 1024, 1).unwrap();
        assert_eq!(walk(&spec, 12), vec![1, 2, 4, 8, 16, 12, 14, 13]);
        assert_eq!(walk(&spec, 1), vec![1, 2]);
        assert_eq!(walk(&spec, 0), vec![1], "unmet at qd 1: over");
        assert_eq!(walk(&spec, 5000), vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "held to the cap");
        assert!(spec.worst_steps() >= walk(&spec, 1023).len() as u32, "{} < {:?}", spec.worst_steps(), walk(&spec, 1023));
        let odd = SearchSpec::parse("iops>1", 100, 1).unwrap();
        assert_eq!(*walk(&odd, 1000).last().unwrap(), 100, "the cap is tried even when not a power of two");
        assert!(odd.worst_steps() >= walk(&odd, 99).len() as u32);
    }

    #[test]
    fn steps_are_capped_and_a_noisy_pass_above_a_fail_is_bounded() {
        let mut spec = SearchSpec::parse("lat_p99<5ms", MAX_SEARCH_QD, 1).unwrap();
        assert_eq!(spec.worst_steps(), MAX_STEPS, "the cap on steps is the worst case at the highest queue depth");
        spec.max_steps = 5;
        assert_eq!(walk(&spec, 100_000).len(), 5);
        spec.max_steps = MAX_STEPS;
        assert!(spec.worst_steps() <= MAX_STEPS);
        // 8 failed, 12 passed (noise): bisect between 4 and 8.
        assert_eq!(spec.next_qd(&[(1, true), (4, true), (8, false), (12, true)]), Some(6));
    }

    /// Runs a search against a target whose bounds hold up to `knee` outstanding I/Os.
    fn walk_loads(spec: &SearchSpec, knee: u64) -> Vec<(u32, u32)> {
        let mut steps = Vec::new();
        while let Some(l) = spec.next(&steps) {
            steps.push((l, l.outstanding() <= knee));
        }
        steps.iter().map(|(l, _)| (l.workers, l.qd)).collect()
    }

    #[test]
    fn workers_grow_first_then_the_queue_depth_at_the_most_workers() {
        let mut spec = SearchSpec::parse("lat_avg<7ms", 1024, 1).unwrap();
        spec.workers = WorkerRange { min: 1, max: 8 };
        spec.max_steps = SearchSpec::steps_cap(spec.workers, spec.max_qd, None);
        // A knee at 3 outstanding: the workers bisected at qd 1.
        assert_eq!(walk_loads(&spec, 3), vec![(1, 1), (2, 1), (4, 1), (3, 1)]);
        let tried: Vec<(Load, bool)> = [(1, true), (2, true), (4, false), (3, true)].map(|(w, p)| (Load { workers: w, qd: 1 }, p)).into();
        let ended = spec.ended(&tried, Status::Completed);
        assert_eq!(ended, "the bounds fail from workers=4 qd=1; bisected to within one worker");
        // Every worker count holds: the queue depth at 8 workers, from 2.
        assert_eq!(walk_loads(&spec, 8 * 5), vec![(1, 1), (2, 1), (4, 1), (8, 1), (8, 2), (8, 4), (8, 8), (8, 6), (8, 5)]);
        assert_eq!(walk_loads(&spec, 0), vec![(1, 1)], "unmet at the lightest load: over");
        // The worst case is counted: held to the cap of both.
        let all = walk_loads(&spec, u64::MAX);
        assert_eq!(all.last(), Some(&(8, 1024)));
        assert!(spec.worst_steps() >= all.len() as u32 && spec.worst_steps() <= spec.max_steps, "{} < {}", spec.worst_steps(), all.len());
        assert!(spec.worst_steps() as usize >= walk_loads(&spec, 8 * 1023).len());
        // --qd fixes the depth: the workers alone, at it.
        spec.fixed_qd = Some(4);
        spec.workers = WorkerRange { min: 2, max: 10 };
        assert_eq!(walk_loads(&spec, 100), vec![(2, 4), (4, 4), (8, 4), (10, 4)]);
        assert_eq!(walk_loads(&spec, 24), vec![(2, 4), (4, 4), (8, 4), (6, 4), (7, 4)]);
        assert_eq!(walk_loads(&spec, 36), vec![(2, 4), (4, 4), (8, 4), (10, 4), (9, 4)]);
        assert_eq!(spec.worst_steps(), 5, "2, 4, 8, 10 then 9");
    }

    #[test]
    fn only_bounds_that_more_load_breaks_can_bound_a_search() {
        let senseless = |e: &str| pass::parse(e).unwrap().iter().map(senseless_bound).collect::<Vec<_>>();
        assert_eq!(senseless("lat_p99<5ms,read_lat_avg<=2ms,iops>1000,mbps>=10"), vec![None, None, None, None]);
        let e = senseless("lat_p99>5ms")[0].clone().unwrap();
        assert!(e.starts_with("lat_p99>5ms is a lower bound on latency: more load only helps meet it"), "{e}");
        assert!(senseless("iops<1000")[0].as_ref().unwrap().contains("is an upper bound on IOPS"), "{:?}", senseless("iops<1000"));
    }

    /// A step of `spec` whose bounds held as `held` says (in the order of its criteria).
    fn step(qd: u32, iops: f64, held: &[bool]) -> SearchPoint {
        let bounds = held
            .iter()
            .map(|&passed| super::super::model::Check { criterion: String::new(), value: None, unit: String::new(), passed, note: None })
            .collect();
        SearchPoint { point: 0, qd, workers: 1, iops, mbps: 0.0, p99_us: 0.0, passed: held.iter().all(|&h| h), bounds, unfinished: None }
    }

    #[test]
    fn a_lower_throughput_bound_does_not_steer_and_is_judged_at_the_found_point() {
        let spec = SearchSpec::parse("lat_p99<5ms,iops>500", 1024, 1).unwrap();
        // qd 1 gives too little IOPS (the latency held): more load, not the end.
        let qd1 = step(1, 448.0, &[true, false]);
        assert!(spec.steering_held(&qd1) && !qd1.passed);
        assert_eq!(spec.next_qd(&[(1, spec.steering_held(&qd1))]), Some(2));
        let (qd2, qd4) = (step(2, 900.0, &[true, true]), step(4, 950.0, &[false, true]));
        let o = outcome(&spec, vec![qd1.clone(), qd2, qd4], "ended".into());
        assert_eq!(o.found.map(|f| f.qd), Some(2), "the found point meets every bound");
        assert_eq!(o.first_failing.map(|f| f.qd), Some(4), "the first past the knee, not the one with too little load");
        // No load within the latency bound gives the IOPS: nothing found, and said why.
        let o = outcome(&spec, vec![qd1, step(2, 460.0, &[false, false])], "ended".into());
        assert!(o.unmeetable() && o.ended.contains("iops>500 was not met at any load within the other bounds"), "{}", o.ended);
        assert!(needs_a_steering_bound(&pass::parse("iops>500,mbps>1").unwrap()).unwrap().contains("--sla needs a latency bound"));
        assert_eq!(needs_a_steering_bound(&spec.criteria), None);
    }

    #[test]
    fn bad_expressions_get_the_pass_errors() {
        let e = SearchSpec::parse("p99<5ms", 8, 1).unwrap_err().to_string();
        assert_eq!(e, pass::parse("p99<5ms").unwrap_err().to_string());
        assert!(e.contains("unknown metric 'p99'"), "{e}");
    }
}
