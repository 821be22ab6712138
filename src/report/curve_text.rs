//! The load-latency curve as text (`--curve`, issue 28), for the terminal and the report page alike: each point's
//! rate asked, IOPS achieved and latency from the scheduled time, with the
//! stop bounds' pass or FAIL; and the dry run's account of a curve. Pure.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, Table};

use crate::report::cells::{num, right};
use crate::results::curve::{CurveOutcome, CurveSpec};

/// The curve as a table, then why it ended.
pub fn render(c: &CurveOutcome) -> String {
    let stop = c.stop.as_ref().map(|s| format!(", stop at {s}")).unwrap_or_default();
    let out = format!("\nload-latency curve (--curve {}{stop}): maximum {} IOPS\n", pcts(&c.pcts), num(c.max_iops));
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    let mut header = vec!["load".to_string(), "rate asked".into(), "IOPS".into(), "p50 us".into(), "p99 us".into(), "p99.9 us".into()];
    header.extend(c.points.first().map(|p| p.bounds.iter().map(|b| b.criterion.clone()).collect::<Vec<_>>()).unwrap_or_default());
    t.set_header(header);
    for p in &c.points {
        let load = p.pct.map_or("max".into(), |v| format!("{v}%"));
        let mut row = vec![
            Cell::new(if p.cut_short.is_some() { format!("{load} (cut short)") } else { load }),
            right(p.rate.map_or("-".into(), num)),
            right(num(p.iops)),
            right(num(p.p50_us)),
            right(num(p.p99_us)),
            right(num(p.p99_9_us)),
        ];
        for b in &p.bounds {
            row.push(right(format!("{} {}", b.value.map(num).unwrap_or("-".into()), if b.passed { "pass" } else { "FAIL" })));
        }
        t.add_row(row);
    }
    let notes: String = c
        .points
        .iter()
        .filter_map(|p| Some(format!("{} cut short: {}\n", p.pct.map_or("max".into(), |v| format!("{v}%")), p.cut_short.as_ref()?)))
        .collect();
    out + &format!("{t}\n{notes}ended: {}\n", c.ended)
}

fn pcts(p: &[f64]) -> String {
    p.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
}

/// The dry run's line: what the curve runs, and its longest time.
pub fn describe(c: &CurveSpec, per_point: Option<std::time::Duration>) -> String {
    let n = c.pcts.len() as u32 + 1;
    let stop = c.stop.as_ref().map(|(s, _)| format!("; ends at the first point where {s} fails")).unwrap_or_default();
    let time = match per_point {
        Some(d) => format!("; at most {} in all", crate::units::format_duration(d * n)),
        None => String::new(),
    };
    format!(
        "load-latency curve (--curve {}): the point above as fast as its queue depth allows, then paced at {}% of the IOPS it measured \
         (latency from each I/O's scheduled time): {n} points{stop}{time}\n",
        pcts(&c.pcts),
        c.pcts.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("%, ")
    )
}
