//! fio job files, the meaning: each job section becomes a worker group, jobs
//! that run together in fio become the groups of one phase, and `stonewall` /
//! `wait_for` start the next phase. Options are turned into lunmark's profile
//! (docs/fio.md has the table). Every option lunmark does not apply is refused,
//! all of them in one message with their lines; with `lenient` the ones that
//! can be left out are skipped with a warning each instead.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::time::Duration;

use thiserror::Error;

use super::fio_job::{self, parse_bool, parse_size, parse_time, split_filenames, JobSection, Setting, SyntaxError};
use super::profile::{self, Phase, Profile, ProfileError};
use super::spec::{AccessLine, EngineChoice, WorkerGroup};
use crate::units::Bytes;

/// The options lunmark reads (others are refused).
const KNOWN: &[&str] = &[
    "name",
    "description",
    "group_reporting",
    "thread",
    "new_group",
    "stonewall",
    "wait_for_previous",
    "wait_for",
    "numjobs",
    "rw",
    "readwrite",
    "rw_sequencer",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bssplit",
    "bsrange",
    "blocksize_range",
    "iodepth",
    "filename",
    "directory",
    "size",
    "filesize",
    "offset",
    "io_size",
    "io_limit",
    "number_ios",
    "direct",
    "buffered",
    "ioengine",
    "uri",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "startdelay",
    "random_distribution",
    "rate_iops",
    "thinktime",
    "thinktime_blocks",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "rate_process",
    "verify",
    "fsync",
    "fdatasync",
    "randseed",
    "kb_base",
    "norandommap",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "hipri",
    "cpus_allowed",
    "cpus_allowed_policy",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "offset_increment",
    "rate",
    "loops",
    "blockalign",
    "ba",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "log_avg_msec",
    "numa_cpu_nodes",
    "steadystate",
    "ss",
    "ss_dur",
    "steadystate_duration",
    "ss_ramp",
    "steadystate_ramp_time",
    "cpumask",
    "sync",
    "overwrite",
    "do_verify",
    "verify_fatal",
    "serialize_overlap",
    "fallocate",
    "buffer_compress_chunk",
    "buffer_pattern",
    "filename_format",
    "percentile_list",
];

/// Options that change nothing lunmark measures: accepted, each with a note
/// saying why (docs/fio.md lists them). `harmless` writes the notes.
const HARMLESS: &[&str] = &[
    "thread",
    "randrepeat",
    "gtod_reduce",
    "invalidate",
    "refill_buffers",
    "scramble_buffers",
    "group_reporting",
    "lat_percentiles",
    "clat_percentiles",
    "slat_percentiles",
    "disk_util",
    "write_hist_log",
    "log_hist_msec",
    "per_job_logs",
    "log_offset",
    "significant_figures",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw",
    "verify_dump",
    "verify_state_save",
];

/// Options lunmark does not apply that change no figure it reports (fio's
/// housekeeping and output): `--fio-lenient` may skip these, and only these.
const NO_FIGURE: &[&str] = &[
    "unlink",
    "unlink_each_loop",
    "stats",
    "unified_rw_reporting",
    "log_compression",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_max_value",
    "log_hist_coarseness",
    "exec_postrun",
    "allow_file_create",
    "allow_mounted_write",
    "create_serialize",
    "clocksource",
];

/// Options whose value may hold one part per direction (`a,b[,c]`); elsewhere
/// a trailing comma is an empty part fio drops.
const PER_DIRECTION: &[&str] = &["bs", "bssplit", "bsrange", "rate_iops", "rate", "blockalign", "random_distribution"];

/// A `bs` that is not a size; `bs=4k-512k` reads as a range but is not one:
/// fio 3.33 takes its first size and drops the rest without a word.
fn bs_message(part: &str, message: String) -> String {
    match part.split_once('-') {
        Some((low, _)) if parse_size(low, 1024).is_ok() => format!(
            "'{}' is not one size: fio 3.33 reads it as {} and drops the rest without a word; for a range of sizes write bsrange={}, for one size bs={}",
            part.trim(),
            low.trim(),
            part.trim(),
            low.trim()
        ),
        _ => message,
    }
}

/// Most access lines one job may map to (bsrange makes one per size).
const MAX_LINES: usize = 256;

/// What to import.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Only these job sections (fio's --section); empty: all.
    pub sections: Vec<String>,
    /// Skip options lunmark cannot apply (a warning each) instead of refusing the file.
    pub lenient: bool,
    /// The run length comes from the command line (--time or --ios), so jobs
    /// that would end differently need not agree.
    pub run_length_given: bool,
    /// The run's `--target`s, which replace the job file's files: a share of
    /// the file (`size=50%`) is a share of these.
    pub targets: Vec<String>,
    /// The run records its writes in a journal (--journal), which
    /// `lunmark verify` reads back: a job that only writes is then checked.
    pub journal: bool,
    /// The run's `--sla`, which replaces a job's `latency_target` (its note says so).
    pub sla: Option<String>,
}

/// Which fio log a job asks for (`write_bw_log`, `write_iops_log`, `write_lat_log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    /// fio's total latency, `_lat`.
    Lat,
    /// fio's completion latency, `_clat` (the same figure for lunmark, which
    /// does not time submission apart).
    Clat,
}

impl LogKind {
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
        }
    }
}

/// A fio-format log file to write after the run, from one point's per-second intervals.
#[derive(Clone, Debug, PartialEq)]
pub struct FioLog {
    /// The file, as fio names it: `PREFIX_bw.N.log` (N: the job's thread number in the file).
    pub path: String,
    pub kind: LogKind,
    /// The point (phase) of the job, from 0.
    pub point: usize,
    /// Seconds averaged into one line (log_avg_msec / 1000).
    pub avg_secs: u32,
    /// fio's data directions the job does (0 read, 1 write).
    pub directions: Vec<u8>,
}

/// The profile, and what the user must be told about it.
#[derive(Clone, Debug)]
pub struct Imported {
    /// fio-format logs the job file asks for (write them after the run).
    pub logs: Vec<FioLog>,
    pub profile: Profile,
    /// Where lunmark's run differs from fio's in a way the user should know.
    pub notes: Vec<String>,
    /// With `lenient`: the options left out, one line each.
    pub skipped: Vec<String>,
}

/// One option lunmark cannot apply as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub line: usize,
    /// "line N", or "FILE, line N" for a line of an included file.
    pub place: String,
    pub option: String,
    pub message: String,
    /// The job runs without it (`--fio-lenient`); false when leaving it out would
    /// run a different workload (a bad value, rw=trim).
    pub skippable: bool,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.place, self.option, self.message)
    }
}

#[derive(Debug, Error)]
pub enum FioError {
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    #[error("{origin}: lunmark cannot run this job file as it is:\n{}\n{}", list(problems), hint(problems))]
    Refused { origin: String, problems: Vec<Problem> },
    #[error("{origin}: no job section to run{}", if known.is_empty() { String::new() } else { format!(": --section names none of {}", known.join(", ")) })]
    NoJobs { origin: String, known: Vec<String> },
    #[error("the profile made from {origin} does not check: {source}")]
    Profile { origin: String, source: Box<ProfileError> },
    /// Not a regular file within the limit, or unreadable (`input_path`).
    #[error(transparent)]
    Read(#[from] crate::input_path::InputError),
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

fn hint(problems: &[Problem]) -> String {
    if problems.iter().all(|p| p.skippable) {
        "Remove these options, or add --fio-lenient to run without them (a warning each). docs/fio.md lists what lunmark applies.".into()
    } else if problems.iter().any(|p| p.skippable) {
        "Remove or change the options lunmark cannot run; --fio-lenient skips only those that change no figure. docs/fio.md lists what lunmark applies.".into()
    } else {
        "Remove or change these options: each may change the workload, so --fio-lenient cannot skip them. docs/fio.md lists what lunmark applies.".into()
    }
}

/// Largest file `include` reads: job files are a few KiB; this keeps a
/// mistaken include of a device or a log from being read whole.
pub const MAX_INCLUDE_BYTES: u64 = 1 << 20;

/// Reads an included file as fio finds it: a relative name is relative to the
/// including file's directory. Only a regular file of at most MAX_INCLUDE_BYTES.
fn read_include(name: &str, including: &str) -> Result<fio_job::Included, String> {
    let base = std::path::Path::new(including).parent().unwrap_or(std::path::Path::new("."));
    let path = if name.starts_with('/') { std::path::PathBuf::from(name) } else { base.join(name) };
    // The rule of every input file (a regular file within the job files' limit, read no further), and the include's own.
    let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() && meta.len() > MAX_INCLUDE_BYTES {
        return Err(format!("{} is {} bytes: an included job file may be at most {MAX_INCLUDE_BYTES} bytes", path.display(), meta.len()));
    }
    let text = crate::input_path::read_to_string(&path, &crate::input_path::FIO_JOB).map_err(|e| e.to_string())?;
    let identity = std::fs::canonicalize(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(fio_job::Included { shown: path.display().to_string(), identity: identity.display().to_string(), text })
}

/// Parses a job file on disk with this process's environment and host.
fn parse_file(path: &std::path::Path) -> Result<(String, Vec<JobSection>), FioError> {
    let text = crate::input_path::read_to_string(path, &crate::input_path::FIO_JOB)?;
    let origin = path.display().to_string();
    // Cycles are found by canonical path; the job file itself is the first link.
    let identity = std::fs::canonicalize(path).map(|p| p.display().to_string()).unwrap_or_else(|_| origin.clone());
    let ctx = fio_job::Context { env: &|k| std::env::var(k).ok(), host: fio_job::HostVars::of_this_host(), include: &read_include };
    let sections = fio_job::parse_as(&text, &origin, &identity, &ctx)?;
    Ok((origin, sections))
}

/// Reads and maps a job file from disk, `${VAR}` from this process's environment.
pub fn import_file(path: &std::path::Path, options: &ImportOptions) -> Result<Imported, FioError> {
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "fio".into());
    let (origin, sections) = parse_file(path)?;
    import_sections(sections, &origin, &name, options)
}

/// Maps a job file's text to a profile named `name` (no includes: they need a file on disk).
pub fn import(
    text: &str,
    origin: &str,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
    options: &ImportOptions,
) -> Result<Imported, FioError> {
    let no_include = |_: &str, _: &str| Err("include needs the job file on disk (run --fio FILE)".to_string());
    let ctx = fio_job::Context { env, host: fio_job::HostVars::of_this_host(), include: &no_include };
    import_sections(fio_job::parse(text, origin, &ctx)?, origin, name, options)
}

/// What a refusal lists: with `lenient`, only what blocks (the options it
/// would skip are not in the way); without it, everything, in line order.
fn refusal(fatal: Vec<Problem>, skippable: Vec<Problem>, lenient: bool) -> Vec<Problem> {
    let mut all: Vec<Problem> = if lenient { fatal } else { fatal.into_iter().chain(skippable).collect() };
    all.sort_by_key(|p| p.line);
    all
}

fn import_sections(sections: Vec<JobSection>, origin: &str, name: &str, options: &ImportOptions) -> Result<Imported, FioError> {
    let known: Vec<String> = sections.iter().map(|s| s.name.clone()).collect();
    let chosen: Vec<&JobSection> = sections.iter().filter(|s| options.sections.is_empty() || options.sections.contains(&s.name)).collect();
    if chosen.is_empty() {
        return Err(FioError::NoJobs { origin: origin.into(), known: if options.sections.is_empty() { Vec::new() } else { known } });
    }
    let mut problems = Problems::default();
    let mut notes = Notes::default();
    let jobs: Vec<Job> = chosen.iter().map(|s| Job::read(s, options, &mut problems, &mut notes)).collect();
    let profile = assemble(&jobs, name, origin, options.run_length_given, &mut problems, &mut notes);
    let (skippable, fatal): (Vec<Problem>, Vec<Problem>) = problems.0.into_iter().partition(|p| p.skippable);
    if !fatal.is_empty() || (!skippable.is_empty() && !options.lenient) {
        let all = refusal(fatal, skippable, options.lenient);
        return Err(FioError::Refused { origin: origin.into(), problems: all });
    }
    let mut skippable = skippable;
    skippable.sort_by_key(|p| p.line);
    let skipped: Vec<String> = skippable.iter().map(|p| format!("{origin}, {p} (skipped: --fio-lenient)")).collect();
    let mut problems = Problems::default();
    // The profile must read back from its TOML as it is; check it the same way.
    profile::parse(&profile::to_toml(&profile), origin)
        .map_err(|source| FioError::Profile { origin: origin.into(), source: Box::new(source) })?;
    let logs = fio_logs(&chosen, &jobs, &profile, &mut problems, &mut notes);
    let (skippable, fatal): (Vec<Problem>, Vec<Problem>) = problems.0.into_iter().partition(|p| p.skippable);
    if !fatal.is_empty() || (!skippable.is_empty() && !options.lenient) {
        let all = refusal(fatal, skippable, options.lenient);
        return Err(FioError::Refused { origin: origin.into(), problems: all });
    }
    let skipped = skipped.into_iter().chain(skippable.iter().map(|p| format!("{origin}, {p} (skipped: --fio-lenient)"))).collect();
    Ok(Imported { logs, profile, notes: notes.0, skipped })
}

/// The fio logs of the chosen jobs: `write_bw_log=PREFIX` and the like (a
/// bare switch: the job's name), as fio names them, `PREFIX_bw.N.log` with N
/// the job's thread number in the file. lunmark keeps per-second figures per
/// point, so a job gets its logs when it runs alone in its phase with one
/// clone; its latency log when it does one direction (the per-second latency
/// is of all I/O) and has no rate (whose latency counts from the schedule).
/// Leaving a log out changes no figure: --fio-lenient may skip it.
fn fio_logs(sections: &[&JobSection], jobs: &[Job], profile: &Profile, problems: &mut Problems, notes: &mut Notes) -> Vec<FioLog> {
    let mut logs = Vec::new();
    let mut thread = 1u32;
    for (section, job) in sections.iter().zip(jobs) {
        let set = Settings::of(section, &mut Problems::default());
        let first_thread = thread;
        thread += job.numjobs;
        let asked: Vec<(&Setting, LogKind)> =
            [("write_bw_log", LogKind::Bw), ("write_iops_log", LogKind::Iops), ("write_lat_log", LogKind::Lat)]
                .iter()
                .filter_map(|(k, kind)| set.get(k).map(|s| (s, *kind)))
                .collect();
        let avg = set.value("log_avg_msec").map(|(s, v)| (s, v.trim().parse::<u64>()));
        let avg_secs = match avg {
            None if !asked.is_empty() => {
                notes.push(format!(
                    "job '{}': without log_avg_msec fio logs every I/O; lunmark's logs hold per-second averages (log_avg_msec=1000)",
                    job.name
                ));
                1
            }
            None => 1,
            Some((_, Ok(ms))) if ms >= 1000 && ms % 1000 == 0 => (ms / 1000) as u32,
            Some((s, _)) => {
                problems.push(s, "lunmark's logs are made of its per-second figures: give a multiple of 1000 (ms)", true);
                continue;
            }
        };
        let Some(point) = profile.phases.iter().position(|p| p.groups.iter().any(|g| g.name == job.name)) else { continue };
        let alone = profile.phases[point].groups.len() == 1 && job.numjobs == 1;
        let read: f64 = job.lines.iter().map(|l| l.share * l.read / 100.0).sum();
        let directions: Vec<u8> = [(0u8, read > 0.0), (1, read < 100.0)].iter().filter(|(_, on)| *on).map(|(d, _)| *d).collect();
        for (s, kind) in asked {
            if !alone {
                problems.push(s, format!("lunmark keeps per-second figures per point, so only a job that runs alone in its phase with numjobs=1 gets fio's logs (job '{}' does not)", job.name), true);
                continue;
            }
            if kind == LogKind::Lat && (directions.len() > 1 || job.rate.is_some()) {
                let why = if job.rate.is_some() {
                    "has a rate, and lunmark's latency then counts from the schedule"
                } else {
                    "reads and writes, and lunmark's per-second latency is of all its I/O"
                };
                problems.push(s, format!("job '{}' {why}: no latency log", job.name), true);
                continue;
            }
            let prefix = match s.value.as_deref().map(str::trim) {
                Some(p) if !p.is_empty() && p != "1" => p.to_string(),
                _ => job.name.clone(),
            };
            let kinds: &[LogKind] = if kind == LogKind::Lat { &[LogKind::Lat, LogKind::Clat] } else { std::slice::from_ref(&kind) };
            for k in kinds {
                logs.push(FioLog {
                    path: format!("{prefix}_{}.{first_thread}.log", k.suffix()),
                    kind: *k,
                    point,
                    avg_secs,
                    directions: directions.clone(),
                });
            }
            if kind == LogKind::Lat {
                notes.push(format!("{} ({}): lunmark writes {prefix}_lat and {prefix}_clat (the same figure: it does not time submission apart) and no {prefix}_slat", show(s), s.place()));
            }
        }
    }
    logs
}

/// Problems, once each (a [global] option reaches every job).
#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    fn push(&mut self, s: &Setting, message: impl Into<String>, skippable: bool) {
        let p = Problem { line: s.line, place: s.place(), option: show(s), message: message.into(), skippable };
        if !self.0.contains(&p) {
            self.0.push(p);
        }
    }
}

#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn push(&mut self, text: String) {
        if !self.0.contains(&text) {
            self.0.push(text);
        }
    }
}

fn show(s: &Setting) -> String {
    match &s.value {
        Some(v) => format!("{}={v}", s.key),
        None => s.key.clone(),
    }
}

/// How a job ends, as fio would end it.
#[derive(Clone, Debug, PartialEq)]
enum End {
    Time(Duration),
    Ios(u64),
    /// Nothing lunmark can derive (one pass over a device of unknown size).
    Unknown,
}

/// One job section, read into what lunmark needs.
struct Job {
    name: String,
    line: usize,
    numjobs: u32,
    stonewall: bool,
    wait_for: Option<(String, usize)>,
    lines: Vec<AccessLine>,
    qd: u32,
    /// Targets of the job; with `per_clone` one per clone.
    targets: Vec<String>,
    per_clone: bool,
    /// Bytes each file's region spans.
    file_size: Option<u64>,
    offset: Option<u64>,
    end: End,
    ramp: Duration,
    seed: Option<u64>,
    /// For files and devices: the engine and whether the page cache is used.
    file_engine: Option<(EngineChoice, bool)>,
    rate: Option<f64>,
    verify: bool,
    /// thinktime, thinktime_blocks and rate_process (src/workload/timing.rs).
    thinktime: Option<Duration>,
    thinktime_blocks: Option<u32>,
    arrivals: crate::workload::timing::Arrivals,
    /// fsync=N or fdatasync=N.
    sync: Option<super::ops::SyncEvery>,
    /// latency_target with latency_percentile: lunmark's --sla bound; latency_window: each step's measured time.
    sla: Option<Sla>,
    /// sqthread_poll (with sqthread_poll_cpu) and hipri.
    polling: super::polling::Polling,
    /// cpus_allowed and cpus_allowed_policy.
    cpus: Option<super::cpus::CpuList>,
    cpus_policy: Option<super::cpus::CpuPolicy>,
    /// buffer_compress_percentage and dedupe_percentage, percent.
    compress: Option<f64>,
    dedupe: Option<f64>,
    /// offset_increment, bytes.
    offset_increment: Option<u64>,
    /// percentile_list, percent.
    percentiles: Vec<f64>,
    /// ss and ss_dur, as lunmark's steady state.
    steady: Option<super::steady::SteadySpec>,
    /// startdelay, its line and its text as written (0, 0, "" when not given).
    startdelay: (Duration, usize, String),
}

/// The settings in force for a job, one per key, with alias keys folded.
struct Settings<'a>(HashMap<&'static str, &'a Setting>);

impl<'a> Settings<'a> {
    fn of(section: &'a JobSection, problems: &mut Problems) -> Self {
        let mut map = HashMap::new();
        for s in &section.settings {
            let key = match s.key.as_str() {
                "readwrite" => "rw",
                "blocksize" => "bs",
                "blocksize_range" => "bsrange",
                "io_limit" => "io_size",
                "timeout" => "runtime",
                "wait_for_previous" => "stonewall",
                "ba" => "blockalign",
                "steadystate" => "ss",
                "steadystate_duration" => "ss_dur",
                "steadystate_ramp_time" => "ss_ramp",
                k => match KNOWN.iter().chain(HARMLESS).find(|n| **n == k) {
                    Some(n) => *n,
                    None if NO_FIGURE.contains(&k) => {
                        problems.push(s, "not an option lunmark applies (it changes no figure lunmark reports)", true);
                        continue;
                    }
                    None => {
                        problems.push(
                            s,
                            "not an option lunmark applies, and it may change the workload, so --fio-lenient cannot skip it either",
                            false,
                        );
                        continue;
                    }
                },
            };
            map.insert(key, s);
        }
        Settings(map)
    }

    fn get(&self, key: &str) -> Option<&'a Setting> {
        self.0.get(key).copied()
    }

    /// The value; a trailing `,` (an empty part fio drops) is left out except
    /// where the parts are per direction.
    fn value(&self, key: &str) -> Option<(&'a Setting, &'a str)> {
        let trim = !PER_DIRECTION.contains(&key);
        self.get(key).map(|s| {
            let v = s.value.as_deref().unwrap_or("");
            (s, if trim { v.trim_end().trim_end_matches(',') } else { v })
        })
    }

    fn switch(&self, key: &str, problems: &mut Problems) -> bool {
        match self.value(key) {
            None => false,
            Some((s, v)) => parse_bool(s.value.as_ref().map(|_| v)).unwrap_or_else(|m| {
                problems.push(s, m, false);
                false
            }),
        }
    }

    fn number<T: std::str::FromStr>(&self, key: &str, problems: &mut Problems) -> Option<T> {
        let (s, v) = self.value(key)?;
        v.trim().parse().map_err(|_| problems.push(s, format!("'{v}' is not a whole number"), false)).ok()
    }

    fn size(&self, key: &str, kb_base: u64, problems: &mut Problems) -> Option<u64> {
        let (s, v) = self.value(key)?;
        parse_size(v, kb_base).map_err(|m| problems.push(s, m, false)).ok()
    }

    fn time(&self, key: &str, problems: &mut Problems) -> Option<Duration> {
        let (s, v) = self.value(key)?;
        parse_time(v, Duration::from_secs(1)).map_err(|m| problems.push(s, m, false)).ok()
    }
}

impl Job {
    fn read(section: &JobSection, options: &ImportOptions, problems: &mut Problems, notes: &mut Notes) -> Job {
        let given = &options.targets;
        let set = Settings::of(section, problems);
        let name = set.value("name").map(|(_, v)| v.to_string()).unwrap_or_else(|| section.name.clone());
        let kb_base = match set.value("kb_base") {
            None => 1024,
            Some((_, "1024")) => 1024,
            Some((_, "1000")) => 1000,
            Some((s, v)) => {
                problems.push(s, format!("'{v}' is not a kb_base: use 1024 or 1000"), false);
                1024
            }
        };
        let numjobs = set.number::<u32>("numjobs", problems).unwrap_or(1).max(1);
        let (read, trim, random) = direction(&set, problems);
        let mut lines = access_lines(&set, kb_base, read, random, problems, notes);
        // A trim job's lines are its "write" direction's sizes, every I/O a trim.
        for l in lines.iter_mut().filter(|_| trim > 0.0) {
            l.trim = trim;
        }
        block_align(&set, &mut lines, kb_base, problems);
        rw_suffix(&set, random, kb_base, &mut lines, problems, notes);
        let dist = distribution(&set, problems);
        for l in &mut lines {
            l.dist = dist.clone();
        }
        let sync = sync(&set, problems);
        let mut place = place(&set, &name, numjobs, kb_base, problems, notes);
        let min_bs = lines.iter().map(|l| l.bs.get()).min().unwrap_or(4096);
        let offset = shares_of_the_file(&set, &mut place, given, kb_base, min_bs, problems, notes);
        let offset_increment = offset_increment(&set, &name, numjobs, &mut place, problems, notes);
        let qd = queue_depth(&set, &name, place.files, problems, notes);
        let end = loops(&set, &name, run_end(&set, &name, kb_base, &lines, &place, problems, notes), problems, notes);
        refuse_what_lunmark_lacks(&set, &name, random, problems, notes);
        harmless(&set, &name, place.file_engine.is_some_and(|(_, b)| b), problems, notes);
        let steady = steady_state(&set, &name, problems, notes);
        let (cpus, cpus_policy) = pinning(&set, problems);
        let (compress, dedupe) = data_reduction(&set, &lines, problems, notes);
        let rate = rate(&set, &lines, kb_base, read, numjobs, problems, notes);
        // Both always run: each notes or refuses options of its own.
        let checking = verify(&set, problems, notes) & fio_defaults(&set, &name, read, trim, problems, notes);
        if checking && read <= 0.0 {
            verify_write_only(&set, &name, options.journal, problems, notes);
        }
        Job {
            line: section.line,
            numjobs,
            stonewall: set.switch("stonewall", problems),
            wait_for: set.value("wait_for").map(|(s, v)| (v.trim().to_string(), s.line)),
            lines,
            qd,
            targets: place.targets,
            per_clone: place.per_clone,
            file_size: place.file_size,
            offset,
            offset_increment,
            percentiles: percentile_list(&set, problems, notes),
            end,
            ramp: set.time("ramp_time", problems).unwrap_or(Duration::ZERO),
            seed: set.number::<u64>("randseed", problems),
            file_engine: place.file_engine,
            rate,
            verify: checking,
            steady,
            startdelay: (
                set.time("startdelay", problems).unwrap_or(Duration::ZERO),
                set.get("startdelay").map_or(0, |s| s.line),
                set.value("startdelay").map_or(String::new(), |(_, v)| v.trim().to_string()),
            ),
            thinktime: thinktime(&set, problems, notes).filter(|t| !t.is_zero()),
            thinktime_blocks: set.number::<u32>("thinktime_blocks", problems).filter(|_| set.get("thinktime").is_some()),
            arrivals: arrivals(&set, problems),
            sla: latency_target(&set, &name, options.sla.as_deref(), problems, notes),
            sync,
            polling: polling(&set, &name, problems),
            cpus,
            cpus_policy,
            compress,
            dedupe,
            name,
        }
    }
}

/// `sqthread_poll` (pinned by `sqthread_poll_cpu`) is `--sqpoll[=CPU]` and
/// `hipri` is `--poll`: options of fio's io_uring engine (hipri also of
/// pvsync2, whose polled preadv2 lunmark has not). Whether the device can poll
/// is checked at the run, as for the flags.
fn polling(set: &Settings, job: &str, problems: &mut Problems) -> super::polling::Polling {
    use super::polling::{Polling, SqPoll};
    let engine = set.value("ioengine").map(|(_, v)| v.trim()).unwrap_or("psync");
    let keys = ["sqthread_poll", "sqthread_poll_cpu", "hipri"];
    if engine != "io_uring" {
        for s in keys.iter().filter_map(|k| set.get(k)) {
            let message = if s.key == "hipri" && engine == "pvsync2" {
                "lunmark polls completions on io_uring only (--poll): use ioengine=io_uring with hipri".to_string()
            } else {
                format!("{} is an option of ioengine=io_uring only (lunmark's --sqpoll and --poll are io_uring's too)", s.key)
            };
            problems.push(s, message, false);
        }
        return Polling::default();
    }
    let sqpoll = set.switch("sqthread_poll", problems);
    let cpu = set.number::<u32>("sqthread_poll_cpu", problems);
    if let (Some(s), false) = (set.get("sqthread_poll_cpu"), sqpoll) {
        problems.push(
            s,
            "pins the submission queue poller, but sqthread_poll is not set: add sqthread_poll=1, or drop it (fio ignores it then)",
            true,
        );
    }
    let poll = set.switch("hipri", problems);
    // Said here, naming the job and its options: the run's own check can only name --poll and --buffered.
    let buffered = set.get("buffered").map(|_| set.switch("buffered", problems)).unwrap_or_else(|| !set.switch("direct", problems));
    if let (true, true, Some(s)) = (poll, buffered, set.get("hipri")) {
        let cause = if set.get("buffered").is_some() {
            "buffered=1"
        } else if set.get("direct").is_some() {
            "direct=0"
        } else {
            "no direct=1: fio's default"
        };
        problems.push(
            s,
            format!("job '{job}' polls for completions of direct I/O, but its I/O goes through the page cache ({cause}): set direct=1, or drop hipri"),
            false,
        );
    }
    Polling { sqpoll: sqpoll.then(|| cpu.map_or(SqPoll::AnyCpu, SqPoll::Cpu)), poll }
}

/// Where a job file asks for completion polling, as "FILE, job 'J', line N: hipri=1"
/// (the first chosen job with hipri on), for a refusal of polling at the run to name.
pub fn poll_origin(path: &std::path::Path, options: &ImportOptions) -> Option<String> {
    let (origin, sections) = parse_file(path).ok()?;
    let mut problems = Problems::default();
    sections.iter().filter(|s| options.sections.is_empty() || options.sections.contains(&s.name)).find_map(|section| {
        let set = Settings::of(section, &mut problems);
        let s = set.get("hipri").filter(|_| set.switch("hipri", &mut problems))?;
        let job = set.value("name").map(|(_, v)| v.to_string()).unwrap_or_else(|| section.name.clone());
        Some(format!("{origin}, job '{job}', line {}: {}", s.line, show(s)))
    })
}

/// `cpus_allowed=0-3,8` is `--cpus` and `cpus_allowed_policy=shared|split` is
/// `--cpus-policy` (split: worker i on the i-th CPU, round robin, as fio gives
/// each job its own). Which CPUs the host has is checked at the run.
fn pinning(set: &Settings, problems: &mut Problems) -> (Option<super::cpus::CpuList>, Option<super::cpus::CpuPolicy>) {
    use super::cpus::{CpuList, CpuPolicy};
    let cpus = set.value("cpus_allowed").and_then(|(s, v)| {
        let v = v.trim();
        CpuList::parse_syntax(v).map_err(|e| problems.push(s, e.replacen(&format!("--cpus {v}: "), "", 1), false)).ok()
    });
    let cpus = match (cpus, set.value("cpumask")) {
        (cpus, None) => cpus,
        (Some(_), Some((s, _))) => {
            problems.push(s, "give one of cpus_allowed and cpumask (both choose the CPUs)", false);
            None
        }
        (None, Some((s, v))) => cpumask(v.trim()).map_err(|m| problems.push(s, m, false)).ok(),
    };
    let cpus = match (cpus, set.value("numa_cpu_nodes")) {
        (cpus, None) => cpus,
        (Some(_), Some((s, _))) => {
            problems.push(s, "give one of cpus_allowed and numa_cpu_nodes (both choose the CPUs)", false);
            None
        }
        (None, Some((s, v))) => {
            numa_cpus(v.trim(), std::path::Path::new("/sys/devices/system/node")).map_err(|m| problems.push(s, m, false)).ok()
        }
    };
    let policy = set.value("cpus_allowed_policy").and_then(|(s, v)| match v.trim() {
        "shared" => Some(CpuPolicy::Shared),
        "split" => Some(CpuPolicy::Split),
        other => {
            problems.push(
                s,
                format!("'{other}' is not a policy: use shared (every job on all the CPUs) or split (each job on one)"),
                false,
            );
            None
        }
    });
    match (policy, set.get("cpus_allowed").or(set.get("cpumask"))) {
        (Some(_), None) => {
            let s = set.get("cpus_allowed_policy").expect("read above");
            problems.push(s, "says how jobs share the CPUs of cpus_allowed, which is not set: add cpus_allowed=LIST, or drop it", true);
            (cpus, None)
        }
        _ => (cpus, policy),
    }
}

/// `percentile_list=1:5:99.5`: the latency percentiles to report, as fio
/// reports them (each above 0 and at most 100, at most 20 of them, as fio).
fn percentile_list(set: &Settings, problems: &mut Problems, notes: &mut Notes) -> Vec<f64> {
    let Some((s, v)) = set.value("percentile_list") else { return Vec::new() };
    let mut list = Vec::new();
    for part in v.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        match part.parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => list.push(p),
            _ => {
                problems.push(
                    s,
                    format!("'{part}' is not a percentile: give percentages above 0 and at most 100, separated by ':' (1:50:99.5)"),
                    false,
                );
                return Vec::new();
            }
        }
    }
    if list.len() > super::profile::MAX_PERCENTILES {
        problems.push(s, format!("{} percentiles: fio and lunmark take at most {}", list.len(), super::profile::MAX_PERCENTILES), false);
        return Vec::new();
    }
    notes.push(format!("{} ({}): the result reports these latency percentiles too (latency_us.*.percentiles), and fio-json's percentile maps hold them, as fio's do", show(s), s.place()));
    list
}

/// `cpumask=MASK`: fio's older form of cpus_allowed, a bit per CPU (bit 0 is
/// CPU 0), in decimal or `0x` hexadecimal.
fn cpumask(mask: &str) -> Result<super::cpus::CpuList, String> {
    let bits = match mask.strip_prefix("0x").or_else(|| mask.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => mask.parse(),
    }
    .ok()
    .filter(|b| *b != 0)
    .ok_or_else(|| format!("'{mask}' is not a CPU mask: use a bit per CPU, in decimal or 0x hexadecimal (0x3 is CPUs 0 and 1), not 0"))?;
    Ok(super::cpus::CpuList((0..64).filter(|i| bits >> i & 1 == 1).collect()))
}

/// `numa_cpu_nodes=LIST` (or `all`): the CPUs of those NUMA nodes, as
/// `--cpus` (fio binds the job to them the same way), read from `nodes`
/// (/sys/devices/system/node) at the import.
fn numa_cpus(list: &str, nodes: &std::path::Path) -> Result<super::cpus::CpuList, String> {
    use super::cpus::CpuList;
    let wanted: Vec<u32> = if list == "all" {
        let online = std::fs::read_to_string(nodes.join("online")).map_err(|e| format!("{}: {e}", nodes.join("online").display()))?;
        CpuList::parse_syntax(online.trim())?.0
    } else {
        CpuList::parse_syntax(list).map_err(|e| e.replacen(&format!("--cpus {list}: "), "", 1))?.0
    };
    let mut cpus = Vec::new();
    for n in wanted {
        let path = nodes.join(format!("node{n}/cpulist"));
        let text = std::fs::read_to_string(&path)
            .map_err(|_| format!("NUMA node {n} does not exist on this host ({} is missing)", path.display()))?;
        cpus.extend(CpuList::parse_syntax(text.trim())?.0);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(format!("NUMA nodes {list} have no CPUs on this host"));
    }
    Ok(CpuList(cpus))
}

/// `buffer_compress_percentage` is `--compress` and `dedupe_percentage` is
/// `--dedupe` (the profile's `[data]`). fio repeats whole write buffers;
/// lunmark repeats units of the smallest write size, the same with one size.
fn data_reduction(set: &Settings, lines: &[AccessLine], problems: &mut Problems, notes: &mut Notes) -> (Option<f64>, Option<f64>) {
    let mut share = |key: &str, max: f64, why: &str| {
        let (s, v) = set.value(key)?;
        match v.trim().parse::<f64>() {
            Ok(p) if (0.0..=max).contains(&p) => Some(p),
            _ => {
                problems.push(s, format!("'{}' is not a share from 0 to {max} percent{why}", v.trim()), false);
                None
            }
        }
    };
    let compress =
        share("buffer_compress_percentage", 99.0, " (lunmark's --compress keeps an 8-byte stamp in each unit, which does not compress)");
    let dedupe = share("dedupe_percentage", 100.0, "");
    let mut write_sizes: Vec<u64> = lines.iter().filter(|l| l.read < 100.0).map(|l| l.bs.get()).collect();
    write_sizes.sort_unstable();
    write_sizes.dedup();
    if dedupe.is_some_and(|d| d > 0.0) && write_sizes.len() > 1 {
        notes.push(format!(
            "dedupe_percentage: fio repeats whole write buffers; lunmark repeats units of the smallest write size ({}) within each write",
            Bytes(write_sizes[0])
        ));
    }
    if let Some((s, _)) = set.value("buffer_pattern") {
        if compress.is_some_and(|c| c > 0.0) {
            notes.push(format!("{} ({}): fio fills the compressible part of each write with this pattern, lunmark with zeros: both compress away, and no unit of lunmark's is zeros only", show(s), s.place()));
        } else {
            problems.push(s, "fio writes this pattern in every write (all alike: as compressible and deduplicable as can be); lunmark has no fixed pattern: drop it, or say how compressible writes are with buffer_compress_percentage", false);
        }
    }
    if let Some((s, v)) = set.value("buffer_compress_chunk") {
        compress_chunk(s, v, compress.is_some_and(|c| c > 0.0), &write_sizes, problems, notes);
    }
    (compress.filter(|c| *c > 0.0), dedupe.filter(|d| *d > 0.0))
}

/// `buffer_compress_chunk=N`: fio repeats its random and compressible parts
/// every N bytes of a write (0: once per write). lunmark lays them out once
/// per unit of the smallest write size, so 0, or N equal to that size, is
/// what lunmark runs; another N is refused, naming those.
fn compress_chunk(s: &Setting, v: &str, compressing: bool, write_sizes: &[u64], problems: &mut Problems, notes: &mut Notes) {
    let Ok(chunk) = parse_size(v, 1024).map_err(|m| problems.push(s, m, false)) else { return };
    let Some(&unit) = write_sizes.first().filter(|_| compressing) else {
        notes.push(format!("{} ({}): it changes nothing without buffer_compress_percentage and writes (in fio too)", show(s), s.place()));
        return;
    };
    if chunk == 0 || chunk == unit {
        let mixed = if write_sizes.len() > 1 {
            format!(" (fio's chunk is each write's size, lunmark's unit the smallest, {})", Bytes(unit))
        } else {
            String::new()
        };
        notes.push(format!("{} ({}): lunmark lays out the random and compressible parts once per unit of the write size, as fio does with this chunk{mixed}", show(s), s.place()));
        return;
    }
    problems.push(
        s,
        format!("fio repeats its random and compressible parts every {} bytes; lunmark lays them out once per unit of the smallest write size ({} bytes): give buffer_compress_chunk=0 (or {unit}), or drop it", chunk, unit),
        false,
    );
}

/// `fsync=N` and `fdatasync=N`: a sync after every N writes (0, fio's default, is none).
fn sync(set: &Settings, problems: &mut Problems) -> Option<super::ops::SyncEvery> {
    let fsync = set.number::<u64>("fsync", problems).filter(|n| *n > 0);
    let fdatasync = set.number::<u64>("fdatasync", problems).filter(|n| *n > 0);
    match super::ops::sync_of(fsync, fdatasync, None) {
        Ok(s) => s,
        Err(_) => {
            problems.push(set.get("fdatasync").expect("both given"), "give only one of fsync and fdatasync", false);
            None
        }
    }
}

/// `rw=read:8k` and `rw=randread:8` with `rw_sequencer`, onto the access lines:
/// a sequential job leaves a hole of N bytes after each I/O (`skip`); a random
/// one draws an offset every N I/Os and moves on sequentially between, or
/// repeats it with `rw_sequencer=identical` (`random_run`, `random_run_same`),
/// as fio 3.33's write_iolog shows.
fn rw_suffix(set: &Settings, random: f64, kb_base: u64, lines: &mut [AccessLine], problems: &mut Problems, notes: &mut Notes) {
    let same = match set.value("rw_sequencer") {
        None | Some((_, "sequential")) => false,
        Some((_, "identical")) => true,
        Some((s, other)) => {
            problems.push(s, format!("'{}' is not an rw_sequencer: use sequential or identical", other.trim()), false);
            false
        }
    };
    let suffix = set.value("rw").and_then(|(s, v)| v.split_once(':').map(|(_, x)| (s, x.trim())));
    if random <= 0.0 {
        if let Some(s) = set.get("rw_sequencer") {
            notes.push(format!("{} ({}): it changes only random jobs with rw=...:N, in fio too", show(s), s.place()));
        }
        let Some((s, x)) = suffix.filter(|(_, x)| !x.is_empty()) else { return };
        if x.starts_with('-') {
            let m = format!("'{x}' moves fio backwards after each I/O; lunmark's sequential lines move forwards only: drop ':{x}', or give a hole after each I/O (rw=read:8k)");
            problems.push(s, m, false);
            return;
        }
        let Ok(skip) = parse_size(x, kb_base).map_err(|m| problems.push(s, m, false)) else { return };
        if skip > crate::workload::spec::MAX_SKIP {
            problems.push(
                s,
                format!("a hole of {skip} bytes after each I/O is more than lunmark allows ({})", Bytes(crate::workload::spec::MAX_SKIP)),
                false,
            );
            return;
        }
        notes.push(format!(
            "{} ({}): each sequential I/O leaves a hole of {} after it (the access line's skip)",
            show(s),
            s.place(),
            Bytes(skip)
        ));
        for l in lines.iter_mut() {
            l.skip = (skip > 0).then_some(Bytes(skip));
        }
        return;
    }
    let Some((s, x)) = suffix.filter(|(_, x)| !x.is_empty()) else {
        if let Some(s) = set.get("rw_sequencer") {
            notes.push(format!("{} ({}): it changes only rw=...:N with N above 1, in fio too", show(s), s.place()));
        }
        return;
    };
    let Ok(n) = x.parse::<u32>().map_err(|_| {
        problems.push(s, format!("'{x}' is not a number of I/Os per random offset: give a whole number, as rw=randread:8"), false)
    }) else {
        return;
    };
    if n <= 1 {
        notes.push(format!("{} ({}): a random offset for every I/O, as without the suffix", show(s), s.place()));
        return;
    }
    let between = if same { "repeat it" } else { "continue sequentially from it" };
    notes.push(format!(
        "{} ({}): a random offset every {n} I/Os, the {} between {between} (the access line's random_run)",
        show(s),
        s.place(),
        n - 1
    ));
    for l in lines.iter_mut() {
        l.random_run = Some(n);
        l.random_run_same = same;
    }
}

/// `rw` with `rwmixread`/`rwmixwrite`: the read, trim and random shares, in percent.
fn direction(set: &Settings, problems: &mut Problems) -> (f64, f64, f64) {
    let Some((s, v)) = set.value("rw") else { return (100.0, 0.0, 0.0) };
    // The ':N' suffix is read by `rw_suffix`.
    let dir = v.split_once(':').map_or(v, |(d, _)| d).trim();
    let random = match dir {
        "read" | "write" | "rw" | "readwrite" => 0.0,
        "randread" | "randwrite" | "randrw" => 100.0,
        // Every I/O a trim (lunmark's --read 0 --trim 100).
        "trim" => return (0.0, 100.0, 0.0),
        "randtrim" => return (0.0, 100.0, 100.0),
        "trimwrite" | "randtrimwrite" => {
            problems.push(
                s,
                "trims each block and then writes it: lunmark draws trims and writes independently (--trim PCT), so it cannot keep that pairing",
                false,
            );
            return (100.0, 0.0, 0.0);
        }
        other => {
            problems.push(
                s,
                format!("'{other}' is not an I/O pattern: use read, write, randread, randwrite, rw, randrw, trim or randtrim"),
                false,
            );
            return (100.0, 0.0, 0.0);
        }
    };
    let mix_read = set.number::<f64>("rwmixread", problems);
    let mix_write = set.number::<f64>("rwmixwrite", problems);
    for (key, v) in [("rwmixread", mix_read), ("rwmixwrite", mix_write)] {
        if v.is_some_and(|v| !(0.0..=100.0).contains(&v)) {
            problems.push(set.get(key).expect("read above"), "a percentage must lie between 0 and 100", false);
        }
    }
    let read = match dir {
        "read" | "randread" => 100.0,
        "write" | "randwrite" => 0.0,
        _ => match (mix_read, mix_write) {
            (Some(r), Some(w)) if (r + w - 100.0).abs() > 0.01 => {
                let s = set.get("rwmixwrite").expect("read above");
                problems.push(s, format!("rwmixread={r} and rwmixwrite={w} do not add up to 100"), false);
                r
            }
            (Some(r), _) => r,
            (None, Some(w)) => 100.0 - w,
            (None, None) => 50.0,
        },
    };
    (read, 0.0, random)
}

/// Where a job does its I/O, as its engine decides.
struct Place {
    targets: Vec<String>,
    /// One file per clone (fio's own names).
    per_clone: bool,
    /// Files the job's iodepth spreads over (1 with one file per clone).
    files: u32,
    /// For files and devices: the engine and whether the page cache is used.
    file_engine: Option<(EngineChoice, bool)>,
    /// The region on each target.
    file_size: Option<u64>,
    /// Bytes of one pass over the job's region (fio's default amount of I/O).
    pass_bytes: Option<u64>,
}

/// The job's targets from `ioengine` with `filename`, `directory`, `uri`,
/// `size`, `filesize`, `direct`/`buffered`.
fn place(set: &Settings, name: &str, numjobs: u32, kb_base: u64, problems: &mut Problems, notes: &mut Notes) -> Place {
    let engine = set.value("ioengine").map(|(s, v)| (s, v.trim().to_string()));
    let engine_name = engine.as_ref().map(|(_, e)| e.as_str()).unwrap_or("psync");
    // A share of the file (size=50%) is resolved once the files are known.
    let size = set.value("size").filter(|(_, v)| fio_job::parse_percent(v).is_none()).and_then(|_| set.size("size", kb_base, problems));
    let filesize = set.size("filesize", kb_base, problems);
    let direct = set.switch("direct", problems);
    let buffered_given = set.get("buffered").map(|_| set.switch("buffered", problems));
    if buffered_given.is_some_and(|b| b == direct) && set.get("direct").is_some() {
        problems.push(set.get("buffered").expect("given"), "contradicts direct: give one of direct=1 and buffered=0", false);
    }
    let buffered = buffered_given.unwrap_or(!direct);
    let uri = set.value("uri");
    if let (Some((s, _)), false) = (uri, engine_name == "nbd") {
        problems.push(s, "uri is an option of ioengine=nbd only", false);
    }
    // lunmark's io_uring engine always registers its buffers and files.
    for key in ["fixedbufs", "registerfiles"] {
        if let (Some(s), false) = (set.get(key), engine_name == "io_uring") {
            problems.push(s, format!("{key} is an option of ioengine=io_uring only"), true);
        }
    }
    let filenames = set.value("filename").map(|(_, v)| split_filenames(v)).unwrap_or_default();
    let mut place = Place { targets: Vec::new(), per_clone: false, files: 1, file_engine: None, file_size: size, pass_bytes: size };
    match engine_name {
        "null" => match size {
            Some(sz) => place.targets.push(format!("null:{}", Bytes(sz))),
            None => problems.push(engine.as_ref().expect("named").0, "ioengine=null needs size= (the size of the null device)", false),
        },
        "nbd" => match uri {
            Some((_, u)) => place.targets.push(u.trim().to_string()),
            None => problems.push(engine.as_ref().expect("named").0, "ioengine=nbd needs uri=nbd://host[:port]/export", false),
        },
        "libiscsi" => {
            if filenames.is_empty() || !filenames.iter().all(|n| n.starts_with("iscsi://")) {
                let s = engine.as_ref().expect("named").0;
                problems.push(s, "ioengine=libiscsi needs filename=iscsi\\://host[\\:port]/IQN/LUN", false);
            }
            place.targets = filenames;
        }
        other => {
            let choice = match other {
                "io_uring" => Some(EngineChoice::IoUring),
                "libaio" => {
                    notes.push("ioengine=libaio runs on io_uring, lunmark's asynchronous engine (same queue depth, same O_DIRECT)".into());
                    Some(EngineChoice::IoUring)
                }
                "psync" | "sync" | "pvsync" | "pvsync2" => Some(EngineChoice::Psync),
                _ => {
                    let s = engine.as_ref().expect("named").0;
                    let m = format!(
                        "engine '{other}' is not one lunmark has: use io_uring, libaio, psync, sync, pvsync, null, nbd or libiscsi"
                    );
                    problems.push(s, m, false);
                    None
                }
            };
            let dirs = set.value("directory").map(|(s, v)| (s, split_filenames(v)));
            if let Some((s, list)) = &dirs {
                if list.len() > 1 {
                    problems.push(s, "several directories are not supported: give one", false);
                }
            }
            let dir = dirs.and_then(|(_, list)| list.into_iter().next());
            let join = |n: &str| match &dir {
                Some(d) if !n.starts_with('/') => format!("{}/{n}", d.trim_end_matches('/')),
                _ => n.to_string(),
            };
            if filenames.is_empty() {
                // fio's own names: jobname.clone.file, one file per clone.
                place.per_clone = true;
                place.targets = (0..numjobs).map(|c| join(&clone_file(set, name, c, problems))).collect();
            } else {
                if let Some((s, _)) = set.value("filename_format") {
                    notes.push(format!("{} ({}): it names files only where filename= does not, as in fio", show(s), s.place()));
                }
                place.targets = filenames.iter().map(|n| join(n)).collect();
                place.files = place.targets.len() as u32;
            }
            // fio splits size among the job's files; filesize is each file's.
            place.file_size = filesize.or(size.map(|s| s / place.files as u64));
            place.pass_bytes = size.or(filesize.map(|f| f * place.files as u64));
            place.file_engine = choice.map(|c| (c, buffered));
        }
    }
    if place.file_engine.is_none() {
        for key in ["directory", "filesize"] {
            if let Some(s) = set.get(key) {
                problems.push(s, format!("{key} applies to files; this job's engine is {engine_name}"), false);
            }
        }
        if engine_name == "null" {
            place.file_size = None;
        }
    }
    place
}

/// The file of clone `clone` of a job without `filename=`: fio's
/// `jobname.clone.0`, or `filename_format` with `$jobname`, `$jobnum` (the
/// clone: fio 3.33 names the files of two jobs of two clones `file0.0` and
/// `file1.0` with `file$jobnum.$filenum`) and `$filenum` (0: one file a clone).
fn clone_file(set: &Settings, name: &str, clone: u32, problems: &mut Problems) -> String {
    let Some((s, format)) = set.value("filename_format") else { return format!("{name}.{clone}.0") };
    let file = format.trim().replace("$jobname", name).replace("$jobnum", &clone.to_string()).replace("$filenum", "0");
    if file.contains('$') && clone == 0 {
        problems.push(s, "lunmark fills in $jobname, $jobnum and $filenum; fio's other keywords ($clientuid) it does not have: name the files with those, or with filename=", false);
    }
    file
}

/// `size=P%` and `offset=P%`: shares of each file's real size, as fio takes
/// them: the offset rounded up to the smallest transfer, the size rounded
/// down to it and cut where the file ends. The files must exist (and be of
/// one size: lunmark holds one region per run). Returns the offset in bytes.
fn shares_of_the_file(
    set: &Settings,
    place: &mut Place,
    given: &[String],
    kb_base: u64,
    min_bs: u64,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Option<u64> {
    let pct = |key: &str, problems: &mut Problems| {
        let (s, v) = set.value(key)?;
        let p = fio_job::parse_percent(v)?;
        p.map_err(|m| problems.push(s, m, false)).ok().map(|p| (s, p))
    };
    let size_pct = pct("size", problems).filter(|(s, p)| {
        // 0% is a place to start from (offset), not a region.
        if *p == 0.0 {
            problems.push(s, "0% of the file is no region: give a share above 0", false);
        }
        *p > 0.0
    });
    let offset_pct = pct("offset", problems);
    let explicit =
        set.value("offset").filter(|(_, v)| fio_job::parse_percent(v).is_none()).and_then(|_| set.size("offset", kb_base, problems));
    let Some((s, _)) = size_pct.or(offset_pct) else { return explicit };
    // --target replaces the job's files, so the share is of the given targets.
    let files = if given.is_empty() { &place.targets } else { given };
    let real = match place.file_engine.is_some().then(|| real_size(files)) {
        Some(Ok(n)) => n,
        Some(Err(m)) => {
            problems.push(s, format!("a share of the file needs the file's size: {m}"), false);
            return None;
        }
        None => {
            problems.push(s, "a share of the file applies to files and devices; give this engine's size in bytes", false);
            return None;
        }
    };
    let offset = match offset_pct {
        Some((_, p)) => ((real as f64 * p / 100.0) as u64).div_ceil(min_bs) * min_bs,
        None => explicit.unwrap_or(0),
    };
    if let Some((s, p)) = size_pct {
        let region = ((real as f64 * p / 100.0) as u64).min(real.saturating_sub(offset));
        let region = region - region % min_bs;
        place.file_size = Some(region);
        place.pass_bytes = Some(region * place.files as u64);
        notes.push(format!("{} ({}): {p}% of {} ({} bytes) is {} bytes on each file", show(s), s.place(), files[0], real, region));
    }
    if let Some((s, p)) = offset_pct {
        notes.push(format!("{} ({}): {p}% of {} ({} bytes) is offset {offset}", show(s), s.place(), files[0], real));
    }
    offset_pct.map(|_| offset).or(explicit)
}

/// The size of existing files or devices, all alike.
fn real_size(targets: &[String]) -> Result<u64, String> {
    use std::io::{Seek, SeekFrom};
    let mut sizes = Vec::new();
    for t in targets {
        // A block device's size is where a seek to its end lands; a file's is its length.
        let n = std::fs::File::open(t)
            .and_then(|mut f| f.seek(SeekFrom::End(0)))
            .map_err(|e| format!("{t}: {e} (fio too needs it to exist; or give the size in bytes)"))?;
        sizes.push((t, n));
    }
    match sizes.iter().find(|(_, n)| *n != sizes[0].1) {
        Some((t, n)) => Err(format!("{} is {} bytes and {t} is {n}: lunmark holds one region for every file", sizes[0].0, sizes[0].1)),
        None => sizes.first().map(|(_, n)| *n).ok_or_else(|| "the job names no file".to_string()),
    }
}

/// fio's iodepth is the job's, over all its files; lunmark's is per file.
fn queue_depth(set: &Settings, name: &str, files: u32, problems: &mut Problems, notes: &mut Notes) -> u32 {
    let Some(iodepth) = set.number::<u32>("iodepth", problems).map(|d| d.max(1)) else {
        if files > 1 {
            notes.push(format!(
                "job '{name}': fio keeps 1 I/O in flight over its {files} files; lunmark keeps 1 on each file (give iodepth={files} to make them the same)"
            ));
        }
        return 1;
    };
    if iodepth.is_multiple_of(files) {
        return iodepth / files;
    }
    problems.push(
        set.get("iodepth").expect("given"),
        format!(
            "iodepth {iodepth} over {files} files: lunmark keeps the same number in flight on each file, so give a multiple of {files}"
        ),
        false,
    );
    1
}

/// How long the job runs: `time_based` + `runtime`, `number_ios`, `io_size`, or
/// fio's default of one pass over `size`.
fn run_end(
    set: &Settings,
    name: &str,
    kb_base: u64,
    lines: &[AccessLine],
    place: &Place,
    problems: &mut Problems,
    notes: &mut Notes,
) -> End {
    let runtime = set.time("runtime", problems);
    let avg_bs: f64 = lines.iter().map(|l| l.share / 100.0 * l.bs.get() as f64).sum();
    if set.switch("time_based", problems) {
        return match runtime {
            Some(t) => End::Time(t),
            None => {
                let s = set.get("time_based").expect("given");
                problems.push(s, "time_based without runtime runs until stopped: give runtime= as well", false);
                End::Unknown
            }
        };
    }
    if let Some(n) = set.number::<u64>("number_ios", problems) {
        if runtime.is_some() {
            notes.push(format!(
                "job '{name}': fio ends it after {n} I/Os or at runtime, whichever comes first; lunmark ends it after {n} I/Os per worker"
            ));
        }
        return End::Ios(n);
    }
    let io_size = set.size("io_size", kb_base, problems);
    let bytes = io_size.or(place.pass_bytes);
    // A pass over the region with holes (rw=read:8k) does fewer I/Os: one per
    // bs + skip, as fio's pass ends at the region's end.
    let avg_bs = match io_size {
        None if lines.iter().any(|l| l.skip.is_some() && l.random < 100.0) => {
            lines.iter().map(|l| l.share / 100.0 * (l.bs.get() + l.skip.map_or(0, |s| s.get())) as f64).sum()
        }
        _ => avg_bs,
    };
    match (bytes, runtime) {
        (Some(bytes), Some(t)) if avg_bs > 0.0 => {
            notes.push(format!(
                "job '{name}': without time_based fio ends it after {} of I/O ({} I/Os) or at runtime={}, whichever comes first; lunmark runs it for the runtime",
                Bytes(bytes),
                ((bytes as f64 / avg_bs).round() as u64).max(1),
                crate::units::format_duration(t)
            ));
            End::Time(t)
        }
        (Some(bytes), None) if avg_bs > 0.0 => {
            let whole = if io_size.is_none() && lines.iter().any(|l| l.skip.is_some()) {
                (bytes as f64 / avg_bs).ceil()
            } else {
                (bytes as f64 / avg_bs).round()
            };
            let n = (whole as u64).max(1);
            if lines.windows(2).any(|w| w[0].bs != w[1].bs) {
                notes.push(format!(
                    "job '{name}': fio moves {} of I/O; lunmark runs {n} I/Os per worker, that amount at the average transfer size",
                    Bytes(bytes)
                ));
            }
            End::Ios(n)
        }
        (_, Some(t)) => End::Time(t),
        _ => {
            notes.push(format!(
                "job '{name}': fio would make one pass over the whole target; lunmark cannot know its size here and runs its default time (set runtime= with time_based, or --time)"
            ));
            End::Unknown
        }
    }
}

/// fio's `ss`/`ss_dur`/`ss_ramp` onto lunmark's steady state (`--steady`).
/// fio 3.33 takes one sample a second after the ramp and ends the job once the
/// last `ss_dur` seconds meet one criterion:
/// - `iops_slope:X%` / `bw_slope:X%`: |least-squares slope per second| < X% of
///   the mean. lunmark's slope excursion is that slope x (window - 1), so its
///   limit is X x (window - 1)%, and the range limit window x 100% can never
///   bind (the range of figures >= 0 is at most window x the mean): the same test.
/// - `iops:X%` / `bw:X%`: every sample within X% of the mean. lunmark's
///   nearest is a range within 2X% (it holds whenever fio's does, and may also
///   hold a little earlier), with a slope limit of 3X%, which a window of that
///   range never exceeds; the note says so.
///
/// Limits in absolute units and `ss_ramp` (counted in fio's figures while
/// lunmark judges from the end of its ramp) are refused, naming --steady.
fn steady_state(set: &Settings, name: &str, problems: &mut Problems, notes: &mut Notes) -> Option<super::steady::SteadySpec> {
    use super::steady::{SteadyMetric, SteadySpec};
    const HOW: &str = "lunmark's --steady iops|bw with --steady-window, --steady-range and --steady-slope (docs/fio.md)";
    if let Some((s, v)) = set.value("ss_ramp").filter(|(_, v)| parse_time(v, Duration::from_secs(1)).map_or(true, |t| !t.is_zero())) {
        let m = format!("fio waits {} after its ramp before it watches for steady state, and counts that time in its figures; lunmark watches from the end of its ramp: drop ss_ramp, or add it to ramp_time (it then leaves the figures); or give {HOW}", v.trim());
        problems.push(s, m, false);
        return None;
    }
    let Some(dur) = set.time("ss_dur", problems).filter(|d| !d.is_zero()) else {
        if let Some(s) = set.get("ss") {
            notes.push(format!("{} ({}): fio watches for steady state only with ss_dur, and this job has none", show(s), s.place()));
        }
        return None;
    };
    let dur_s = set.get("ss_dur").expect("read above");
    if dur.subsec_nanos() != 0 || dur.as_secs() < 2 {
        problems.push(dur_s, "fio takes a sample a second: give ss_dur in whole seconds, at least 2 (lunmark's --steady-window)", false);
        return None;
    }
    let window = dur.as_secs().min(u32::MAX as u64) as u32;
    let (given, text) = set.value("ss").map_or((None, "iops_slope:0.01%"), |(s, v)| (Some(s), v.trim()));
    let place = given.map_or_else(|| dur_s.place(), |s| s.place());
    let bad = |problems: &mut Problems, m: String| problems.push(given.unwrap_or(dur_s), m, false);
    let Some((kind, limit)) = text.split_once(':') else {
        bad(problems, format!("'{text}' is not a steady-state criterion: give iops:X%, bw:X%, iops_slope:X% or bw_slope:X%"));
        return None;
    };
    let (metric, slope_form) = match kind.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "bw" => (SteadyMetric::Bw, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw_slope" => (SteadyMetric::Bw, true),
        other => {
            bad(problems, format!("'{other}' is not a steady-state criterion: use iops, bw, iops_slope or bw_slope"));
            return None;
        }
    };
    let Some(x) = limit.trim().strip_suffix('%').and_then(|p| p.trim().parse::<f64>().ok()).filter(|x| x.is_finite() && *x > 0.0) else {
        bad(problems, format!("'{}': lunmark's --steady takes limits in percent of the mean; a limit in units of the figure (fio's {kind}:N) has no mapping: give {kind}:X% or {HOW}", limit.trim()));
        return None;
    };
    let n = window as f64;
    let (range, slope, how) = if slope_form {
        (n * 100.0, x * (n - 1.0), format!("slope excursion {}% of the mean (fio's slope {x}% a second x {} seconds), range not limited ({}%, more than any window can have)", x * (n - 1.0), window - 1, n * 100.0))
    } else {
        (2.0 * x, 3.0 * x, format!("range {}% of the mean, slope {}% (never the tighter of the two); fio asks every sample within {x}% of the mean, which a range within {}% nearly is: lunmark may end the point a little earlier", 2.0 * x, 3.0 * x, 2.0 * x))
    };
    let spec = SteadySpec { metric, window, round: Duration::from_secs(1), range, slope };
    notes.push(format!("ss={text} ({place}), ss_dur={}s: job '{name}' -> --steady {metric}, window {window} x 1 s, {how}; runtime is the maximum, as in fio", window));
    Some(spec)
}

/// `loops=N`: fio repeats the job's I/O N times; a job that ends after a
/// number of I/Os does N times as many. A timed job runs for its time (fio's
/// loops end at the runtime too).
fn loops(set: &Settings, name: &str, end: End, problems: &mut Problems, notes: &mut Notes) -> End {
    let Some(n) = set.number::<u64>("loops", problems) else { return end };
    if n == 0 {
        problems.push(set.get("loops").expect("given"), "loops must be at least 1", false);
        return end;
    }
    match end {
        End::Ios(ios) if n > 1 => {
            notes.push(format!("job '{name}': loops={n}: {n} passes of {ios} I/Os per worker, {} in all", ios * n));
            End::Ios(ios * n)
        }
        End::Time(t) if n > 1 => {
            notes.push(format!(
                "job '{name}': loops={n} with a runtime: it runs for {} (fio ends at the runtime too)",
                crate::units::format_duration(t)
            ));
            End::Time(t)
        }
        e => e,
    }
}

/// The random map fio keeps.
fn refuse_what_lunmark_lacks(set: &Settings, name: &str, random: f64, problems: &mut Problems, notes: &mut Notes) {
    if random > 0.0 && !set.switch("norandommap", problems) {
        notes.push(format!(
            "job '{name}': fio's random map visits each block once per pass and shortens transfers that would overlap blocks already done; lunmark draws every offset afresh and keeps the sizes, as fio does with norandommap"
        ));
    }
}

/// Options that change nothing lunmark measures: a note each, saying why.
/// `invalidate=1` on a buffered job is the exception: fio drops the file's
/// cached pages before the job, lunmark does not, so the cache would differ.
fn harmless(set: &Settings, name: &str, buffered: bool, problems: &mut Problems, notes: &mut Notes) {
    let why = |key: &str| -> Option<&'static str> {
        Some(match key {
            "thread" => "fio runs the job in threads instead of processes; lunmark's workers are always threads",
            "randrepeat" => "it chooses whether fio's random offsets repeat from run to run; lunmark draws from its own stream (randseed= sets its seed), with the same distribution",
            "gtod_reduce" => "it makes fio read the clock less (and drop its latency figures); lunmark times every I/O anyway",
            "invalidate" => "fio drops the file's cached pages before the job; with direct=1 nothing is read from the page cache",
            "refill_buffers" | "scramble_buffers" => "it changes what fio writes, not how much or where; lunmark writes incompressible random data (a target that deduplicates or compresses could tell them apart: --dedupe and --compress set that)",
            "group_reporting" => "it sums fio's jobs in its report; lunmark reports each group and the point",
            "lat_percentiles" | "clat_percentiles" | "slat_percentiles" | "significant_figures" => "it chooses what fio prints; lunmark reports p50, p90, p95, p99, p99.9 and p99.99 of every I/O's latency (percentile_list adds others)",
            "disk_util" => "it makes fio print the disks' own counters; lunmark does not read them",
            "write_hist_log" | "log_hist_msec" => "fio writes latency histogram logs; lunmark writes none, its latency histogram's figures are in the result",
            "per_job_logs" | "log_offset" => "it shapes fio's log files; lunmark writes the bandwidth, IOPS and latency logs of a job that runs alone, one file each, without offsets",
            "disable_lat" | "disable_clat" | "disable_slat" | "disable_bw" => "it turns off figures fio keeps and prints; lunmark keeps every I/O's latency and the bandwidth anyway",
            "verify_dump" => "it makes fio dump a block that fails its check to files; lunmark reports where the first failing blocks are and what it found there (summary.verify)",
            "verify_state_save" => "fio saves where its writes got to for a later verify run; lunmark runs none later",
            _ => return None,
        })
    };
    for key in HARMLESS {
        let Some((s, v)) = set.value(key) else { continue };
        if *key == "invalidate" && buffered && parse_bool(s.value.as_ref().map(|_| v)).unwrap_or(true) {
            problems.push(
                s,
                format!("job '{name}' goes through the page cache, which fio empties of the file before the job and lunmark does not: set direct=1, or invalidate=0 to run on what is cached, as lunmark does"),
                false,
            );
            continue;
        }
        if let Some(reason) = why(key) {
            notes.push(format!("{} ({}): accepted, it changes nothing lunmark measures: {reason}", show(s), s.place()));
        }
    }
}

/// `offset_increment`: fio starts clone N of a job at offset + N x increment,
/// each clone on its own part of the file (without it, lunmark's workers
/// would read the same blocks: from an array's cache). lunmark's group gets
/// the same `offset_increment`, and the region on each file grows to hold
/// every clone's part. Needs a size, and one file shared by the clones.
fn offset_increment(
    set: &Settings,
    name: &str,
    numjobs: u32,
    place: &mut Place,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Option<u64> {
    let (s, v) = set.value("offset_increment")?;
    let inc = parse_size(v, 1024).map_err(|m| problems.push(s, m, false)).ok()?;
    if numjobs <= 1 || inc == 0 {
        return None;
    }
    if place.per_clone {
        problems.push(
            s,
            format!("job '{name}' gives each clone a file of its own (no filename=), and fio moves clone N's part N x {} into its own file; lunmark cannot: give filename= to share one file", v.trim()),
            false,
        );
        return None;
    }
    let Some(size) = place.file_size else {
        problems.push(
            s,
            format!(
                "job '{name}' gives each of its {numjobs} clones its own part from offset + N x {}: give size= (each clone's part) as well",
                v.trim()
            ),
            false,
        );
        return None;
    };
    let spread = inc.saturating_mul(numjobs as u64 - 1);
    place.file_size = Some(size.saturating_add(spread));
    notes.push(format!(
        "{} ({}): each of the {numjobs} workers of job '{name}' does its I/O on its own {} from offset + N x {}; the region on each file is {} to hold them",
        show(s),
        s.place(),
        Bytes(size),
        Bytes(inc),
        Bytes(size.saturating_add(spread))
    ));
    Some(inc)
}

/// `random_distribution=`: random, zipf:THETA, pareto:H and zoned:A/R:... mean
/// what lunmark's do (fio scatters zipf and pareto over the file by a hash, as
/// lunmark's default layout does; its zones lie in order). Refused: normal
/// (fio's is a sum of uniform draws, whose spread is not P% of the file),
/// zoned_abs, a centre, and zones per direction.
fn distribution(set: &Settings, problems: &mut Problems) -> Option<crate::workload::dist::Distribution> {
    use crate::workload::dist::Distribution;
    let (s, v) = set.value("random_distribution")?;
    let v = v.trim();
    let kind = v.split(':').next().unwrap_or("");
    let args = v.split(':').count() - 1;
    match kind {
        "random" if args == 0 => None,
        "zipf" | "pareto" if args == 1 => match v.parse::<Distribution>() {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(s, e.to_string(), false);
                None
            }
        },
        "zipf" | "pareto" => {
            problems.push(s, "a centre for zipf or pareto is not supported: give zipf:THETA or pareto:H", false);
            None
        }
        "zoned" if !v.contains(',') => match format!("{v}:contiguous").parse::<Distribution>() {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(s, e.to_string(), false);
                None
            }
        },
        "zoned" => {
            problems.push(s, "zones apart for reads, writes and trims are not supported: give one set of zones for all I/O", false);
            None
        }
        "normal" => {
            problems.push(
                s,
                "fio's normal is a sum of uniform draws whose spread is not P% of the file, and lunmark's normal:SIGMA% is a true bell curve: set dist = \"normal:SIGMA%\" in the imported profile instead",
                false,
            );
            None
        }
        _ => {
            problems.push(s, format!("'{v}' is not a distribution lunmark has: use random, zipf:THETA, pareto:H or zoned:A/R:..."), false);
            None
        }
    }
}

/// `thinktime=` (a bare number is µs in fio). fio stalls after an I/O
/// completes; lunmark stops issuing for that long after each burst, with what
/// is in flight completing meanwhile: the same at iodepth=1, said otherwise.
fn thinktime(set: &Settings, problems: &mut Problems, notes: &mut Notes) -> Option<Duration> {
    let (s, v) = set.value("thinktime")?;
    let t = crate::workload::fio_job::parse_time(v, Duration::from_micros(1)).map_err(|m| problems.push(s, m, false)).ok()?;
    if set.number::<u32>("iodepth", problems).is_some_and(|d| d > 1) {
        notes.push(format!(
            "thinktime: fio waits for an I/O to complete before its pause; lunmark pauses issuing after each burst while the {} I/Os in flight complete",
            set.value("iodepth").map(|(_, v)| v.trim()).unwrap_or("")
        ));
    }
    Some(t)
}

/// `latency_target=` (a bare number is µs in fio) at `latency_percentile=`
/// (default 100: every I/O) is lunmark's knee search, `--sla`: fio searches
/// the depth of one job below its iodepth, lunmark the queue depth from 1 up
/// (to 1024) for the most IOPS within the bound. fio judges the bound over
/// each `latency_window`; lunmark over each step's measured time, which the
/// window becomes.
fn latency_target(set: &Settings, job: &str, flag: Option<&str>, problems: &mut Problems, notes: &mut Notes) -> Option<Sla> {
    // The percentiles lunmark's latency statistics hold, by fio's latency_percentile.
    const BOUNDED: [(f64, &str); 6] = [(100.0, "max"), (99.99, "p99.99"), (99.9, "p99.9"), (99.0, "p99"), (90.0, "p90"), (50.0, "p50")];
    let Some((s, v)) = set.value("latency_target") else {
        for key in ["latency_window", "latency_percentile"] {
            if let Some(s) = set.get(key) {
                problems.push(s, format!("{key} shapes fio's latency_target search: add latency_target=TIME, or drop {key}"), false);
            }
        }
        return None;
    };
    let target = crate::workload::fio_job::parse_time(v, Duration::from_micros(1)).map_err(|m| problems.push(s, m, false)).ok()?;
    if target.is_zero() {
        // fio's default: no search. Its companions then shape nothing either.
        notes.push("latency_target=0: fio's default, no latency search: the job runs at its iodepth".into());
        return None;
    }
    let stat = match set.value("latency_percentile") {
        None => "max",
        Some((p, v)) => match v.trim().trim_end_matches('%').parse::<f64>().ok().and_then(|x| BOUNDED.iter().find(|b| b.0 == x)) {
            Some(&(_, stat)) => stat,
            None => {
                problems.push(p, "lunmark bounds the percentiles 50, 90, 99, 99.9, 99.99 or 100 (the maximum): give one of them", false);
                return None;
            }
        },
    };
    let window = set.time("latency_window", problems).filter(|w| !w.is_zero());
    let expr = format!("lat_{stat}<{}us", target.as_micros());
    let each =
        window.map(|w| format!(", each step measured for latency_window ({})", crate::units::format_duration(w))).unwrap_or_default();
    let depth = set
        .value("iodepth")
        .map(|(_, v)| format!("; the job's iodepth={} is replaced by the depth searched", v.trim()))
        .unwrap_or_default();
    // The run's --sla wins over the job file's bound: the note says which the search uses.
    notes.push(match flag {
        None => format!("latency_target: lunmark searches the queue depth for the most IOPS with {expr} (--sla '{expr}'{each}){depth}"),
        Some(given) => format!(
            "latency_target ({}: {}, as {expr}) is replaced by --sla '{given}': lunmark searches the queue depth for the most IOPS with {given}{each}{depth}",
            s.place(),
            show(s)
        ),
    });
    Some(Sla { expr, window, origin: format!("job '{job}', {}: {}", s.place(), show(s)) })
}

/// A job's `latency_target`, as the knee search takes it.
#[derive(Clone, Debug)]
struct Sla {
    /// The bound, in `--sla`'s grammar (`lat_p99<2000us`).
    expr: String,
    /// `latency_window`: each step's measured time.
    window: Option<Duration>,
    /// "job 'j', line 8: latency_target=2ms", for messages about the search.
    origin: String,
}

/// `rate_process=linear|poisson`: fixed or Poisson arrivals of the rate.
fn arrivals(set: &Settings, problems: &mut Problems) -> crate::workload::timing::Arrivals {
    use crate::workload::timing::Arrivals;
    let Some((s, v)) = set.value("rate_process") else { return Arrivals::Fixed };
    match v.trim() {
        "linear" => Arrivals::Fixed,
        "poisson" if set.get("rate_iops").or(set.get("rate")).is_some() => Arrivals::Poisson,
        "poisson" => {
            problems.push(s, "rate_process=poisson needs rate_iops or rate (lunmark's Poisson arrivals have a mean rate)", false);
            Arrivals::Fixed
        }
        other => {
            problems.push(s, format!("'{other}' is not a rate process: use linear or poisson"), false);
            Arrivals::Fixed
        }
    }
}

/// `verify=`: any checksum runs as lunmark's own check.
fn verify(set: &Settings, problems: &mut Problems, notes: &mut Notes) -> bool {
    const CHECKSUMS: &[&str] = &[
        "1",
        "md5",
        "crc64",
        "crc32c",
        "crc32c-intel",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "meta",
    ];
    match set.value("verify") {
        None | Some((_, "0" | "none")) => false,
        Some((_, v)) if CHECKSUMS.contains(&v.trim()) => {
            notes.push("verify: lunmark checks every read with its own block header and CRC-32C (docs/verify.md), whatever checksum fio would have used".into());
            true
        }
        Some((s, _)) => {
            problems.push(
                s,
                "not a checksum lunmark maps: use one of md5, crc32c, crc64, sha256, xxhash (they all run as --verify)",
                false,
            );
            false
        }
    }
}

/// `verify=` on a job that only writes: fio reads every block back once the
/// writes are done (do_verify=1, its default); lunmark checks only what it
/// reads, so the job would check nothing. With --journal the run records its
/// writes and `lunmark verify` reads them back afterwards; without, refused.
fn verify_write_only(set: &Settings, name: &str, journal: bool, problems: &mut Problems, notes: &mut Notes) {
    let s = set.get("verify").expect("verify is on");
    if journal {
        notes.push(format!("{} ({}): job '{name}' only writes; fio reads its blocks back when the writes are done; lunmark records every write in the --journal, and `lunmark verify TARGET --journal FILE` after the run reads them back and checks them (docs/verify.md)", show(s), s.place()));
        return;
    }
    problems.push(
        s,
        format!("job '{name}' only writes: fio reads every block back when the writes are done (do_verify=1) and checks it, but lunmark checks only what it reads, so this job would check nothing. Run it with --journal FILE, then `lunmark verify TARGET --journal FILE` reads every written block back (docs/verify.md); or set do_verify=0 to write unchecked"),
        false,
    );
}

/// Options whose common values lunmark runs as fio does (a note each) and
/// whose others it lacks (refused, naming what to use). Returns false when
/// `do_verify=0` turns checking off (fio then checks nothing either).
fn fio_defaults(set: &Settings, name: &str, read: f64, trim: f64, problems: &mut Problems, notes: &mut Notes) -> bool {
    let on = |key: &str, problems: &mut Problems| set.get(key).map(|s| (s, set.switch(key, problems)));
    let mut note = |s: &Setting, why: &str| notes.push(format!("{} ({}): {why}", show(s), s.place()));
    if let Some((s, v)) = set.value("sync") {
        match v.trim() {
            "0" | "none" => note(s, "fio's default (no O_SYNC), as lunmark opens files"),
            _ => problems.push(
                s,
                "lunmark does not open files with O_SYNC or O_DSYNC: use fsync=1 (a sync after every write, timed apart) instead",
                false,
            ),
        }
    }
    let writes = read < 100.0 && trim < 100.0;
    match on("overwrite", problems) {
        Some((s, true)) => note(s, "fio writes a file it creates in full before the job; lunmark fills a file it creates before measuring, too"),
        Some((s, false)) if !writes => note(s, "it matters to fio only for jobs that write, and this one does not"),
        Some((s, false)) => note(s, &format!("fio's default: job '{name}' writes a file fio creates into blocks not written before; lunmark fills a file it creates before measuring, so name an existing file or device to compare the two")),
        None => {}
    }
    if let Some((s, v)) = set.value("fallocate") {
        match v.trim() {
            "none" | "0" | "native" | "posix" | "keep" | "truncate" | "1" => note(s, "it chooses how fio reserves the space of a file it creates; lunmark creates a missing file filled with data before measuring, as fio does for a job that reads or overwrite=1 (name an existing file or device to compare like for like)"),
            other => problems.push(s, format!("'{other}' is not one of fio's fallocate modes: none, native, posix, keep, truncate"), false),
        }
    }
    if let Some((s, true)) = on("verify_fatal", problems) {
        note(s, "fio ends the job at the first block that fails its check; lunmark runs on and counts every mismatch (summary.verify.mismatches), which changes no figure of a target that returns what was written");
    } else if let Some((s, false)) = on("verify_fatal", problems) {
        note(s, "fio's default");
    }
    let verifying = set.value("verify").is_some_and(|(_, v)| !matches!(v.trim(), "0" | "none"));
    match on("serialize_overlap", problems) {
        Some((s, true)) if verifying => {
            note(s, "with verify lunmark never issues a write while other I/O is in flight on its blocks, as fio's serialize_overlap=1")
        }
        Some((s, true)) => problems.push(
            s,
            "lunmark keeps overlapping I/O apart only when it verifies: add verify=crc32c (lunmark's --verify), or drop serialize_overlap",
            false,
        ),
        Some((s, false)) => note(s, "fio's default"),
        None => {}
    }
    match on("do_verify", problems) {
        Some((s, false)) => {
            if verifying {
                note(s, "fio writes its verify headers and checks nothing; lunmark checks nothing either (verify off)");
            }
            false
        }
        Some((s, true)) if verifying => {
            note(s, "fio's default with verify=");
            true
        }
        _ => true,
    }
}

/// `rate_iops=N` or `rate=BYTES` (a second's bytes, at the job's mean transfer
/// size): fio caps each job (clone), so the group's rate is N x numjobs. Both
/// take `READ,WRITE`: a job that only reads takes the first part, one that
/// only writes the second (`rate=,4m`); an empty part is no cap. On a job that
/// does both fio caps each direction apart, which lunmark does not do.
fn rate(
    set: &Settings,
    lines: &[AccessLine],
    kb_base: u64,
    read: f64,
    numjobs: u32,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Option<f64> {
    if let (Some(_), Some(s)) = (set.get("rate_iops"), set.get("rate")) {
        problems.push(s, "give one of rate and rate_iops", false);
        return None;
    }
    let (s, v) = set.value("rate_iops").or(set.value("rate"))?;
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let part = match (parts.len(), read) {
        (1, _) => parts[0],
        (_, r) if r >= 100.0 => parts[0],
        (_, r) if r <= 0.0 => parts[1],
        _ => {
            problems.push(s, "separate read and write rates on a job that does both: lunmark caps the total (use --rate)", false);
            return None;
        }
    };
    if part.is_empty() {
        return None;
    }
    if read > 0.0 && read < 100.0 {
        problems.push(s, "on a job that reads and writes fio caps each direction apart; lunmark caps the total: use --rate", false);
        return None;
    }
    let per_job = if s.key == "rate" {
        let bytes = parse_size(part, kb_base).map_err(|m| problems.push(s, m, false)).ok()? as f64;
        let mean_bs: f64 = lines.iter().map(|l| l.share / 100.0 * l.bs.get() as f64).sum();
        if lines.windows(2).any(|w| w[0].bs != w[1].bs) {
            notes.push(format!(
                "{} ({}): fio caps the bytes; lunmark caps the I/Os, {:.1} a second at the mean transfer size ({:.0} bytes): the same bytes on average",
                show(s),
                s.place(),
                bytes / mean_bs,
                mean_bs
            ));
        }
        bytes / mean_bs
    } else {
        part.parse::<f64>().unwrap_or(f64::NAN)
    };
    if !(per_job > 0.0 && per_job.is_finite()) {
        problems.push(s, format!("'{part}' is not a positive rate"), false);
        return None;
    }
    Some(per_job * numjobs as f64)
}

/// `blockalign=N` (`ba`): random offsets aligned to N (fio's default is the
/// transfer size, lunmark's too); `READ,WRITE` apart.
fn block_align(set: &Settings, lines: &mut Vec<AccessLine>, kb_base: u64, problems: &mut Problems) {
    let Some((s, v)) = set.value("blockalign") else { return };
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 2 {
        problems.push(s, "a trim alignment of its own is not supported: give READ[,WRITE]", false);
        return;
    }
    let mut sizes = [None, None];
    for (i, p) in parts.iter().enumerate().filter(|(_, p)| !p.is_empty()) {
        match parse_size(p, kb_base) {
            Ok(n) if n > 0 => sizes[i] = Some(Bytes(n)),
            Ok(_) => problems.push(s, "an alignment must be above 0", false),
            Err(m) => problems.push(s, m, false),
        }
    }
    if parts.len() == 1 {
        sizes[1] = sizes[0];
    }
    let mut out = Vec::new();
    for l in lines.drain(..) {
        if l.read > 0.0 && l.read < 100.0 && l.trim == 0.0 && sizes[0] != sizes[1] {
            // One line of reads and writes, aligned apart: a line per direction.
            out.push(AccessLine { share: l.share * l.read / 100.0, read: 100.0, align: sizes[0].or(l.align), ..l.clone() });
            out.push(AccessLine { share: l.share * (100.0 - l.read) / 100.0, read: 0.0, align: sizes[1].or(l.align), ..l });
            continue;
        }
        let dir = if l.read >= 100.0 { 0 } else { 1 };
        out.push(AccessLine { align: sizes[dir].or(l.align), ..l });
    }
    *lines = out;
}

/// The access lines of a job: transfer sizes (bs, bssplit or bsrange, apart for
/// reads and writes when given so) times the read and random shares.
fn access_lines(set: &Settings, kb_base: u64, read: f64, random: f64, problems: &mut Problems, notes: &mut Notes) -> Vec<AccessLine> {
    // Per direction (read, write): (size, share within the direction).
    let sizes: [Vec<(u64, f64)>; 2] = if let Some((s, v)) = set.value("bssplit") {
        per_direction(s, v, |s, part, problems| bssplit(s, part, kb_base, problems, notes), problems)
    } else if let Some((s, v)) = set.value("bsrange") {
        per_direction(s, v, |s, part, problems| bsrange(s, part, kb_base, problems), problems)
    } else if let Some((s, v)) = set.value("bs") {
        per_direction(
            s,
            v,
            |s, part, problems| {
                parse_size(part, kb_base).map(|b| vec![(b, 100.0)]).map_err(|m| problems.push(s, bs_message(part, m), false)).ok()
            },
            problems,
        )
    } else {
        [vec![(4096, 100.0)], vec![(4096, 100.0)]]
    };
    let mut lines = Vec::new();
    for (dir, dir_share, read_pct) in [(0, read, 100.0), (1, 100.0 - read, 0.0)] {
        if dir_share <= 0.0 {
            continue;
        }
        let list = &sizes[dir];
        // fio aligns random offsets to the smallest transfer of the direction.
        let min = list.iter().map(|(b, _)| *b).min().unwrap_or(4096);
        let align = list.iter().any(|(b, _)| *b != min).then_some(Bytes(min));
        for (bs, share) in list {
            lines.push(AccessLine {
                share: dir_share * share / 100.0,
                bs: Bytes(*bs),
                read: read_pct,
                random,
                align,
                ..Default::default()
            });
        }
    }
    // A job that only reads or only writes with one size is one line.
    if lines.len() == 2 && lines[0].bs == lines[1].bs && lines[0].align == lines[1].align {
        lines = vec![AccessLine { share: 100.0, bs: lines[0].bs, read, random, align: lines[0].align, ..Default::default() }];
    }
    if lines.len() > MAX_LINES {
        problems.push(
            set.get("bsrange").or(set.get("bssplit")).expect("many lines come from a range or split"),
            format!("{} transfer sizes: lunmark takes at most {MAX_LINES} lines per job (use a smaller range or a bssplit)", lines.len()),
            false,
        );
        lines.truncate(1);
        lines[0].share = 100.0;
    }
    lines
}

/// fio's `a[,b[,c]]` form: reads, writes (and trims). One value applies to both;
/// an empty one keeps fio's default (4k).
fn per_direction(
    s: &Setting,
    v: &str,
    mut each: impl FnMut(&Setting, &str, &mut Problems) -> Option<Vec<(u64, f64)>>,
    problems: &mut Problems,
) -> [Vec<(u64, f64)>; 2] {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        problems.push(s, "give at most three comma-separated values: reads, writes, trims", false);
    }
    if parts.get(2).is_some_and(|p| !p.is_empty()) {
        problems.push(s, "a transfer size of its own for trims is not supported (trims take the write size): drop the third value", false);
    }
    let default = || vec![(4096, 100.0)];
    let mut get = |part: Option<&&str>, problems: &mut Problems| match part {
        Some(p) if !p.is_empty() => each(s, p, problems).unwrap_or_else(default),
        _ => default(),
    };
    let r = get(parts.first(), problems);
    let w = if parts.len() == 1 { r.clone() } else { get(parts.get(1), problems) };
    [r, w]
}

/// `bssplit=4k/50:8k/30:64k/` as fio reads it: sizes without a share split what
/// is left equally; fio sorts by size and the largest takes any remainder.
fn bssplit(s: &Setting, part: &str, kb_base: u64, problems: &mut Problems, notes: &mut Notes) -> Option<Vec<(u64, f64)>> {
    let mut entries: Vec<(u64, Option<f64>)> = Vec::new();
    for e in part.split(':').filter(|e| !e.trim().is_empty()) {
        let (size, pct) = e.split_once('/').map(|(a, b)| (a, Some(b.trim()))).unwrap_or((e, None));
        let bs = parse_size(size, kb_base).map_err(|m| problems.push(s, m, false)).ok()?;
        let pct = match pct.filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => match p.parse::<f64>() {
                Ok(0.0) => None,
                Ok(v) if (0.0..=100.0).contains(&v) => Some(v),
                _ => {
                    problems.push(s, format!("'{p}' is not a percentage in bssplit"), false);
                    return None;
                }
            },
        };
        entries.push((bs, pct));
    }
    if entries.is_empty() {
        problems.push(s, "bssplit needs SIZE/PERCENT entries separated by ':'", false);
        return None;
    }
    entries.sort_by_key(|(b, _)| *b);
    let given: f64 = entries.iter().filter_map(|(_, p)| *p).sum();
    let missing = entries.iter().filter(|(_, p)| p.is_none()).count();
    if given > 100.0 + 1e-9 {
        problems.push(s, format!("the shares add up to {given}%: at most 100%"), false);
        return None;
    }
    let fill = if missing > 0 { ((100.0 - given) / missing as f64).floor() } else { 0.0 };
    let mut out: Vec<(u64, f64)> = entries.iter().map(|(b, p)| (*b, p.unwrap_or(fill))).collect();
    let total: f64 = out.iter().map(|(_, p)| p).sum();
    if total < 100.0 - 1e-9 {
        let last = out.last_mut().expect("not empty");
        last.1 += 100.0 - total;
        notes.push(format!(
            "line {}: bssplit shares add up to {total}%: as in fio, the largest size ({}) takes the other {}%",
            s.line,
            Bytes(last.0),
            100.0 - total
        ));
    }
    out.retain(|(_, p)| *p > 0.0);
    Some(out)
}

/// `bsrange=MIN-MAX` as fio draws it: MIN + MAX x u (u uniform in [0,1)),
/// rounded down to a multiple of MIN and capped at MAX. Each multiple of MIN
/// becomes a line with the share fio gives it.
fn bsrange(s: &Setting, part: &str, kb_base: u64, problems: &mut Problems) -> Option<Vec<(u64, f64)>> {
    let Some((a, b)) = part.split_once('-') else {
        problems.push(s, format!("'{part}' is not a range: write MIN-MAX, for example 4k-64k"), false);
        return None;
    };
    let min = parse_size(a, kb_base).map_err(|m| problems.push(s, m, false)).ok()?;
    let max = parse_size(b, kb_base).map_err(|m| problems.push(s, m, false)).ok()?;
    if min == 0 || max < min {
        problems.push(s, format!("'{part}': the range must run from a size above 0 up to a larger one"), false);
        return None;
    }
    let count = max.div_ceil(min);
    if count as usize > MAX_LINES {
        problems.push(
            s,
            format!("'{part}' spans {count} sizes: lunmark takes at most {MAX_LINES} lines per job (narrow the range or use bssplit)"),
            false,
        );
        return None;
    }
    let mut out: Vec<(u64, f64)> = Vec::new();
    for j in 1..=count {
        // P(floor((MIN + MAX u) / MIN) = j) = P((j-1) MIN / MAX <= u < j MIN / MAX).
        let lo = ((j - 1) * min) as f64 / max as f64;
        let hi = ((j * min) as f64 / max as f64).min(1.0);
        let bs = (j * min).min(max);
        let share = (hi - lo) * 100.0;
        match out.last_mut() {
            Some(last) if last.0 == bs => last.1 += share,
            _ => out.push((bs, share)),
        }
    }
    Some(out)
}

/// Refuses jobs that differ from the first in something lunmark holds once per run.
fn agree_among(jobs: &[&Job], what: &str, key: &str, same: &dyn Fn(&Job, &Job) -> bool, problems: &mut Problems) {
    let Some(first) = jobs.first() else { return };
    if let Some(j) = jobs.iter().find(|j| !same(j, first)) {
        let s = Setting { key: key.into(), value: None, line: j.line, file: None };
        problems.push(
            &s,
            format!(
                "job '{}' differs from job '{}' in {what}: lunmark holds one for the whole run, so give the same in every job",
                j.name, first.name
            ),
            false,
        );
    }
}

/// `startdelay`: a delay shared by every job of a phase only starts the phase
/// later (fio counts it before the ramp), which changes no figure. Jobs of one
/// phase that start apart would need their own start, ramp and run length in
/// the point: refused, naming what to do.
fn same_delay(job: &Job, phase: &(Duration, String), problems: &mut Problems) {
    if job.startdelay.0 == phase.0 {
        return;
    }
    let shown = if job.startdelay.2.is_empty() { "0".to_string() } else { job.startdelay.2.clone() };
    let s = Setting { key: "startdelay".into(), value: Some(shown), line: job.startdelay.1.max(job.line), file: None };
    problems.push(
        &s,
        format!(
            "job '{}' starts {} after the phase while job '{}' starts after {}: lunmark starts every group of a phase together; give them the same startdelay, or start the job after the others end with stonewall (a phase of its own)",
            job.name,
            crate::units::format_duration(job.startdelay.0),
            phase.1,
            crate::units::format_duration(phase.0)
        ),
        false,
    );
}

/// Jobs into phases and one profile; settings lunmark holds once per profile
/// must agree across jobs.
fn assemble(jobs: &[Job], name: &str, origin: &str, run_length_given: bool, problems: &mut Problems, notes: &mut Notes) -> Profile {
    let mut targets: Vec<String> = Vec::new();
    let mut phases: Vec<(Vec<String>, Vec<WorkerGroup>)> = Vec::new();
    let mut used_names: BTreeSet<String> = BTreeSet::new();
    // Each phase's startdelay, and the job that set it.
    let mut delays: Vec<(Duration, String)> = Vec::new();
    for job in jobs {
        let new_phase = match &job.wait_for {
            Some((other, line)) if !jobs.iter().take_while(|j| !std::ptr::eq(*j, job)).any(|j| &j.name == other) => {
                let setting = Setting { key: "wait_for".into(), value: Some(other.clone()), line: *line, file: None };
                problems.push(&setting, format!("no job '{other}' comes before this one"), false);
                phases.is_empty()
            }
            _ if phases.is_empty() => true,
            _ if job.stonewall => true,
            Some((other, line)) => {
                let current = &phases.last().expect("not empty").0;
                let setting = Setting { key: "wait_for".into(), value: Some(other.clone()), line: *line, file: None };
                if current.contains(other) && current.len() > 1 {
                    problems.push(
                        &setting,
                        format!(
                            "waits for '{other}' only, while {} keep running: lunmark runs phases one after the other, so use stonewall",
                            current.iter().filter(|n| *n != other).map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
                        ),
                        false,
                    );
                    false
                } else {
                    current.contains(other)
                }
            }
            None => false,
        };
        if new_phase {
            phases.push((Vec::new(), Vec::new()));
            delays.push((job.startdelay.0, job.name.clone()));
        } else {
            same_delay(job, delays.last().expect("a phase"), problems);
        }
        let mut group_name = job.name.clone();
        let mut n = 2;
        while !used_names.insert(group_name.clone()) {
            group_name = format!("{}-{n}", job.name);
            n += 1;
        }
        let indexes = job
            .targets
            .iter()
            .map(|t| match targets.iter().position(|x| x == t) {
                Some(i) => i,
                None => {
                    targets.push(t.clone());
                    targets.len() - 1
                }
            })
            .collect();
        let phase = phases.last_mut().expect("pushed above");
        phase.0.push(job.name.clone());
        phase.1.push(WorkerGroup {
            name: group_name,
            workers: job.numjobs,
            qd: job.qd,
            targets: indexes,
            rate: job.rate,
            follow: None,
            worker_per_target: job.per_clone && job.numjobs > 1,
            arrivals: job.arrivals,
            thinktime: job.thinktime,
            thinktime_blocks: job.thinktime_blocks,
            offset_increment: job.offset_increment.map(Bytes),
            access: job.lines.clone(),
        });
    }

    for ((delay, job), (names, _)) in delays.iter().zip(&phases).filter(|((d, _), _)| !d.is_zero()) {
        notes.push(format!(
            "startdelay={} (job '{job}'): every job of phase {} waits alike, so fio starts them together that much later; lunmark starts them at once, which changes no figure (the target only idles that long in fio)",
            crate::units::format_duration(*delay),
            names.join("+")
        ));
    }
    let first = &jobs[0];
    let all: Vec<&Job> = jobs.iter().collect();
    let mut agree = |what: &str, key: &str, same: &dyn Fn(&Job, &Job) -> bool| agree_among(&all, what, key, same, problems);
    if !run_length_given {
        agree("how long it runs (runtime, time_based, io_size, number_ios, size; or give --time or --ios)", "runtime", &|a, b| {
            a.end == b.end
        });
    }
    agree("ramp_time", "ramp_time", &|a, b| a.ramp == b.ramp);
    agree("randseed", "randseed", &|a, b| a.seed == b.seed);
    agree("verify", "verify", &|a, b| a.verify == b.verify);
    agree("ss and ss_dur (lunmark ends a point on one steady state, --steady)", "ss_dur", &|a, b| a.steady == b.steady);
    agree("percentile_list (lunmark reports the same percentiles of every group)", "percentile_list", &|a, b| {
        a.percentiles == b.percentiles
    });
    agree("fsync and fdatasync (lunmark syncs every job alike)", "fsync", &|a, b| a.sync == b.sync);
    agree("offset", "offset", &|a, b| a.offset == b.offset);
    agree("sqthread_poll, sqthread_poll_cpu and hipri (lunmark sets up every ring alike)", "sqthread_poll", &|a, b| a.polling == b.polling);
    agree("cpus_allowed and cpus_allowed_policy (lunmark pins every worker of the run alike)", "cpus_allowed", &|a, b| {
        (&a.cpus, a.cpus_policy) == (&b.cpus, b.cpus_policy)
    });
    // Data content matters to the jobs that write; a job that only reads has none (in fio too).
    let writers: Vec<&Job> = jobs.iter().filter(|j| j.lines.iter().any(|l| l.read < 100.0)).collect();
    agree_among(
        &writers,
        "buffer_compress_percentage and dedupe_percentage (lunmark fills every write of the run alike)",
        "buffer_compress_percentage",
        &|a, b| (a.compress, a.dedupe) == (b.compress, b.dedupe),
        problems,
    );
    for j in jobs.iter().filter(|j| (j.compress.is_some() || j.dedupe.is_some()) && !writers.iter().any(|w| std::ptr::eq(*w, *j))) {
        notes.push(format!("job '{}' only reads: its buffer_compress_percentage and dedupe_percentage shape no data (as in fio)", j.name));
    }
    let data = writers.first().filter(|w| w.compress.is_some() || w.dedupe.is_some()).map(|w| super::reduction::DataReduction {
        compress: w.compress.unwrap_or(0.0),
        dedupe: w.dedupe.unwrap_or(0.0),
        dedupe_unit: None,
    });
    let sized: Vec<&Job> = jobs.iter().filter(|j| !j.targets.iter().all(|t| t.starts_with("null:"))).collect();
    agree_among(&sized, "the size of each target's region (size, filesize)", "size", &|a, b| a.file_size == b.file_size, problems);
    let files: Vec<&Job> = jobs.iter().filter(|j| j.file_engine.is_some()).collect();
    if let Some(f) = files.first() {
        for j in &files {
            if j.file_engine != f.file_engine {
                let s = Setting { key: "ioengine/direct".into(), value: None, line: j.line, file: None };
                problems.push(
                    &s,
                    format!(
                        "job '{}' differs from job '{}' in ioengine or direct: lunmark uses one engine and one cache mode for every file",
                        j.name, f.name
                    ),
                    false,
                );
                break;
            }
        }
    }
    let (engine, buffered) = files.first().and_then(|f| f.file_engine).map(|(e, b)| (Some(e), b)).unwrap_or((None, false));
    if first.end == End::Unknown && first.file_engine.is_some() && first.file_size.is_none() {
        notes.push("no size given: lunmark uses the whole of each existing file or device".into());
    }
    // fio's fsync of a block device is a flush of its write cache: lunmark's --flush.
    let devices = !targets.is_empty() && targets.iter().all(|t| t.starts_with("/dev/"));
    let (sync, flush) = match first.sync {
        Some(s) if devices => {
            notes.push(format!(
                "{}={} on block devices is a flush of their write cache: lunmark's flush = {}",
                s.kind.flag().trim_start_matches('-'),
                s.every,
                s.every
            ));
            (None, Some(s.every))
        }
        s => (s, None),
    };
    let plural = |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    let description = format!("fio job file {origin} ({} in {})", plural(jobs.len(), "job"), plural(phases.len(), "phase"));
    Profile {
        name: name.to_string(),
        description,
        source: format!("imported from the fio job file {origin}"),
        ramp: Some(first.ramp),
        time: match (&first.end, first.sla.as_ref().and_then(|s| s.window)) {
            // latency_window: the time each step of the search is judged over.
            (_, Some(window)) => Some(window),
            (End::Time(t), None) => Some(*t),
            _ => None,
        },
        size: sized.first().and_then(|f| f.file_size).map(Bytes),
        sweep: Vec::new(),
        repeat: None,
        rate: None,
        mailboxes: None,
        iops_per_mailbox: None,
        pass: None,
        sla: first.sla.as_ref().map(|s| s.expr.clone()),
        sla_origin: first.sla.as_ref().map(|s| format!("{origin}, {}", s.origin)),
        ios: match first.end {
            End::Ios(n) if first.sla.as_ref().and_then(|s| s.window).is_none() => Some(n),
            _ => None,
        },
        targets,
        offset: first.offset.map(Bytes),
        seed: first.seed,
        engine,
        buffered,
        sqpoll: first.polling.sqpoll,
        poll: first.polling.poll,
        cpus: first.cpus.clone(),
        cpus_policy: first.cpus_policy,
        data,
        verify: first.verify,
        steady: first.steady.clone(),
        percentiles: first.percentiles.clone(),
        // Distribution, think time and arrivals are the jobs' own (each group's).
        dist: None,
        thinktime: None,
        thinktime_blocks: None,
        arrivals: None,
        replay: None,
        fsync: sync.filter(|s| s.kind == super::ops::SyncKind::Fsync).map(|s| s.every),
        fdatasync: sync.filter(|s| s.kind == super::ops::SyncKind::Fdatasync).map(|s| s.every),
        flush,
        phases: phases.into_iter().map(|(names, groups)| Phase { name: names.join("+"), groups }).collect(),
        ..Profile::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(k: &str) -> Option<String> {
        (k == "DIR").then(|| "/dev/shm/d".to_string())
    }

    fn map(text: &str) -> Imported {
        import(text, "t.fio", "t", &env, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refused(text: &str) -> String {
        import(text, "t.fio", "t", &env, &ImportOptions::default()).unwrap_err().to_string()
    }

    fn group(p: &Profile, phase: usize, g: usize) -> &WorkerGroup {
        &p.phases[phase].groups[g]
    }

    #[test]
    fn rw_and_rwmix_become_read_and_random_shares() {
        for (rw, read, random) in [
            ("read", 100.0, 0.0),
            ("write", 0.0, 0.0),
            ("randread", 100.0, 100.0),
            ("randwrite", 0.0, 100.0),
            ("rw", 50.0, 0.0),
            ("readwrite", 50.0, 0.0),
            ("randrw", 50.0, 100.0),
        ] {
            let p = map(&format!("[j]\nrw={rw}\nsize=1m\nruntime=1\ntime_based\n")).profile;
            let l = &group(&p, 0, 0).access;
            assert_eq!(l.len(), 1, "{rw}");
            assert_eq!((l[0].read, l[0].random, l[0].bs), (read, random, Bytes(4096)), "{rw}");
        }
        let p = map("[j]\nrw=randrw\nrwmixread=70\nsize=1m\n").profile;
        assert_eq!(group(&p, 0, 0).access[0].read, 70.0);
        let p = map("[j]\nrw=randrw\nrwmixwrite=20\nsize=1m\n").profile;
        assert_eq!(group(&p, 0, 0).access[0].read, 80.0);
        let e = refused("[j]\nrw=randtrimwrite\nsize=1m\n");
        assert!(e.contains("line 2: rw=randtrimwrite: trims each block and then writes it"), "{e}");
        let e = refused("[j]\nrw=randrw\nrwmixread=70\nrwmixwrite=40\nsize=1m\n");
        assert!(e.contains("line 4") && e.contains("do not add up to 100"), "{e}");
    }

    #[test]
    fn bssplit_becomes_share_lines_per_direction() {
        let p = map("[j]\nrw=randrw\nrwmixread=70\nbssplit=8k/50:4k/50\nsize=1m\n").profile;
        let lines = &group(&p, 0, 0).access;
        let got: Vec<(f64, u64, f64)> = lines.iter().map(|l| (l.share, l.bs.get(), l.read)).collect();
        assert_eq!(got, vec![(35.0, 4096, 100.0), (35.0, 8192, 100.0), (15.0, 4096, 0.0), (15.0, 8192, 0.0)]);
        assert!(lines.iter().all(|l| l.align == Some(Bytes(4096))), "fio aligns to the smallest size");
        // Sizes without a share split the rest; reads and writes apart after a comma.
        let p = map("[j]\nrw=randrw\nbssplit=4k/40:16k:64k,128k\nsize=1m\n").profile;
        let got: Vec<(f64, u64, f64)> = group(&p, 0, 0).access.iter().map(|l| (l.share, l.bs.get(), l.read)).collect();
        assert_eq!(got, vec![(20.0, 4096, 100.0), (15.0, 16384, 100.0), (15.0, 65536, 100.0), (50.0, 131072, 0.0)]);
        // Short of 100%: the largest size takes the rest, as in fio, and the user is told.
        let imported = map("[j]\nrw=randread\nbssplit=4k/50:8k/40\nsize=1m\n");
        let got: Vec<f64> = group(&imported.profile, 0, 0).access.iter().map(|l| l.share).collect();
        assert_eq!(got, vec![50.0, 50.0]);
        assert!(imported.notes.iter().any(|n| n.contains("takes the other 10%")), "{:?}", imported.notes);
        assert!(refused("[j]\nbssplit=4k/80:8k/40\nsize=1m\n").contains("add up to 120%"));
    }

    #[test]
    fn bs_with_two_values_gives_read_and_write_lines() {
        let p = map("[j]\nrw=randrw\nrwmixread=60\nbs=4k,64k\nsize=1m\n").profile;
        let got: Vec<(f64, u64, f64)> = group(&p, 0, 0).access.iter().map(|l| (l.share, l.bs.get(), l.read)).collect();
        assert_eq!(got, vec![(60.0, 4096, 100.0), (40.0, 65536, 0.0)]);
        let p = map("[j]\nrw=read\nbs=128k\nsize=1m\n").profile;
        assert_eq!(group(&p, 0, 0).access[0].bs, Bytes(128 << 10));
    }

    #[test]
    fn bsrange_becomes_the_sizes_fio_draws() {
        // fio: MIN + MAX x u, rounded down to a multiple of MIN: 4k-16k gives 4k, 8k, 12k, 16k, a quarter each.
        let p = map("[j]\nrw=randread\nbsrange=4k-16k\nsize=1m\n").profile;
        let got: Vec<(f64, u64)> = group(&p, 0, 0).access.iter().map(|l| (l.share, l.bs.get())).collect();
        assert_eq!(got, vec![(25.0, 4096), (25.0, 8192), (25.0, 12288), (25.0, 16384)]);
        // 4k-10k: 4k for u < 0.4, 8k for 0.4..0.8, and the rest capped at 10k.
        let p = map("[j]\nrw=randread\nbsrange=4k-10k\nsize=1m\n").profile;
        let got: Vec<(u64, f64)> = group(&p, 0, 0).access.iter().map(|l| (l.bs.get(), (l.share * 1e6).round() / 1e6)).collect();
        assert_eq!(got, vec![(4096, 40.0), (8192, 40.0), (10240, 20.0)]);
        assert!(refused("[j]\nbsrange=512-1m\nsize=1m\n").contains("at most 256 lines"));
    }

    #[test]
    fn jobs_run_together_until_a_stonewall_or_wait_for() {
        let text = "[global]\nsize=1m\nfilename=/dev/shm/a\n[a]\nrw=read\n[b]\nrw=write\nnew_group\n[c]\nstonewall\nrw=randread\n[d]\nwait_for=c\nrw=randwrite\n";
        let p = map(text).profile;
        let names: Vec<Vec<&str>> = p.phases.iter().map(|ph| ph.groups.iter().map(|g| g.name.as_str()).collect()).collect();
        assert_eq!(names, vec![vec!["a", "b"], vec!["c"], vec!["d"]]);
        assert_eq!(p.phases[0].name, "a+b");
        // wait_for on one job while another of its phase keeps running cannot be phases.
        let e = refused("[global]\nsize=1m\n[a]\n[b]\n[c]\nwait_for=a\n");
        assert!(e.contains("line 6: wait_for=a: waits for 'a' only, while 'b' keep running"), "{e}");
        assert!(refused("[a]\nsize=1m\nwait_for=zz\n").contains("no job 'zz' comes before this one"));
    }

    #[test]
    fn numjobs_iodepth_and_files() {
        // A shared file: numjobs workers on it.
        let p = map("[j]\nnumjobs=4\niodepth=16\nfilename=/dev/shm/x\nsize=1m\n").profile;
        let g = group(&p, 0, 0);
        assert_eq!((g.workers, g.qd, g.worker_per_target), (4, 16, false));
        assert_eq!(p.targets, vec!["/dev/shm/x"]);
        // No filename: fio's jobname.clone.0 in the directory, one file per clone.
        let p = map("[j]\nnumjobs=2\ndirectory=${DIR}\nsize=1m\n").profile;
        assert_eq!(p.targets, vec!["/dev/shm/d/j.0.0", "/dev/shm/d/j.1.0"]);
        assert!(group(&p, 0, 0).worker_per_target);
        // Several files: fio's iodepth spans them, lunmark's is per file; size is split among them.
        let p = map("[j]\nfilename=/a\\:b:/c\niodepth=8\nsize=2m\n").profile;
        assert_eq!(p.targets, vec!["/a:b", "/c"]);
        assert_eq!((group(&p, 0, 0).qd, p.size), (4, Some(Bytes(1 << 20))));
        assert!(refused("[j]\nfilename=/a:/b:/c\niodepth=8\nsize=3m\n").contains("iodepth 8 over 3 files"));
        let p = map("[j]\nfilename=/a:/b\nfilesize=3m\nsize=2m\noffset=1m\n").profile;
        assert_eq!((p.size, p.offset), (Some(Bytes(3 << 20)), Some(Bytes(1 << 20))));
    }

    #[test]
    fn engines_and_direct() {
        let p = map("[j]\nsize=1m\n").profile;
        assert_eq!((p.engine, p.buffered), (Some(EngineChoice::Psync), true), "fio's defaults: psync, buffered");
        let p = map("[j]\nsize=1m\nioengine=io_uring\ndirect=1\n").profile;
        assert_eq!((p.engine, p.buffered), (Some(EngineChoice::IoUring), false));
        let i = map("[j]\nsize=1m\nioengine=libaio\nbuffered=0\n");
        assert_eq!((i.profile.engine, i.profile.buffered), (Some(EngineChoice::IoUring), false));
        assert!(i.notes.iter().any(|n| n.contains("libaio runs on io_uring")));
        for e in ["sync", "pvsync", "psync"] {
            assert_eq!(map(&format!("[j]\nsize=1m\nioengine={e}\n")).profile.engine, Some(EngineChoice::Psync));
        }
        let p = map("[j]\nioengine=null\nsize=1g\nrw=randread\n").profile;
        assert_eq!((p.targets.clone(), p.engine, p.size), (vec!["null:1g".to_string()], None, None));
        let p = map("[j]\nioengine=nbd\nuri=nbd://127.0.0.1:10809/e\nruntime=1\ntime_based\n").profile;
        assert_eq!(p.targets, vec!["nbd://127.0.0.1:10809/e"]);
        let p = map("[j]\nioengine=libiscsi\nfilename=iscsi\\://127.0.0.1/iqn.2016-02.com.fio\\:t/1\nruntime=1\ntime_based\n").profile;
        assert_eq!(p.targets, vec!["iscsi://127.0.0.1/iqn.2016-02.com.fio:t/1"]);
        assert!(refused("[j]\nioengine=posixaio\nsize=1m\n").contains("engine 'posixaio' is not one lunmark has"));
        assert!(refused("[j]\nioengine=nbd\n").contains("needs uri="));
        assert!(refused("[a]\nsize=1m\ndirect=1\n[b]\nsize=1m\n").contains("differs from job 'a' in ioengine or direct"));
    }

    #[test]
    fn run_length_follows_fio() {
        let p = map("[j]\nsize=1m\nruntime=30\ntime_based\nramp_time=2s\n").profile;
        assert_eq!((p.time, p.ios, p.ramp), (Some(Duration::from_secs(30)), None, Some(Duration::from_secs(2))));
        // fio's default: one pass over size; fio has no ramp unless asked.
        let p = map("[j]\nsize=1m\nbs=4k\n").profile;
        assert_eq!((p.time, p.ios, p.ramp), (None, Some(256), Some(Duration::ZERO)));
        let p = map("[j]\nsize=1m\nio_size=8m\nbs=64k\n").profile;
        assert_eq!(p.ios, Some(128));
        let p = map("[j]\nsize=1m\nnumber_ios=1000\n").profile;
        assert_eq!(p.ios, Some(1000));
        let i = map("[j]\nsize=1g\nruntime=1m\n");
        assert_eq!(i.profile.time, Some(Duration::from_secs(60)));
        assert!(i.notes.iter().any(|n| n.contains("whichever comes first")), "{:?}", i.notes);
        assert!(refused("[j]\nsize=1m\ntime_based\n").contains("time_based without runtime"));
        let differ = "[a]\nsize=1m\nbs=128k\n[b]\nstonewall\nsize=1m\n";
        assert!(refused(differ).contains("how long it runs"));
        // --time or --ios on the command line decides it instead.
        let given = ImportOptions { run_length_given: true, ..Default::default() };
        assert_eq!(import(differ, "t.fio", "t", &env, &given).unwrap().profile.phases.len(), 2);
    }

    #[test]
    fn rate_seed_verify_and_no_effect_options() {
        let i = map("[j]\nsize=1m\nrw=randread\nnumjobs=2\nrate_iops=500\nrandseed=42\nverify=crc32c\nname=renamed\ndescription=x\ngroup_reporting\nthread\nnorandommap\nrandom_distribution=random\nstartdelay=0\n");
        let g = group(&i.profile, 0, 0);
        assert_eq!((g.name.as_str(), g.rate), ("renamed", Some(1000.0)), "rate_iops is per job: x numjobs");
        assert_eq!((i.profile.seed, i.profile.verify), (Some(42), true));
        assert!(i.notes.iter().any(|n| n.contains("CRC-32C")));
        let e = refused("[j]\nsize=1m\nrw=randrw\nrate_iops=500\n");
        assert!(e.contains("caps each direction apart"), "{e}");
    }

    #[test]
    fn every_unsupported_option_is_named_with_its_line_or_skipped_when_lenient() {
        let text =
            "[global]\nsize=1m\nzonemode=zbd\n[a]\nthinktime_spin=10\nexec_prerun=x\n[b]\nrandom_distribution=zoned_abs:1/1\nstartdelay=5\n";
        let e = refused(text);
        for want in [
            "line 3: zonemode=zbd",
            "line 5: thinktime_spin=10",
            "line 6: exec_prerun=x",
            "line 8: random_distribution=zoned_abs:1/1",
            "line 9: startdelay=5",
        ] {
            assert!(e.contains(want), "{want} missing from: {e}");
        }
        assert_eq!(e.matches("zonemode").count(), 1, "a [global] option is named once: {e}");
        let lenient = ImportOptions { lenient: true, ..Default::default() };
        // Each of these changes the workload: --fio-lenient refuses them too (a user's
        // trial found offset_increment dropped with a warning: four workers on the same blocks).
        let e = import(text, "t.fio", "t", &env, &lenient).unwrap_err().to_string();
        assert!(e.contains("line 9: startdelay=5") && e.contains("cannot skip"), "{e}");
        let e = import("[a]\nsize=1m\nnumjobs=4\noffset_increment=1m\n", "t.fio", "t", &env, &lenient).unwrap_err().to_string();
        assert!(e.contains("line 4: offset_increment=1m: job 'a' gives each clone a file of its own"), "{e}");
        // Options that change no figure are skipped, a warning each.
        let text = "[global]\nsize=1m\nunlink=1\n[a]\nstats=0\n";
        assert!(refused(text).contains("line 3: unlink=1"));
        let i = import(text, "t.fio", "t", &env, &lenient).unwrap();
        assert_eq!(i.skipped.len(), 2, "{:?}", i.skipped);
        assert!(i.skipped[0].contains("line 3: unlink=1") && i.skipped[0].contains("skipped"));
        // A value that would change the workload cannot be skipped.
        let e = import("[a]\nsize=1m\nrw=trimwrite\nfsync=x\n", "t.fio", "t", &env, &lenient).unwrap_err().to_string();
        assert!(e.contains("line 3: rw=trimwrite") && e.contains("line 4: fsync=x"), "{e}");
        // offset_increment of one clone, or of 0, moves nothing.
        let p = map("[a]\nsize=1m\noffset_increment=1m\n").profile;
        assert_eq!((p.offset, p.phases[0].groups[0].offset_increment), (None, None));
        // On a shared file each clone gets its own part; the region holds them all.
        let i = map("[a]\nfilename=/dev/shm/x\nsize=1m\noffset=64k\nnumjobs=4\noffset_increment=1m\n");
        let g = group(&i.profile, 0, 0);
        assert_eq!(
            (i.profile.size, i.profile.offset, g.offset_increment),
            (Some(Bytes(4 << 20)), Some(Bytes(65536)), Some(Bytes(1 << 20)))
        );
        assert_eq!(i.profile.ios, Some(256), "one pass over each clone's own 1m");
        assert!(i.notes.iter().any(|n| n.contains("each of the 4 workers of job 'a' does its I/O on its own 1m")), "{:?}", i.notes);
        let e = refused("[a]\nfilename=/dev/shm/x\nnumjobs=2\noffset_increment=1m\nruntime=1\ntime_based\n");
        assert!(e.contains("line 4: offset_increment=1m") && e.contains("give size="), "{e}");
    }

    #[test]
    fn loops_rate_and_blockalign_map_to_ios_rate_and_alignment() {
        let i = map("[j]\nsize=1m\nbs=4k\nrw=read\nloops=3\n");
        assert_eq!(i.profile.ios, Some(768));
        assert!(i.notes.iter().any(|n| n.contains("loops=3: 3 passes of 256 I/Os per worker")), "{:?}", i.notes);
        assert_eq!(map("[j]\nsize=1m\nloops=3\nruntime=2\ntime_based\n").profile.time, Some(Duration::from_secs(2)));
        // rate is bytes a second per clone: at 4k, 4m is 1,024 I/Os; READ,WRITE parts by direction.
        let g = |t: &str| group(&map(t).profile, 0, 0).rate;
        assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randread\nrate=4m\nnumjobs=2\n"), Some(2048.0));
        assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randwrite\nrate=,1m\n"), Some(256.0));
        assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randread\nrate_iops=500,\n"), Some(500.0));
        assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randwrite\nrate_iops=500,\n"), None, "no cap on writes");
        let i = map("[j]\nsize=1m\nrw=randread\nbssplit=4k/50:12k/50\nrate=8m\n");
        assert_eq!(group(&i.profile, 0, 0).rate, Some(1024.0));
        assert!(i.notes.iter().any(|n| n.contains("mean transfer size (8192 bytes)")), "{:?}", i.notes);
        for (job, says) in [
            ("rw=randrw\nrate=4m\n", "caps each direction apart"),
            ("rw=randrw\nrate=4m,1m\n", "separate read and write rates"),
            ("rw=read\nrate=4m\nrate_iops=10\n", "give one of rate and rate_iops"),
            ("rw=read\nrate=x\n", "not a size"),
            ("rw=read\nloops=0\n", "at least 1"),
            ("rw=read\nblockalign=4k,4k,4k\n", "trim alignment"),
        ] {
            let e = refused(&format!("[j]\nsize=1m\n{job}"));
            assert!(e.contains(says), "{job}: {e}");
        }
        let p = map("[j]\nsize=1m\nrw=randrw\nbs=4k\nblockalign=512,1k\n").profile;
        let aligns: Vec<Option<Bytes>> = group(&p, 0, 0).access.iter().map(|l| l.align).collect();
        assert_eq!(aligns, vec![Some(Bytes(512)), Some(Bytes(1024))]);
        assert_eq!(group(&map("[j]\nsize=1m\nrw=randread\nba=512\n").profile, 0, 0).access[0].align, Some(Bytes(512)));
        // rate_process=poisson takes the bandwidth cap's rate too.
        let g = map("[j]\nsize=1m\nbs=4k\nrw=randread\nrate=1m\nrate_process=poisson\n").profile.phases[0].groups[0].clone();
        assert_eq!((g.rate, g.arrivals), (Some(256.0), crate::workload::timing::Arrivals::Poisson));
    }

    /// Jobs of one phase (one point) with their own runtimes: fio ends each at
    /// its own; lunmark runs a point's groups for one time. Refused, naming the
    /// job and the way out (one runtime, or --time for all).
    #[test]
    fn jobs_of_one_point_with_their_own_runtime_are_refused_naming_the_way_out() {
        let text = "[global]\nsize=1m\ntime_based\n[a]\nruntime=10\n[b]\nruntime=20\n";
        let e = refused(text);
        assert!(
            e.contains("line 6: runtime: job 'b' differs from job 'a' in how long it runs") && e.contains("give --time or --ios"),
            "{e}"
        );
        let lenient = ImportOptions { lenient: true, ..Default::default() };
        assert!(import(text, "t.fio", "t", &env, &lenient).is_err(), "it changes the workload");
        let given = ImportOptions { run_length_given: true, ..Default::default() };
        assert_eq!(import(text, "t.fio", "t", &env, &given).unwrap().profile.phases[0].groups.len(), 2);
    }

    /// numa_cpu_nodes pins to the nodes' CPUs, as cpus_allowed does (read from sysfs).
    #[test]
    fn numa_cpu_nodes_pin_to_the_nodes_cpus() {
        let dir = tempfile::tempdir().unwrap();
        for (node, list) in [("node0", "0-1,4\n"), ("node1", "2-3\n")] {
            std::fs::create_dir_all(dir.path().join(node)).unwrap();
            std::fs::write(dir.path().join(node).join("cpulist"), list).unwrap();
        }
        std::fs::write(dir.path().join("online"), "0-1\n").unwrap();
        let cpus = |l: &str| numa_cpus(l, dir.path()).map(|c| c.0);
        assert_eq!(cpus("1"), Ok(vec![2, 3]));
        assert_eq!(cpus("0,1"), Ok(vec![0, 1, 2, 3, 4]));
        assert_eq!(cpus("all"), Ok(vec![0, 1, 2, 3, 4]));
        assert!(cpus("7").unwrap_err().contains("NUMA node 7 does not exist"));
        // This host's node 0, through the job file.
        let here = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
        let p = map("[j]\nsize=1m\nnuma_cpu_nodes=0\n").profile;
        assert_eq!(p.cpus, Some(crate::workload::cpus::CpuList::parse_syntax(here.trim()).unwrap()));
        assert!(refused("[j]\nsize=1m\nnuma_cpu_nodes=0\ncpus_allowed=0\n").contains("give one of cpus_allowed and numa_cpu_nodes"));
    }

    /// fio's slope criterion is |slope a second| < X% of the mean; lunmark's
    /// slope excursion is that slope x (window - 1): the limits match, and the
    /// range limit cannot bind. The deviation criterion maps onto a range of 2X%.
    #[test]
    fn fio_steady_state_maps_onto_lunmarks() {
        use crate::workload::steady::{judge, SteadyMetric};
        let i = map("[j]\nsize=1m\nruntime=60\ntime_based\nss=iops_slope:1%\nss_dur=5\n");
        let s = i.profile.steady.clone().expect("steady");
        assert_eq!((s.metric, s.window, s.round.as_secs(), s.slope, s.range), (SteadyMetric::Iops, 5, 1, 4.0, 500.0));
        assert!(
            i.notes.iter().any(|n| n.starts_with(
                "ss=iops_slope:1% (line 5), ss_dur=5s: job 'j' -> --steady iops, window 5 x 1 s, slope excursion 4% of the mean"
            )),
            "{:?}",
            i.notes
        );
        // fio: slope 0.9 a second on a mean of 100 is steady (< 1%), 1.1 is not; lunmark the same.
        for (step, steady) in [(0.9, true), (1.1, false)] {
            let w: Vec<f64> = (0..5).map(|k| 98.2 + step * k as f64).collect();
            assert_eq!(judge(&w, s.range, s.slope).steady, steady, "step {step}: {w:?}");
        }
        // Wildly spread figures with no slope: fio's slope test passes, and lunmark's range does not stop it.
        assert!(judge(&[10.0, 190.0, 100.0, 190.0, 10.0], s.range, s.slope).steady);
        let s = map("[j]\nsize=1m\nruntime=60\ntime_based\nsteadystate=bw:10%\nsteadystate_duration=6s\n").profile.steady.unwrap();
        assert_eq!((s.metric, s.window, s.range, s.slope), (SteadyMetric::Bw, 6, 20.0, 30.0));
        // No ss_dur: fio does not watch (a note); ss_dur alone: fio's default iops_slope:0.01%.
        assert!(map("[j]\nsize=1m\nss=iops:10%\n").profile.steady.is_none());
        assert_eq!(map("[j]\nsize=1m\nruntime=9\ntime_based\nss_dur=3\n").profile.steady.unwrap().slope, 0.02);
        let e = refused("[j]\nsize=1m\nruntime=60\ntime_based\nss=iops:10%\nss_dur=30\nsteadystate_ramp_time=5\n");
        assert!(e.contains("line 7: steadystate_ramp_time=5: fio waits 5 after its ramp") && e.contains("--steady iops|bw"), "{e}");
        assert!(refused("[j]\nsize=1m\nss=iops:200\nss_dur=10\n")
            .contains("line 3: ss=iops:200: '200': lunmark's --steady takes limits in percent"));
        assert!(refused("[j]\nsize=1m\nss=lat:1%\nss_dur=10\n").contains("'lat' is not a steady-state criterion"));
        assert!(refused("[j]\nsize=1m\nss=iops:1%\nss_dur=1500ms\n").contains("line 4: ss_dur=1500ms: fio takes a sample a second"));
        assert!(refused("[a]\nsize=1m\nss=iops:1%\nss_dur=10\n[b]\nsize=1m\n").contains("differs from job 'a' in ss and ss_dur"));
    }

    /// fio's log options name fio's files (`PREFIX_bw.N.log`, N the job's
    /// thread number in the file); what lunmark cannot log is named, and
    /// --fio-lenient may skip it (a log changes no figure).
    #[test]
    fn fio_logs_are_named_as_fio_names_them() {
        let text = "[global]\nsize=1m\nruntime=3\ntime_based\n[a]\nnumjobs=2\n[b]\nstonewall\nrw=randread\nwrite_bw_log=x\nwrite_lat_log\nlog_avg_msec=2000\n";
        let i = map(text);
        let names: Vec<(&str, LogKind, usize, u32)> = i.logs.iter().map(|l| (l.path.as_str(), l.kind, l.point, l.avg_secs)).collect();
        assert_eq!(
            names,
            vec![("x_bw.3.log", LogKind::Bw, 1, 2), ("b_lat.3.log", LogKind::Lat, 1, 2), ("b_clat.3.log", LogKind::Clat, 1, 2)]
        );
        assert_eq!(i.logs[0].directions, vec![0]);
        assert!(i.notes.iter().any(|n| n.contains("no b_slat")), "{:?}", i.notes);
        let lenient = ImportOptions { lenient: true, ..Default::default() };
        for (job, says) in [
            ("[a]\nsize=1m\nwrite_iops_log=x\n[b]\nsize=1m\n", "only a job that runs alone in its phase with numjobs=1"),
            ("[a]\nsize=1m\nnumjobs=2\nwrite_iops_log=x\n", "only a job that runs alone"),
            ("[a]\nsize=1m\nrw=randrw\nwrite_lat_log=x\n", "reads and writes"),
            ("[a]\nsize=1m\nrw=read\nrate_iops=10\nwrite_lat_log=x\n", "has a rate"),
            ("[a]\nsize=1m\nwrite_iops_log=x\nlog_avg_msec=500\n", "multiple of 1000"),
        ] {
            let e = refused(job);
            assert!(e.contains(says), "{job}: {e}");
            let i = import(job, "t.fio", "t", &env, &lenient).unwrap_or_else(|e| panic!("{job}: {e}"));
            assert!(i.logs.is_empty() && i.skipped.len() == 1, "{job}: {:?}", i.skipped);
        }
    }

    /// Options that change nothing lunmark measures run without --fio-lenient,
    /// each with a note that says why; invalidate on a buffered job does change
    /// what is cached, and is refused.
    #[test]
    fn harmless_options_are_accepted_with_a_note_each() {
        let keys = [
            "thread",
            "randrepeat=0",
            "gtod_reduce=1",
            "invalidate=1",
            "refill_buffers",
            "scramble_buffers=0",
            "group_reporting=1",
            "lat_percentiles=1",
            "clat_percentiles=0",
            "significant_figures=4",
            "disk_util=0",
            "write_hist_log=h",
            "per_job_logs=0",
        ];
        let i = map(&format!("[j]\nsize=1m\ndirect=1\nrw=randread\nnorandommap\n{}\n", keys.join("\n")));
        for (n, k) in keys.iter().enumerate() {
            let want = format!("{k} (line {}): accepted, it changes nothing lunmark measures", n + 6);
            assert!(i.notes.iter().any(|x| x.starts_with(&want)), "{want} missing: {:#?}", i.notes);
        }
        let e = refused("[j]\nsize=1m\ninvalidate=1\n");
        assert!(e.contains("line 3: invalidate=1: job 'j' goes through the page cache") && e.contains("invalidate=0"), "{e}");
        assert!(map("[j]\nsize=1m\ninvalidate=0\n").notes.iter().any(|n| n.starts_with("invalidate=0 (line 3)")));
    }

    /// fio drops an empty trailing part (`rw=randread,`, `numjobs=2,`) and an
    /// empty list entry (`bssplit=4k/50:8k/50:`), as fio 3.33 runs them.
    #[test]
    fn empty_trailing_separators_are_what_fio_tolerates() {
        let p = map("[j]\nsize=1m\nrw=randread,\nnumjobs=2,\niodepth=4,\nbssplit=4k/50:8k/50:\ndirect=1,\n").profile;
        let g = group(&p, 0, 0);
        assert_eq!((g.workers, g.qd, g.access.len(), g.access[0].random, p.buffered), (2, 4, 2, 100.0, false));
        // bs=8k, is 8k for reads and fio's default for writes: the parts stay per direction.
        let p = map("[j]\nsize=1m\nrw=randrw\nbs=8k,\n").profile;
        let sizes: Vec<u64> = group(&p, 0, 0).access.iter().map(|l| l.bs.get()).collect();
        assert_eq!(sizes, vec![8192, 4096]);
    }

    /// size=P% and offset=P% of an existing file, as fio 3.33 takes them (its
    /// iolog: size=25% offset=10% of 64 MiB reads 16 MiB from 6,713,344).
    #[test]
    fn shares_of_the_file_become_bytes_of_the_file() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let f = dir.path().join("f.dat");
        std::fs::File::create(&f).unwrap().set_len(64 << 20).unwrap();
        let job = |extra: &str| format!("[j]\nfilename={}\nrw=read\nbs=4k\n{extra}", f.display());
        let i = map(&job("size=25%\noffset=10%\n"));
        assert_eq!((i.profile.size, i.profile.offset), (Some(Bytes(16 << 20)), Some(Bytes(6_713_344))));
        assert_eq!(i.profile.ios, Some(4096), "one pass over the region");
        assert!(
            i.notes.iter().any(|n| n.contains("size=25% (line 5): 25% of") && n.contains("16777216 bytes on each file")),
            "{:?}",
            i.notes
        );
        // The size stops where the file ends.
        let p = map(&job("size=100%\noffset=75%\n")).profile;
        assert_eq!((p.size, p.offset), (Some(Bytes(16 << 20)), Some(Bytes(48 << 20))));
        let e = refused(&job("size=50%\n").replace("f.dat", "missing.dat"));
        assert!(e.contains("line 5: size=50%: a share of the file needs the file's size") && e.contains("missing.dat"), "{e}");
        assert!(refused(&job("size=150%\n")).contains("from 0 to 100"));
    }

    #[test]
    fn trims_and_syncs_map_to_trim_shares_and_the_profile_sync() {
        let i = import("[j]\nrw=randtrim\nbs=64k\nsize=1m\nfdatasync=8\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
        let l = &group(&i.profile, 0, 0).access[0];
        assert_eq!((l.read, l.trim, l.random, l.bs), (0.0, 100.0, 100.0, Bytes(65536)));
        assert_eq!((i.profile.fsync, i.profile.fdatasync), (None, Some(8)));
        let i = import("[j]\nrw=trim\nsize=1m\nfsync=4\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
        let l = &group(&i.profile, 0, 0).access[0];
        assert_eq!((l.read, l.trim, l.random), (0.0, 100.0, 0.0));
        assert_eq!(i.profile.fsync, Some(4));
        // fsync=0 is fio's default: no syncs.
        let i = import("[j]\nrw=write\nsize=1m\nfsync=0\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
        assert_eq!(i.profile.fsync, None);
        let e = refused("[a]\nrw=write\nsize=1m\nfsync=4\n[b]\nrw=write\nsize=1m\n");
        assert!(e.contains("fsync"), "{e}");
        let i = import("[j]\nrw=write\nfilename=/dev/sdz\nfsync=16\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
        assert_eq!((i.profile.fsync, i.profile.flush), (None, Some(16)), "fsync of a device is its flush");
        assert!(i.notes.iter().any(|n| n.contains("flush = 16")), "{:?}", i.notes);
        let e = refused("[a]\nrw=write\nsize=1m\nfsync=4\nfdatasync=2\n");
        assert!(e.contains("only one of fsync and fdatasync"), "{e}");
    }

    #[test]
    fn distributions_thinktime_and_poisson_map_where_fio_means_the_same() {
        let i = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=zipf:1.2\nthinktime=500\nthinktime_blocks=4\n");
        let g = group(&i.profile, 0, 0);
        assert_eq!(g.access[0].dist.as_ref().map(|d| d.to_string()).as_deref(), Some("zipf:1.2"));
        assert_eq!((g.thinktime, g.thinktime_blocks), (Some(Duration::from_micros(500)), Some(4)), "a bare thinktime is µs");
        let i = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=zoned:60/10:30/20:10/70\n");
        let d = group(&i.profile, 0, 0).access[0].dist.clone().unwrap();
        assert_eq!((d.to_string().as_str(), d.layout), ("zoned:60/10:30/20:10/70", crate::workload::dist::Layout::Contiguous));
        let i = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=pareto:0.9\nrate_iops=100\nrate_process=poisson\n");
        let g = group(&i.profile, 0, 0);
        assert_eq!((g.arrivals, g.rate), (crate::workload::timing::Arrivals::Poisson, Some(100.0)));
        assert_eq!(g.access[0].dist.as_ref().unwrap().to_string(), "pareto:0.9");
        // Where the meaning differs, the line is named with the reason.
        for (job, says) in [
            ("random_distribution=normal:10", "true bell curve"),
            ("random_distribution=zipf:1.2:0.3", "centre"),
            ("random_distribution=zoned:50/50:50/50,100/100", "apart for reads"),
            ("random_distribution=pareto:0.3", "between 0.5"),
            ("rate_process=poisson", "needs rate_iops or rate"),
        ] {
            let e = refused(&format!("[j]\nsize=1m\nrw=randread\n{job}\n"));
            assert!(e.contains("line 4") && e.contains(says), "{job}: {e}");
        }
        let p = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=zipf:0.9\nthinktime=1ms\n").profile;
        assert_eq!(profile::parse(&profile::to_toml(&p), "round trip").unwrap(), p);
    }

    /// Polling, pinning and data reduction map to --sqpoll/--poll, --cpus/--cpus-policy
    /// and --compress/--dedupe (a user's trial found them refused as unknown options).
    #[test]
    fn polling_pinning_and_data_reduction_map_to_the_flags() {
        use crate::workload::cpus::{CpuList, CpuPolicy};
        use crate::workload::polling::SqPoll;
        let uring = "[j]\nioengine=io_uring\ndirect=1\nsize=1m\nrw=randwrite\nbs=4k\n";
        let p = map(&format!("{uring}sqthread_poll=1\nsqthread_poll_cpu=1\nhipri\ncpus_allowed=0-1\ncpus_allowed_policy=split\nbuffer_compress_percentage=50\ndedupe_percentage=30\n")).profile;
        assert_eq!((p.sqpoll, p.poll), (Some(SqPoll::Cpu(1)), true));
        assert_eq!((p.cpus.clone(), p.cpus_policy), (Some(CpuList(vec![0, 1])), Some(CpuPolicy::Split)));
        let d = p.data.clone().unwrap();
        assert_eq!((d.compress, d.dedupe, d.dedupe_unit), (50.0, 30.0, None));
        let back = profile::parse(&profile::to_toml(&p), "round trip").unwrap();
        assert_eq!(back, p, "{}", profile::to_toml(&p));
        assert!(profile::to_toml(&p).contains("cpus = \"0-1\""), "{}", profile::to_toml(&p));
        // A bare sqthread_poll polls on any CPU; none of them is the default.
        assert_eq!(map(&format!("{uring}sqthread_poll\n")).profile.sqpoll, Some(SqPoll::AnyCpu));
        let p = map(uring).profile;
        assert_eq!((p.sqpoll, p.poll, p.cpus, p.data), (None, false, None, None));
        // What cannot map is named with its line and why.
        for (job, line, says) in [
            ("ioengine=libaio\nsqthread_poll=1\n", "line 3: sqthread_poll=1", "an option of ioengine=io_uring only"),
            ("ioengine=pvsync2\nhipri\n", "line 3: hipri", "polls completions on io_uring only"),
            ("ioengine=io_uring\nsqthread_poll_cpu=1\n", "line 3: sqthread_poll_cpu=1", "sqthread_poll is not set"),
            // hipri on a buffered job names the job and its options, not --poll and --buffered the user never gave.
            ("ioengine=io_uring\ndirect=0\nhipri=1\n", "line 4: hipri=1", "job 'j' polls for completions of direct I/O, but its I/O goes through the page cache (direct=0): set direct=1, or drop hipri"),
            ("ioengine=io_uring\nhipri\n", "line 3: hipri", "(no direct=1: fio's default)"),
            ("cpus_allowed=3-1\n", "line 2: cpus_allowed=3-1", "the range 3-1 runs backwards"),
            ("cpus_allowed=0,,1\n", "line 2: cpus_allowed=0,,1", "an entry between two commas"),
            ("cpus_allowed=0\ncpus_allowed_policy=spread\n", "line 3: cpus_allowed_policy=spread", "use shared"),
            ("cpus_allowed_policy=split\n", "line 2: cpus_allowed_policy=split", "cpus_allowed, which is not set"),
            ("rw=write\nbuffer_compress_percentage=100\n", "line 3: buffer_compress_percentage=100", "from 0 to 99 percent"),
            ("rw=write\ndedupe_percentage=x\n", "line 3: dedupe_percentage=x", "from 0 to 100 percent"),
        ] {
            let e = refused(&format!("[j]\n{job}size=1m\n"));
            assert!(e.contains(line) && e.contains(says), "{job}: {e}");
        }
        // Held once per run: jobs must agree; a job that only reads has no data to shape.
        let e = refused("[a]\nsize=1m\ncpus_allowed=0\n[b]\nsize=1m\ncpus_allowed=1\n");
        assert!(e.contains("job 'b' differs from job 'a' in cpus_allowed"), "{e}");
        let e = refused("[a]\nrw=write\nsize=1m\nbuffer_compress_percentage=50\n[b]\nrw=write\nsize=1m\n");
        assert!(e.contains("differs from job 'a' in buffer_compress_percentage"), "{e}");
        let i = map("[w]\nrw=write\nsize=1m\ndedupe_percentage=20\n[r]\nrw=read\nsize=1m\ndedupe_percentage=50\n");
        assert_eq!(i.profile.data.as_ref().map(|d| d.dedupe), Some(20.0));
        assert!(i.notes.iter().any(|n| n.contains("job 'r' only reads")), "{:?}", i.notes);
    }

    #[test]
    fn sections_choose_jobs() {
        let text = "[global]\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n";
        let i = import(text, "t.fio", "t", &env, &ImportOptions { sections: vec!["b".into()], ..Default::default() }).unwrap();
        assert_eq!(i.profile.phases[0].groups[0].name, "b");
        let e =
            import(text, "t.fio", "t", &env, &ImportOptions { sections: vec!["zz".into()], ..Default::default() }).unwrap_err().to_string();
        assert!(e.contains("--section names none of a, b"), "{e}");
    }

    #[test]
    fn the_profile_round_trips_through_toml() {
        let text = "[global]\nioengine=io_uring\ndirect=1\nsize=8m\nruntime=3\ntime_based\nrandseed=7\nfilename=/dev/shm/x:/dev/shm/y\n[a]\nrw=randrw\nbssplit=4k/50:8k/50\niodepth=8\nrate_iops=\n[b]\nstonewall\nrw=read\nbs=1m\noffset=4k\n";
        let text = text.replace("rate_iops=\n", "");
        let e = refused(&text);
        assert!(e.contains("offset"), "offset differs between jobs: {e}");
        let text = text.replace("offset=4k\n", "");
        let p = map(&text).profile;
        let back = profile::parse(&profile::to_toml(&p), "round trip").unwrap();
        assert_eq!(p, back);
        assert_eq!(p.phases.len(), 2);
        assert_eq!(p.targets.len(), 2);
    }

    #[test]
    fn lenient_refusal_names_only_what_blocks() {
        // unlink changes no figure (lenient would skip it); jobs of a phase starting apart block.
        let text = "[a]\nsize=1m\nunlink=1\n[b]\nsize=1m\nstartdelay=5\n";
        let lenient = ImportOptions { lenient: true, ..Default::default() };
        let e = import(text, "t.fio", "t", &env, &lenient).unwrap_err().to_string();
        assert!(e.contains("line 6: startdelay=5: job 'b' starts 5s after the phase while job 'a' starts after 0s"), "{e}");
        assert!(!e.contains("unlink"), "lenient names only what blocks: {e}");
        assert!(e.contains("--fio-lenient cannot skip them"), "{e}");
        // Without --fio-lenient both are named, and the hint says what lenient would skip.
        let e = refused(text);
        assert!(e.contains("line 3: unlink=1") && e.contains("line 6: startdelay=5"), "{e}");
        // A delay every job of the phase shares starts the phase later in fio: a note, nothing refused.
        let i = map("[global]\nstartdelay=2\nsize=1m\n[a]\n[b]\nstonewall\nstartdelay=1\n");
        assert!(i.notes.iter().any(|n| n.starts_with("startdelay=2s (job 'a'): every job of phase a waits alike")), "{:?}", i.notes);
        assert!(i.notes.iter().any(|n| n.starts_with("startdelay=1s (job 'b'): every job of phase b waits alike")), "{:?}", i.notes);
    }

    #[test]
    fn options_of_the_corpus_that_lunmark_runs_as_fio_does() {
        // cpumask is cpus_allowed as a bit mask.
        let p = map("[a]\nfilename=/dev/shm/x\nsize=1m\ncpumask=0x0a\n").profile;
        assert_eq!(p.cpus.map(|c| c.0), Some(vec![1, 3]));
        assert_eq!(map("[a]\nfilename=/dev/shm/x\nsize=1m\ncpumask=1\n").profile.cpus.map(|c| c.0), Some(vec![0]));
        assert!(refused("[a]\nsize=1m\ncpumask=0\n").contains("line 3: cpumask=0: '0' is not a CPU mask"));
        assert!(refused("[a]\nsize=1m\ncpumask=1\ncpus_allowed=0\n").contains("give one of cpus_allowed and cpumask"));
        // Output switches and fio's defaults are accepted with a note each.
        let i = map("[a]\nsize=1m\nrw=randwrite\ndisable_slat=1\ndisable_bw=1\nsync=0\noverwrite=1\nverify_fatal=0\n");
        for key in ["disable_slat=1", "disable_bw=1", "sync=0", "overwrite=1", "verify_fatal=0"] {
            assert!(i.notes.iter().any(|n| n.starts_with(key)), "no note for {key}: {:?}", i.notes);
        }
        // What lunmark lacks is refused, naming what to use.
        assert!(refused("[a]\nsize=1m\nsync=1\n").contains("line 3: sync=1: lunmark does not open files with O_SYNC"));
        let i = map("[a]\nsize=1m\nrw=write\noverwrite=0\nfallocate=none\n");
        assert!(i.notes.iter().any(|n| n.starts_with("overwrite=0 (line 4): fio's default")), "{:?}", i.notes);
        assert!(i.notes.iter().any(|n| n.starts_with("fallocate=none (line 5)")), "{:?}", i.notes);
        map("[a]\nsize=1m\nrw=read\noverwrite=0\n");
        // buffer_compress_chunk: 0 or the write size is lunmark's layout; another is refused naming them.
        let i = map("[a]\nsize=1m\nrw=write\nbs=4k\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4k\n");
        assert!(i.profile.data.is_some() && i.notes.iter().any(|n| n.starts_with("buffer_compress_chunk=4k")), "{:?}", i.notes);
        map("[a]\nsize=1m\nrw=write\nbs=4k\nbuffer_compress_percentage=50\nbuffer_compress_chunk=0\n");
        let e = refused("[a]\nsize=1m\nrw=write\nbs=128k\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4096\n");
        assert!(
            e.contains("line 6: buffer_compress_chunk=4096: fio repeats its random and compressible parts every 4096 bytes")
                && e.contains("buffer_compress_chunk=0 (or 131072)"),
            "{e}"
        );
        // filename_format names each clone's file as fio does.
        let p = map("[j]\nfilename_format=file$jobnum.$filenum\ndirectory=/dev/shm/d\nsize=1m\nnumjobs=2\n").profile;
        assert_eq!(p.targets, vec!["/dev/shm/d/file0.0".to_string(), "/dev/shm/d/file1.0".to_string()]);
        assert!(refused("[j]\nfilename_format=f$clientuid\nsize=1m\n").contains("line 2: filename_format=f$clientuid: lunmark fills in"));
        // buffer_pattern: the compressible part's content, with buffer_compress_percentage; alone refused.
        let i = map("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=66\nbuffer_pattern=0xdeadbeef\n");
        assert!(i.notes.iter().any(|n| n.starts_with("buffer_pattern=0xdeadbeef")), "{:?}", i.notes);
        assert!(refused("[a]\nsize=1m\nrw=write\nbuffer_pattern=0xdeadbeef\n")
            .contains("line 4: buffer_pattern=0xdeadbeef: fio writes this pattern in every write"));
        // rw=read:N skips and rw=randread:N runs, onto the access line (fio 3.33's write_iolog).
        let i = map("[a]\nsize=1m\nbs=4k\nrw=read:8k\n");
        let l = &i.profile.phases[0].groups[0].access[0];
        assert_eq!((l.skip, l.random_run), (Some(Bytes(8192)), None));
        assert!(
            i.notes.iter().any(|n| n.starts_with("rw=read:8k (line 4): each sequential I/O leaves a hole of 8k after it")),
            "{:?}",
            i.notes
        );
        assert_eq!(i.profile.ios, Some(86), "fio reads 86 blocks of a 1m file with rw=read:8k bs=4k");
        let l = map("[a]\nsize=1m\nrw=randread:8\nrw_sequencer=identical\n").profile.phases[0].groups[0].access[0].clone();
        assert_eq!((l.skip, l.random_run, l.random_run_same), (None, Some(8), true));
    }

    /// `rw=...:N` as profile keys: they read back the same, and bad values are refused naming the field.
    #[test]
    fn skips_and_random_runs_round_trip_through_the_profile() {
        let p = map("[a]\nsize=1m\nrw=randread:8\nrw_sequencer=identical\n").profile;
        let back = profile::parse(&profile::to_toml(&p), "t").unwrap();
        assert_eq!(back.phases[0].groups[0].access[0], p.phases[0].groups[0].access[0]);
        let toml = profile::to_toml(&p);
        assert!(toml.contains("random_run = 8") && toml.contains("random_run_same = true"), "{toml}");
        let e = profile::parse(&toml.replace("random_run = 8", "random_run = 0"), "t").unwrap_err().to_string();
        assert!(e.contains("access line 1 random_run"), "{e}");
        let e = profile::parse(&toml.replace("random_run = 8\n", ""), "t").unwrap_err().to_string();
        assert!(e.contains("random_run_same is set without random_run"), "{e}");
        assert!(refused("[a]\nsize=1m\nrw=read:-8k\n").contains("line 3: rw=read:-8k: '-8k' moves fio backwards"));
        assert!(refused("[a]\nsize=1m\nrw=randread:x\n").contains("'x' is not a number of I/Os per random offset"));
        assert!(
            refused("[a]\nsize=1m\nrw=randread:2\nrw_sequencer=odd\n").contains("line 4: rw_sequencer=odd: 'odd' is not an rw_sequencer")
        );
        // percentile_list: the percentiles reported; refused when fio would refuse it.
        let p = map("[a]\nsize=1m\npercentile_list=1:50:99.5\n").profile;
        assert_eq!(p.percentiles, vec![1.0, 50.0, 99.5]);
        assert!(map("[a]\nsize=1m\npercentile_list=1:50:99.5\n")
            .notes
            .iter()
            .any(|n| n.starts_with("percentile_list=1:50:99.5 (line 3): the result reports")));
        assert_eq!(profile::parse(&profile::to_toml(&p), "t").unwrap().percentiles, vec![1.0, 50.0, 99.5]);
        assert!(refused("[a]\nsize=1m\npercentile_list=50:101\n").contains("line 3: percentile_list=50:101: '101' is not a percentile"));
        let many = (1..=21).map(|i| i.to_string()).collect::<Vec<_>>().join(":");
        assert!(refused(&format!("[a]\nsize=1m\npercentile_list={many}\n")).contains("21 percentiles: fio and lunmark take at most 20"));
        assert!(refused("[a]\nsize=1m\npercentile_list=99\n[b]\nsize=1m\n").contains("percentile_list"));
        // offset=0% is the start of the file, as in fio.
        assert_eq!(fio_job::parse_percent("0%"), Some(Ok(0.0)));
        assert!(refused("[a]\nsize=1m\nserialize_overlap=1\n").contains("add verify=crc32c"));
        let i = map("[a]\nsize=1m\nrw=randrw\nverify=md5\nserialize_overlap=1\n");
        assert!(i.profile.verify && i.notes.iter().any(|n| n.starts_with("serialize_overlap=1")), "{:?}", i.notes);
        // do_verify=0: fio checks nothing, and neither does lunmark.
        assert!(!map("[a]\nsize=1m\nrw=randrw\nverify=md5\ndo_verify=0\n").profile.verify);
        assert!(map("[a]\nsize=1m\nrw=randrw\nverify=md5\ndo_verify=1\n").profile.verify);
        // A job that only writes checks nothing in lunmark (fio reads it back): refused, or with --journal a note.
        let e = refused("[w]\nsize=1m\nrw=write\nverify=crc32c\n");
        assert!(
            e.contains("line 4: verify=crc32c: job 'w' only writes")
                && e.contains("--journal FILE, then `lunmark verify TARGET --journal FILE`"),
            "{e}"
        );
        assert!(!map("[w]\nsize=1m\nrw=write\nverify=crc32c\ndo_verify=0\n").profile.verify);
        let journal = ImportOptions { journal: true, ..Default::default() };
        let i = import("[w]\nsize=1m\nrw=randwrite\nverify=md5\n", "t.fio", "t", &env, &journal).unwrap();
        assert!(i.profile.verify && i.notes.iter().any(|n| n.contains("lunmark records every write in the --journal")), "{:?}", i.notes);
        // fio reads `100%%` (a template's escaped sign) as 100%.
        assert_eq!(fio_job::parse_percent("100%%"), Some(Ok(100.0)));
        // fio 3.33 reads bs=4k-512k as 4k; lunmark says so and names bsrange.
        let e = refused("[a]\nsize=1m\nblocksize=4k-512k\n");
        assert!(
            e.contains("line 3: blocksize=4k-512k: '4k-512k' is not one size: fio 3.33 reads it as 4k") && e.contains("bsrange=4k-512k"),
            "{e}"
        );
    }
}
