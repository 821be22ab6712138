//! `lunmark results list|show|export|import|delete|percentiles`: browsing the store.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Subcommand;

use super::exit;
use crate::report;
use crate::results::filter::{self, ListFilter};
use crate::results::model::RunResult;
use crate::results::store::{self, Store};

use crate::report::terminal::listing::{self, ListFormat};

#[derive(Subcommand, Debug)]
pub enum ResultsAction {
    /// One line per stored result: id, when, label, profile, target, and the headline point's IOPS, MB/s and p99.
    List(ListArgs),
    /// The summary of one result (a unique id prefix is enough).
    Show {
        id: String,
        /// Each worker's and each target's figures too.
        #[arg(long)]
        detail: bool,
    },
    /// Write results to stdout: json (an array for several ids), csv (one row per point of all of them), md, or fio-json.
    Export {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<String>,
        /// json (the result model), csv (a row per point, a column per parameter and metric), md, or fio-json (fio's JSON shape).
        #[arg(long, value_enum, default_value = "json", value_name = "FORMAT")]
        format: ExportFormat,
    },
    /// Add a result from a JSON file (as written by --json or export).
    Import { file: PathBuf },
    /// Remove a result.
    Delete { id: String },
    /// Latency percentiles over a window of seconds, recomputed from the per-second histograms the result keeps.
    Percentiles(super::percentiles::PercentilesArgs),
}

/// The forms `results export` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum ExportFormat {
    /// The result model (docs/result-schema.md); several ids give an array.
    Json,
    /// One row per point, a column per parameter and metric.
    Csv,
    /// A Markdown table of the main figures.
    Md,
    /// The structure of fio's --output-format=json (docs/fio-json.md); several ids give an array.
    FioJson,
}

#[derive(clap::Args, Debug, Default)]
pub struct ListArgs {
    /// table (fits 100 columns), json (an array of objects) or csv (a row per result).
    #[arg(long, value_enum, default_value = "table", value_name = "FORMAT")]
    pub format: ListFormat,
    /// Only results whose label matches this pattern (* and ?), e.g. 'fc port*'.
    #[arg(long, value_name = "GLOB")]
    pub label: Option<String>,
    /// Only results of this profile.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Only results with a target that matches this pattern (* and ?), e.g. 'nbd://*'.
    #[arg(long, value_name = "GLOB")]
    pub target: Option<String>,
    /// Only results started at or after this RFC 3339 date or date-time: 2026-11-23 or 2026-11-23T14:00:00Z.
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only the N most recent results (after the other filters).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_usize)]
    pub last: Option<usize>,
}

pub fn execute(action: Option<ResultsAction>, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let path = store::default_path(store_flag);
    let action = action.unwrap_or(ResultsAction::List(ListArgs::default()));
    // Browsing only reads: a read-only store (media, file mode) still serves it.
    let mut store = match action {
        ResultsAction::List(_) | ResultsAction::Show { .. } | ResultsAction::Export { .. } | ResultsAction::Percentiles(_) => {
            Store::open_read_only(&path)?
        }
        ResultsAction::Import { .. } | ResultsAction::Delete { .. } => {
            Store::open_writable(&path).with_context(|| format!("the result store {} cannot be changed", path.display()))?
        }
    };
    match action {
        ResultsAction::List(args) => {
            let filter = ListFilter {
                label: args.label,
                profile: args.profile,
                target: args.target,
                since: args.since.as_deref().map(filter::parse_since).transpose()?,
                last: args.last,
            };
            if filter.last == Some(0) {
                bail!("--last 0 lists nothing: give a number of results above 0");
            }
            let runs = filter.apply(store.list()?);
            if runs.is_empty() && args.format == ListFormat::Table {
                match filter.describe() {
                    d if d.is_empty() => crate::tprint!("no results yet in {}: `lunmark run` saves every run there\n", path.display()),
                    d => crate::tprint!("no result in {} matches {d}\n", path.display()),
                }
                return Ok(exit::OK);
            }
            let text = listing::render(&runs, args.format);
            match args.format {
                ListFormat::Table => crate::tprint!("{text}"),
                // CSV and JSON keep the text as stored (each with its own escaping) for programs.
                _ => print!("{text}"),
            }
        }
        ResultsAction::Show { id, detail } => crate::tprint!("{}", report::terminal::table::render_with(&store.load(&id)?, detail)),
        ResultsAction::Export { ids, format } => {
            let results: Vec<RunResult> = ids.iter().map(|id| store.load(id)).collect::<Result<_>>()?;
            print!("{}", export(&results.iter().collect::<Vec<_>>(), format));
        }
        ResultsAction::Percentiles(args) => {
            let result = store.load(&args.id)?;
            let (ask, rows) = super::percentiles::figures(&result, &args)?;
            let text = super::percentiles::render(&result, &ask, &rows, args.json);
            if args.json {
                print!("{text}");
            } else {
                crate::tprint!("{text}");
            }
        }
        ResultsAction::Import { file } => {
            let text = read_import(&file)?;
            // The schema version first: a newer lunmark's result may not parse as this one's.
            let value = serde_json::from_str::<serde_json::Value>(&text).ok();
            let all = match &value {
                Some(serde_json::Value::Array(many)) => many.iter().collect(),
                one => one.iter().collect::<Vec<_>>(),
            };
            let version = all.iter().filter_map(|v| v.get("schema_version")?.as_u64()).max();
            if let Some(v) = version.filter(|&v| v > crate::results::SCHEMA_VERSION as u64) {
                bail!(
                    "{}: it was written by a newer lunmark (schema_version {v}; this lunmark reads up to {}): import it with that version, or upgrade lunmark",
                    file.display(),
                    crate::results::SCHEMA_VERSION
                );
            }
            import(&mut store, &file, &text)?;
        }
        ResultsAction::Delete { id } => {
            let (id, status) = store.delete(&id)?;
            crate::tprint!("deleted {id}\n");
            if status == "running" {
                crate::tprint!(
                    "it was marked running: if its run is still going, that run saves nothing more of it (and says so when it ends)\n"
                );
            }
        }
    }
    Ok(exit::OK)
}

/// Adds the results of an import file (one, or an array as `results export`
/// writes several): every one is checked, and none is added unless all can be.
fn import(store: &mut Store, file: &std::path::Path, text: &str) -> Result<()> {
    let results = crate::results::validate::parse_import(text)
        .map_err(|e| anyhow::anyhow!("{} is not a lunmark result (JSON as written by --json or results export): {e}", file.display()))?;
    if results.is_empty() {
        bail!("{} holds an empty array: there is no result to import", file.display());
    }
    let many = results.len() > 1;
    for (i, r) in results.iter().enumerate() {
        let at = if many { format!(" (result [{i}])") } else { String::new() };
        crate::results::validate::check(r).with_context(|| format!("{}{at} cannot be imported", file.display()))?;
        if store.contains(&r.id)? || results[..i].iter().any(|o| o.id == r.id) {
            bail!("result {}{at} is already in {}: delete it first to replace it", r.id, store.path().display());
        }
    }
    for r in &results {
        store.save(r)?;
        crate::tprint!("imported {} ({})\n", r.id, crate::units::counted(r.points.len() as u64, "point"));
    }
    Ok(())
}

/// Results in an export format: json and fio-json give one document for one
/// result and an array of them for several; csv and md one table of all points.
pub fn export(results: &[&RunResult], format: ExportFormat) -> String {
    match (format, results) {
        (ExportFormat::Json, [one]) => report::export::json::render(one),
        (ExportFormat::Json, many) => {
            let mut text = serde_json::to_string_pretty(many).expect("the result model always serialises");
            text.push('\n');
            text
        }
        (ExportFormat::FioJson, [one]) => report::export::fio_json::render(one),
        (ExportFormat::FioJson, many) => report::export::fio_json::render_many(many),
        (ExportFormat::Csv, all) => report::rows::csv(all),
        (ExportFormat::Md, all) => report::rows::markdown(all),
    }
}

/// Reads the file to import (a regular file within `input_path::RESULT`'s limit).
fn read_import(file: &std::path::Path) -> Result<String> {
    Ok(crate::input_path::read_to_string(file, &crate::input_path::RESULT)?)
}
