//! `lunmark run`: flags to a workload, the run itself, and where its output goes.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::exit;
use super::keep::{JsonWriter, Problems, StoreKeeper};
use crate::metrics::power::PowerRequest;
use crate::output_path::{self, Destination, Mode};
use crate::report;
use crate::results::model::{RunResult, Status};
use crate::results::repeats::Pick;
use crate::results::store::{self, Store};
use crate::run::plan::{Overrides, PlanRequest};
use crate::run::request::RunRequest;
use crate::run::{self, RunContext, RunObserver, RunPlan};
use crate::targets::{SafetyFlags, Target};
use crate::units::{parse_duration, parse_percent, parse_size, Bytes};
use crate::workload::fio_map;
use crate::workload::profile::{self, Phase, Profile};
use crate::workload::replay::ReplaySettings;
use crate::workload::spec::{MAX_BS, MAX_QD};
use crate::workload::sweep::{self, Sweep};
use crate::workload::{AccessLine, RunLength, WorkerGroup};

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// A built-in profile (`lunmark profiles` lists them). Without one, and without
    /// --bs/--read/--random, the `quick` profile runs.
    #[arg(value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Run the profile in this TOML file (as `lunmark profiles show NAME` prints).
    #[arg(long, value_name = "FILE", conflicts_with = "profile")]
    pub profile_file: Option<PathBuf>,
    /// Run the jobs of this fio job file, mapped to a profile (docs/fio.md lists what each option becomes).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["profile", "profile_file"])]
    pub fio: Option<PathBuf>,
    /// With --fio: run only this job section (repeat for several), as fio's --section.
    #[arg(long, value_name = "NAME", requires = "fio")]
    pub section: Vec<String>,
    /// With --fio: run without the options lunmark cannot apply, a warning for each, instead of refusing the file.
    #[arg(long, requires = "fio")]
    pub fio_lenient: bool,
    /// Sweep a parameter: qd=2,4,8 | bs=4k,8k | workers=1,2 | targets=1,2 | read=0,35,70,100 | random=0,100. Repeat for a cartesian product.
    #[arg(long, value_name = "KEY=V1,V2,..")]
    pub sweep: Vec<String>,
    /// Run each point N times and report the spread [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub repeat: Option<u32>,
    /// Which repeat a point reports: mean (nearest the mean IOPS), median or best.
    #[arg(long, value_name = "HOW", default_value = "mean")]
    pub pick: String,
    /// Issue I/Os on a fixed schedule: total IOPS, spread over the workers [default: none: as fast as the depth allows].
    #[arg(long, value_name = "IOPS", allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Jetstress: number of mailboxes (rate = mailboxes x IOPS per mailbox).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub mailboxes: Option<u64>,
    /// Jetstress: IOPS per mailbox.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub iops_per_mailbox: Option<f64>,
    /// Pass criteria judged on every point, e.g. 'read_lat_avg<20ms,read_lat_max<50ms'. A failure exits with 4.
    #[arg(long, value_name = "CRITERIA")]
    pub pass: Option<String>,
    /// Target: /path/file, file:/path, /dev/NAME, mem:SIZE, null:SIZE, nbd://host[:port]/export, nbd+unix:///export?socket=PATH or iscsi://[user[%secret]@]host[:port]/IQN/LUN. Repeat for several targets.
    #[arg(long = "target", short = 't', value_name = "URI")]
    pub targets: Vec<String>,
    /// Worker threads [default: 1; a profile's own where one runs].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub workers: Option<u32>,
    /// Outstanding I/Os per worker per target [default: 32; a profile's own where one runs].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub qd: Option<u32>,
    /// Transfer size, for example 4k, 128k, 1m [default: 4k; a profile's own where one runs].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub bs: Option<String>,
    /// Share of reads, percent (the rest are writes) [default: 70; a profile's own where one runs].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub read: Option<String>,
    /// Share of trims (discards), percent, beside --read: the rest are writes
    /// (--read 50 --trim 20: 50% read, 20% trim, 30% write). A trim discards the range
    /// on a device (BLKDISCARD), punches a hole in a file, zeroes it on mem:.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub trim: Option<String>,
    /// On file targets: fsync after every N writes each worker issues to a file (latency recorded apart as sync).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub fsync: Option<u64>,
    /// On file targets: fdatasync after every N writes each worker issues to a file.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub fdatasync: Option<u64>,
    /// On devices and network LUNs: flush the device's write cache after every N writes each worker issues to it
    /// (fsync of the device, NBD_CMD_FLUSH, SCSI SYNCHRONIZE CACHE).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub flush: Option<u64>,
    /// Share of random I/Os, percent (the rest are sequential) [default: 100; a profile's own where one runs].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub random: Option<String>,
    /// Alignment of random offsets [default: the transfer size].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub align: Option<String>,
    /// Measured time, after the ramp: 10s, 1m [default: 10s; a profile's own where one runs].
    #[arg(long, value_name = "DURATION", conflicts_with = "ios", allow_hyphen_values = true)]
    pub time: Option<String>,
    /// Measure this many I/Os per worker instead of a time (no I/O past the N-th is issued).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub ios: Option<u64>,
    /// Ramp-up time before measuring (not counted in results) [default: 2s; a profile's own where one runs].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub ramp: Option<String>,
    /// Region length on each target; also the size of files lunmark creates [default: the whole target].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub size: Option<String>,
    /// Start of the region on each target [default: 0].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub offset: Option<String>,
    /// Seed of the offset/size stream (same seed, same stream) [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub seed: Option<u64>,
    /// I/O engine for files and devices: auto, io_uring, psync [default: auto].
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Connections (NBD) or sessions (iSCSI) each worker opens to each network target [default: 1].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub connections: Option<u32>,
    /// Go through the page cache instead of O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    // io_uring polling (issue 14).
    /// io_uring: a kernel thread polls each worker's submission queue (no system call to submit); =CPU pins it to that CPU.
    #[arg(long, value_name = "CPU", num_args = 0..=1, require_equals = true, default_missing_value = "any")]
    pub sqpoll: Option<String>,
    /// io_uring: poll the device for completions (fio's hipri); only block devices with poll queues (queue/io_poll = 1).
    #[arg(long)]
    pub poll: bool,
    /// Allow writes to block devices (destroys their data).
    #[arg(long)]
    pub destructive: bool,
    /// With --destructive: write even to a device that is mounted or holds a filesystem or partition table.
    #[arg(long)]
    pub force: bool,
    /// Keep the result in no store: it is printed (and written to --json FILE) only. The store is not opened at all.
    #[arg(long)]
    pub no_store: bool,
    /// Write the result as JSON to FILE, or to stdout with '-'.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// normal (the summary; JSON only with --json), json (the result model) or fio-json (the
    /// structure of fio's --output-format=json, docs/fio-json.md). json and fio-json go to
    /// --json FILE when given, else to stdout with the summary on stderr.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Print the effective workload and exit without running it.
    #[arg(long)]
    pub dry_run: bool,
    /// A label stored with the result ("FC 8G port 1", "after firmware update").
    #[arg(long, value_parser = label_text)]
    pub label: Option<String>,
    /// Power source: auto (RAPL, then IPMI DCMI), rapl, ipmi, cmd, log or none.
    #[arg(long, value_name = "SOURCE")]
    pub power: Option<String>,
    /// A command that prints watts (a smart PDU, a USB meter), run once a second in its own
    /// process group; a reading not printed within 2 s fails: the group is killed, power is null with the reason.
    #[arg(long, value_name = "COMMAND")]
    pub power_cmd: Option<String>,
    /// A CSV of timestamp,watts from an external meter, matched to the measured interval afterwards.
    #[arg(long, value_name = "FILE")]
    pub power_log: Option<PathBuf>,
    /// Measure idle power for this long before the run (the baseline for per-delta-watt figures).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub idle: Option<String>,
    /// Check every byte read against what lunmark wrote (headers, patterns, checksums).
    #[arg(long)]
    pub verify: bool,
    /// End the run at the first mismatch (implies --verify).
    #[arg(long)]
    pub verify_stop: bool,
    /// Record every block's write generation here, for `lunmark verify` later (implies --verify).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// A host-side cache in front of every target: a size (256m) or a share of the region (25%).
    #[arg(long, value_name = "SIZE|N%", allow_hyphen_values = true)]
    pub cache: Option<String>,
    /// With --cache: writethrough (default), writeback or readonly.
    #[arg(long, value_enum, value_name = "MODE")]
    pub cache_mode: Option<crate::engine::cache::CacheMode>,
    /// With --cache: keep the cache blocks in this file or device (an SSD) instead of RAM.
    #[arg(long, value_name = "PATH")]
    pub cache_dev: Option<PathBuf>,
    /// With --cache: the cache block (every transfer must cover whole blocks) [default: 4k].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub cache_block: Option<String>,
    /// Record every I/O issued (ramp included) in FILE, for `lunmark cache-curve` (format: docs/trace-format.md).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Count I/O errors (by errno) and go on, instead of ending the run at the first one.
    #[arg(long)]
    pub continue_on_error: bool,
    /// The link the I/O crosses, to report each point's share of its usable rate per direction:
    /// 8gfc, 16gfc, 32gfc, 1gbe, 10gbe, 25gbe, 40gbe, 100gbe, or a rate (2.5gbit, 800MB/s).
    /// LINK@N names the link of target N (counted from 0) instead; repeat for several targets.
    /// Refused when every target is mem: or null: (no I/O of theirs crosses a link).
    #[arg(long = "link", value_name = "LINK[@INDEX]")]
    pub link: Vec<String>,
    /// No live line or periodic progress.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    // Access distribution, think time and arrivals (issue 15; docs/profiles.md).
    /// Where random I/Os land: uniform, zipf:THETA, pareto:H, normal:SIGMA%, zoned:A/R:A/R...,
    /// hotband:W%/H%/PERIOD; add :scattered or :contiguous to lay the hot blocks otherwise. Replaces every access line's
    /// (default: uniform; lab cache: zipf:0.9).
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,
    /// Think time: each worker issues nothing for this long after every --thinktime-blocks I/Os (fio's thinktime).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub thinktime: Option<String>,
    /// I/Os between two think times [default: 1].
    #[arg(long, value_name = "N", requires = "thinktime", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub thinktime_blocks: Option<u32>,
    /// With --rate: fixed (one I/O every 1/rate) or poisson (exponential gaps of mean 1/rate).
    #[arg(long, value_name = "fixed|poisson")]
    pub arrivals: Option<String>,
    // Pinning and per-worker figures (issue 14 items 3-5).
    /// Pin the workers to these CPUs, for example 0-3,8 (buffers are first touched after pinning).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpus: Option<String>,
    /// With --cpus: shared (every worker on all listed CPUs) or split (worker i on the i-th listed CPU, round robin).
    #[arg(long, value_name = "POLICY")]
    pub cpus_policy: Option<String>,
    /// Print each worker's and each target's figures beside the summary.
    #[arg(long)]
    pub detail: bool,

    // Replay (issue 15 item 2): I/Os from a recorded trace instead of the generator.
    /// Issue the I/Os recorded in FILE (op, offset, length, time) instead of generating them:
    /// a lunmark trace (what --trace writes), blkparse text, or MSR Cambridge CSV.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// With --replay: the trace's format, lunmark, blkparse or msr (default: detected from the file).
    #[arg(long, value_name = "FORMAT")]
    pub replay_format: Option<String>,
    /// With --replay: 1 keeps the recorded timing, 2 replays twice as fast (any factor), max as fast as the queue allows [default: 1].
    #[arg(long, value_name = "SPEED", allow_hyphen_values = true)]
    pub replay_speed: Option<String>,
    /// With --replay: which trace device goes to which target, DEVICE=TARGET,... (0=1,1=0 or usr/0=0);
    /// devices left out are not replayed [default: devices in order of first appearance to targets in order].
    #[arg(long, value_name = "MAP")]
    pub replay_map: Option<String>,
    /// With --replay: an I/O beyond its target's region is refused before the run, or wrapped into the region: refuse or wrap [default: refuse].
    #[arg(long, value_name = "MODE")]
    pub replay_offsets: Option<String>,
    // Data reduction and steady state (issue 15 items 6 and 7; docs/profiles.md).
    /// Make written data compressible: deflate (zlib) at level 1 removes about PCT% of each
    /// dedupe unit (zeros follow an incompressible part). 0-99. Refused with --verify.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub compress: Option<String>,
    /// PCT% of written dedupe units repeat the content of an earlier unit. Refused with --verify.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub dedupe: Option<String>,
    /// The unit of --dedupe and --compress [default: the smallest transfer size that writes].
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub dedupe_unit: Option<String>,
    /// End each point once it is steady, --time being the maximum: watch iops, bw (MB/s) or lat (mean latency).
    #[arg(long, value_name = "iops|bw|lat")]
    pub steady: Option<String>,
    /// With --steady: rounds in the window [default: 5].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub steady_window: Option<u32>,
    /// With --steady: length of a round, whole seconds [default: 1s].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub steady_round: Option<String>,
    /// With --steady: largest range (max - min) of the window, percent of its mean [default: 20].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub steady_range: Option<String>,
    /// With --steady: largest slope excursion of the window's least-squares line, percent of its mean [default: 10].
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub steady_slope: Option<String>,
}

/// What `--output-format` asks for.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// The summary; JSON (the result model) only where --json says.
    Normal,
    /// The result model as JSON (docs/result-schema.md).
    Json,
    /// fio's --output-format=json structure (docs/fio-json.md).
    FioJson,
}

/// The shape of the JSON a run writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JsonShape {
    /// lunmark's result model.
    #[default]
    Model,
    /// fio's JSON output.
    Fio,
}

impl JsonShape {
    pub fn render(self, result: &RunResult) -> String {
        match self {
            JsonShape::Model => report::json::render(result),
            JsonShape::Fio => report::fio_json::render(result),
        }
    }
}

/// Size of the scratch file of a run without targets.
pub const DEFAULT_SCRATCH_SIZE: Bytes = Bytes(Bytes::GIB);

impl RunArgs {
    pub fn default_run() -> Self {
        RunArgs { pick: "mean".into(), ..RunArgs::default() }
    }

    /// Where the run's JSON goes and in which shape, from --json and --output-format.
    pub fn json_output(&self) -> (Option<String>, JsonShape) {
        match self.output_format {
            None | Some(OutputFormat::Normal) => (self.json.clone(), JsonShape::Model),
            Some(OutputFormat::Json) => (Some(self.json.clone().unwrap_or_else(|| "-".into())), JsonShape::Model),
            Some(OutputFormat::FioJson) => (Some(self.json.clone().unwrap_or_else(|| "-".into())), JsonShape::Fio),
        }
    }

    /// True when the flags themselves describe the access pattern: --bs,
    /// --read, --random, --align, or a sweep of bs, read or random (a sweep
    /// gives that setting as surely as the flag does).
    fn shapes_workload(&self) -> bool {
        let swept = self.sweep.iter().any(|s| matches!(s.split_once('=').map(|(k, _)| k.trim()), Some("bs" | "read" | "random")));
        self.bs.is_some() || self.read.is_some() || self.trim.is_some() || self.random.is_some() || self.align.is_some() || swept
    }

    /// The profile the run starts from, the name to record, and what the user
    /// must be told about it (notes and skipped options of a fio job file).
    pub(super) fn base_profile(&self) -> Result<(Profile, Option<String>, Vec<String>)> {
        self.base_profile_and_logs().map(|(p, n, t, _)| (p, n, t))
    }

    /// `base_profile`, and the fio-format logs a fio job file asks for.
    #[allow(clippy::type_complexity)]
    pub(super) fn base_profile_and_logs(&self) -> Result<(Profile, Option<String>, Vec<String>, Vec<fio_map::FioLog>)> {
        if let Some(path) = &self.fio {
            let options = fio_map::ImportOptions {
                sections: self.section.clone(),
                lenient: self.fio_lenient,
                run_length_given: self.time.is_some() || self.ios.is_some(),
            };
            let imported = fio_map::import_file(path, &options)?;
            let told = imported
                .skipped
                .iter()
                .map(|s| format!("warning: {s}"))
                .chain(imported.notes.iter().map(|n| format!("note: {n}")))
                .collect();
            let name = imported.profile.name.clone();
            return Ok((imported.profile, Some(name), told, imported.logs));
        }
        let (p, name) = self.base_profile_of_flags()?;
        Ok((p, name, Vec::new(), Vec::new()))
    }

    fn base_profile_of_flags(&self) -> Result<(Profile, Option<String>)> {
        if let Some(path) = &self.profile_file {
            let p = profile::load_file(path).context("--profile-file")?;
            let name = p.name.clone();
            return Ok((p, Some(name)));
        }
        if let Some(name) = &self.profile {
            if let Some(message) = self.unit_taken_for_profile(name) {
                anyhow::bail!(message);
            }
            return Ok((profile::builtin(name)?, Some(name.clone())));
        }
        if self.shapes_workload() || self.replay.is_some() {
            return Ok((flags_profile(), None));
        }
        Ok((profile::builtin("quick")?, Some("quick".into())))
    }

    /// `--bs 4 KB` unquoted reaches lunmark as `--bs 4` and a profile named
    /// `KB`: a PROFILE that is a unit of size or time, after a flag whose value
    /// is a bare number, is that value split by a space. Says so (naming the
    /// flag when one fits) instead of "unknown profile".
    fn unit_taken_for_profile(&self, name: &str) -> Option<String> {
        if profile::BUILTIN.iter().any(|(n, _)| *n == name) {
            return None;
        }
        let size_unit = parse_size(&format!("1{name}")).is_ok() && !name.chars().all(|c| c.is_ascii_digit());
        let time_unit = parse_duration(&format!("1{name}")).is_ok() && !name.chars().all(|c| c.is_ascii_digit());
        if !size_unit && !time_unit {
            return None;
        }
        let bare = |v: &Option<String>| v.as_deref().is_some_and(|v| v.trim().parse::<f64>().is_ok());
        let sizes =
            [("--bs", &self.bs), ("--size", &self.size), ("--offset", &self.offset), ("--align", &self.align), ("--cache", &self.cache)];
        let times = [("--time", &self.time), ("--ramp", &self.ramp), ("--idle", &self.idle)];
        let suspects: Vec<(&str, &str, &str)> = sizes
            .iter()
            .filter(|_| size_unit)
            .map(|(flag, v)| (*flag, *v, "size"))
            .chain(times.iter().filter(|_| time_unit).map(|(flag, v)| (*flag, *v, "duration")))
            .filter(|(_, v, _)| bare(v))
            .map(|(flag, v, what)| (flag, v.as_deref().unwrap_or_default(), what))
            .collect();
        let what = if size_unit { "size" } else { "duration" };
        Some(match suspects.as_slice() {
            [(flag, number, what)] => format!(
                "{flag} {number} {name}: the {what} was split by a space, so '{name}' was taken for a profile name. \
                 Write it as one word, {flag} {number}{name}, or quote it: {flag} '{number} {name}'"
            ),
            _ => format!(
                "'{name}' is not a profile but a unit of {what}: was a value split from its number by a space? \
                 Write values as one word, for example --bs 4KB or --time 10s (`lunmark profiles` lists the profiles)"
            ),
        })
    }

    /// The typed request these flags describe, against `targets` (none: the
    /// profile's); what the user must be told about the profile goes to stderr.
    pub fn request(&self, targets: Vec<String>) -> Result<RunRequest> {
        let (profile, profile_name, told) = self.base_profile()?;
        for t in told {
            crate::ewriteln!("{t}");
        }
        self.request_from(profile, profile_name, targets)
    }

    /// The request of a profile with these flags applied, every value parsed
    /// and checked here: targets to typed URIs, sweeps to typed values, the
    /// context (power, cache, verify, link, pinning) whole.
    pub(super) fn request_from(&self, profile: Profile, profile_name: Option<String>, targets: Vec<String>) -> Result<RunRequest> {
        // CHAP secrets leave the URIs here, before anything can record them.
        let targets: Vec<String> = targets.iter().map(|t| crate::targets::credentials::hide(t)).collect();
        let profile = Profile { targets: profile.targets.iter().map(|t| crate::targets::credentials::hide(t)).collect(), ..profile };
        // Parsed once, here: the plan and the run match on the parsed URI.
        let targets_given = !targets.is_empty();
        let given = if targets_given { &targets } else { &profile.targets };
        let targets: Vec<Target> = given.iter().map(|t| Target::parse(t)).collect::<Result<_, _>>()?;
        if self.buffered {
            let engine = |t: &Target| crate::engine::EngineKind::for_uri(&t.uri, crate::workload::EngineChoice::Auto);
            if let Some(t) = targets.iter().find(|t| !engine(t).capabilities().direct_or_buffered) {
                anyhow::bail!(
                    "--buffered goes through the page cache of files and block devices, and {} (the {} engine) has none: drop --buffered",
                    t.text,
                    engine(t).name()
                );
            }
        }
        let mut sweeps: Vec<Sweep> = self.sweep.iter().map(|t| parse_sweep_flag("--sweep", t, t)).collect::<Result<_>>()?;
        // A sweep sets its key in every point: the flag of the same key would be dropped unseen.
        for sw in &sweeps {
            let flag = match sw.key {
                "qd" => self.qd.map(|v| v.to_string()),
                "workers" => self.workers.map(|v| v.to_string()),
                "bs" => self.bs.clone(),
                "read" => self.read.clone(),
                "random" => self.random.clone(),
                _ => None,
            };
            if let Some(v) = flag {
                let text =
                    self.sweep.iter().find(|t| t.split_once('=').is_some_and(|(k, _)| k.trim() == sw.key)).cloned().unwrap_or_default();
                anyhow::bail!(
                    "--sweep {text} and --{key} {v} both set {key}, and the sweep's values would replace --{key} in every point: drop one of them",
                    key = sw.key
                );
            }
        }
        // --bs 4k,8k,16k is a sweep over transfer sizes.
        let bs = match self.bs.as_deref() {
            Some(list) if list.contains(',') => {
                sweeps.push(parse_sweep_flag("--bs", list, &format!("bs={list}"))?);
                None
            }
            Some(one) => Some(parse_size(one).context("--bs")?),
            None => None,
        };
        // Named by the flag here: the plan's own check can only name the group and access line.
        if self.qd == Some(0) {
            anyhow::bail!("--qd 0: the queue depth must be at least 1");
        }
        if let Some(qd) = self.qd.filter(|&q| q > MAX_QD) {
            anyhow::bail!("--qd {qd}: the queue depth may be at most {MAX_QD}");
        }
        if bs.is_some_and(|b| b.get() == 0 || b.get() > MAX_BS) {
            anyhow::bail!(
                "--bs {}: the transfer size must lie between 1 byte and {} (for example 4k)",
                self.bs.as_deref().unwrap_or_default(),
                Bytes(MAX_BS)
            );
        }
        for (flag, value) in [("--rate", self.rate), ("--iops-per-mailbox", self.iops_per_mailbox)] {
            if let Some(v) = value.filter(|v| !(v.is_finite() && *v > 0.0)) {
                anyhow::bail!("{flag} {v}: give a positive number of I/Os per second (for example 5000)");
            }
        }
        if self.ios == Some(0) {
            anyhow::bail!("--ios 0: give at least 1 I/O per worker to measure (or --time DURATION)");
        }
        if self.iops_per_mailbox.is_some() && self.mailboxes.is_none() && profile.mailboxes.is_none() {
            anyhow::bail!(
                "--iops-per-mailbox sets the rate per mailbox, but no mailbox count is set: add --mailboxes N (or use a profile that sets mailboxes, such as jetstress)"
            );
        }
        let run = match (self.ios, &self.time) {
            (Some(n), _) => Some(RunLength::Ios(n)),
            (None, Some(t)) => match parse_duration(t).context("--time")? {
                d if d.is_zero() => anyhow::bail!("--time {t}: the measured time must be above 0 (for example 10s or 1m)"),
                d => Some(RunLength::Time(d)),
            },
            (None, None) => None,
        };
        let overrides = Overrides {
            workers: self.workers,
            qd: self.qd,
            bs,
            read: self.read.as_deref().map(parse_percent).transpose().context("--read")?,
            random: self.random.as_deref().map(parse_percent).transpose().context("--random")?,
            align: self.align.as_deref().map(parse_size).transpose().context("--align")?,
            run,
            ramp: self.ramp.as_deref().map(parse_duration).transpose().context("--ramp")?,
            size: self.size.as_deref().map(parse_size).transpose().context("--size")?,
            offset: self.offset.as_deref().map(parse_size).transpose().context("--offset")?,
            seed: self.seed,
            engine: self.engine.as_deref().map(str::parse).transpose().context("--engine")?,
            buffered: self.buffered,
            connections: self.connections,
            polling: crate::workload::polling::Polling {
                sqpoll: self.sqpoll.as_deref().map(str::parse).transpose().map_err(anyhow::Error::msg).context("--sqpoll")?,
                poll: self.poll,
            },
            rate: self.rate,
            mailboxes: self.mailboxes,
            iops_per_mailbox: self.iops_per_mailbox,
            dist: self.dist.as_deref().map(str::parse).transpose().context("--dist")?,
            thinktime: self
                .thinktime
                .as_deref()
                .map(crate::units::parse_duration_with_unit)
                .transpose()
                .map_err(|e| anyhow::anyhow!("--thinktime {e}"))?,
            thinktime_blocks: self.thinktime_blocks,
            arrivals: self.arrivals.as_deref().map(str::parse).transpose().map_err(anyhow::Error::msg).context("--arrivals")?,
            compress: self.compress.as_deref().map(parse_percent).transpose().context("--compress")?,
            dedupe: self.dedupe.as_deref().map(parse_percent).transpose().context("--dedupe")?,
            dedupe_unit: self.dedupe_unit.as_deref().map(parse_size).transpose().context("--dedupe-unit")?,
            data_written: crate::workload::reduction::Texts {
                compress: self.compress.clone(),
                dedupe: self.dedupe.clone(),
                dedupe_unit: self.dedupe_unit.clone(),
            },
            steady: self.steady.as_deref().map(str::parse).transpose().map_err(anyhow::Error::msg)?,
            steady_window: self.steady_window,
            steady_round: self.steady_round.as_deref().map(parse_duration).transpose().context("--steady-round")?,
            steady_range: self.steady_range.as_deref().map(parse_percent).transpose().context("--steady-range")?,
            steady_slope: self.steady_slope.as_deref().map(parse_percent).transpose().context("--steady-slope")?,
            trim: self.trim.as_deref().map(parse_percent).transpose().context("--trim")?,
            sync: crate::workload::ops::sync_of(self.fsync, self.fdatasync, self.flush).map_err(anyhow::Error::msg)?,
        };
        if overrides.thinktime_blocks == Some(0) {
            anyhow::bail!("--thinktime-blocks 0: give at least 1 I/O between two think times");
        }
        if overrides.arrivals == Some(crate::workload::timing::Arrivals::Poisson)
            && overrides.rate.is_none()
            && overrides.mailboxes.is_none()
            && profile.rate.is_none()
            && profile.mailboxes.is_none()
            && profile.phases.iter().all(|ph| ph.groups.iter().all(|g| g.rate.is_none()))
        {
            anyhow::bail!("--arrivals poisson: Poisson arrivals need a mean rate: add --rate IOPS");
        }
        if overrides.thinktime.is_some() && (overrides.rate.is_some() || overrides.mailboxes.is_some()) {
            anyhow::bail!("--thinktime with --rate: think time pauses a closed loop, a rate sets the schedule itself; use one of them");
        }
        let pick: Pick = self.pick.parse().map_err(anyhow::Error::msg).context("--pick")?;
        let replay = self.replay_settings(profile.replay.clone())?;
        let run_given = self.time.is_some() || self.ios.is_some() || profile.time.is_some() || profile.ios.is_some();
        let ramp_given = self.ramp.is_some() || profile.ramp.is_some();
        let plan = PlanRequest {
            profile,
            profile_name,
            targets,
            targets_given,
            overrides,
            sweeps,
            repeat: self.repeat,
            pick,
            pass: self.pass.clone(),
        };
        Ok(RunRequest { plan, replay, run_given, ramp_given, context: self.context()?, json: self.json.clone() })
    }

    /// The replay the flags and the profile ask for (the flags win), None
    /// without one. Flags that shape generated I/O are refused beside it.
    fn replay_settings(&self, from_profile: Option<ReplaySettings>) -> Result<Option<ReplaySettings>> {
        let mut s = match (&self.replay, from_profile) {
            (Some(file), p) => ReplaySettings { file: file.clone(), ..p.unwrap_or_default() },
            (None, Some(p)) => p,
            (None, None) => {
                if self.replay_format.is_some() || self.replay_speed.is_some() || self.replay_map.is_some() || self.replay_offsets.is_some()
                {
                    anyhow::bail!("--replay-format, --replay-speed, --replay-map and --replay-offsets set up a replay: add --replay FILE");
                }
                return Ok(None);
            }
        };
        if let Some(f) = &self.replay_format {
            s.format = Some(f.parse().map_err(anyhow::Error::msg).context("--replay-format")?);
        }
        if let Some(v) = &self.replay_speed {
            s.speed = v.parse().map_err(anyhow::Error::msg).context("--replay-speed")?;
        }
        if let Some(m) = &self.replay_map {
            s.map = Some(m.parse().map_err(anyhow::Error::msg).context("--replay-map")?);
        }
        if let Some(o) = &self.replay_offsets {
            s.offsets = o.parse().map_err(anyhow::Error::msg).context("--replay-offsets")?;
        }
        // cli::paths refuses these against --replay on the command line; a
        // profile's [replay] file is only known here.
        let json = self.json.as_deref().filter(|j| *j != "-").map(std::path::Path::new);
        let outputs = [("--trace", self.trace.as_deref()), ("--json", json), ("--journal", self.journal.as_deref())];
        for (flag, out) in outputs.into_iter().filter_map(|(f, o)| o.map(|o| (f, o))) {
            let same = match (std::fs::canonicalize(out), std::fs::canonicalize(&s.file)) {
                (Ok(a), Ok(b)) => a == b,
                _ => out == s.file,
            };
            if same {
                anyhow::bail!(
                    "{flag} {} names the trace being replayed: writing it would overwrite the trace as it is read; give {flag} another file",
                    out.display()
                );
            }
        }
        let swept: Vec<String> = self
            .sweep
            .iter()
            .filter_map(|t| t.split_once('=').map(|(k, _)| k.trim().to_string()))
            .filter(|k| k != "qd")
            .map(|k| format!("--sweep {k}=.."))
            .collect();
        let verify = self.verify || self.verify_stop || self.journal.is_some();
        let given: Vec<String> = [
            ("--bs", self.bs.is_some()),
            ("--read", self.read.is_some()),
            ("--random", self.random.is_some()),
            ("--align", self.align.is_some()),
            ("--seed", self.seed.is_some()),
            ("--rate", self.rate.is_some()),
            ("--mailboxes", self.mailboxes.is_some()),
            ("--iops-per-mailbox", self.iops_per_mailbox.is_some()),
            ("--verify", verify),
            ("--cache", self.cache.is_some()),
            ("--fio", self.fio.is_some()),
            ("--dist", self.dist.is_some()),
            ("--trim", self.trim.is_some()),
            ("--thinktime", self.thinktime.is_some()),
            ("--thinktime-blocks", self.thinktime_blocks.is_some()),
            ("--arrivals", self.arrivals.is_some()),
            ("--compress", self.compress.is_some()),
            ("--dedupe", self.dedupe.is_some()),
            ("--dedupe-unit", self.dedupe_unit.is_some()),
            ("--fsync", self.fsync.is_some()),
            ("--fdatasync", self.fdatasync.is_some()),
            ("--flush", self.flush.is_some()),
            (
                "--steady",
                self.steady.is_some()
                    || self.steady_window.is_some()
                    || self.steady_round.is_some()
                    || self.steady_range.is_some()
                    || self.steady_slope.is_some(),
            ),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| f.to_string())
        .chain(swept)
        .collect();
        if !given.is_empty() {
            anyhow::bail!(
                "--replay {}: {} cannot apply to a replay: the trace gives each I/O's operation, offset, length and time \
                 (--verify and --cache need I/Os lunmark shapes itself; spread, trims, think time, arrivals, data content, syncs and a steady-state stop shape generated I/O). Drop {}",
                s.file.display(),
                given.join(", "),
                if given.len() == 1 { "it" } else { "them" }
            );
        }
        Ok(Some(s))
    }
}

/// A sweep given by `flag` (its text `given`), parsed as `text`: the error
/// names the flag and the value as the user typed them.
fn parse_sweep_flag(flag: &str, given: &str, text: &str) -> Result<Sweep> {
    sweep::parse(text).map_err(|e| anyhow::anyhow!(e.to_string().replacen(&format!("sweep '{text}'"), &format!("{flag} {given}"), 1)))
}

/// The single-phase workload of a run described by flags alone: 4 KiB random,
/// 70% read, 32 outstanding, 1 worker (each flag replaces its part).
fn flags_profile() -> Profile {
    Profile {
        name: "flags".into(),
        description: "the workload given by command-line flags".into(),
        phases: vec![Phase {
            name: "main".into(),
            groups: vec![WorkerGroup {
                name: "main".into(),
                workers: 1,
                qd: 32,
                targets: vec![],
                rate: None,
                follow: None,
                worker_per_target: false,
                access: vec![AccessLine { share: 100.0, bs: Bytes(4096), read: 70.0, random: 100.0, align: None, ..Default::default() }],
                ..Default::default()
            }],
        }],
        ..Profile::default()
    }
}

/// Applied or refused: `--engine` chooses the engine of files and devices, and
/// `--connections` those of NBD and iSCSI targets; given for a run with no such
/// target, each would be ignored. (A job file's or profile's engine is not
/// refused: `-t` may replace its files with a target of another kind.)
fn refuse_unused_engine_flags(args: &RunArgs, plan: &RunPlan) -> Result<()> {
    use crate::targets::TargetUri;
    let uris: Vec<&TargetUri> = plan.points.iter().flat_map(|p| p.targets.iter()).map(|t| &t.uri).collect();
    if let Some(engine) = &args.engine {
        if engine != "auto" && !uris.iter().any(|u| matches!(u, TargetUri::File(_) | TargetUri::Device(_))) {
            anyhow::bail!("--engine {engine} chooses the engine of files and devices, and no target is one (mem:, null:, nbd:// and iscsi:// targets have engines of their own): drop --engine");
        }
    }
    if let Some(n) = args.connections.filter(|&n| n > 1) {
        if !uris.iter().any(|u| u.is_network()) {
            anyhow::bail!("--connections {n} sets the connections (NBD) or sessions (iSCSI) of each worker, and no target is an nbd:// or iscsi:// one: drop --connections");
        }
    }
    Ok(())
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

pub fn execute(args: RunArgs, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let place = crate::mpi::placeholders::Place { rank: 0, local_rank: 0, host: crate::results::host::host_facts().hostname };
    execute_with(args, store_flag, &place, run::cluster::ClusterRef::default())
}

/// `execute` as one process of a cluster (MPI, issue 17): `place` fills the
/// target placeholders, and only the cluster's root prints and keeps the result.
pub fn execute_with(
    args: RunArgs,
    store_flag: Option<&std::path::Path>,
    place: &crate::mpi::placeholders::Place,
    cluster: run::cluster::ClusterRef,
) -> Result<i32> {
    let root = cluster.get().is_root();
    let mut scratch = Scratch(None);
    let targets =
        args.targets.iter().map(|t| crate::mpi::placeholders::expand(t, place)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg);
    if let Some(e) = cluster.get().agree("filling in the target placeholders", targets.as_ref().err()) {
        return Err(e);
    }
    let mut targets = targets?;
    let mut args = args;
    let (mut profile, profile_name, told, fio_logs) = args.base_profile_and_logs()?;
    // fio's log files are checked before anything runs, written after it (by the first process).
    let fio_logs = if root && !args.dry_run { fio_log_files(fio_logs)? } else { Vec::new() };
    // A profile's own targets take the placeholders as -t's do (issue 17): each rank its own.
    let profile_targets =
        crate::mpi::placeholders::expand_all(&profile.targets, place, "the profile's targets").map_err(anyhow::Error::msg);
    if let Some(e) = cluster.get().agree("filling in the target placeholders", profile_targets.as_ref().err()) {
        return Err(e);
    }
    profile.targets = profile_targets?;
    for t in told.iter().filter(|_| root) {
        if args.dry_run {
            crate::tprint!("{t}\n");
        } else {
            crate::ewriteln!("{t}");
        }
    }
    // A profile that checks data (one imported from a fio job with verify=) asks for --verify.
    args.verify |= profile.verify;
    // --verify-stop and --journal imply --verify: one flag for the dry run and the run alike.
    args.verify |= args.verify_stop || args.journal.is_some();
    if targets.is_empty() && profile.targets.is_empty() {
        let path = std::env::current_dir()?.join(format!("lunmark-scratch-{}.dat", std::process::id()));
        targets.push(path.display().to_string());
        args.size.get_or_insert_with(|| DEFAULT_SCRATCH_SIZE.to_string());
        if !args.dry_run {
            scratch.0 = Some(path);
        }
    }
    // The whole request is checked before anything runs (or is printed), and planned.
    let planned = args.request_from(profile, profile_name, targets).and_then(|r| Ok((r.plan()?, r))).map_err(|e| args.poll_named_by_job(e));
    // Every rank plans the same request with its own targets: one that cannot is named, and all stop.
    if let Some(e) = cluster.get().agree("planning the run", planned.as_ref().err()) {
        return Err(e);
    }
    let (plan, request) = planned?;
    refuse_unused_engine_flags(&args, &plan)?;
    if plan.repeat <= 1 && args.pick != "mean" {
        anyhow::bail!("--pick {} chooses among the repeats of a point: add --repeat N (N of 2 or more), or drop --pick", args.pick);
    }
    if let Some(e) = cluster.get().agree_on_plan(&run::cluster::fingerprint(&plan)) {
        return Err(e);
    }
    let mut ctx = request.context;
    ctx.cluster = cluster.clone();
    // The one check of the plan, on every rank alike, before the dry run and before any I/O.
    let ready = run::check(plan, &ctx)?;
    if args.dry_run && !root {
        return Ok(exit::OK);
    }
    if args.dry_run {
        let plan = ready.plan();
        let link = &ctx.link;
        let store = ResultStore::choose(&args, store_flag)?;
        crate::tprint!("{}", crate::lab::plan_view::describe(plan));
        if let Some(m) = cluster.get().facts() {
            println!(
                "mpi: {} on {} ({}), {}; each rank runs this plan on its own targets (above: rank 0's), \
                 every point starts after a barrier, rank 0 writes the merged result",
                crate::units::counted(m.ranks, "rank"),
                crate::units::counted(m.hosts.len() as u64, "host"),
                m.hosts.join(", "),
                crate::units::counted(m.machines, "machine")
            );
        }
        println!("{}", run::resources::describe(plan, ctx.resource_extras()));
        crate::tprint!("{}", super::request_text::render(&ctx, plan, store.path()));
        if let Some(link) = link {
            println!("{}", link.describe());
        }
        if args.output_format.is_some() || args.json.is_some() {
            let (json, shape) = args.json_output();
            let what = if shape == JsonShape::Fio { "fio-json (fio's JSON shape)" } else { "json (the result model)" };
            match json.as_deref() {
                None => println!("output: the summary only (no JSON)"),
                Some("-") => println!("output: {what} to stdout, the summary on stderr"),
                Some(file) => println!("output: {what} to {file}, the summary on stdout"),
            }
        }
        if args.detail {
            println!("detail: each worker's and each target's figures are printed beside the summary (--detail)");
        }
        return Ok(exit::OK);
    }
    if !root {
        // Ranks other than 0 are quiet and keep nothing: rank 0 writes the merged result.
        // Their notes (an idle power measurement, an incomplete trace) are still said.
        ctx.quiet = true;
        let result = run::execute(&ready, &ctx, &mut super::live_view::LiveView::notes_only())?;
        return Ok(exit_code(&result, false));
    }
    let store = ResultStore::choose(&args, store_flag)?;
    let (json, shape) = args.json_output();
    let kept = measure_and_keep_as(&ready, &ctx, json.as_deref(), shape, &store, Print::Summary { detail: args.detail })?;
    let unwritten = !write_fio_logs(&kept.result, &fio_logs);
    Ok(exit_code(&kept.result, !kept.unwritten.is_empty() || unwritten))
}

/// The fio-format logs a job file asks for, each path checked as an output.
fn fio_log_files(logs: Vec<fio_map::FioLog>) -> Result<Vec<(fio_map::FioLog, crate::output_path::OutputFile)>> {
    let checked = logs.into_iter().map(|l| {
        let flag = format!("{} (the fio job file's {}_log)", l.path, l.kind.suffix());
        crate::output_path::check(&flag, std::path::Path::new(&l.path), crate::output_path::Mode::Replace).map(|f| (l, f))
    });
    Ok(checked.collect::<Result<_, _>>()?)
}

/// Writes the fio logs from the result; false when one could not be written
/// (said on stderr). A point the run did not reach has no log: said, not written empty.
fn write_fio_logs(result: &RunResult, logs: &[(fio_map::FioLog, crate::output_path::OutputFile)]) -> bool {
    let mut all = true;
    for (log, file) in logs {
        match result.points.get(log.point) {
            Some(p) => {
                if let Err(e) = file.replace_with(crate::report::fio_log::render(log, p).as_bytes()) {
                    crate::ewriteln!("error: {e}");
                    all = false;
                }
            }
            None => crate::ewriteln!("note: {}: not written, the run ended before point {} measured anything", log.path, log.point + 1),
        }
    }
    all
}

/// Where a run's result is kept, settled from the flags before anything runs.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultStore {
    /// The store at this path (--store, else $LUNMARK_STORE, else the default).
    At(PathBuf),
    /// --no-store: only the printed summary and --json FILE keep the result.
    NotKept,
}

impl ResultStore {
    pub fn choose(args: &RunArgs, store_flag: Option<&std::path::Path>) -> Result<ResultStore> {
        match (args.no_store, store_flag) {
            (true, Some(p)) => anyhow::bail!("--no-store and --store {} contradict each other: drop one of them", p.display()),
            (true, None) => Ok(ResultStore::NotKept),
            (false, flag) => Ok(ResultStore::At(store::default_path(flag))),
        }
    }

    /// Where results are kept, None with --no-store.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            ResultStore::At(path) => Some(path),
            ResultStore::NotKept => None,
        }
    }

    /// Opens the store for a run and proves it can be written (None with
    /// --no-store). Called before anything runs: an unusable store is refused
    /// with the reason and what to do, instead of losing the result afterwards.
    pub fn open(&self) -> Result<Option<Store>> {
        match self {
            ResultStore::NotKept => Ok(None),
            ResultStore::At(path) => Store::open_writable(path).map(Some).map_err(|e| {
                anyhow::anyhow!(
                    "cannot keep results in the store {}: {e:#}. Nothing was run. Give --store PATH for a store you can write, \
                     or --no-store to keep the result only in the printed summary and --json FILE",
                    path.display()
                )
            }),
        }
    }
}

impl RunArgs {
    /// Who runs it and how: safety, power and verification settings from the flags.
    pub fn context(&self) -> Result<RunContext> {
        if let Some(log) = &self.power_log {
            check_power_log(log)?;
        }
        let power = PowerRequest {
            source: self.power.clone(),
            command: self.power_cmd.clone(),
            log: self.power_log.clone(),
            idle: self.idle.as_deref().map(parse_duration).transpose().context("--idle")?,
        };
        power.check().map_err(anyhow::Error::msg)?;
        Ok(RunContext {
            command_line: std::env::args().map(|a| crate::targets::credentials::hide_in_arg(&a)).collect(),
            label: self.label.clone(),
            profile: None,
            safety: SafetyFlags { destructive: self.destructive, force: self.force },
            quiet: self.quiet,
            power,
            verify: (self.verify || self.verify_stop || self.journal.is_some())
                .then(|| crate::verify::VerifyOptions { stop_on_mismatch: self.verify_stop, journal: self.journal.clone() }),
            cache: self.cache_config()?,
            trace: self.trace.clone(),
            announce_trace: true,
            continue_on_error: self.continue_on_error,
            link: self.link_setting()?,
            cluster: Default::default(),
            pinning: self.pinning()?,
        })
    }

    /// A refusal of completion polling that a fio job's hipri asked for (not
    /// --poll): named by the job file, job and option the user wrote.
    fn poll_named_by_job(&self, e: anyhow::Error) -> anyhow::Error {
        let text = e.to_string();
        let (Some(path), false, true) = (&self.fio, self.poll, text.starts_with("--poll")) else {
            return e;
        };
        let options = fio_map::ImportOptions { sections: self.section.clone(), lenient: self.fio_lenient, run_length_given: false };
        match fio_map::poll_origin(path, &options) {
            Some(origin) => anyhow::anyhow!(
                "{origin}{}",
                text.trim_start_matches("--poll").replace("Drop --poll", "Drop hipri from the job").replace("drop --poll", "drop hipri")
            ),
            None => e,
        }
    }

    /// The CPUs --cpus pins the workers to, with --cpus-policy (None without --cpus).
    /// Without the flags, the profile's `cpus` and `cpus_policy` (a fio job's
    /// `cpus_allowed`) apply: each flag replaces its key.
    pub fn pinning(&self) -> Result<Option<crate::workload::cpus::Pinning>> {
        use crate::workload::cpus::{online_cpus, CpuList, CpuPolicy, Pinning};
        let profile = if self.cpus.is_none() || self.cpus_policy.is_none() { self.base_profile().ok().map(|(p, _, _)| p) } else { None };
        let profile_policy = profile.as_ref().and_then(|p| p.cpus_policy);
        let list = self.cpus.clone().or_else(|| profile.as_ref().and_then(|p| p.cpus.as_ref()).map(ToString::to_string));
        let Some(list) = list else {
            if let Some(p) = &self.cpus_policy {
                anyhow::bail!("--cpus-policy {p} says how workers share pinned CPUs: add --cpus LIST (for example --cpus 0-3)");
            }
            return Ok(None);
        };
        let policy: CpuPolicy =
            self.cpus_policy.as_deref().map(str::parse).transpose().map_err(anyhow::Error::msg)?.or(profile_policy).unwrap_or_default();
        let cpus = CpuList::parse(&list, &online_cpus()).map_err(|e| match self.cpus {
            Some(_) => anyhow::Error::msg(e),
            None => anyhow::anyhow!("{} (give --cpus to override it)", e.replacen("--cpus", "the profile's cpus", 1)),
        })?;
        Ok(Some(Pinning { cpus, policy }))
    }

    /// The link (or links per target) `--link` names, None without it.
    pub fn link_setting(&self) -> Result<Option<crate::results::line_rate::LinkSetting>> {
        crate::results::line_rate::LinkSetting::parse(&self.link).map_err(anyhow::Error::msg)
    }

    /// The cache block --cache-block gives, else the default.
    pub fn cache_block(&self) -> &str {
        self.cache_block.as_deref().unwrap_or(DEFAULT_CACHE_BLOCK)
    }

    /// The cache tier the flags ask for (None without --cache).
    pub fn cache_config(&self) -> Result<Option<crate::engine::cache::config::CacheConfig>> {
        let Some(size) = &self.cache else {
            if self.cache_mode.is_some() || self.cache_dev.is_some() || self.cache_block.is_some() {
                anyhow::bail!("--cache-mode, --cache-dev and --cache-block set up a cache: add --cache SIZE or --cache N% as well");
            }
            return Ok(None);
        };
        let block = parse_size(self.cache_block()).context("--cache-block")?.get();
        Ok(Some(crate::engine::cache::config::CacheConfig {
            size: size.parse().context("--cache")?,
            mode: self.cache_mode.unwrap_or_default(),
            dev: self.cache_dev.clone(),
            block_bytes: u32::try_from(block).map_err(|_| anyhow::anyhow!("--cache-block {block} is too large"))?,
        }))
    }
}

/// The cache block without --cache-block.
const DEFAULT_CACHE_BLOCK: &str = "4k";

/// A --label as given, refused when empty or only blanks: it would store a
/// result named by nothing (and label a lab's rows ": lab cache: ...").
fn label_text(text: &str) -> std::result::Result<String, String> {
    if text.trim().is_empty() {
        return Err("a label cannot be empty: give text that names the run (--label 'FC 8G port 1'), or leave --label out".into());
    }
    crate::units::check_length("the label", text, crate::units::MAX_LABEL_CHARS)?;
    Ok(text.to_string())
}

/// Refuses a --power-log that is not a readable regular file before anything
/// runs: it is read after each point, and a missing one only gave "power: not
/// measured" on every point of a run that had already taken its time.
fn check_power_log(log: &std::path::Path) -> Result<()> {
    crate::input_path::check(log, &crate::input_path::POWER_LOG)
        .map_err(|e| anyhow::anyhow!("--power-log {e} (it is read after each point; create it first or give a path that exists)"))
}

/// A run's result and the outputs it could not be written to (each already reported).
pub struct Kept {
    pub result: RunResult,
    pub unwritten: Vec<String>,
}

/// Runs a plan, keeping the result after every point (store, and `--json FILE`),
/// prints it when `print` is set, and says where it was saved or why it was not.
/// The store is opened and write-tested first: an unusable one is an error
/// before anything runs. Once the run has started, a failure to write an output
/// never hides the run's own outcome: it is reported and listed in `Kept`.
pub fn measure_and_keep(plan: &RunPlan, ctx: &RunContext, json: Option<&str>, store: &ResultStore, print: bool) -> Result<Kept> {
    let ready = run::check(plan.clone(), ctx)?;
    measure_and_keep_as(&ready, ctx, json, JsonShape::Model, store, if print { Print::Summary { detail: false } } else { Print::Nothing })
}

/// What a run prints when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Print {
    Nothing,
    /// The summary; with `detail` (--detail) each worker's and target's figures too.
    Summary {
        detail: bool,
    },
}

/// `measure_and_keep` with the JSON in the shape asked for (--output-format).
pub fn measure_and_keep_as(
    plan: &run::ReadyPlan,
    ctx: &RunContext,
    json: Option<&str>,
    shape: JsonShape,
    store: &ResultStore,
    print: Print,
) -> Result<Kept> {
    let (print, detail) = match print {
        Print::Nothing => (false, false),
        Print::Summary { detail } => (true, detail),
    };
    // Judged again here (the command line checked it too): labs and library callers come this way as well.
    let json_file = match json.map(|j| output_path::destination("--json", j, true, Mode::Replace)).transpose()? {
        Some(Destination::File(f)) => Some(f),
        _ => None,
    };
    let opened = store.open()?;
    // The run's observers: the live view, then the JSON file and the store, kept after each point.
    let problems = Problems::default();
    let mut live = super::live_view::LiveView::new(ctx.quiet);
    if let Some(m) = ctx.cluster.get().facts() {
        live = live.of_rank_0(m.ranks);
    }
    let mut writer = json_file.map(|out| JsonWriter { out, render: Box::new(move |r: &RunResult| shape.render(r)), problems: &problems });
    let mut keeper = opened.map(|store| StoreKeeper::new(store, &problems));
    let mut observers: Vec<&mut dyn RunObserver> = vec![&mut live];
    observers.extend(writer.as_mut().map(|w| w as &mut dyn RunObserver));
    observers.extend(keeper.as_mut().map(|k| k as &mut dyn RunObserver));
    let result = run::execute(plan, ctx, &mut run::Fanout(observers))?;
    let (store_failed, deleted, notes) = keeper.map(|k| (k.failed, k.deleted, k.notes)).unwrap_or_default();
    drop(writer);
    if print {
        if let Err(e) = emit(&result, json, shape, detail) {
            problems.push_once(format!("{e:#}"));
        }
    }
    let errors = problems.into_list();
    for e in &errors {
        crate::ewriteln!("error: {e}");
    }
    for n in &notes {
        crate::ewriteln!("note: {n}");
    }
    match store {
        ResultStore::NotKept if json.is_none() && print => {
            crate::ewriteln!("not kept in a result store (--no-store): the summary above is all there is")
        }
        ResultStore::NotKept => crate::ewriteln!("not kept in a result store (--no-store)"),
        // Deleted during the run: the note said so.
        ResultStore::At(_) if deleted => {}
        ResultStore::At(path) if !store_failed => crate::ewriteln!("saved as {} in {}", result.id, path.display()),
        ResultStore::At(_) if json.is_none() => crate::ewriteln!(
            "the whole result is only in the summary printed above (the error says what the store keeps): \
             rerun with --json FILE, or fix the store (--store PATH)"
        ),
        ResultStore::At(_) => {}
    }
    Ok(Kept { result, unwritten: errors })
}

/// Prints the summary, and the JSON on stdout with `--json -` (the summary then
/// goes to stderr so stdout carries JSON only), in the shape asked for
/// (--output-format). A `--json FILE` is not written here: the keeper already
/// wrote the final result there, through the guard, and a second write would
/// only report a failure twice.
fn emit(result: &RunResult, json: Option<&str>, shape: JsonShape, detail: bool) -> Result<()> {
    let table = report::table::render_with(result, detail);
    match json {
        Some("-") => {
            crate::ewrite!("{table}");
            super::print_out(&shape.render(result))
        }
        _ => super::print_out(&table),
    }
}

/// The exit code of a run: its own outcome first (a failed run, a failed
/// criterion, corrupt data, an interruption keep their codes even when an
/// output could not be written); a run that completed and passed but whose
/// result could not be written where asked (`unwritten`) exits with 1.
pub fn exit_code(result: &RunResult, unwritten: bool) -> i32 {
    match outcome_code(result) {
        exit::OK if unwritten => exit::ERROR,
        code => code,
    }
}

fn outcome_code(result: &RunResult) -> i32 {
    let corrupt = result.points.iter().any(|p| p.summary.verify.as_ref().is_some_and(|v| v.mismatches > 0));
    if corrupt && result.status == Status::Completed {
        return exit::CORRUPT;
    }
    match result.status {
        Status::Completed | Status::Running if result.points.iter().any(|p| p.verdict.as_ref().is_some_and(|v| !v.passed)) => {
            exit::VERDICT_FAILED
        }
        Status::Completed | Status::Running => exit::OK,
        Status::Interrupted => exit::INTERRUPTED,
        Status::Failed => exit::RUN_FAILED,
    }
}
