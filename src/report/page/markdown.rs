//! The report as Markdown, with each chart as an SVG file beside it: the same
//! tables and charts as the HTML page, for pasting into a document. Pure:
//! results in, (Markdown text, [(file name, SVG text)]) out; the caller writes them.

use crate::report::page::figures::charts;
use crate::report::page::html::PageText;
use crate::report::page::report_tables::{self, Table};
use crate::results::model::RunResult;

/// A table cell: its text escaped (`escape::markdown`); a further line (a
/// point's "cut short" note) after a `<br>`, the line break a cell takes.
fn cell(t: &str) -> String {
    crate::report::escape::markdown(t)
}

fn table(t: &Table) -> String {
    let mut out = format!("| {} |\n", t.headers.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
    out += &format!("|{}\n", t.numeric.iter().map(|n| if *n { "---:|" } else { ":---|" }).collect::<String>());
    for row in &t.rows {
        out += &format!("| {} |\n", row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    out
}

/// Text outside a table, Markdown's own characters escaped so user text
/// (a title, a note, a label) reads as written: inline ones anywhere, and a
/// heading, list or quote marker at the start of a line.
pub fn text(t: &str) -> String {
    t.lines()
        .map(|line| {
            // `#` is escaped wherever it stands; the other markers only open a line.
            let escaped = crate::report::escape::markdown(line);
            match line.chars().next() {
                Some('-' | '+' | '=') => format!("\\{escaped}"),
                Some(c) if c.is_ascii_digit() && line.trim_start_matches(|c: char| c.is_ascii_digit()).starts_with(['.', ')']) => {
                    let digits = line.chars().take_while(char::is_ascii_digit).count();
                    format!("{}\\{}", &escaped[..digits], &escaped[digits..])
                }
                _ => escaped,
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The comparison section: each result against the first, one table per point.
fn comparison(results: &[&RunResult], force: bool) -> String {
    let Some(s) = crate::report::page::report_compare::section(results, force) else { return String::new() };
    let mut md = String::from("\n## Comparison\n\n");
    md += &s.intro.iter().map(|l| format!("{}\n\n", text(l))).collect::<String>();
    for (title, t) in &s.tables {
        md += &format!("### {}\n\n{}\n", text(title), table(t));
    }
    md += &s.footer.iter().map(|l| format!("{}\n\n", text(l))).collect::<String>();
    md
}

/// Markdown with the charts as separate SVG files named `STEM-ID.svg`.
pub fn markdown(results: &[&RunResult], stem: &str, page: &PageText) -> (String, Vec<(String, String)>) {
    let mut md = format!("# {}\n\n", text(page.title()));
    if let Some(note) = &page.note {
        md += &format!("{}\n\n", text(note).replace('\n', "  \n"));
    }
    md += "## Results\n\n";
    md += &table(&report_tables::results(results));
    md += &comparison(results, page.force);
    md += &format!(
        "\n## Summary\n\nOne row per point. {}; MB/s are 10^6 bytes per second; QD is the outstanding I/Os per worker per target.",
        crate::report::escape::markdown(&crate::report::latency_basis::sentence(results))
    );
    if crate::report::shown::any_repeats(results) {
        md += &format!(" {}", crate::report::shown::SPREAD_RULE);
    }
    md += "\n\n";
    md += &table(&report_tables::summary(results));
    if let Some(t) = report_tables::cpu(results) {
        md += "\n## CPU\n\nCPU utilization of all cores, CPU efficiency (IOPS and MB/s per CPU %) and service demand \
               (µs of CPU per KB moved); with `--cpus`, the pinned CPUs' own.\n\n";
        md += &table(&t);
    }
    if let Some(t) = report_tables::power(results) {
        md += "\n## Power\n\nEach measure in its own column: per watt of the whole draw, and per watt above the idle \
               baseline (`--idle`). A point without a valid figure shows \"-\" and why in its notes.\n\n";
        md += &table(&t);
    }
    if let Some(t) = crate::report::page::study_tables::cache_study(results) {
        md += "\n## Cache study\n\nAt each cache size, the read hit ratio, read latency and IOPS, and their change against the smallest size (paper 001's table).\n\n";
        md += &table(&t);
    }
    if let Some(t) = report_tables::line_rate(results) {
        md += "\n## Line rate\n\nEach point's MB/s as a share of its link's usable rate per direction (`--link`).\n\n";
        md += &table(&t);
    }
    if let Some(t) = report_tables::targets(results) {
        md += &format!(
            "\n## Targets\n\nEach target's figures, all workers together (IOmeter's target rows).{}\n\n",
            report_tables::windows_note(results)
        );
        md += &table(&t);
    }
    if let Some(t) = report_tables::workers(results) {
        md += &format!(
            "\n## Workers\n\nEach worker's figures, and the mean I/Os it held in flight against the depth asked.{}\n\n",
            report_tables::windows_note(results)
        );
        md += &table(&t);
    }
    md += &crate::report::page::rounds::markdown(results);
    md += &crate::report::page::outcomes::markdown(results);
    md += "\n## About each result\n\nWhat ran, where, how, and every warning it raised.\n";
    for (r, name) in results.iter().zip(crate::report::point_view::names(results)) {
        md += &format!("\n### {}\n\n{}", text(&name), table(&crate::report::page::report_meta::table(r)));
    }
    md += "\n## Charts\n";
    let mut files = Vec::new();
    for c in charts(results) {
        let file = format!("{stem}-{}.svg", c.id);
        md += &format!("\n![{}]({file})\n", crate::report::escape::markdown(&c.caption));
        files.push((file, c.svg));
    }
    (md, files)
}
