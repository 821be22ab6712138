//! `lunmark report ID... -o FILE`: an HTML page (or Markdown with SVGs beside it).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::exit;
use crate::output_path::{self, Mode, OutputFile};
use crate::report::page::{html, markdown, raster};
use crate::results::model::RunResult;
use crate::results::store::{self, Store};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result ids (unique prefixes work).
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// The file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// html (one self-contained file) or md (Markdown, with SVG files beside it).
    #[arg(long, default_value = "html")]
    pub format: String,
    /// The report's title (default: "lunmark report"); escaped, shown as written.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub title: Option<String>,
    /// Also write each chart as DIR/ID.svg and DIR/ID.png, for slides (see
    /// --charts-format). DIR must exist.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
    /// Which files --charts writes for each chart: svg, png (drawn at twice
    /// the SVG's size, with lunmark's own font), or both.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "svg,png", requires = "charts")]
    pub charts_format: Vec<ChartFormat>,
    /// A note under the title (what was tested, why); escaped, shown as written.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub note: Option<String>,
    /// Compare results whose workloads differ (as `compare --force`); without
    /// it the comparison section leaves them out and says why.
    #[arg(long)]
    pub force: bool,
}

/// A file format of `--charts`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartFormat {
    Svg,
    Png,
}

/// Each chart's files in `dir`, in the formats asked: every path judged, and
/// every PNG drawn, before anything is written.
fn chart_files(dir: &std::path::Path, formats: &[ChartFormat], refs: &[&RunResult]) -> Result<Vec<(OutputFile, Vec<u8>)>> {
    if !dir.is_dir() {
        bail!("--charts {}: not a directory (create it first, or give one that exists)", dir.display())
    }
    let mut out = Vec::new();
    for chart in crate::report::page::figures::charts(refs) {
        for format in formats {
            let (ext, bytes) = match format {
                ChartFormat::Svg => ("svg", chart.svg.clone().into_bytes()),
                ChartFormat::Png => ("png", raster::png(&chart.svg).with_context(|| format!("chart {}", chart.id))?),
            };
            out.push((output_path::check("--charts", &dir.join(format!("{}.{ext}", chart.id)), Mode::Replace)?, bytes));
        }
    }
    Ok(out)
}

pub fn execute(args: ReportArgs, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let store = Store::open_read_only(&store::default_path(store_flag))?;
    let results = super::compare::load_distinct(&store, &args.ids)?;
    let refs: Vec<_> = results.iter().collect();
    for (flag, value) in [("--title", &args.title), ("--note", &args.note)] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            bail!("{flag} is empty: give the text to show, or leave {flag} out");
        }
    }
    let text = html::PageText { title: args.title.clone(), note: args.note.clone(), force: args.force };
    // The charts for --charts: every path judged before anything is written.
    let chart_files = match &args.charts {
        Some(dir) => chart_files(dir, &args.charts_format, &refs)?,
        None => Vec::new(),
    };
    // The page, and with md the SVGs beside it: every path is judged before any is written.
    let page = output_path::check("-o/--output", &args.output, Mode::Replace)?;
    // A stop while the files are written waits for the last: charts never stand without their page.
    let held = super::held_signals::hold();
    match args.format.as_str() {
        "html" => page.replace_with(html::html(&refs, &text).as_bytes())?,
        "md" => {
            let stem = args.output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
            let dir = args.output.parent().map(|p| p.to_path_buf()).unwrap_or_default();
            let (md, files) = markdown::markdown(&refs, &stem, &text);
            let charts = files
                .iter()
                .map(|(name, svg)| Ok((output_path::check("-o/--output (a chart beside it)", &dir.join(name), Mode::Replace)?, svg)))
                .collect::<Result<Vec<_>>>()?;
            for (chart, svg) in charts {
                chart.replace_with(svg.as_bytes())?;
            }
            page.replace_with(md.as_bytes())?;
        }
        other => bail!("unknown report format '{other}': choose html or md"),
    }
    for (file, bytes) in &chart_files {
        file.replace_with(bytes)?;
    }
    drop(held);
    if let Some(dir) = &args.charts {
        let formats: Vec<&str> = args.charts_format.iter().map(|f| if *f == ChartFormat::Svg { "SVG" } else { "PNG" }).collect();
        let charts = chart_files.len() / args.charts_format.len().max(1);
        crate::ewriteln!("wrote {charts} charts ({}) in {}", formats.join(" and "), dir.display());
    }
    crate::ewriteln!("wrote {}", args.output.display());
    Ok(exit::OK)
}
