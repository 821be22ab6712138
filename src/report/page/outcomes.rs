//! A knee search's steps and a load-latency curve's points in the report, as
//! the terminal shows them (the same table, pre-formatted): what was found,
//! the first failing step, and why the search or the curve ended. Pure.

use crate::report::escape;
use crate::report::point_view::names;
use crate::report::{curve_compare, curve_text, search_text};
use crate::results::model::RunResult;

/// Each result's search and curve, as (heading, result name, the terminal's text);
/// first, with several results that all have one, them side by side as `compare` shows them.
fn outcomes(results: &[&RunResult]) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    if let Some(s) = curve_compare::side_by_side(results) {
        let heading = match s.kind {
            curve_compare::Kind::Curve => "Load-latency curves side by side",
            curve_compare::Kind::Search => "Knee searches side by side",
        };
        out.push((heading, s.results.join(", "), curve_compare::render(&s)));
    }
    for (r, name) in results.iter().zip(names(results)) {
        if let Some(s) = &r.search {
            out.push(("Knee search", name.clone(), search_text::render(s)));
        }
        if let Some(c) = &r.curve {
            out.push(("Load-latency curve", name, curve_text::render(c)));
        }
    }
    out
}

/// The searches and curves as HTML sections (empty when there are none).
pub fn html(results: &[&RunResult]) -> String {
    let mut out = String::new();
    for (heading, name, text) in outcomes(results) {
        out += &format!("<h2>{heading}: {}</h2>\n<pre>{}</pre>\n", escape::html(&name), escape::html(text.trim_matches('\n')));
    }
    out
}

/// The searches and curves as Markdown sections, each table an indented code block.
pub fn markdown(results: &[&RunResult]) -> String {
    let mut out = String::new();
    for (heading, name, text) in outcomes(results) {
        let block: String = text.trim_matches('\n').lines().map(|l| format!("    {l}\n")).collect();
        out += &format!("\n## {heading}: {}\n\n{block}", escape::markdown(&name));
    }
    out
}
