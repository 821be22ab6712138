//! `lunmark run`'s flags: the table clap reads (each flag, its value and its
//! default), and the output shapes they choose. Turned into a request in
//! `request.rs`; run in `mod.rs`.

use std::path::PathBuf;

use clap::Args;

use crate::report;
use crate::results::model::RunResult;
use crate::units::Bytes;

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
    #[arg(long, value_name = "HOW", default_value = "mean", value_parser = str::parse::<crate::results::model::Pick>)]
    pub pick: crate::results::model::Pick,
    /// Issue I/Os on a fixed schedule: total IOPS, spread over the workers [default: none: as fast as the depth allows].
    #[arg(long, value_name = "IOPS", allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// Jetstress: number of mailboxes (rate = mailboxes x IOPS per mailbox) [default: none; the jetstress profile's 1000].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u64)]
    pub mailboxes: Option<u64>,
    /// Jetstress: IOPS per mailbox [default: 1, with --mailboxes; with --tune: the profile's, else 0.1].
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub iops_per_mailbox: Option<f64>,
    /// Pass criteria judged on every point, e.g. 'read_lat_avg<20ms,read_lat_max<50ms'. A failure exits with 4.
    #[arg(long, value_name = "CRITERIA")]
    pub pass: Option<String>,
    /// Search the queue depth for the most IOPS at which every bound holds, in --pass's grammar, e.g.
    /// 'lat_p99<5ms': doubled from 1 until a bound fails, then bisected; each step a point. Unmet at qd 1 exits with 6.
    #[arg(long, value_name = "BOUNDS")]
    pub sla: Option<String>,
    /// Jetstress-style tuning (profiles with a [tune], e.g. jetstress, exchange): the most database threads (workers)
    /// at which the profile's latency targets hold (--sla replaces them), searched as --sla searches workers (1 to 64,
    /// or --workers MIN-MAX); reports transactional IOPS and the mailboxes supported (--iops-per-mailbox).
    #[arg(long)]
    pub tune: bool,
    /// A load-latency curve (vdbench's curve): first as fast as the queue depth allows, then paced at each
    /// percentage of the IOPS measured, e.g. 10,50,90,100; latency counted from each I/O's scheduled time.
    #[arg(long, value_name = "PCT,...")]
    pub curve: Option<String>,
    /// With --curve: end the curve at the first point where a bound fails (--pass's grammar), e.g. 'lat_p99<5ms'.
    #[arg(long, value_name = "BOUNDS")]
    pub curve_stop: Option<String>,
    /// Target: /path/file, file:/path, /dev/NAME, mem:SIZE, null:SIZE, nbd://host[:port]/export, nbd+unix:///export?socket=PATH or iscsi://[user[%secret]@]host[:port]/IQN/LUN. Repeat for several targets.
    #[arg(long = "target", short = 't', value_name = "URI")]
    pub targets: Vec<String>,
    /// Worker threads [default: 1; a profile's own where one runs]. With --sla, a range MIN-MAX (e.g. 1-8): the
    /// search grows the workers first (at qd 1, or --qd), then the queue depth per worker at MAX.
    #[arg(long, value_name = "N|MIN-MAX", allow_negative_numbers = true, value_parser = crate::cli::numbers::workers)]
    pub workers: Option<crate::cli::numbers::WorkerCount>,
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
    #[arg(long, value_name = "ENGINE", value_parser = engine_choice)]
    pub engine: Option<crate::workload::EngineChoice>,
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
    /// --json FILE when given, else to stdout with the summary on stderr [default: normal].
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// Print the effective workload and exit without running it.
    #[arg(long)]
    pub dry_run: bool,
    /// A label stored with the result ("FC 8G port 1", "after firmware update").
    #[arg(long, value_parser = label_text)]
    pub label: Option<String>,
    /// Power source: auto (RAPL, then IPMI DCMI), rapl, ipmi, cmd, log or none [default: auto].
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
    /// (default: uniform, lab cache too).
    #[arg(long, value_name = "DIST", value_parser = distribution)]
    pub dist: Option<crate::workload::dist::Distribution>,
    /// Think time: each worker issues nothing for this long after every --thinktime-blocks I/Os (fio's thinktime).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub thinktime: Option<String>,
    /// I/Os between two think times [default: 1].
    #[arg(long, value_name = "N", requires = "thinktime", allow_negative_numbers = true, value_parser = crate::cli::numbers::whole_u32)]
    pub thinktime_blocks: Option<u32>,
    /// With --rate: fixed (one I/O every 1/rate) or poisson (exponential gaps of mean 1/rate) [default: fixed].
    #[arg(long, value_name = "fixed|poisson", value_parser = str::parse::<crate::workload::timing::Arrivals>)]
    pub arrivals: Option<crate::workload::timing::Arrivals>,
    // Pinning and per-worker figures (issue 14 items 3-5).
    /// Pin the workers to these CPUs, for example 0-3,8 (buffers are first touched after pinning).
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub cpus: Option<String>,
    /// With --cpus: shared (every worker on all listed CPUs) or split (worker i on the i-th listed CPU, round robin) [default: shared].
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
    #[arg(long, value_name = "iops|bw|lat", value_parser = str::parse::<crate::workload::steady::SteadyMetric>)]
    pub steady: Option<crate::workload::steady::SteadyMetric>,
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
    // Histogram logs (issue 29 item 3; docs/telemetry.md).
    /// Write an HdrHistogram interval log to FILE (replaced after each point): one histogram a second per operation, Tag=read|write|trim.
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,
    // Live telemetry (issue 29; docs/telemetry.md).
    /// Write one JSON line a second per point (and per worker with --detail) to FILE, or to stdout with '-'
    /// (the summary then goes to stderr); a reader that falls behind makes lines drop (counted in the result), never the run wait.
    #[arg(long, value_name = "FILE")]
    pub live_json: Option<String>,
    /// Serve Prometheus metrics at http://ADDR:PORT/metrics while the run goes; a bare PORT or :PORT binds 127.0.0.1.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<String>,
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
            JsonShape::Model => report::export::json::render(result),
            JsonShape::Fio => report::export::fio_json::render(result),
        }
    }
}

/// Size of the scratch file of a run without targets.
pub const DEFAULT_SCRATCH_SIZE: Bytes = Bytes(Bytes::GIB);

/// A --label as given, refused when empty or only blanks: it would store a
/// result named by nothing (and label a lab's rows ": lab cache: ...").
fn label_text(text: &str) -> std::result::Result<String, String> {
    if text.trim().is_empty() {
        return Err("a label cannot be empty: give text that names the run (--label 'FC 8G port 1'), or leave --label out".into());
    }
    crate::units::check_length("the label", text, crate::units::MAX_LABEL_CHARS)?;
    Ok(text.to_string())
}

/// `--dist`'s value, typed where clap reads it.
fn distribution(text: &str) -> Result<crate::workload::dist::Distribution, String> {
    text.parse().map_err(|e: crate::workload::dist::DistError| e.to_string())
}

/// `--engine`'s value, typed where clap reads it.
fn engine_choice(text: &str) -> Result<crate::workload::EngineChoice, String> {
    text.parse().map_err(|e: crate::workload::SpecError| e.to_string())
}
