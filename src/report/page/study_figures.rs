//! The white papers' figures, where the results hold their data: the share of
//! line rate against transfer size with the link's usable rate drawn as a line
//! (papers 002 and 003), and IOPS, the initiator's CPU and its service demand
//! against ports where points sweep the number of targets (a `lab protocols
//! --sweep targets=1,2`: papers 002 and 004). Pure: results in, SVG text out.

use crate::report::page::charts::{self, Chart, Series};
use crate::report::point_view;
use crate::results::model::{Point, RunResult, Summary};

/// Every study figure these results can draw.
pub fn charts(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    let mut out: Vec<Chart> = line_rate_chart(results, names).into_iter().collect();
    out.extend(port_charts(results, names));
    out
}

/// Share of line rate against transfer size: a line per result, and the link's
/// usable rate (100%) as a line of its own, when points of at least two
/// transfer sizes have a line-rate figure.
fn line_rate_chart(results: &[&RunResult], names: &[String]) -> Option<Chart> {
    // (result index, transfer size, share %), and the links named.
    let mut at: Vec<(usize, u64, f64)> = Vec::new();
    let mut links: Vec<String> = Vec::new();
    for (ri, r) in results.iter().enumerate() {
        for p in &r.points {
            let (Some(lr), Some(bs)) = (p.summary.line_rate.as_ref(), point_view::spec(r, p).as_ref().and_then(point_view::single_bs))
            else {
                continue;
            };
            at.push((ri, bs, lr.pct));
            let link = format!("{} ({} MB/s each way)", lr.link, crate::results::line_rate::fmt_mbps(lr.usable_mbps_per_direction));
            if !links.contains(&link) {
                links.push(link);
            }
        }
    }
    let mut sizes: Vec<u64> = at.iter().map(|a| a.1).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.len() < 2 {
        return None;
    }
    let mut series: Vec<Series> = Vec::new();
    for (ri, name) in names.iter().enumerate() {
        let values: Vec<Option<f64>> = sizes.iter().map(|b| at.iter().find(|a| a.0 == ri && a.1 == *b).map(|a| a.2)).collect();
        if values.iter().any(Option::is_some) {
            series.push(Series { label: name.clone(), values });
        }
    }
    series.push(Series { label: "the link's usable rate".into(), values: sizes.iter().map(|_| Some(100.0)).collect() });
    let x: Vec<f64> = sizes.iter().map(|b| *b as f64 / 1024.0).collect();
    let title = "Share of line rate by transfer size";
    Some(Chart {
        id: "line-rate".into(),
        caption: format!(
            "{title}: the busier direction's MB/s over the link's usable rate, which is the line at 100% ({})",
            links.join("; ")
        ),
        svg: charts::lines_at_values(title, "transfer size (KiB)", "% of the link's usable rate", &x, &series, true),
    })
}

/// A point's number of targets (ports): its `targets` sweep value.
fn ports(p: &Point) -> Option<f64> {
    p.params.get("targets").and_then(|v| v.as_f64())
}

/// IOPS, the initiator's CPU (with the target side's beside it) and its service
/// demand against ports, for results whose points sweep the targets.
fn port_charts(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    let swept: Vec<(usize, &RunResult)> =
        results.iter().enumerate().filter(|(_, r)| r.points.iter().filter_map(ports).count() >= 2).map(|(i, r)| (i, *r)).collect();
    let mut x: Vec<f64> = swept.iter().flat_map(|(_, r)| r.points.iter().filter_map(ports)).collect();
    x.sort_by(f64::total_cmp);
    x.dedup();
    if swept.is_empty() || x.len() < 2 {
        return Vec::new();
    }
    let line = |label: String, r: &RunResult, get: &dyn Fn(&Summary) -> Option<f64>| Series {
        label,
        values: x.iter().map(|n| r.points.iter().find(|p| ports(p) == Some(*n)).and_then(|p| get(&p.summary))).collect(),
    };
    let per =
        |get: &dyn Fn(&Summary) -> Option<f64>| -> Vec<Series> { swept.iter().map(|(i, r)| line(names[*i].clone(), r, get)).collect() };
    let mut cpu = per(&|s| Some(point_view::initiator_cpu(s).0));
    cpu.extend(swept.iter().map(|(i, r)| line(format!("{} · target side", names[*i]), r, &|s| s.cpu.started_processes_pct)));
    cpu.retain(|s| s.values.iter().any(Option::is_some));
    let chart = |id: &str, title: &str, y: &str, series: &[Series], caption: &str| Chart {
        id: id.into(),
        caption: format!("{title}{caption}"),
        svg: charts::lines_at_values(title, "ports (targets)", y, &x, series, false),
    };
    vec![
        chart("ports-iops", "IOPS by ports", "IOPS (I/O per second)", &per(&|s| Some(s.iops)), ""),
        chart(
            "ports-cpu",
            "Initiator CPU by ports",
            "CPU %",
            &cpu,
            ": the initiator's CPU (its pinned CPUs, else lunmark's own time), and the target servers' own apart",
        ),
        chart(
            "ports-service-demand",
            "Service demand by ports",
            "µs of initiator CPU per KB",
            &per(&|s| point_view::initiator_cpu(s).1),
            ": microseconds of the initiator's CPU per KB moved",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> RunResult {
        crate::report::golden_result(name)
    }

    /// Points of two transfer sizes with a line-rate figure draw the share
    /// against size, and the link's rate as a line at 100%.
    #[test]
    fn line_rate_is_drawn_against_transfer_size_with_the_links_rate() {
        let mut r = fixture("result-a.json");
        assert!(line_rate_chart(&[&r], &["a".into()]).is_none(), "no line-rate figure, no chart");
        for (p, pct) in r.points.iter_mut().zip([36.6, 95.0]) {
            p.summary.line_rate = Some(crate::results::model::LineRate {
                link: "10gbe".into(),
                usable_mbps_per_direction: 1225.0,
                pct,
                ..Default::default()
            });
        }
        let c = line_rate_chart(&[&r], &["a".into()]).expect("a chart");
        assert!(c.caption.contains("10gbe (1,225 MB/s each way)") || c.caption.contains("10gbe (1225"), "{}", c.caption);
        let legend = c.svg.contains("usable rate");
        assert!(legend, "the link's line is in the legend");
    }

    /// A targets sweep draws IOPS, CPU and service demand against ports.
    #[test]
    fn a_targets_sweep_draws_iops_cpu_and_service_demand_against_ports() {
        let mut r = fixture("result-a.json");
        assert!(port_charts(&[&r], &["a".into()]).is_empty());
        for (i, p) in r.points.iter_mut().enumerate() {
            p.params = [("targets".to_string(), serde_json::json!(i + 1))].into();
            p.summary.cpu.started_processes_pct = Some(10.0);
        }
        let ids: Vec<String> = port_charts(&[&r], &["a".into()]).into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["ports-iops", "ports-cpu", "ports-service-demand"]);
    }
}
