//! `lunmark profiles` lists the built-in profiles; `lunmark profiles show NAME`
//! prints one as the TOML that `lunmark run --profile-file FILE` runs.

use anyhow::Result;
use clap::Subcommand;

use super::exit;
use crate::workload::fio_map;
use crate::workload::profile::{self, BUILTIN};

#[derive(Subcommand, Debug)]
pub enum ProfilesAction {
    /// Print a profile as TOML (save it, edit it, run it with --profile-file).
    Show {
        /// A built-in profile name, or a path to a profile file.
        name: String,
    },
    /// Print the profile a fio job file maps to, as TOML (docs/fio.md); notes go in comments.
    ImportFio {
        /// The fio job file.
        file: std::path::PathBuf,
        /// Only this job section (repeat for several), as fio's --section.
        #[arg(long, value_name = "NAME")]
        section: Vec<String>,
        /// Leave out the options lunmark cannot apply, a warning for each, instead of refusing the file.
        #[arg(long)]
        fio_lenient: bool,
    },
}

pub fn execute(action: Option<ProfilesAction>) -> Result<i32> {
    match action {
        None => {
            for (name, _) in BUILTIN {
                let p = profile::builtin(name)?;
                println!("{name:<16} {}", p.description);
            }
            println!("\nlunmark profiles show NAME prints one as TOML; lunmark run NAME runs it.");
        }
        Some(ProfilesAction::Show { name }) => {
            let path = std::path::Path::new(&name);
            let p = if BUILTIN.iter().any(|(n, _)| *n == name) || !path.exists() {
                profile::builtin(&name)?
            } else {
                profile::load_file(path)?
            };
            print!("{}", profile::to_toml(&p));
        }
        Some(ProfilesAction::ImportFio { file, section, fio_lenient }) => {
            let options = fio_map::ImportOptions { sections: section, lenient: fio_lenient, ..Default::default() };
            let imported = fio_map::import_file(&file, &options)?;
            for s in &imported.skipped {
                crate::ewriteln!("warning: {s}");
            }
            // Comments, so the output still reads back with --profile-file.
            for n in &imported.notes {
                println!("# note: {n}");
            }
            // A profile holds no log files: they come with `run --fio` only.
            for l in &imported.logs {
                println!("# note: {} is written by `lunmark run --fio {}`, not by this profile", l.path, file.display());
            }
            print!("{}", profile::to_toml(&imported.profile));
        }
    }
    Ok(exit::OK)
}
