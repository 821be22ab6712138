//! What each point's latency is timed from, as the report's summary says it:
//! from each I/O's submission, or at a paced point (a load-latency curve's
//! paced points, a run at --rate) from the time the I/O was scheduled, so a
//! target that falls behind shows its queueing (no coordinated omission).
//! Shared by the HTML and Markdown pages. Pure.

use crate::report::point_view::names;
use crate::report::rows::params_text;
use crate::results::model::{Point, RunResult};

/// Whether the point's latency is counted from each I/O's scheduled time
/// (a paced point keeps its time from submission apart, as the service time).
pub fn paced(p: &Point) -> bool {
    p.summary.service_latency_us.is_some()
}

/// The summary's sentence on latency (no closing punctuation): one basis when
/// every point shares it, else which points are timed from their schedule.
pub fn sentence(results: &[&RunResult]) -> String {
    let names = names(results);
    let mut paced_points = Vec::new();
    let mut total = 0;
    for (r, name) in results.iter().zip(&names) {
        for (i, p) in r.points.iter().enumerate() {
            total += 1;
            if paced(p) {
                let params = params_text(p);
                let point = if params == "-" { format!("point {}", i + 1) } else { params };
                paced_points.push(if results.len() > 1 { format!("{name} {point}") } else { point });
            }
        }
    }
    match paced_points.len() {
        0 => "Latency is per I/O, from submission to completion".into(),
        n if n == total => "Latency is per I/O, from each I/O's scheduled time to its completion (every point was paced: \
                            queueing behind a slow target counts, no coordinated omission)"
            .into(),
        _ => format!(
            "Latency is per I/O to its completion: from submission at the points run as fast as they go, and from each I/O's \
             scheduled time at the paced ones (queueing behind a slow target counts, no coordinated omission): {}",
            paced_points.join(", ")
        ),
    }
}
