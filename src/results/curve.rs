//! The load-latency curve (`--curve PCT,...`, vdbench's curve; issue 28): a
//! point as fast as the queue depth allows, then a paced point at each
//! percentage of its IOPS, optionally ended at the first point that breaks
//! `--curve-stop`'s bounds. What is asked (`CurveSpec`), and each point's
//! figures and judgement (`CurvePoint`). Pure: the run (`run::curve`) runs the points.

use super::model::Point;
pub use super::model::{CurveOutcome, CurvePoint};
use super::pass::{self, Criterion, Measure};

/// What `--curve` and `--curve-stop` ask.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveSpec {
    pub pcts: Vec<f64>,
    /// `--curve-stop`'s bounds as given, and parsed; None without it.
    pub stop: Option<(String, Vec<Criterion>)>,
}

impl CurveSpec {
    /// `--curve 10,50,90,100`: percentages above 0 and at most 100, in the
    /// order given; `--curve-stop` in the `--pass` grammar (its errors).
    pub fn parse(list: &str, stop: Option<&str>) -> Result<CurveSpec, String> {
        let mut pcts = Vec::new();
        for t in list.split(',').map(str::trim) {
            let v: f64 = t.trim_end_matches('%').parse().map_err(|_| {
                format!("--curve {list}: '{t}' is not a percentage; give percentages of the maximum rate, above 0 and at most 100, for example 10,50,90,100")
            })?;
            if !(v > 0.0 && v <= 100.0) {
                return Err(format!("--curve {list}: {t} is not above 0 and at most 100 (percent of the maximum rate measured first)"));
            }
            // The same rate twice is a point run twice, not a point of the curve.
            if pcts.contains(&v) {
                return Err(format!("--curve {list}: {t} is repeated; give each percentage once, for example 10,50,90,100"));
            }
            pcts.push(v);
        }
        let stop = stop.map(|s| pass::parse(s).map(|c| (s.to_string(), c)).map_err(|e| e.to_string())).transpose()?;
        Ok(CurveSpec { pcts, stop })
    }

    /// The latency bounds of `--curve-stop` and their limits in microseconds (drawn in the report).
    pub fn latency_limits_us(&self) -> Vec<(String, f64)> {
        let Some((_, criteria)) = &self.stop else { return Vec::new() };
        criteria.iter().filter(|c| matches!(c.measure, Measure::Latency { .. })).map(|c| (c.text.clone(), c.limit)).collect()
    }

    /// The curve's figures of the `index`-th point of the result, paced at `pct` (None: the maximum-rate point).
    pub fn judge(&self, index: usize, point: &Point, pct: Option<f64>, rate: Option<f64>) -> CurvePoint {
        let s = &point.summary;
        let verdict = self.stop.as_ref().map(|(_, c)| pass::judge(c, s, &point.groups));
        CurvePoint {
            point: index,
            pct,
            rate,
            iops: s.iops,
            p50_us: s.latency_us.all.p50,
            p99_us: s.latency_us.all.p99,
            p99_9_us: s.latency_us.all.p99_9,
            passed: verdict.as_ref().map(|v| v.passed),
            bounds: verdict.map(|v| v.checks).unwrap_or_default(),
            cut_short: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_in_order_and_bad_ones_say_what_is_allowed() {
        let c = CurveSpec::parse("10, 50%,100", Some("lat_p99<5ms")).unwrap();
        assert_eq!(c.pcts, vec![10.0, 50.0, 100.0]);
        assert_eq!(c.latency_limits_us(), vec![("lat_p99<5ms".to_string(), 5000.0)]);
        assert!(CurveSpec::parse("0,50", None).unwrap_err().contains("0 is not above 0 and at most 100"));
        assert!(CurveSpec::parse("50,120", None).unwrap_err().contains("120 is not above 0"));
        assert_eq!(
            CurveSpec::parse("50,50%", None).unwrap_err(),
            "--curve 50,50%: 50% is repeated; give each percentage once, for example 10,50,90,100"
        );
        assert!(CurveSpec::parse("ten", None).unwrap_err().contains("'ten' is not a percentage"));
        assert_eq!(CurveSpec::parse("50", Some("p99<1ms")).unwrap_err(), pass::parse("p99<1ms").unwrap_err().to_string());
    }
}
