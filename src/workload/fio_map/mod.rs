//! fio job files, the meaning: each job section becomes a worker group, jobs
//! that run together in fio become the groups of one phase, and `stonewall` /
//! `wait_for` start the next phase. Options are turned into lunmark's profile
//! (docs/fio.md has the table). Every option lunmark does not apply is refused,
//! all of them in one message with their lines; with `lenient` the ones that
//! can be left out are skipped with a warning each instead.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use thiserror::Error;

use super::fio_job::{self, parse_bool, parse_size, parse_time, split_filenames, JobSection, Setting, SyntaxError};
use super::profile::{self, Phase, Profile, ProfileError};
use super::spec::{AccessLine, EngineChoice, WorkerGroup};
use crate::units::Bytes;

mod access;
mod assemble;
mod engine;
mod job;
mod logs;
mod options;
mod pace;
mod placement;
mod settings;
#[cfg(test)]
mod tests;

use access::*;
use assemble::*;
use engine::*;
use job::*;
use logs::*;
pub use logs::{FioLog, LogKind};
use options::*;
use pace::*;
use placement::*;
use settings::Settings;

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
        .map_err(|source| FioError::Profile { origin: origin.into(), source: Box::new(at_the_job(source, &jobs)) })?;
    let logs = fio_logs(&chosen, &jobs, &profile, &mut problems, &mut notes);
    let (skippable, fatal): (Vec<Problem>, Vec<Problem>) = problems.0.into_iter().partition(|p| p.skippable);
    if !fatal.is_empty() || (!skippable.is_empty() && !options.lenient) {
        let all = refusal(fatal, skippable, options.lenient);
        return Err(FioError::Refused { origin: origin.into(), problems: all });
    }
    let skipped = skipped.into_iter().chain(skippable.iter().map(|p| format!("{origin}, {p} (skipped: --fio-lenient)"))).collect();
    Ok(Imported { logs, profile, notes: notes.0, skipped })
}

/// A line of the TOML lunmark generated means nothing to the job file's
/// author: the error names the section line of the phase's first job instead
/// (a check fio_map does not make itself; the values it knows are checked on
/// their own lines before this).
fn at_the_job(e: ProfileError, jobs: &[Job]) -> ProfileError {
    match e {
        ProfileError::Invalid { origin, phase, error, .. } => {
            let line = jobs.iter().find(|j| phase.split('+').any(|p| p == j.name)).map(|j| j.line);
            ProfileError::Invalid { origin, line, phase, error }
        }
        e => e,
    }
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
