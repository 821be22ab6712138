//! The report as one self-contained HTML page (inline CSS and SVG, no scripts,
//! no fetches): the results, the summary of every point with its workload,
//! and the charts. Tables wrap their text and scroll sideways inside the page
//! on a screen too narrow for them, never past its edge; charts scale to the
//! page width. Pure: results in, text out.

use super::figures::charts;
use super::report_tables::{self, Table};
use crate::results::model::RunResult;

use super::escape::html as escape;

const STYLE: &str = "body{font-family:sans-serif;margin:24px auto;padding:0 16px;color:#222;max-width:1200px}\
     .scroll{overflow-x:auto;max-width:100%}\
     table{border-collapse:collapse;margin:12px 0;font-size:13px;max-width:100%}\
     th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}\
     th{background:#f0f0f0;font-weight:600}td.n{white-space:nowrap;font-variant-numeric:tabular-nums}\
     td.l,th.l{text-align:left;overflow-wrap:break-word}td.w{min-width:16em}\
     figure{margin:18px 0}figure svg{max-width:100%;height:auto;display:block}figcaption{font-size:13px;color:#555}\
     @media print{body{margin:0;max-width:none}table{font-size:10px}figure{break-inside:avoid}}";

fn table(t: &Table, wide_column: Option<usize>) -> String {
    let mut out = String::from("<div class=scroll><table><thead><tr>");
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
            out += &format!("<td class=\"{class}\">{}</td>", escape(cell).replace('\n', "<br>"));
        }
        out += "</tr>\n";
    }
    out + "</tbody></table></div>\n"
}

pub fn html(results: &[&RunResult]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>lunmark report</title>\n<style>{STYLE}</style></head><body>\n<h1>lunmark report</h1>\n"
    );
    out += "<h2>Results</h2>\n";
    out += &table(&report_tables::results(results), None);
    out += "<h2>Summary</h2>\n<p>One row per point. Latency is per I/O, from submission to completion; \
            MB/s are 10<sup>6</sup> bytes per second; QD is the outstanding I/Os per worker per target.</p>\n";
    out += &table(&report_tables::summary(results), Some(2));
    if let Some(t) = report_tables::line_rate(results) {
        out += "<h2>Line rate</h2>\n<p>Each point's MB/s as a share of its link's usable rate per direction (<code>--link</code>).</p>\n";
        out += &table(&t, None);
    }
    if let Some(t) = report_tables::targets(results) {
        out += "<h2>Targets</h2>\n<p>Each target's figures, all workers together (IOmeter's target rows).</p>\n";
        out += &table(&t, None);
    }
    if let Some(t) = report_tables::workers(results) {
        out += "<h2>Workers</h2>\n<p>Each worker's figures, and the mean I/Os it held in flight against the depth asked.</p>\n";
        out += &table(&t, None);
    }
    out += &super::rounds::html(results);
    out += "<h2>Charts</h2>\n";
    for c in charts(results) {
        out += &format!("<figure id=\"chart-{}\">{}<figcaption>{}</figcaption></figure>\n", c.id, c.svg, escape(&c.caption));
    }
    out += "<p>Made by lunmark. Definitions of every figure: docs/result-schema.md.</p>\n</body></html>\n";
    out
}
