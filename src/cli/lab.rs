//! `lunmark lab protocols`: the protocol comparison on loopback.

use anyhow::Result;
use clap::{Args, Subcommand};

use super::exit;
use super::run::RunArgs;

#[derive(Subcommand, Debug)]
pub enum Study {
    /// mem:, a /dev/shm file, NBD over a unix socket and over TCP: same workload, side by side.
    Protocols(Box<ProtocolsArgs>),
}

#[derive(Args, Debug)]
pub struct ProtocolsArgs {
    /// Size of each RAM target.
    #[arg(long = "lun-size", default_value = "1g", value_name = "SIZE")]
    pub lun_size: String,
    /// A built-in profile to run against each target (default: the flags, or quick).
    #[arg(long = "profile", value_name = "NAME")]
    pub profile_name: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn execute(study: Study, store_flag: Option<&std::path::Path>) -> Result<i32> {
    match study {
        Study::Protocols(mut a) => {
            if a.profile_name.is_some() {
                a.run.profile = a.profile_name.clone();
            }
            if !a.run.targets.is_empty() {
                anyhow::bail!("lab protocols starts its own targets: drop --target");
            }
            let rows = crate::lab::protocols::run(&a.run, &a.lun_size, store_flag)?;
            print!("{}", crate::lab::protocols::render(&rows));
            let failed = rows.iter().any(|(_, r)| r.as_ref().is_ok_and(|r| r.status != crate::results::Status::Completed));
            Ok(if failed { exit::RUN_FAILED } else { exit::OK })
        }
    }
}
