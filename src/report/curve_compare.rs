//! Load-latency curves (or knee searches) side by side (issue 28), for
//! `compare` and the report alike: two curves by percentage of their own
//! maximum (achieved IOPS and p50, p99, p99.9 latency of each, and each
//! result's IOPS and p99 over the baseline's); two searches by their found
//! point and first failing one. Each curve's paced points run at rates taken
//! from its own maximum, so their workloads differ in rate by design: that
//! difference does not stop the comparison (`differences`). Pure.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, Table};
use serde::Serialize;

use crate::report::cells::{num, right};
use crate::report::compare::workload_differences;
use crate::report::point_view::names;
use crate::results::model::{CurveOutcome, RunResult, SearchPoint};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Curve,
    Search,
}

/// One result's figures at one row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figures {
    /// A search's queue depth; null for a curve.
    pub qd: Option<u32>,
    pub iops: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    /// "FAIL" where a bound failed, "cut short" where the point was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// "max", "50%" (a curve), "found" or "first failing" (a search).
    pub load: String,
    /// One per result, the baseline first; null where it has no such point.
    pub figures: Vec<Option<Figures>>,
    /// One per result after the baseline: its IOPS and p99 over the baseline's.
    pub iops_ratio: Vec<Option<f64>>,
    pub p99_ratio: Vec<Option<f64>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SideBySide {
    pub kind: Kind,
    pub results: Vec<String>,
    /// What names each result in the table's headers: its label when short, else its id's first 8 characters.
    pub short: Vec<String>,
    /// Each result's curve (percentages and stop bounds) or search expression, and how it ended.
    pub asked: Vec<String>,
    pub ended: Vec<String>,
    pub rows: Vec<Row>,
}

/// What the results hold in common: curves, or searches (None: not every one has one).
pub fn kind(results: &[&RunResult]) -> Option<Kind> {
    if results.len() < 2 {
        None
    } else if results.iter().all(|r| r.curve.is_some()) {
        Some(Kind::Curve)
    } else if results.iter().all(|r| r.search.is_some()) {
        Some(Kind::Search)
    } else {
        None
    }
}

/// `compare::workload_differences`, less what two curves differ in by design:
/// the rate of each paced point (a percentage of each one's own maximum).
pub fn differences(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut d = workload_differences(a, b);
    if a.curve.is_some() && b.curve.is_some() {
        d.retain(|l| !(l.starts_with("point curve_pct=") && l.contains("].rate: ")));
    }
    d
}

fn load_of(pct: Option<f64>) -> String {
    pct.map_or("max".into(), |v| format!("{v}%"))
}

fn curve_figures(c: &CurveOutcome, pct: Option<f64>) -> Option<Figures> {
    let p = c.points.iter().find(|p| p.pct == pct)?;
    let note = match (&p.cut_short, p.passed) {
        (Some(_), _) => Some("cut short".into()),
        (None, Some(false)) => Some("FAIL".into()),
        _ => None,
    };
    Some(Figures { qd: None, iops: p.iops, p50_us: p.p50_us, p99_us: p.p99_us, p99_9_us: p.p99_9_us, note })
}

fn search_figures(r: &RunResult, s: Option<&SearchPoint>) -> Option<Figures> {
    let s = s?;
    let l = &r.points.get(s.point)?.summary.latency_us.all;
    let note = (!s.passed).then(|| "FAIL".to_string());
    Some(Figures { qd: Some(s.qd), iops: s.iops, p50_us: l.p50, p99_us: s.p99_us, p99_9_us: l.p99_9, note })
}

fn row(load: String, figures: Vec<Option<Figures>>) -> Row {
    let ratio = |get: fn(&Figures) -> f64| -> Vec<Option<f64>> {
        let base = figures[0].as_ref().map(get).filter(|b| *b > 0.0);
        figures[1..].iter().map(|f| Some(get(f.as_ref()?) / base?)).collect()
    };
    Row { load, iops_ratio: ratio(|f| f.iops), p99_ratio: ratio(|f| f.p99_us), figures }
}

/// The results' curves or searches side by side (None unless every one has one, and there are two or more).
pub fn side_by_side(results: &[&RunResult]) -> Option<SideBySide> {
    let kind = kind(results)?;
    let rows = match kind {
        Kind::Curve => {
            let mut loads: Vec<Option<f64>> = vec![None];
            for p in results.iter().flat_map(|r| r.curve.iter().flat_map(|c| c.points.iter())) {
                if !loads.contains(&p.pct) {
                    loads.push(p.pct);
                }
            }
            loads
                .into_iter()
                .map(|pct| row(load_of(pct), results.iter().map(|r| curve_figures(r.curve.as_ref()?, pct)).collect()))
                .collect()
        }
        Kind::Search => {
            let found = results.iter().map(|r| search_figures(r, r.search.as_ref()?.found.as_ref())).collect();
            let failing = results.iter().map(|r| search_figures(r, r.search.as_ref()?.first_failing.as_ref())).collect();
            vec![row("found".into(), found), row("first failing".into(), failing)]
        }
    };
    let asked = results
        .iter()
        .map(|r| match (&r.curve, &r.search) {
            (Some(c), _) => {
                let pcts: Vec<String> = c.pcts.iter().map(|v| v.to_string()).collect();
                format!("--curve {}{}", pcts.join(","), c.stop.as_ref().map(|s| format!(", stop at {s}")).unwrap_or_default())
            }
            (None, Some(s)) => format!("--sla {}", s.expr),
            _ => String::new(),
        })
        .collect();
    let ended = results
        .iter()
        .map(|r| r.curve.as_ref().map(|c| c.ended.clone()).or(r.search.as_ref().map(|s| s.ended.clone())).unwrap_or_default())
        .collect();
    let short = results.iter().map(|r| short_name(r)).collect();
    Some(SideBySide { kind, results: names(results), short, asked, ended, rows })
}

/// What names a result where room is short (the table's headers, the knees
/// on the compared chart): its label when short, else its id's first 8 characters.
pub fn short_name(r: &RunResult) -> String {
    match &r.label {
        Some(l) if l.chars().count() <= 16 => crate::report::escape::terminal(l),
        _ => r.id.chars().take(8).collect(),
    }
}

fn ratio(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite()).map(|v| format!("{v:.2}x")).unwrap_or_else(|| "-".into())
}

/// The side-by-side table, then what each result asked and how it ended.
pub fn render(s: &SideBySide) -> String {
    let what = match s.kind {
        Kind::Curve => "load-latency curves side by side, by percentage of each one's own maximum",
        Kind::Search => "knee searches side by side: the found point and the first failing one",
    };
    let mut out =
        format!("\n{what} (the first, {}, is the baseline; a ratio is a result's figure over the baseline's; latency in us)\n", s.short[0]);
    // The headers name each result shortly; here in full, once.
    for (short, name) in s.short.iter().zip(&s.results) {
        out += &format!("{short}: {}\n", crate::report::escape::terminal(name));
    }
    // Two header lines: whose (short), then what; the table fits a terminal.
    let mut header = vec!["load".to_string()];
    for name in &s.short {
        if s.kind == Kind::Search {
            header.push(format!("{name}\nqd"));
        }
        header.extend(["IOPS", "p50", "p99", "p99.9"].map(|h| format!("{name}\n{h}")));
    }
    for name in &s.short[1..] {
        header.extend([format!("{name}\nIOPS ratio"), format!("{name}\np99 ratio")]);
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY).set_header(header);
    for r in &s.rows {
        let mut cells = vec![Cell::new(&r.load)];
        for f in &r.figures {
            let width = if s.kind == Kind::Search { 5 } else { 4 };
            let Some(f) = f else {
                cells.extend((0..width).map(|_| right("-".into())));
                continue;
            };
            if s.kind == Kind::Search {
                cells.push(right(f.qd.map(|q| q.to_string()).unwrap_or_default()));
            }
            let iops = match &f.note {
                Some(n) => format!("{} {n}", num(f.iops)),
                None => num(f.iops),
            };
            cells.extend([right(iops), right(num(f.p50_us)), right(num(f.p99_us)), right(num(f.p99_9_us))]);
        }
        for (i, p) in r.iops_ratio.iter().zip(&r.p99_ratio) {
            cells.extend([right(ratio(*i)), right(ratio(*p))]);
        }
        t.add_row(cells);
    }
    out += &format!("{t}\n");
    for ((name, asked), ended) in s.short.iter().zip(&s.asked).zip(&s.ended) {
        out += &format!("{name}: {asked}; ended: {ended}\n");
    }
    out
}
