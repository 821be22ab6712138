//! `lunmark results list|show|export|import|delete`: browsing the store.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use comfy_table::{presets::UTF8_BORDERS_ONLY, Table};

use super::exit;
use crate::report;
use crate::results::model::RunResult;
use crate::results::store::{self, Store};

#[derive(Subcommand, Debug)]
pub enum ResultsAction {
    /// One line per stored result: id, when, label, profile, target, headline figures.
    List,
    /// The summary of one result (a unique id prefix is enough).
    Show { id: String },
    /// Write a result as json, csv or md to stdout.
    Export {
        id: String,
        #[arg(long, default_value = "json", value_name = "json|csv|md")]
        format: String,
    },
    /// Add a result from a JSON file (as written by --json or export).
    Import { file: PathBuf },
    /// Remove a result.
    Delete { id: String },
}

pub fn execute(action: Option<ResultsAction>, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let path = store::default_path(store_flag);
    let action = action.unwrap_or(ResultsAction::List);
    // Browsing only reads: a read-only store (media, file mode) still serves it.
    let mut store = match action {
        ResultsAction::List | ResultsAction::Show { .. } | ResultsAction::Export { .. } => Store::open_read_only(&path)?,
        ResultsAction::Import { .. } | ResultsAction::Delete { .. } => {
            Store::open_writable(&path).with_context(|| format!("the result store {} cannot be changed", path.display()))?
        }
    };
    match action {
        ResultsAction::List => {
            let runs = store.list()?;
            if runs.is_empty() {
                println!("no results yet in {}: `lunmark run` saves every run there", path.display());
                return Ok(exit::OK);
            }
            let mut t = Table::new();
            t.load_preset(UTF8_BORDERS_ONLY)
                .set_header(vec!["id", "when", "status", "label", "profile", "targets", "points", "IOPS", "MB/s", "p99 us"]);
            for r in runs {
                t.add_row(vec![
                    r.id,
                    r.started_at.chars().take(19).collect::<String>().replace('T', " "),
                    r.status,
                    r.label.unwrap_or_default(),
                    r.profile.unwrap_or_default(),
                    r.targets,
                    r.points.to_string(),
                    format!("{:.0}", r.iops),
                    format!("{:.1}", r.mbps),
                    format!("{:.1}", r.p99_us),
                ]);
            }
            println!("{t}");
        }
        ResultsAction::Show { id } => print!("{}", report::table::render(&store.load(&id)?)),
        ResultsAction::Export { id, format } => {
            let r = store.load(&id)?;
            print!("{}", export(&r, &format)?);
        }
        ResultsAction::Import { file } => {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            // The schema version first: a newer lunmark's result may not parse as this one's.
            let version = serde_json::from_str::<serde_json::Value>(&text).ok().and_then(|v| v.get("schema_version")?.as_u64());
            if let Some(v) = version.filter(|&v| v > crate::results::SCHEMA_VERSION as u64) {
                bail!(
                    "{}: it was written by a newer lunmark (schema_version {v}; this lunmark reads up to {}): import it with that version, or upgrade lunmark",
                    file.display(),
                    crate::results::SCHEMA_VERSION
                );
            }
            let r: RunResult = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a lunmark result (JSON as written by --json)", file.display()))?;
            crate::results::validate::check(&r).with_context(|| format!("{} cannot be imported", file.display()))?;
            if store.contains(&r.id)? {
                bail!("result {} is already in {}: delete it first to replace it", r.id, path.display());
            }
            store.save(&r)?;
            println!("imported {} ({} points)", r.id, r.points.len());
        }
        ResultsAction::Delete { id } => {
            let id = store.delete(&id)?;
            println!("deleted {id}");
        }
    }
    Ok(exit::OK)
}

pub fn export(r: &RunResult, format: &str) -> Result<String> {
    Ok(match format {
        "json" => report::json::render(r),
        "csv" => report::rows::csv(&[r]),
        "md" => report::rows::markdown(&[r]),
        other => bail!("unknown export format '{other}': choose json, csv or md"),
    })
}
