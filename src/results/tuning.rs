//! Jetstress-style tuning (`--tune`, issue 28): Jetstress tunes its thread
//! count to the most transactional IOPS that keeps the database's read latency
//! and the log's write latency under their targets. Here the threads are the
//! workers of the profile's transactional group (`[tune] group`), searched as
//! the knee search searches workers (`search::SearchSpec`); this works out,
//! from the steps run, the threads tuned, the transactional IOPS (that group's
//! reads and writes; the log's I/O excluded, as Jetstress excludes it) and the
//! mailboxes they support. Pure: the run (`run::search`) runs the steps.

use super::model::{Point, SearchPoint, TuningOutcome};

/// IOPS per mailbox when neither --iops-per-mailbox nor the profile sets it:
/// the top of Jetstress's usual 0.06-0.10 range per mailbox profile.
pub const DEFAULT_IOPS_PER_MAILBOX: f64 = 0.1;

/// What --tune asks: the group whose workers are the threads, and how many IOPS a mailbox needs.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSpec {
    pub group: String,
    pub iops_per_mailbox: f64,
}

/// The tuning these steps show: `threads[i]` is step i's thread count and
/// whether every bound held there; `points` the result's points; `most` the
/// most threads the tuning could try.
pub fn outcome(spec: &TuneSpec, threads: &[(u32, bool)], steps: &[SearchPoint], points: &[Point], most: u32) -> TuningOutcome {
    let first_fail = threads.iter().filter(|t| !t.1).map(|t| t.0).min();
    // The most threads that held below the fewest that failed (a pass above a fail is noise past the knee).
    let tuned = threads.iter().enumerate().filter(|(_, t)| t.1 && first_fail.is_none_or(|f| t.0 < f)).max_by_key(|(_, t)| t.0);
    let group_of = |i: usize| points.get(steps[i].point).and_then(|p| p.groups.iter().find(|g| g.name == spec.group));
    let mut out = TuningOutcome {
        group: spec.group.clone(),
        threads: tuned.map(|(_, t)| t.0),
        step: tuned.map(|(i, _)| i),
        transactional_iops: 0.0,
        transactional_read_iops: 0.0,
        transactional_write_iops: 0.0,
        excluded_iops: 0.0,
        iops_per_mailbox: spec.iops_per_mailbox,
        mailboxes: 0,
        one_more: None,
        limit: String::new(),
    };
    let Some((i, &(n, _))) = tuned else {
        out.limit = format!("not even {} thread(s) held every bound: no thread count meets them", threads.first().map_or(1, |t| t.0));
        return out;
    };
    if let (Some(g), Some(p)) = (group_of(i), points.get(steps[i].point)) {
        out.transactional_read_iops = g.read_iops;
        out.transactional_write_iops = g.write_iops;
        out.transactional_iops = g.read_iops + g.write_iops;
        out.excluded_iops = (p.summary.iops - out.transactional_iops).max(0.0);
    }
    out.mailboxes = (out.transactional_iops / spec.iops_per_mailbox).floor() as u64;
    out.one_more = threads.iter().position(|t| t.0 == n + 1 && !t.1);
    out.limit = match (out.one_more, first_fail) {
        (Some(j), _) => {
            let failed: Vec<&str> = steps[j].bounds.iter().filter(|b| !b.passed).map(|b| b.criterion.as_str()).collect();
            format!("one thread more ({}) broke {}", n + 1, failed.join(", "))
        }
        (None, None) if n >= most => {
            format!("the most threads tried ({most}) held every bound: the cap was reached, the target may take more")
        }
        (None, Some(f)) => format!("{f} threads broke a bound; the steps between did not run (the cap on steps)"),
        (None, None) => "the search stopped before a bound failed (the cap on steps, or a step that did not complete)".into(),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::model::{Check, GroupSummary};

    fn step(point: usize, workers: u32, passed: bool) -> SearchPoint {
        let bounds = vec![Check { criterion: "db.read_lat_avg<20ms".into(), value: None, unit: "us".into(), passed, note: None }];
        SearchPoint { point, qd: 16, workers, iops: 0.0, mbps: 0.0, p99_us: 0.0, passed, bounds, unfinished: None }
    }

    /// A stored result's point, with a db group and a log group of these IOPS.
    fn point(db_read: f64, db_write: f64, log: f64) -> Point {
        let path = format!("{}/tests/golden/result-a.json", env!("CARGO_MANIFEST_DIR"));
        let r: crate::results::model::RunResult = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut p = r.points[0].clone();
        p.summary.iops = db_read + db_write + log;
        let g = |name: &str, r: f64, w: f64| GroupSummary {
            name: name.into(),
            workers: 1,
            iops: r + w,
            read_iops: r,
            write_iops: w,
            mbps: 0.0,
            latency_us: Default::default(),
            follow: None,
            window: None,
        };
        p.groups = vec![g("db", db_read, db_write), g("log", 0.0, log)];
        p
    }

    #[test]
    fn the_most_threads_below_the_first_failure_count_and_the_log_is_not_transactional() {
        let spec = TuneSpec { group: "db".into(), iops_per_mailbox: 0.1 };
        // 1, 2, 4 (fail), 3: 3 threads tuned, 4 broke the bound.
        let threads = [(1, true), (2, true), (4, false), (3, true)];
        let steps: Vec<SearchPoint> = threads.iter().enumerate().map(|(i, t)| step(i, t.0 + 1, t.1)).collect();
        let points = vec![point(100.0, 200.0, 75.0), point(150.0, 300.0, 110.0), point(160.0, 320.0, 120.0), point(155.0, 310.0, 115.0)];
        let t = outcome(&spec, &threads, &steps, &points, 8);
        assert_eq!((t.threads, t.step, t.one_more), (Some(3), Some(3), Some(2)));
        assert_eq!(t.transactional_iops, 465.0, "db reads and writes, the log excluded");
        assert_eq!(t.excluded_iops, 115.0);
        assert_eq!(t.mailboxes, 4650);
        assert_eq!(t.limit, "one thread more (4) broke db.read_lat_avg<20ms");
        // Every count held to the most: the cap is said.
        let held = [(1, true), (2, true)];
        let t = outcome(&spec, &held, &steps[..2], &points, 2);
        assert!(t.limit.contains("the cap was reached") && t.one_more.is_none(), "{}", t.limit);
        // None held.
        let t = outcome(&spec, &[(1, false)], &steps[..1], &points, 8);
        assert_eq!((t.threads, t.mailboxes), (None, 0));
        assert!(t.limit.contains("no thread count meets them"), "{}", t.limit);
    }
}
