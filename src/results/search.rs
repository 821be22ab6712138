//! The knee search (`--sla EXPR`, issue 28): the most IOPS a target gives with
//! every latency bound held. What the search is asked (`SearchSpec`), how it
//! chooses the next queue depth from the steps so far (`next_qd`: doubling
//! from 1 until a bound fails, then bisection between the last pass and the
//! first fail), and what it found (`SearchOutcome`, the result's `search`).
//! Pure: the run (`run::search`) runs the points this chooses.

use super::model::Point;
pub use super::model::{SearchOutcome, SearchPoint};
use super::pass::{self, Criterion};

/// The highest queue depth per worker per target a search tries: past it the
/// knee is reported as beyond (the workers multiply it, and more of them
/// usually serve a target better than a deeper queue).
pub const MAX_SEARCH_QD: u32 = 1024;

/// The most steps a search takes: doubling from 1 to the highest queue depth
/// (11 steps to 1024) and bisecting the last doubling (9 more) fit.
pub const MAX_STEPS: u32 = 20;

/// What `--sla` asks: the bounds (the `--pass` grammar), and how far the queue depth may go.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSpec {
    /// The expression as given.
    pub expr: String,
    pub criteria: Vec<Criterion>,
    /// The highest queue depth per worker per target tried (the engine's or lunmark's limit).
    pub max_qd: u32,
    pub max_steps: u32,
}

impl SearchSpec {
    /// The bounds of `expr`, parsed as `--pass` parses its criteria (the same errors).
    pub fn parse(expr: &str, max_qd: u32) -> Result<SearchSpec, pass::PassError> {
        Ok(SearchSpec { expr: expr.to_string(), criteria: pass::parse(expr)?, max_qd: max_qd.max(1), max_steps: MAX_STEPS })
    }

    /// The queue depth of the next step, from the steps so far as (qd, every bound held); None: the search is over.
    pub fn next_qd(&self, steps: &[(u32, bool)]) -> Option<u32> {
        if steps.len() as u32 >= self.max_steps {
            return None;
        }
        let Some(&(last, _)) = steps.last() else { return Some(1) };
        let pass = steps.iter().filter(|s| s.1).map(|s| s.0).max();
        let fail = steps.iter().filter(|s| !s.1).map(|s| s.0).min();
        match (pass, fail) {
            // Not met at the lightest load: no load meets it.
            (None, _) => None,
            (Some(p), None) if p >= self.max_qd || last >= self.max_qd => None,
            (Some(p), None) => Some(p.saturating_mul(2).min(self.max_qd)),
            // A pass above a fail (noise near the knee): the last pass below the fail bounds it.
            (Some(_), Some(f)) => {
                let lo = steps.iter().filter(|s| s.1 && s.0 < f).map(|s| s.0).max()?;
                (f - lo > 1).then_some(lo + (f - lo) / 2)
            }
        }
    }

    /// The worst-case number of steps: doubling to the cap, then bisecting the last doubling.
    pub fn worst_steps(&self) -> u32 {
        let cap = self.max_qd.max(1);
        if cap == 1 {
            return 1;
        }
        let doublings = (cap - 1).ilog2() + 2;
        // The widest gap bisected is the last doubling's: from the power of two below the cap to the cap.
        let gap = cap - (1 << (cap - 1).ilog2());
        let bisect = if gap > 1 { (gap - 1).ilog2() + 1 } else { 0 };
        (doublings + bisect).min(self.max_steps)
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
        }
    }
}

/// The outcome of these steps: the best passing one, the first failing one, and why it ended.
pub fn outcome(spec: &SearchSpec, steps: Vec<SearchPoint>, ended: String) -> SearchOutcome {
    let found = steps.iter().filter(|s| s.passed).max_by(|a, b| a.iops.total_cmp(&b.iops)).cloned();
    let first_failing = steps.iter().filter(|s| !s.passed).min_by_key(|s| s.qd).cloned();
    SearchOutcome { expr: spec.expr.clone(), max_qd: spec.max_qd, max_steps: spec.max_steps, found, first_failing, ended, steps }
}

#[cfg(test)]
mod tests {
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
        let spec = SearchSpec::parse("lat_p99<5ms", 1024).unwrap();
        assert_eq!(walk(&spec, 12), vec![1, 2, 4, 8, 16, 12, 14, 13]);
        assert_eq!(walk(&spec, 1), vec![1, 2]);
        assert_eq!(walk(&spec, 0), vec![1], "unmet at qd 1: over");
        assert_eq!(walk(&spec, 5000), vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "held to the cap");
        assert!(spec.worst_steps() >= walk(&spec, 1023).len() as u32, "{} < {:?}", spec.worst_steps(), walk(&spec, 1023));
        let odd = SearchSpec::parse("iops>1", 100).unwrap();
        assert_eq!(*walk(&odd, 1000).last().unwrap(), 100, "the cap is tried even when not a power of two");
        assert!(odd.worst_steps() >= walk(&odd, 99).len() as u32);
    }

    #[test]
    fn steps_are_capped_and_a_noisy_pass_above_a_fail_is_bounded() {
        let mut spec = SearchSpec::parse("lat_p99<5ms", MAX_SEARCH_QD).unwrap();
        assert_eq!(spec.worst_steps(), MAX_STEPS, "the cap on steps is the worst case at the highest queue depth");
        spec.max_steps = 5;
        assert_eq!(walk(&spec, 100_000).len(), 5);
        spec.max_steps = MAX_STEPS;
        assert!(spec.worst_steps() <= MAX_STEPS);
        // 8 failed, 12 passed (noise): bisect between 4 and 8.
        assert_eq!(spec.next_qd(&[(1, true), (4, true), (8, false), (12, true)]), Some(6));
    }

    #[test]
    fn only_bounds_that_more_load_breaks_can_bound_a_search() {
        let senseless = |e: &str| pass::parse(e).unwrap().iter().map(senseless_bound).collect::<Vec<_>>();
        assert_eq!(senseless("lat_p99<5ms,read_lat_avg<=2ms,iops>1000,mbps>=10"), vec![None, None, None, None]);
        let e = senseless("lat_p99>5ms")[0].clone().unwrap();
        assert!(e.starts_with("lat_p99>5ms is a lower bound on latency: more load only helps meet it"), "{e}");
        assert!(senseless("iops<1000")[0].as_ref().unwrap().contains("is an upper bound on IOPS"), "{:?}", senseless("iops<1000"));
    }

    #[test]
    fn bad_expressions_get_the_pass_errors() {
        let e = SearchSpec::parse("p99<5ms", 8).unwrap_err().to_string();
        assert_eq!(e, pass::parse("p99<5ms").unwrap_err().to_string());
        assert!(e.contains("unknown metric 'p99'"), "{e}");
    }
}
