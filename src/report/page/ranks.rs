//! The MPI parts of a report (issue 17): the per-rank lines of the terminal
//! summary and a bar chart of each rank's IOPS per point. Pure: results in,
//! text and SVG out; empty for single-process results.

use crate::report::page::charts::{self, Chart, Series};
use crate::report::rows::params_text;
use crate::results::model::{Point, RunResult};

/// The lines a point of an MPI run adds to the summary: ranks, hosts, machines,
/// start skew, and each rank's own figures.
pub fn summary_lines(p: &Point) -> String {
    let Some(m) = &p.mpi else { return String::new() };
    let mut hosts: Vec<&str> = Vec::new();
    for r in &m.ranks {
        if !hosts.contains(&r.host.as_str()) {
            hosts.push(&r.host);
        }
    }
    let mut text = format!(
        "ranks: {} on {}, {}; start skew {:.1} ms; rates over {:.2}s from the first start to the last end\n",
        m.ranks.len(),
        crate::units::counted(hosts.len() as u64, "host"),
        crate::units::counted(m.machines.len() as u64, "machine"),
        m.start_skew_ms,
        m.span_s
    );
    for r in &m.ranks {
        let status = if r.status == "completed" { String::new() } else { format!("  {}", r.status) };
        text.push_str(&format!(
            "  rank {:<3} {:<16} {:>12.0} IOPS {:>10.1} MB/s  mean {:>9.1} us  p99 {:>9.1} us{status}\n",
            r.rank, r.host, r.iops, r.mbps, r.lat_mean_us, r.lat_p99_us
        ));
    }
    text
}

/// One bar chart per MPI result: IOPS of each rank, one colour per point.
pub fn charts(results: &[&RunResult]) -> Vec<Chart> {
    let mut out = Vec::new();
    for (ri, r) in results.iter().enumerate() {
        let Some(first) = r.points.iter().find_map(|p| p.mpi.as_ref()) else { continue };
        let categories: Vec<String> = first.ranks.iter().map(|x| format!("{} ({})", x.rank, x.host)).collect();
        let series: Vec<Series> = r
            .points
            .iter()
            .filter(|p| p.mpi.is_some())
            .enumerate()
            .map(|(i, p)| {
                let label = match params_text(p).as_str() {
                    "-" => format!("point {}", i + 1),
                    text => text.to_string(),
                };
                let ranks = &p.mpi.as_ref().expect("filtered").ranks;
                Series { label, values: first.ranks.iter().map(|x| ranks.iter().find(|y| y.rank == x.rank).map(|y| y.iops)).collect() }
            })
            .collect();
        let title = format!("IOPS per rank: {}", r.id);
        out.push(Chart {
            id: format!("ranks-{}", ri + 1),
            caption: format!("IOPS of each MPI rank (host in brackets), result {}", r.id),
            svg: charts::grouped_bars(&title, "rank (host)", "IOPS (I/O per second)", &categories, &series),
        });
    }
    out
}
