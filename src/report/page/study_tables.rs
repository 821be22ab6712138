//! The cache study's table in the report (paper 001's table): at each cache
//! size, the read hit ratio, read latency and its reduction, IOPS and their
//! increase, against the smallest size measured (no cache, in `lab cache`).
//! Pure: results in, a table out.

use crate::report::human::{fixed, number};
use crate::report::page::report_tables::Table;
use crate::report::point_view;
use crate::results::model::{RunResult, Summary};

/// None unless at least two results (or points) are cache sizes of a study.
pub fn cache_study(results: &[&RunResult]) -> Option<Table> {
    let names = point_view::names(results);
    let mut at: Vec<(f64, &Summary, &String)> = results
        .iter()
        .zip(&names)
        .filter_map(|(r, name)| r.points.first().and_then(|p| p.summary.cache.as_ref().map(|c| (c.size_pct, &p.summary, name))))
        .collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    at.dedup_by(|a, b| a.0 == b.0);
    if at.len() < 2 {
        return None;
    }
    let (base_pct, base, _) = at[0];
    let change = |now: f64, before: f64| if before > 0.0 { format!("{:.1}", (now - before) / before * 100.0) } else { "-".into() };
    let rows = at
        .iter()
        .map(|(pct, s, name)| {
            let hit = s.cache.as_ref().map(|c| c.read_hit_ratio * 100.0).unwrap_or(0.0);
            vec![
                name.to_string(),
                fixed(*pct, 1),
                fixed(hit, 1),
                fixed(s.latency_us.read.mean / 1000.0, 2),
                // A reduction: positive where the cache made reads faster.
                change(s.latency_us.read.mean, base.latency_us.read.mean).parse::<f64>().map_or("-".into(), |v| fixed(-v, 1)),
                number(s.iops),
                change(s.iops, base.iops).parse::<f64>().map_or("-".into(), |v| fixed(v, 1)),
            ]
        })
        .collect();
    let first = format!("read latency reduction (% against {base_pct}%)");
    let second = format!("IOPS increase (% against {base_pct}%)");
    let headers = ["result", "cache size (% of the region)", "read hit ratio (%)", "mean read latency (ms)", &first, "IOPS", &second];
    Some(Table { headers: headers.iter().map(|h| h.to_string()).collect(), numeric: vec![false, true, true, true, true, true, true], rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cache sizes: the table gives the hit ratio, the latency reduction and
    /// the IOPS increase against the smaller.
    #[test]
    fn the_cache_study_table_gives_reduction_and_increase_against_no_cache() {
        let mut a = crate::report::golden_result("result-a.json");
        a.points.truncate(1);
        assert!(cache_study(&[&a]).is_none());
        let mut b = a.clone();
        b.id = "bbbbbbbbbbbb".into();
        for (r, pct, hit, lat, iops) in [(&mut a, 0.0, 0.0, 5000.0, 1000.0), (&mut b, 100.0, 0.9, 1000.0, 5000.0)] {
            let s = &mut r.points[0].summary;
            s.cache = Some(crate::results::model::CacheSummary { size_pct: pct, read_hit_ratio: hit, ..Default::default() });
            s.latency_us.read.mean = lat;
            s.iops = iops;
        }
        let t = cache_study(&[&b, &a]).expect("a table");
        assert_eq!(t.rows.len(), 2);
        assert_eq!(&t.rows[1][1..], ["100.0", "90.0", "1.00", "80.0", "5,000", "400.0"]);
        assert_eq!(t.rows[0][4], "0.0");
    }
}
