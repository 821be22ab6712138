//! The report as one self-contained HTML page (inline CSS and SVG, no scripts,
//! no fetches): the results, the summary of every point with its workload,
//! and the charts. Tables wrap their text and scroll sideways inside the page
//! on a screen too narrow for them, never past its edge; charts scale to the
//! page width. Pure: results in, text out.

use crate::report::page::figures::charts;
use crate::report::page::report_tables::{self, Table};
use crate::results::model::RunResult;

use crate::report::escape::html as escape;

// Text outside tables breaks anywhere a word is too long for the page (a
// label of 1000 characters without a space); inside them, only where a word
// must break (a table too wide scrolls in its .scroll box instead). Below
// 900 px the summary's 16 columns of mean ± stdev get a smaller font still:
// at 11 px they ended 13 px short of the edge at 800 px or overflowed, by
// how many digits the repeats' means and deviations happened to have.
const STYLE: &str = "body{font-family:sans-serif;margin:24px auto;padding:0 16px;color:#222;max-width:1200px;overflow-wrap:anywhere}\
     .scroll{overflow-x:auto;max-width:100%}\
     table{border-collapse:collapse;margin:12px 0;font-size:13px;max-width:100%}\
     th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top;overflow-wrap:break-word}\
     th{background:#f0f0f0;font-weight:600}td.n{white-space:nowrap;font-variant-numeric:tabular-nums}\
     td.l,th.l{text-align:left;overflow-wrap:break-word}td.w{min-width:16em}\
     table.fit td.n{white-space:normal}.sd{white-space:nowrap}table.fit td.w{min-width:9em}\
     @media (max-width:1100px){table.fit{font-size:11px}table.fit th,table.fit td{padding:2px 3px}table.fit td.w{min-width:7em}}\
     @media (max-width:900px){table.fit{font-size:10px}table.fit th,table.fit td{padding:2px 2px}table.fit td.w{min-width:6em}}\
     figure{margin:18px 0}figure svg{max-width:100%;height:auto;display:block}figcaption{font-size:13px;color:#555}\
     @media print{body{margin:0;max-width:none}table{font-size:10px}figure{break-inside:avoid}}";

fn table(t: &Table, wide_column: Option<usize>) -> String {
    table_of_class(t, wide_column, "")
}

/// A numeric cell: a repeated figure's "± stdev" kept whole on a line of its
/// own when the column is too narrow for both (a `fit` table's cells wrap).
fn numeric_cell(cell: &str) -> String {
    match cell.split_once(" ± ") {
        Some((mean, sd)) => format!("{} <span class=sd>± {}</span>", escape(mean), escape(sd)),
        None => escape(cell),
    }
}

/// A table with `class` on it: `fit` (the summary's 16 columns) wraps its
/// headers and figures, and its text is smaller in a narrow window, so that
/// it fits from 800 px up instead of scrolling sideways.
fn table_of_class(t: &Table, wide_column: Option<usize>, table_class: &str) -> String {
    let class_attr = if table_class.is_empty() { String::new() } else { format!(" class={table_class}") };
    let mut out = format!("<div class=scroll><table{class_attr}><thead><tr>");
    for (h, n) in t.headers.iter().zip(&t.numeric) {
        out += &format!("<th{}>{}</th>", if *n { "" } else { " class=l" }, escape(h));
    }
    out += "</tr></thead><tbody>\n";
    for row in &t.rows {
        out += "<tr>";
        for (i, (cell, n)) in row.iter().zip(&t.numeric).enumerate() {
            let class = if *n {
                "n"
            } else if Some(i) == wide_column {
                "l w"
            } else {
                "l"
            };
            // A cell's further lines (a point's "cut short" note) on lines of their own.
            let text = if *n { numeric_cell(cell) } else { escape(cell) };
            out += &format!("<td class=\"{class}\">{}</td>", text.replace('\n', "<br>"));
        }
        out += "</tr>\n";
    }
    out + "</tbody></table></div>\n"
}

/// What the user adds to a report: its title and a note (`report --title`,
/// `--note`), and whether results of differing workloads are compared anyway
/// (`report --force`).
#[derive(Clone, Debug, Default)]
pub struct PageText {
    pub title: Option<String>,
    pub note: Option<String>,
    pub force: bool,
}

impl PageText {
    pub fn title(&self) -> &str {
        self.title.as_deref().unwrap_or("lunmark report")
    }
}

/// The comparison section: each result against the first, one table per point.
fn comparison(results: &[&RunResult], force: bool) -> String {
    let Some(s) = crate::report::page::report_compare::section(results, force) else { return String::new() };
    let mut out = String::from("<h2 id=\"comparison\">Comparison</h2>\n");
    out += &s.intro.iter().map(|l| format!("<p>{}</p>\n", escape(l))).collect::<String>();
    for (title, t) in &s.tables {
        out += &format!("<h3>{}</h3>\n{}", escape(title), table(t, None));
    }
    out += &s.footer.iter().map(|l| format!("<p class=\"note\">{}</p>\n", escape(l))).collect::<String>();
    out
}

pub fn html(results: &[&RunResult], text: &PageText) -> String {
    let title = escape(text.title());
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title>\n<style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
    );
    if let Some(note) = &text.note {
        out += &format!("<p id=\"note\">{}</p>\n", escape(note).replace('\n', "<br>"));
    }
    out += "<h2>Results</h2>\n";
    out += &table(&report_tables::results(results), None);
    out += &comparison(results, text.force);
    out += &format!(
        "<h2>Summary</h2>\n<p>One row per point. {}; MB/s are 10<sup>6</sup> bytes per second; QD is the outstanding I/Os per worker per target.",
        escape(&crate::report::latency_basis::sentence(results))
    );
    if crate::report::shown::any_repeats(results) {
        out += &format!(" {}", escape(crate::report::shown::SPREAD_RULE));
    }
    out += "</p>\n";
    out += &table_of_class(&report_tables::summary(results), Some(2), "fit");
    if let Some(t) = report_tables::cpu(results) {
        out += "<h2>CPU</h2>\n<p>CPU utilization of all cores, CPU efficiency (IOPS and MB/s per CPU %) and service demand \
                (µs of CPU per KB moved); with <code>--cpus</code>, the pinned CPUs' own.</p>\n";
        out += &table(&t, None);
    }
    if let Some(t) = report_tables::power(results) {
        out += "<h2>Power</h2>\n<p>Each measure in its own column: per watt of the whole draw, and per watt above the idle \
                baseline (<code>--idle</code>). A point without a valid figure shows \"-\" and why in its notes.</p>\n";
        out += &table(&t, None);
    }
    if let Some(t) = crate::report::page::study_tables::cache_study(results) {
        out += "<h2>Cache study</h2>\n<p>At each cache size, the read hit ratio, read latency and IOPS, and their change against the smallest size (paper 001's table).</p>\n";
        out += &table(&t, None);
    }
    if let Some(t) = report_tables::line_rate(results) {
        out += "<h2>Line rate</h2>\n<p>Each point's MB/s as a share of its link's usable rate per direction (<code>--link</code>).</p>\n";
        out += &table(&t, None);
    }
    if let Some(t) = report_tables::targets(results) {
        out += &format!(
            "<h2>Targets</h2>\n<p>Each target's figures, all workers together (IOmeter's target rows).{}</p>\n",
            report_tables::windows_note(results)
        );
        out += &table(&t, None);
    }
    if let Some(t) = report_tables::workers(results) {
        out += &format!(
            "<h2>Workers</h2>\n<p>Each worker's figures, and the mean I/Os it held in flight against the depth asked.{}</p>\n",
            report_tables::windows_note(results)
        );
        out += &table(&t, None);
    }
    out += &crate::report::page::rounds::html(results);
    out += &crate::report::page::outcomes::html(results);
    out += "<h2 id=\"metadata\">About each result</h2>\n<p>What ran, where, how, and every warning it raised.</p>\n";
    for (r, name) in results.iter().zip(crate::report::point_view::names(results)) {
        out += &format!("<h3>{}</h3>\n{}", escape(&name), table(&crate::report::page::report_meta::table(r), Some(1)));
    }
    out += "<h2>Charts</h2>\n";
    for c in charts(results) {
        out += &format!("<figure id=\"chart-{}\">{}<figcaption>{}</figcaption></figure>\n", c.id, c.svg, escape(&c.caption));
    }
    out += "<p>Made by lunmark. Definitions of every figure: docs/result-schema.md.</p>\n</body></html>\n";
    out
}
