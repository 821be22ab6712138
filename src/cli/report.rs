//! `lunmark report ID... -o FILE`: an HTML page (or Markdown with SVGs beside it).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::exit;
use crate::report::html;
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
}

pub fn execute(args: ReportArgs, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let store = Store::open_read_only(&store::default_path(store_flag))?;
    let results = args.ids.iter().map(|id| store.load(id)).collect::<Result<Vec<_>>>()?;
    let refs: Vec<_> = results.iter().collect();
    let write = |path: &std::path::Path, text: &str| std::fs::write(path, text).with_context(|| format!("writing {}", path.display()));
    match args.format.as_str() {
        "html" => write(&args.output, &html::html(&refs))?,
        "md" => {
            let stem = args.output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
            let dir = args.output.parent().map(|p| p.to_path_buf()).unwrap_or_default();
            let (md, files) = html::markdown(&refs, &stem);
            for (name, svg) in files {
                write(&dir.join(name), &svg)?;
            }
            write(&args.output, &md)?;
        }
        other => bail!("unknown report format '{other}': choose html or md"),
    }
    eprintln!("wrote {}", args.output.display());
    Ok(exit::OK)
}
