//! `lunmark profiles` lists the built-in profiles; `lunmark profiles show NAME`
//! prints one as the TOML that `lunmark run --profile-file FILE` runs.

use anyhow::Result;
use clap::Subcommand;

use super::exit;
use crate::workload::profile::{self, BUILTIN};

#[derive(Subcommand, Debug)]
pub enum ProfilesAction {
    /// Print a profile as TOML (save it, edit it, run it with --profile-file).
    Show {
        /// A built-in profile name, or a path to a profile file.
        name: String,
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
    }
    Ok(exit::OK)
}
