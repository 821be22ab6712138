//! The report: one self-contained HTML page (inline CSS and SVG, no scripts, no
//! fetches) with a summary table and the papers' charts, or the same as Markdown
//! with the SVG files beside it. Pure: results in, text and SVGs out.

use super::charts::{self, Series};
use super::rows::{self, name, params_text};
use crate::results::model::{Point, RunResult, Summary};

/// One chart of the report.
pub struct Chart {
    pub id: String,
    pub caption: String,
    pub svg: String,
}

/// The x categories of bar charts: transfer size when points are swept over
/// it, else each point's params (or the phase).
fn category(p: &Point) -> String {
    match p.params.get("bs") {
        Some(bs) if p.params.len() == 1 => bs.as_str().map(str::to_string).unwrap_or_else(|| bs.to_string()),
        _ => params_text(p),
    }
}

fn categories(results: &[&RunResult]) -> Vec<String> {
    let mut cats: Vec<String> = Vec::new();
    for r in results {
        for p in &r.points {
            let c = category(p);
            if !cats.contains(&c) {
                cats.push(c);
            }
        }
    }
    cats
}

/// Per result, one value per category (from the first point in that category).
fn by_category(results: &[&RunResult], cats: &[String], get: impl Fn(&Summary) -> Option<f64>) -> Vec<Series> {
    results
        .iter()
        .map(|r| Series {
            label: name(r),
            values: cats.iter().map(|c| r.points.iter().find(|p| &category(p) == c).and_then(|p| get(&p.summary))).collect(),
        })
        .collect()
}

pub fn charts(results: &[&RunResult]) -> Vec<Chart> {
    let cats = categories(results);
    let only_bs = results.iter().all(|r| r.points.iter().all(|p| p.params.len() == 1 && p.params.contains_key("bs")));
    let x = if only_bs { "transfer size" } else { "point" };
    let mut out = vec![
        Chart {
            id: "iops".into(),
            caption: format!("IOPS by {x}"),
            svg: charts::grouped_bars(
                &format!("IOPS by {x}"),
                x,
                "IOPS (I/O per second)",
                &cats,
                &by_category(results, &cats, |s| Some(s.iops)),
            ),
        },
        Chart {
            id: "mbps".into(),
            caption: format!("Throughput by {x}"),
            svg: charts::grouped_bars(
                &format!("Throughput by {x}"),
                x,
                "MB/s (10^6 bytes per second)",
                &cats,
                &by_category(results, &cats, |s| Some(s.mbps)),
            ),
        },
    ];
    // IOPS and latency against outstanding I/Os, where points sweep it.
    let mut qds: Vec<f64> = results.iter().flat_map(|r| r.points.iter().filter_map(|p| p.params.get("qd")?.as_f64())).collect();
    qds.sort_by(f64::total_cmp);
    qds.dedup();
    if qds.len() > 1 {
        let at_qd = |get: fn(&Summary) -> f64| -> Vec<Series> {
            results
                .iter()
                .map(|r| Series {
                    label: name(r),
                    values: qds
                        .iter()
                        .map(|q| r.points.iter().find(|p| p.params.get("qd").and_then(|v| v.as_f64()) == Some(*q)).map(|p| get(&p.summary)))
                        .collect(),
                })
                .collect()
        };
        out.push(Chart {
            id: "iops-qd".into(),
            caption: "IOPS against outstanding I/Os".into(),
            svg: charts::lines("IOPS against outstanding I/Os", "outstanding I/Os per worker per target", "IOPS", &qds, &at_qd(|s| s.iops)),
        });
        out.push(Chart {
            id: "latency-qd".into(),
            caption: "Mean latency against outstanding I/Os".into(),
            svg: charts::lines(
                "Mean latency against outstanding I/Os",
                "outstanding I/Os per worker per target",
                "latency (us)",
                &qds,
                &at_qd(|s| s.latency_us.all.mean),
            ),
        });
    }
    out.extend(cache_charts(results));
    let pct = ["p50", "p90", "p99", "p99.9", "p99.99"].map(String::from);
    let lat: Vec<Series> = results
        .iter()
        .map(|r| {
            let l = r.points.first().map(|p| p.summary.latency_us.all.clone()).unwrap_or_default();
            Series { label: name(r), values: vec![Some(l.p50), Some(l.p90), Some(l.p99), Some(l.p99_9), Some(l.p99_99)] }
        })
        .collect();
    out.push(Chart {
        id: "percentiles".into(),
        caption: "Latency percentiles (first point of each result)".into(),
        svg: charts::grouped_bars("Latency percentiles (first point)", "percentile", "latency (us)", &pct, &lat),
    });
    out.push(Chart {
        id: "cpu".into(),
        caption: format!("CPU utilization by {x}"),
        svg: charts::grouped_bars(
            &format!("CPU utilization by {x}"),
            x,
            "CPU (% of all cores)",
            &cats,
            &by_category(results, &cats, |s| Some(s.cpu.utilization_pct)),
        ),
    });
    out.push(Chart {
        id: "cpu-efficiency".into(),
        caption: format!("CPU efficiency by {x}"),
        svg: charts::grouped_bars(
            &format!("CPU efficiency by {x}"),
            x,
            "IOPS per CPU%",
            &cats,
            &by_category(results, &cats, |s| s.cpu.iops_per_cpu_pct),
        ),
    });
    let has_power = results.iter().any(|r| r.points.iter().any(|p| p.summary.power.as_ref().is_some_and(|w| w.avg_watts.is_some())));
    if has_power {
        let per_watt = |s: &Summary| s.power.as_ref().and_then(|p| p.iops_per_delta_watt.or(p.iops_per_watt));
        out.push(Chart {
            id: "power-efficiency".into(),
            caption: format!("Power efficiency by {x} (per watt above idle where an idle baseline was measured, else per watt)"),
            svg: charts::grouped_bars(
                &format!("Power efficiency by {x}"),
                x,
                "IOPS per watt",
                &cats,
                &by_category(results, &cats, per_watt),
            ),
        });
    }
    // The per-second series, points one after another.
    let longest = results.iter().map(|r| r.points.iter().map(|p| p.summary.intervals.len()).sum::<usize>()).max().unwrap_or(0);
    let secs: Vec<f64> = (0..longest).map(|i| i as f64).collect();
    let per_second: Vec<Series> = results
        .iter()
        .map(|r| Series {
            label: name(r),
            values: r.points.iter().flat_map(|p| p.summary.intervals.iter().map(|i| Some(i.iops))).collect(),
        })
        .collect();
    if longest > 1 {
        out.push(Chart {
            id: "per-second".into(),
            caption: "IOPS per second (points one after another)".into(),
            svg: charts::lines("IOPS per second", "measured seconds (points one after another)", "IOPS", &secs, &per_second),
        });
    }
    out
}

/// IOPS and read latency against cache size, where the results are points of a
/// cache study (`lab cache`, or runs with different --cache sizes).
fn cache_charts(results: &[&RunResult]) -> Vec<Chart> {
    let mut at: Vec<(f64, &Summary)> = results
        .iter()
        .filter_map(|r| r.points.first())
        .filter_map(|p| p.summary.cache.as_ref().map(|c| (c.size_pct, &p.summary)))
        .collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    at.dedup_by(|a, b| a.0 == b.0);
    if at.len() < 2 {
        return Vec::new();
    }
    let x: Vec<f64> = at.iter().map(|(p, _)| *p).collect();
    let series = |label: &str, get: fn(&Summary) -> f64| {
        vec![Series { label: label.into(), values: at.iter().map(|(_, s)| Some(get(s))).collect() }]
    };
    vec![
        Chart {
            id: "iops-cache".into(),
            caption: "IOPS against cache size".into(),
            svg: charts::lines("IOPS against cache size", "cache size (% of the region)", "IOPS", &x, &series("IOPS", |s| s.iops)),
        },
        Chart {
            id: "latency-cache".into(),
            caption: "Read latency against cache size".into(),
            svg: charts::lines(
                "Read latency against cache size",
                "cache size (% of the region)",
                "mean read latency (us)",
                &x,
                &series("read latency", |s| s.latency_us.read.mean),
            ),
        },
    ]
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn html(results: &[&RunResult]) -> String {
    let mut out = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lunmark report</title>\n<style>\n\
         body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}\
         table{border-collapse:collapse;margin:12px 0;font-size:13px}\
         th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f0f0f0}\
         td.l,th.l{text-align:left}figure{margin:18px 0}figcaption{font-size:13px;color:#555}\n</style></head><body>\n<h1>lunmark report</h1>\n",
    );
    out += "<h2>Results</h2>\n<table><tr><th class=l>result</th><th class=l>id</th><th class=l>started</th><th class=l>status</th><th class=l>profile</th><th class=l>engine</th><th class=l>targets</th><th class=l>host</th></tr>\n";
    for r in results {
        out += &format!(
            "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{:?}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{}, {} cores, kernel {}</td></tr>\n",
            escape(&name(r)),
            r.id,
            escape(&r.started_at),
            r.status,
            escape(r.profile.as_deref().unwrap_or("-")),
            escape(&r.engine),
            escape(&r.targets.iter().map(|t| t.uri.as_str()).collect::<Vec<_>>().join(", ")),
            escape(&r.host.cpu_model),
            r.host.cores,
            escape(&r.host.kernel)
        );
    }
    out += "</table>\n<h2>Summary</h2>\n<div style=\"overflow-x:auto\"><table><tr>";
    for c in rows::COLUMNS.iter().skip(1) {
        out += &format!("<th>{c}</th>");
    }
    out += "</tr>\n";
    for r in results {
        for row in rows::rows(r) {
            let label = if row[1].is_empty() { row[0].clone() } else { row[1].clone() };
            out += &format!("<tr><td class=l>{}</td>", escape(&label));
            for f in row.iter().skip(2) {
                out += &format!("<td>{}</td>", escape(f));
            }
            out += "</tr>\n";
        }
    }
    out += "</table></div>\n";
    out += &line_rate_table(results);
    out += "<h2>Charts</h2>\n";
    for c in charts(results) {
        out += &format!("<figure id=\"chart-{}\">{}<figcaption>{}</figcaption></figure>\n", c.id, c.svg, escape(&c.caption));
    }
    out += "<p>Made by lunmark. Definitions of every figure: docs/result-schema.md.</p>\n</body></html>\n";
    out
}

/// Each point's share of its link (`--link`), where any point has one.
fn line_rate_table(results: &[&RunResult]) -> String {
    let mut rows = String::new();
    for r in results {
        for p in &r.points {
            if let Some(l) = &p.summary.line_rate {
                let link = match l.target {
                    Some(t) => format!("{} (target {t})", l.link),
                    None => l.link.clone(),
                };
                rows += &format!(
                    "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{:.1}</td></tr>\n",
                    escape(&name(r)),
                    escape(&params_text(p)),
                    escape(&link),
                    crate::results::line_rate::fmt_mbps(l.usable_mbps_per_direction),
                    l.read_pct,
                    l.write_pct,
                    l.pct
                );
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Line rate</h2>\n<table><tr><th class=l>result</th><th class=l>point</th><th class=l>link</th><th>usable MB/s per direction</th>\
         <th>read % of line rate</th><th>write % of line rate</th><th>busier direction %</th></tr>\n{rows}</table>\n"
    )
}

/// Markdown with the charts as separate SVG files: (markdown, [(file name, svg)]).
pub fn markdown(results: &[&RunResult], stem: &str) -> (String, Vec<(String, String)>) {
    let mut md = String::from("# lunmark report\n\n");
    md += &rows::markdown(results);
    let mut files = Vec::new();
    for c in charts(results) {
        let file = format!("{stem}-{}.svg", c.id);
        md += &format!("\n![{}]({file})\n", c.caption);
        files.push((file, c.svg));
    }
    (md, files)
}
