//! `lunmark results percentiles ID --from S --to S`: latency percentiles over
//! any window of a stored result's seconds, recomputed from the per-second
//! histograms it keeps (`results::histograms`), on the terminal or as JSON.

use anyhow::Result;

use crate::results::histograms::{self, WindowAsk, WindowFigures};
use crate::results::model::RunResult;

#[derive(clap::Args, Debug)]
pub struct PercentilesArgs {
    /// The result (a unique id prefix is enough).
    pub id: String,
    /// The window's first second, from the start of each point's measured interval.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub from: String,
    /// The window's end (excluded): the seconds starting at or after --from and before --to.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub to: String,
    /// The operation: read, write, trim or all.
    #[arg(long, value_name = "OP", default_value = "all")]
    pub op: String,
    /// Percentiles, comma-separated (from the per-second histograms, of 2
    /// significant digits: within 1%; p100 is the max).
    #[arg(long, value_name = "LIST", default_value = "50,90,99,99.9", allow_hyphen_values = true)]
    pub pct: String,
    /// Only this point (1-based) [default: every point].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_usize)]
    pub point: Option<usize>,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Seconds as given to --from or --to ("5", "5s", "2.5").
fn seconds(flag: &str, text: &str) -> Result<f64> {
    let t = text.trim();
    let n = t.strip_suffix('s').unwrap_or(t);
    match n.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => anyhow::bail!("{flag} {text:?}: give seconds from the start of the measured interval, 0 or more (5, 5s or 2.5)"),
    }
}

fn percentiles(text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|p| {
            p.trim().parse::<f64>().map_err(|_| anyhow::anyhow!("--pct {text:?}: {p:?} is no number; give percentiles such as 50,99,99.9"))
        })
        .collect()
}

/// The figures of the window, refused with one clear error before anything is printed.
pub fn figures(result: &RunResult, a: &PercentilesArgs) -> Result<(WindowAsk, Vec<WindowFigures>)> {
    let ask = WindowAsk {
        from_s: seconds("--from", &a.from)?,
        to_s: seconds("--to", &a.to)?,
        op: a.op.clone(),
        percentiles: percentiles(&a.pct)?,
        point: a.point,
    };
    let points: Vec<_> = result
        .points
        .iter()
        .map(|p| histograms::PointSeconds {
            histograms: p.summary.histograms.as_ref(),
            duration_s: p.summary.duration_s,
            params: crate::report::rows::params_text(p),
            exact: stats_of(&p.summary.latency_us, &ask.op).map(|l| histograms::ExactLatency {
                count: l.count,
                min_us: l.min,
                max_us: l.max,
            }),
        })
        .collect();
    let rows = histograms::window(&result.id, &points, &ask).map_err(anyhow::Error::msg)?;
    Ok((ask, rows))
}

/// The stored latencies of operation `op` ("read", "write", "trim" or "all").
fn stats_of<'a>(l: &'a crate::results::model::LatencyByOp, op: &str) -> Option<&'a crate::results::model::LatencyStats> {
    match op {
        "read" => Some(&l.read),
        "write" => Some(&l.write),
        "trim" => l.trim.as_ref(),
        _ => Some(&l.all),
    }
}

/// The window's figures as a table (latency in us) or as JSON.
pub fn render(result: &RunResult, ask: &WindowAsk, rows: &[WindowFigures], json: bool) -> String {
    if json {
        let body = serde_json::json!({
            "id": result.id,
            "from_s": ask.from_s,
            "to_s": ask.to_s,
            "op": ask.op,
            "significant_digits": crate::metrics::recorder::SLICE_DIGITS,
            "points": rows.iter().map(|r| serde_json::json!({
                "point": r.point,
                "params": r.params,
                "kept": r.kept,
                "from_s": r.from_s,
                "to_s": r.to_s,
                "ios": r.ios,
                "min_us": r.min_us,
                "max_us": r.max_us,
                "percentiles_us": r.percentiles_us.iter().map(|(p, v)| serde_json::json!({"pct": p, "us": v})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        return serde_json::to_string_pretty(&body).expect("JSON of figures") + "\n";
    }
    let mut out = format!(
        "result {}: latency of {} I/Os in seconds [{}, {}) of each point, us (from per-second histograms: within 1%)\n",
        result.id,
        if ask.op == "all" { "all" } else { &ask.op },
        ask.from_s,
        ask.to_s
    );
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    let mut head = vec!["point".to_string(), "seconds".into(), "I/Os".into(), "min".into()];
    head.extend(ask.percentiles.iter().map(|p| format!("p{p}")));
    head.push("max".into());
    table.set_header(head);
    let us = |v: Option<f64>| v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into());
    for r in rows {
        let mut row = vec![format!("{} ({})", r.point, r.params)];
        match (r.kept, r.from_s.zip(r.to_s)) {
            (false, _) => row.push("not kept for this point".into()),
            (true, None) => row.push("none in the window".into()),
            (true, Some((a, b))) => row.push(format!("{}-{}", crate::report::rows::fmt(a), crate::report::rows::fmt(b))),
        }
        row.push(r.ios.to_string());
        row.push(us(r.min_us));
        row.extend(ask.percentiles.iter().map(|p| us(r.percentiles_us.iter().find(|(q, _)| q == p).map(|(_, v)| *v))));
        row.push(us(r.max_us));
        table.add_row(row);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out
}
