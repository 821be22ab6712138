//! The command line: flags and subcommands (clap), and the mapping from outcomes
//! to exit codes. Each subcommand lives in its own file.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub mod cache_curve;
pub mod compare;
pub mod fio_names;
pub mod lab;
pub mod listing;
pub mod message;
pub mod paths;
pub mod profiles;
pub mod report;
pub mod results;
pub mod run;
pub mod verify;

/// Exit codes (documented in the README).
pub mod exit {
    /// The run completed (and passed, when judged).
    pub const OK: i32 = 0;
    /// Bad input or a setup error: nothing was measured.
    pub const ERROR: i32 = 1;
    /// Usage error from the command-line parser.
    pub const USAGE: i32 = 2;
    /// The run failed part way: I/O errors or a target that went away. The partial result was kept.
    pub const RUN_FAILED: i32 = 3;
    /// The run completed but a --pass criterion failed.
    pub const VERDICT_FAILED: i32 = 4;
    /// --verify found data that is not what was written (the run completed).
    pub const CORRUPT: i32 = 5;
    /// Interrupted by Ctrl-C or SIGTERM; the partial result was kept.
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Parser, Debug)]
#[command(
    name = "lunmark",
    version,
    about = "Storage I/O benchmark: IOmeter-style workloads, exact IOPS, MB/s, latency and CPU figures, results kept"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The result store (default: $LUNMARK_STORE, else $XDG_DATA_HOME/lunmark/results.db).
    #[arg(long, global = true, value_name = "PATH")]
    pub store: Option<std::path::PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a benchmark (with no arguments: a short default run on a scratch file here).
    Run(Box<run::RunArgs>),
    /// Browse stored results: list, show, export, import, delete.
    Results {
        #[command(subcommand)]
        action: Option<results::ResultsAction>,
    },
    /// Compare stored results side by side: % difference, ratio and which is better, for every metric.
    Compare(compare::CompareArgs),
    /// Write a report with charts: one self-contained HTML file, or Markdown with SVGs.
    Report(report::ReportArgs),
    /// Check a target against the journal of a --verify run (also after a crash).
    Verify(verify::VerifyArgs),
    /// Cache sizing from a trace: hit ratio per cache size (% of the region), and latency/IOPS with measured latencies.
    CacheCurve(cache_curve::CacheCurveArgs),
    /// Start real RAM targets on loopback and run a study against them.
    Lab {
        #[command(subcommand)]
        study: lab::Study,
    },
    /// List the built-in profiles, or show one as TOML.
    Profiles {
        #[command(subcommand)]
        action: Option<profiles::ProfilesAction>,
    },
}

/// Parses the command line and runs it; returns the process exit code.
pub fn main() -> i32 {
    let command = Cli::command();
    let matches = command.clone().try_get_matches().unwrap_or_else(|e| fio_names::explain(e).exit());
    // Every output the command line names is judged before anything runs.
    if let Err(e) = paths::check(&command, &matches) {
        eprintln!("error: {e}");
        return exit::ERROR;
    }
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let outcome = match cli.command {
        Some(Command::Run(args)) => run::execute(*args, cli.store.as_deref()),
        Some(Command::Lab { study }) => lab::execute(study, cli.store.as_deref()),
        Some(Command::Verify(args)) => verify::execute(args),
        Some(Command::CacheCurve(args)) => cache_curve::execute(args),
        Some(Command::Report(args)) => report::execute(args, cli.store.as_deref()),
        Some(Command::Compare(args)) => compare::execute(args, cli.store.as_deref()),
        Some(Command::Results { action }) => results::execute(action, cli.store.as_deref()),
        Some(Command::Profiles { action }) => profiles::execute(action),
        None => run::execute(run::RunArgs::default_run(), cli.store.as_deref()),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", message::once(&e));
            exit::ERROR
        }
    }
}
