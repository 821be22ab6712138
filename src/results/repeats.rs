//! Repeats of one point: the spread of the headline figures and which repeat the
//! point reports. The papers either average repeats (001) or keep the best
//! repeatable one (000); `--pick mean|median|best` says which, and the choice is
//! recorded. `mean` reports the repeat nearest the mean IOPS, so every figure of
//! the point (percentiles included) comes from one real run.

use super::model::Summary;
pub use super::model::{Pick, RepeatRun, RepeatStats, Spread};

/// The spread of `summaries` and the index of the one to report.
pub fn combine(summaries: &[Summary], pick: Pick) -> (usize, RepeatStats) {
    let runs: Vec<RepeatRun> = summaries
        .iter()
        .map(|s| RepeatRun { iops: s.iops, mbps: s.mbps, lat_mean_us: s.latency_us.all.mean, lat_p99_us: s.latency_us.all.p99 })
        .collect();
    let col = |f: fn(&RepeatRun) -> f64| Spread::of(&runs.iter().map(f).collect::<Vec<_>>());
    let iops = col(|r| r.iops);
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[a].iops.total_cmp(&runs[b].iops));
    let index = match pick {
        Pick::Best => *order.last().unwrap_or(&0),
        Pick::Median => order[(order.len().saturating_sub(1)) / 2],
        Pick::Mean => {
            (0..runs.len()).min_by(|&a, &b| (runs[a].iops - iops.mean).abs().total_cmp(&(runs[b].iops - iops.mean).abs())).unwrap_or(0)
        }
    };
    let stats = RepeatStats {
        count: runs.len(),
        pick,
        picked: index + 1,
        iops,
        mbps: col(|r| r.mbps),
        lat_mean_us: col(|r| r.lat_mean_us),
        lat_p99_us: col(|r| r.lat_p99_us),
        runs,
        figures: super::registry::compared()
            .filter_map(|m| {
                let values: Vec<f64> = summaries.iter().filter_map(|s| m.get(s)).filter(|v| v.is_finite()).collect();
                (!values.is_empty()).then(|| (m.key.to_string(), Spread::of(&values)))
            })
            .collect(),
    };
    (index, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_iops(v: f64) -> Summary {
        Summary { iops: v, ..Default::default() }
    }

    #[test]
    fn spread_and_pick() {
        let s = Spread::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        assert!((s.stdev - 2.138).abs() < 1e-3);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        let runs = [with_iops(100.0), with_iops(130.0), with_iops(90.0)];
        assert_eq!(combine(&runs, Pick::Best).0, 1);
        assert_eq!(combine(&runs, Pick::Median).0, 0);
        // mean 106.7: nearest is 100.
        assert_eq!(combine(&runs, Pick::Mean).0, 0);
        assert_eq!(combine(&runs, Pick::Best).1.picked, 2);
        // Every figure's spread is kept with its count; a figure no repeat had is absent.
        let stats = combine(&runs, Pick::Mean).1;
        assert_eq!(stats.spread("iops").unwrap().n, Some(3));
        assert_eq!(stats.spread("read_iops").unwrap().mean, 0.0);
        assert!(stats.spread("power.avg_watts").is_none());
        // A result stored before figures were kept still gives its IOPS spread.
        let old = RepeatStats { count: 3, iops: Spread { n: None, mean: 5.0, ..Default::default() }, ..Default::default() };
        assert_eq!(old.spread("iops").unwrap().n, Some(3));
        assert!(old.spread("read_iops").is_none());
    }
}
