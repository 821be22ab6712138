//! The report of a run made of rounds (`pts-iops`, SNIA PTS): the convergence
//! plot (the watched point's IOPS per round, with the steady window's mean and
//! its 90%/110% lines, as PTS draws them) and the IOPS table (read/write mix x
//! transfer size, each the mean over the window's rounds). Pure: results in,
//! SVG and HTML text out.

use std::collections::BTreeMap;

use crate::report::human::number;
use crate::report::page::charts::{self, Chart, Series};
use crate::results::model::RunResult;
use crate::units::{counted, parse_size};

/// The convergence plot of every result that ran in rounds.
pub fn charts(results: &[&RunResult]) -> Vec<Chart> {
    let names = crate::report::point_view::names(results);
    let mut out = Vec::new();
    for (i, (r, name)) in results.iter().zip(&names).enumerate() {
        let Some(o) = &r.rounds else { continue };
        let n = o.watched_iops.len();
        if n == 0 {
            continue;
        }
        let x: Vec<f64> = (1..=n).map(|k| k as f64).collect();
        let w = (o.window_rounds as usize).min(n);
        // The window's lines only when a whole window ran (no mean otherwise).
        let mean = o.mean.filter(|m| *m > 0.0 && o.window_complete());
        let in_window = |k: usize, f: f64| mean.filter(|_| k >= n - w).map(|m| m * f);
        let mut series = vec![Series { label: format!("IOPS of {}", o.watch), values: o.watched_iops.iter().map(|v| Some(*v)).collect() }];
        if mean.is_some() {
            series.push(Series { label: "window mean".into(), values: (0..n).map(|k| in_window(k, 1.0)).collect() });
            series.push(Series { label: "110% of the mean".into(), values: (0..n).map(|k| in_window(k, 1.1)).collect() });
            series.push(Series { label: "90% of the mean".into(), values: (0..n).map(|k| in_window(k, 0.9)).collect() });
        }
        let verdict = match o.reached_at_round {
            Some(k) if o.reached => format!("steady at round {k}"),
            _ if mean.is_none() => {
                format!("not steady in {}, the {}-round window not complete", counted(n as u64, "round"), o.window_rounds)
            }
            _ => format!("not steady in {}", counted(n as u64, "round")),
        };
        out.push(Chart {
            id: format!("rounds-{}", i + 1),
            caption: format!("Steady-state convergence of {name}: IOPS of the point {} in each round, {verdict}", o.watch),
            svg: charts::lines_at_values(&format!("Steady-state convergence: {}", o.watch), "round", "IOPS", &x, &series, false),
        });
    }
    out
}

/// A read/write mix x transfer size table of one result: IOPS of each point,
/// the mean over the rounds of the last window.
pub struct IopsTable {
    pub title: String,
    /// Transfer sizes, as the sweep wrote them.
    pub columns: Vec<String>,
    /// ("read/write" mix, IOPS per column).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
}

pub fn iops_tables(results: &[&RunResult]) -> Vec<IopsTable> {
    let names = crate::report::point_view::names(results);
    let mut out = Vec::new();
    for (r, name) in results.iter().zip(&names) {
        let Some(o) = &r.rounds else { continue };
        let last = r.points.iter().filter_map(|p| p.params.get("round").and_then(|v| v.as_u64())).max().unwrap_or(0);
        let first = last.saturating_sub(o.window_rounds as u64 - 1).max(1);
        // (read %, bs) -> IOPS of each round in the window.
        let mut cells: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
        let (mut mixes, mut sizes): (Vec<f64>, Vec<String>) = (Vec::new(), Vec::new());
        for p in &r.points {
            let Some(round) = p.params.get("round").and_then(|v| v.as_u64()) else { continue };
            let read = p.params.get("read").and_then(|v| v.as_f64());
            let bs = p.params.get("bs").and_then(|v| v.as_str()).map(str::to_string);
            let (Some(read), Some(bs)) = (read, bs) else { continue };
            if !mixes.contains(&read) {
                mixes.push(read);
            }
            if !sizes.contains(&bs) {
                sizes.push(bs.clone());
            }
            if round >= first {
                cells.entry((read.to_string(), bs)).or_default().push(p.summary.iops);
            }
        }
        if mixes.is_empty() {
            continue;
        }
        // Largest transfers first, as PTS tabulates them.
        sizes.sort_by_key(|s| std::cmp::Reverse(parse_size(s).map(|b| b.get()).unwrap_or(0)));
        mixes.sort_by(|a, b| b.total_cmp(a));
        let rows = mixes
            .iter()
            .map(|m| {
                let values = sizes
                    .iter()
                    .map(|bs| cells.get(&(m.to_string(), bs.clone())).map(|v| v.iter().sum::<f64>() / v.len() as f64))
                    .collect();
                (format!("{}/{}", m, 100.0 - m), values)
            })
            .collect();
        out.push(IopsTable {
            title: if o.window_complete() {
                format!("{name}: IOPS by read/write mix and transfer size, mean of rounds {first}-{last}")
            } else {
                format!(
                    "{name}: IOPS by read/write mix and transfer size, mean of rounds {first}-{last} (the {}-round window not complete)",
                    o.window_rounds
                )
            },
            columns: sizes,
            rows,
        });
    }
    out
}

use crate::report::escape::html as escape;
use crate::report::escape::markdown as md;

/// The IOPS tables as an HTML section (empty when no result ran in rounds).
pub fn html(results: &[&RunResult]) -> String {
    let tables = iops_tables(results);
    if tables.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<h2>Rounds (SNIA PTS)</h2>\n<p>Each cell is the IOPS of one read/write mix and transfer size, \
         the mean over the rounds of the last steady-state window.</p>\n",
    );
    for (t, r) in tables.iter().zip(results.iter().filter(|r| r.rounds.is_some())) {
        if let Some(o) = &r.rounds {
            out += &format!("<p>{}</p>\n", escape(crate::report::rounds_line::rounds_line(o).trim()));
        }
        out += &format!(
            "<div class=scroll><table id=\"pts-iops\"><caption>{}</caption><thead><tr><th class=l>read/write</th>",
            escape(&t.title)
        );
        for c in &t.columns {
            out += &format!("<th>{}</th>", escape(c));
        }
        out += "</tr></thead><tbody>\n";
        for (mix, values) in &t.rows {
            out += &format!("<tr><td class=\"l\">{}</td>", escape(mix));
            for v in values {
                out += &format!("<td class=\"n\">{}</td>", v.map(number).unwrap_or_else(|| "-".into()));
            }
            out += "</tr>\n";
        }
        out += "</tbody></table></div>\n";
    }
    out
}

/// The IOPS tables as a Markdown section (empty when no result ran in rounds).
pub fn markdown(results: &[&RunResult]) -> String {
    let tables = iops_tables(results);
    if tables.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Rounds (SNIA PTS)\n\nEach cell is the IOPS of one read/write mix and transfer size, \
         the mean over the rounds of the last steady-state window.\n",
    );
    for (t, r) in tables.iter().zip(results.iter().filter(|r| r.rounds.is_some())) {
        if let Some(o) = &r.rounds {
            out += &format!("\n{}\n", md(crate::report::rounds_line::rounds_line(o).trim()));
        }
        let columns: Vec<String> = t.columns.iter().map(|c| md(c)).collect();
        out += &format!("\n{}\n\n| read/write | {} |\n|:---|{}\n", md(&t.title), columns.join(" | "), "---:|".repeat(t.columns.len()));
        for (mix, values) in &t.rows {
            let cells: Vec<String> = values.iter().map(|v| v.map(number).unwrap_or_else(|| "-".into())).collect();
            out += &format!("| {} | {} |\n", md(mix), cells.join(" | "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::steady::RoundsOutcome;

    #[test]
    fn an_incomplete_window_has_no_mean_and_says_so() {
        // Four rounds of a five-round window, as an interrupted run leaves them.
        let o = RoundsOutcome {
            watch: "read=0 bs=4k".into(),
            watched_iops: vec![900.0, 950.0, 1000.0, 980.0],
            window_rounds: 5,
            max_rounds: 25,
            range_limit_pct: 20.0,
            slope_limit_pct: 10.0,
            ..Default::default()
        };
        let json = serde_json::to_value(&o).unwrap();
        assert!(json["mean"].is_null() && json["range"].is_null() && json["slope"].is_null(), "{json}");
        let line = crate::report::rounds_line::rounds_line(&o);
        assert!(line.contains("window of 5 rounds not complete (4 ran)") && !line.contains("mean 0"), "{line}");
        let mut r = crate::report::golden_result("result-a.json");
        r.rounds = Some(o);
        let charts = charts(&[&r]);
        assert!(charts[0].caption.contains("window not complete"), "{}", charts[0].caption);
        assert!(!charts[0].svg.contains("window mean"), "no window lines at 0");
    }
}
