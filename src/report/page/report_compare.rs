//! The report's comparison section: with several results, each one against
//! the first, point by point, with the rows and numbers of `compare` (the
//! repeats' means, difference, ratio, Welch's p-value and the verdict), and
//! "unknown (no repeats)" where a difference cannot be tested. A result whose
//! workload differs from the baseline's is not compared, and the section
//! says why. Pure.

use crate::report::compare::{self, Basis, Comparison};
use crate::report::page::report_tables::Table;
use crate::report::rows::name;
use crate::results::model::RunResult;

/// The section as the HTML page and the Markdown file both render it.
pub struct Section {
    /// Lines before the tables: what is compared with what, and results left out.
    pub intro: Vec<String>,
    /// One table per point: (its title, its rows).
    pub tables: Vec<(String, Table)>,
    /// How significance is decided, and the comparison's notes.
    pub footer: Vec<String>,
}

fn num(v: f64) -> String {
    crate::report::human::number(v)
}

/// The comparison section, or None for a single result. `force`: results
/// whose workload differs from the baseline's are compared too, said so.
pub fn section(results: &[&RunResult], force: bool) -> Option<Section> {
    if results.len() < 2 {
        return None;
    }
    let base = results[0];
    let mut intro = vec![format!("Each result against the first, {}, at each point both ran.", name(base))];
    let mut compared = vec![base];
    for r in &results[1..] {
        // Two curves' paced points differ in rate by design (each paced from its own maximum).
        let diff = crate::report::curve_compare::differences(base, r);
        if diff.is_empty() {
            compared.push(r);
        } else if force {
            intro.push(format!("{}'s workload differs from the baseline's ({}): compared anyway (--force)", name(r), diff.join(", ")));
            compared.push(r);
        } else {
            intro.push(format!(
                "{} is not compared: its workload differs from the baseline's ({}); report --force compares it anyway",
                name(r),
                diff.join(", ")
            ));
        }
    }
    if compared.len() < 2 {
        return Some(Section { intro, tables: Vec::new(), footer: Vec::new() });
    }
    let c = compare::compare(&compared, Basis::Means);
    let tables = c.points.iter().map(|p| (format!("point {} · {}", p.params, compare::basis_line(&c, p)), table(&c, p))).collect();
    intro.extend(c.unmatched.iter().map(|u| format!("not compared: {u}")));
    Some(Section { intro, tables, footer: footer(&c) })
}

fn table(c: &Comparison, p: &compare::PointComparison) -> Table {
    let mut headers: Vec<String> = vec!["metric".into(), "unit".into(), format!("{} (baseline)", c.results[0])];
    for r in &c.results[1..] {
        headers.extend([r.clone(), "difference".into(), "ratio".into(), "p-value".into(), "verdict".into()]);
    }
    let rows = p
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.metric.clone(), row.unit.clone(), num(row.baseline)];
            for v in &row.versus {
                cells.extend([
                    num(v.value),
                    v.diff_pct.map(|d| format!("{d:+.1}%")).unwrap_or_else(|| "-".into()),
                    v.ratio.map(|r| format!("{r:.2}x")).unwrap_or_else(|| "-".into()),
                    match v.p_value {
                        Some(p) if p < 0.001 => "<0.001".into(),
                        Some(p) => format!("{p:.3}"),
                        None => v.significance.clone(),
                    },
                    verdict(v),
                ]);
            }
            cells
        })
        .collect();
    let numeric = headers.iter().enumerate().map(|(i, _)| i == 2 || (i > 2 && (i - 3) % 5 < 3)).collect();
    Table { headers, numeric, rows }
}

/// "better (significant)", "not significant", "worse (significance unknown: no repeats)".
fn verdict(v: &compare::Versus) -> String {
    match (v.verdict.as_str(), v.p_value) {
        // Equal to 0.1%: no direction to call significant.
        (same @ ("not significant" | "same"), _) => same.into(),
        (dir, Some(_)) => format!("{dir} (significant)"),
        (dir, None) => format!("{dir} ({})", v.significance),
    }
}

fn footer(c: &Comparison) -> Vec<String> {
    let mut lines = vec![c.significance_rule.clone()];
    lines.extend(c.notes.iter().map(|n| format!("note: {n}")));
    lines
}
