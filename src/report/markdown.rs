//! The report as Markdown, with each chart as an SVG file beside it: the same
//! tables and charts as the HTML page, for pasting into a document. Pure:
//! results in, (Markdown text, [(file name, SVG text)]) out; the caller writes them.

use super::figures::charts;
use super::report_tables::{self, Table};
use crate::results::model::RunResult;

/// A table cell: its text escaped (`escape::markdown`); a further line (a
/// point's "cut short" note) after a `<br>`, the line break a cell takes.
fn cell(t: &str) -> String {
    super::escape::markdown(t)
}

fn table(t: &Table) -> String {
    let mut out = format!("| {} |\n", t.headers.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    out += &format!("|{}\n", t.numeric.iter().map(|n| if *n { "---:|" } else { ":---|" }).collect::<String>());
    for row in &t.rows {
        out += &format!("| {} |\n", row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    out
}

/// Markdown with the charts as separate SVG files named `STEM-ID.svg`.
pub fn markdown(results: &[&RunResult], stem: &str) -> (String, Vec<(String, String)>) {
    let mut md = String::from("# lunmark report\n\n## Results\n\n");
    md += &table(&report_tables::results(results));
    md += "\n## Summary\n\nOne row per point. Latency is per I/O, from submission to completion; \
           MB/s are 10^6 bytes per second; QD is the outstanding I/Os per worker per target.\n\n";
    md += &table(&report_tables::summary(results));
    if let Some(t) = report_tables::line_rate(results) {
        md += "\n## Line rate\n\nEach point's MB/s as a share of its link's usable rate per direction (`--link`).\n\n";
        md += &table(&t);
    }
    if let Some(t) = report_tables::targets(results) {
        md += "\n## Targets\n\nEach target's figures, all workers together (IOmeter's target rows).\n\n";
        md += &table(&t);
    }
    if let Some(t) = report_tables::workers(results) {
        md += "\n## Workers\n\nEach worker's figures, and the mean I/Os it held in flight against the depth asked.\n\n";
        md += &table(&t);
    }
    md += &super::rounds::markdown(results);
    md += "\n## Charts\n";
    let mut files = Vec::new();
    for c in charts(results) {
        let file = format!("{stem}-{}.svg", c.id);
        md += &format!("\n![{}]({file})\n", super::escape::markdown(&c.caption));
        files.push((file, c.svg));
    }
    (md, files)
}
