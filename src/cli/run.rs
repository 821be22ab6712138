//! `lunmark run`: flags to a workload, the run itself, and where its output goes.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::exit;
use crate::report;
use crate::results::model::{RunResult, Status};
use crate::run::{self, plan, NoObserver, RunContext};
use crate::target::SafetyFlags;
use crate::units::{parse_duration, parse_percent, parse_size, Bytes};
use crate::workload::{AccessLine, EngineChoice, RunLength, WorkerGroup, WorkloadSpec};

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Target: /path/file, file:/path, /dev/NAME, mem:SIZE. Repeat for several targets.
    #[arg(long = "target", short = 't', value_name = "URI")]
    pub targets: Vec<String>,
    /// Worker threads.
    #[arg(long, value_name = "N")]
    pub workers: Option<u32>,
    /// Outstanding I/Os per worker per target.
    #[arg(long, value_name = "N")]
    pub qd: Option<u32>,
    /// Transfer size, for example 4k, 128k, 1m.
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<String>,
    /// Share of reads, percent (the rest are writes).
    #[arg(long, value_name = "PCT")]
    pub read: Option<String>,
    /// Share of random I/Os, percent (the rest are sequential).
    #[arg(long, value_name = "PCT")]
    pub random: Option<String>,
    /// Alignment of random offsets (default: the transfer size).
    #[arg(long, value_name = "SIZE")]
    pub align: Option<String>,
    /// Measured time, after the ramp: 10s, 1m.
    #[arg(long, value_name = "DURATION", conflicts_with = "ios")]
    pub time: Option<String>,
    /// Measure this many I/Os per worker instead of a time.
    #[arg(long, value_name = "N")]
    pub ios: Option<u64>,
    /// Ramp-up time before measuring (not counted in results).
    #[arg(long, value_name = "DURATION")]
    pub ramp: Option<String>,
    /// Region length on each target; also the size of files lunmark creates.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Start of the region on each target.
    #[arg(long, value_name = "SIZE")]
    pub offset: Option<String>,
    /// Seed of the offset/size stream (same seed, same stream).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// I/O engine for files and devices: auto, io_uring, psync.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Allow writes to block devices (destroys their data).
    #[arg(long)]
    pub destructive: bool,
    /// With --destructive: write even to a device that is mounted or holds a filesystem or partition table.
    #[arg(long)]
    pub force: bool,
    /// Write the result as JSON to FILE, or to stdout with '-'.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Print the effective workload and exit without running it.
    #[arg(long)]
    pub dry_run: bool,
    /// A label stored with the result ("FC 8G port 1", "after firmware update").
    #[arg(long)]
    pub label: Option<String>,
    /// No live line or periodic progress.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// The default benchmark (DESIGN.md): 4 KiB random, 70% read, 32 outstanding,
/// 1 worker, 10 s after a 2 s ramp, on a 1 GiB scratch file here.
pub const DEFAULT_BS: Bytes = Bytes(4096);
pub const DEFAULT_READ: f64 = 70.0;
pub const DEFAULT_RANDOM: f64 = 100.0;
pub const DEFAULT_QD: u32 = 32;
pub const DEFAULT_TIME: &str = "10s";
pub const DEFAULT_RAMP: &str = "2s";
pub const DEFAULT_SCRATCH_SIZE: Bytes = Bytes(Bytes::GIB);
pub const DEFAULT_SEED: u64 = 1;

impl RunArgs {
    pub fn default_run() -> Self {
        RunArgs::default()
    }

    /// The workload the flags describe (defaults where a flag is absent).
    pub fn to_spec(&self, targets: Vec<String>) -> Result<WorkloadSpec> {
        let size = self.size.as_deref().map(parse_size).transpose().context("--size")?;
        let bs = self.bs.as_deref().map(parse_size).transpose().context("--bs")?.unwrap_or(DEFAULT_BS);
        let align = self.align.as_deref().map(parse_size).transpose().context("--align")?;
        let read = self.read.as_deref().map(parse_percent).transpose().context("--read")?.unwrap_or(DEFAULT_READ);
        let random = self.random.as_deref().map(parse_percent).transpose().context("--random")?.unwrap_or(DEFAULT_RANDOM);
        let run = match (self.ios, &self.time) {
            (Some(n), _) => RunLength::Ios(n),
            (None, t) => RunLength::Time(parse_duration(t.as_deref().unwrap_or(DEFAULT_TIME)).context("--time")?),
        };
        let ramp = parse_duration(self.ramp.as_deref().unwrap_or(DEFAULT_RAMP)).context("--ramp")?;
        let offset = self.offset.as_deref().map(parse_size).transpose().context("--offset")?.unwrap_or_default();
        let engine: EngineChoice = self.engine.as_deref().unwrap_or("auto").parse().context("--engine")?;
        Ok(WorkloadSpec {
            targets,
            size,
            offset,
            ramp,
            run,
            seed: self.seed.unwrap_or(DEFAULT_SEED),
            engine,
            buffered: self.buffered,
            groups: vec![WorkerGroup {
                name: "main".into(),
                workers: self.workers.unwrap_or(1),
                qd: self.qd.unwrap_or(DEFAULT_QD),
                targets: vec![],
                rate: None,
                access: vec![AccessLine { share: 100.0, bs, read, random, align }],
            }],
        })
    }
}

/// Removes a scratch file lunmark created, however the run ends.
struct Scratch(Option<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

pub fn execute(args: RunArgs) -> Result<i32> {
    let mut scratch = Scratch(None);
    let mut targets = args.targets.clone();
    let mut args = args;
    if targets.is_empty() {
        let path = std::env::current_dir()?.join(format!("lunmark-scratch-{}.dat", std::process::id()));
        targets.push(path.display().to_string());
        args.size.get_or_insert_with(|| DEFAULT_SCRATCH_SIZE.to_string());
        if !args.dry_run {
            scratch.0 = Some(path);
        }
    }
    let spec = args.to_spec(targets)?;
    let plan = plan::single(spec)?;
    if args.dry_run {
        print!("{}", plan::describe(&plan));
        return Ok(exit::OK);
    }
    let ctx = RunContext {
        command_line: std::env::args().collect(),
        label: args.label.clone(),
        profile: None,
        safety: SafetyFlags { destructive: args.destructive, force: args.force },
        quiet: args.quiet,
    };
    let result = run::execute(&plan, &ctx, &mut NoObserver)?;
    emit(&result, args.json.as_deref())?;
    Ok(exit_code(&result))
}

/// Prints the summary and writes the JSON where asked. With `--json -` the
/// summary goes to stderr so stdout carries JSON only.
pub fn emit(result: &RunResult, json: Option<&str>) -> Result<()> {
    let table = report::table::render(result);
    match json {
        Some("-") => {
            eprint!("{table}");
            std::io::stdout().write_all(report::json::render(result).as_bytes())?;
        }
        Some(path) => {
            print!("{table}");
            std::fs::write(path, report::json::render(result)).with_context(|| format!("writing the JSON result to {path}"))?;
        }
        None => print!("{table}"),
    }
    Ok(())
}

pub fn exit_code(result: &RunResult) -> i32 {
    match result.status {
        Status::Completed | Status::Running => exit::OK,
        Status::Interrupted => exit::INTERRUPTED,
        Status::Failed => exit::RUN_FAILED,
    }
}
