//! A figure of a point as the report shows it: with `--repeat N`, the mean of
//! the repeats with their sample standard deviation (the numbers compare's
//! Welch test reads); without, the one run's value, labelled as a single run.
//! A figure the point does not have carries why (power not measured, no idle
//! baseline, a delta too small to divide by), so a table or chart shows it as
//! missing with the reason and never puts another measure in its place. Pure.

use crate::results::model::{Point, RunResult};
use crate::results::registry;

/// How the report's tables and charts state the spread.
pub const SPREAD_RULE: &str = "With --repeat N, each figure is the mean of the point's N repeats ± their sample standard \
deviation (stdev), and charts draw that stdev as error bars; a figure without ± is from a single run.";

/// One figure of one point.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fig {
    pub value: Option<f64>,
    /// The repeats' sample standard deviation, where the point was repeated.
    pub stdev: Option<f64>,
    /// How many runs `value` stands for (1: a single run).
    pub n: usize,
    /// Why `value` is missing, where it is.
    pub missing: Option<String>,
    /// The point was repeated but kept no spread of this figure: `value` is
    /// the run the point picked, said as such.
    pub picked: bool,
}

/// The figure `key` (a registry metric) of a point: the repeats' mean and
/// stdev where the point kept that figure's spread, else the point's value.
pub fn fig(p: &Point, key: &str) -> Fig {
    let Some(m) = registry::by_key(key) else {
        return Fig { missing: Some(format!("{key} is not a figure lunmark records")), ..Default::default() };
    };
    let single = m.get(&p.summary);
    if let Some(s) = p.repeats.as_ref().and_then(|r| r.spread(key)).filter(|s| s.n.unwrap_or(0) >= 2) {
        // A figure every repeat lacked has no spread: then it is missing, with the picked run's reason.
        return Fig { value: Some(s.mean), stdev: Some(s.stdev), n: s.n.unwrap_or(0), ..Default::default() };
    }
    match single {
        Some(v) => Fig { value: Some(v), n: 1, picked: p.repeats.is_some(), ..Default::default() },
        None => Fig { missing: Some(why_missing(p, key)), ..Default::default() },
    }
}

/// Why a point has no figure `key`.
pub fn why_missing(p: &Point, key: &str) -> String {
    if let Some(rest) = key.strip_prefix("power.") {
        let Some(pw) = &p.summary.power else { return "power not measured".into() };
        if pw.avg_watts.is_none() {
            return format!("power not measured: {}", pw.reason.as_deref().unwrap_or("no source"));
        }
        if rest.contains("delta") {
            if pw.idle_watts.is_none() {
                return "no idle baseline was measured (--idle), so there is no watt above idle".into();
            }
            if let Some(r) = &pw.reason {
                return r.clone();
            }
        }
        return pw.reason.clone().unwrap_or_else(|| "not measured".into());
    }
    if key.starts_with("cpu.pinned.") {
        return "no pinned CPUs (--cpus)".into();
    }
    if key.starts_with("line_rate.") {
        return "no link given (--link)".into();
    }
    if key.starts_with("cpu.") {
        return "no CPU time measured in the interval".into();
    }
    "not measured".into()
}

/// The figure as a table cell: "12,345 ± 120" (mean ± stdev), "12,345", or
/// "12,345 (picked run)" for a repeated point without the figure's spread.
pub fn cell(f: &Fig, number: impl Fn(f64) -> String) -> String {
    match (f.value, f.stdev) {
        (Some(v), Some(sd)) => format!("{} ± {}", number(v), number(sd)),
        (Some(v), None) if f.picked => format!("{} (picked run)", number(v)),
        (Some(v), None) => number(v),
        (None, _) => "-".into(),
    }
}

/// "mean of 3 repeats" or "single run": what a point's figures are.
pub fn basis(p: &Point) -> String {
    match &p.repeats {
        Some(r) => format!("mean ± stdev of {} repeats", r.count),
        None => "single run".into(),
    }
}

/// Whether any point of the results was repeated.
pub fn any_repeats(results: &[&RunResult]) -> bool {
    results.iter().any(|r| r.points.iter().any(|p| p.repeats.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::model::Summary;
    use crate::results::repeats::{combine, Pick};

    /// A repeated point shows its repeats' mean and stdev, not the run it picked.
    #[test]
    fn a_repeated_point_shows_its_mean_and_stdev() {
        let mut p = crate::report::golden_result("result-a.json").points.remove(0);
        let runs: Vec<Summary> = [100.0, 100.0, 130.0].iter().map(|&iops| Summary { iops, ..p.summary.clone() }).collect();
        let (i, stats) = combine(&runs, Pick::Mean);
        p.summary = runs[i].clone();
        p.repeats = Some(stats);
        let f = fig(&p, "iops");
        assert_eq!((f.value, f.n), (Some(110.0), 3));
        assert!((f.stdev.unwrap() - 17.320508075688775).abs() < 1e-9);
        assert_eq!(cell(&f, |v| format!("{v:.0}")), "110 ± 17");
        assert_eq!(basis(&p), "mean ± stdev of 3 repeats");
        p.repeats = None;
        assert_eq!(cell(&fig(&p, "iops"), |v| format!("{v:.0}")), "100");
        let power = fig(&p, "power.iops_per_delta_watt");
        assert_eq!((power.value, power.missing.as_deref()), (None, Some("power not measured")));
    }
}
