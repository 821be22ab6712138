//! The command line: flags and subcommands (clap), and the mapping from outcomes
//! to exit codes. Each subcommand lives in its own file.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub mod cache_curve;
pub mod cache_sizes;
pub mod compare;
pub mod fio_names;
pub mod flag_reference;
pub mod held_signals;
pub mod keep;
pub mod lab;
pub mod live_view;
pub mod message;
pub mod numbers;
pub mod paths;
pub mod percentiles;
pub mod profiles;
pub mod ranked;
pub mod report;
pub mod request_text;
pub mod results;
pub mod run;
pub mod telemetry;
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
    /// --sla: not even the lightest load (qd 1) met the bounds (the run completed; its points were kept).
    pub const SLA_UNMET: i32 = 6;
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
    // Started by mpirun or srun: one rank of a job (or a refusal without the `mpi` feature).
    if let Some(launched) = crate::mpi::launcher::detect() {
        return ranked::main(launched);
    }
    let command = store_unlisted(Cli::command());
    let matches = command.clone().try_get_matches().unwrap_or_else(|e| fio_names::explain(e).exit());
    // Every output the command line names is judged before anything runs.
    if let Err(e) = paths::check(&command, &matches) {
        crate::ewriteln!("error: {e}");
        return exit::ERROR;
    }
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Applied or refused: --store means nothing to a subcommand that keeps and reads no results.
    if let (Some(store), Some(name)) = (&cli.store, without_store(&cli.command)) {
        crate::ewriteln!("error: --store {}: `lunmark {name}` reads and keeps no results: drop --store", store.display());
        return exit::ERROR;
    }
    if only_prints(&cli.command) {
        end_quietly_on_closed_stdout();
    }
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
            crate::ewriteln!("error: {}", message::once(&e));
            exit::ERROR
        }
    }
}

/// The global `--store` left out of the --help of the subcommands that use no
/// store: each gets a hidden `--store` of its own (clap then propagates the
/// global one no further, and still hands a value given up to `Cli::store`),
/// so one given is refused in `main`, not listed and then refused.
pub fn store_unlisted(command: clap::Command) -> clap::Command {
    paths::WITHOUT_STORE.iter().fold(command, |c, name| {
        c.mut_subcommand(name, |s| {
            s.arg(
                clap::Arg::new("store")
                    .long("store")
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(std::path::PathBuf))
                    .global(true)
                    .hide(true),
            )
        })
    })
}

/// The name of a subcommand that uses no result store (None: it uses one).
fn without_store(command: &Option<Command>) -> Option<&'static str> {
    match command {
        Some(Command::Verify(_)) => Some("verify"),
        Some(Command::CacheCurve(_)) => Some("cache-curve"),
        Some(Command::Profiles { .. }) => Some("profiles"),
        _ => None,
    }
}

/// True for the subcommands whose only job is to print (nothing is measured or
/// saved): for them a closed stdout (`| head`) just ends the process. `run` and
/// the labs that measure are left out: their results are saved whatever happens
/// to the pipe, and a closed stdout is reported (`print_out`), never a panic.
fn only_prints(command: &Option<Command>) -> bool {
    match command {
        Some(Command::Results { .. } | Command::Profiles { .. } | Command::Compare(_)) => true,
        Some(Command::CacheCurve(args)) => args.json.is_none(),
        Some(Command::Run(args)) => args.dry_run,
        // A lab's dry run only prints its plan (no server starts, nothing is saved).
        Some(Command::Lab { study }) => study.run_args().dry_run,
        _ => false,
    }
}

/// `eprintln!` that ignores a failed write: a closed stderr (`run ... 2>&1 |
/// head -1`) must not panic a run whose remaining points are still to run,
/// nor lose its result. The text is made safe for a terminal
/// (`report::escape::terminal`: a label's escape sequences do not act).
/// Every line the command line writes to stderr goes through it (or `ewrite!`).
#[macro_export]
macro_rules! ewriteln {
    ($($t:tt)*) => {{
        $crate::ewrite!("{}\n", format_args!($($t)*));
    }};
}

/// `eprint!` that ignores a failed write (see `ewriteln!`).
#[macro_export]
macro_rules! ewrite {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = std::io::stderr().write_all($crate::report::escape::terminal(&format!($($t)*)).as_bytes());
    }};
}

/// `print!` of text for the terminal (`report::escape::terminal`): every
/// printer of a table or summary with user text in it goes through it.
#[macro_export]
macro_rules! tprint {
    ($($t:tt)*) => {{
        print!("{}", $crate::report::escape::terminal(&format!($($t)*)));
    }};
}

/// Restores SIGPIPE's default action, so that writing to a closed stdout ends
/// the process silently as other Unix tools do (Rust ignores SIGPIPE, and
/// `println!` then panics on EPIPE).
fn end_quietly_on_closed_stdout() {
    // SAFETY: called once at startup on the main thread before any other thread
    // exists; SIG_DFL is a valid disposition for SIGPIPE and no handler is installed.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Writes text to stdout, as an error (not a panic) when stdout is closed: a
/// run's or a lab's results are already saved when their summary is printed.
/// `what` names the text in that error ("the summary", "the JSON result"): a
/// lost JSON result is not a lost summary.
pub fn print_out(text: &str, what: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(crate::report::escape::terminal(text).as_bytes()).and_then(|_| out.flush()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            anyhow::anyhow!("{what} was not printed: stdout was closed (broken pipe)")
        } else {
            anyhow::anyhow!("{what} was not printed to stdout: {e}")
        }
    })
}
