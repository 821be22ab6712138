//! Profiles: named workloads in a TOML file a user can read, save, edit and run.
//! A profile holds one or more phases (each a point of the run, in order), each
//! phase a list of worker groups with their access specifications, plus run
//! settings (ramp, time, sweeps, rate, pass criteria). The built-in profiles are
//! TOML files compiled into the binary, so `lunmark profiles show NAME` prints
//! exactly the text that `--profile-file` reads back.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::reduction::{DataKeys, Texts};
use super::spec::{opt_duration_text, SpecError, WorkerGroup, WorkloadSpec};
use crate::units::Bytes;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    pub description: String,
    /// Where the workload comes from (which paper, which table).
    #[serde(default)]
    pub source: String,
    #[serde(default, with = "opt_duration_text", skip_serializing_if = "Option::is_none")]
    pub ramp: Option<Duration>,
    #[serde(default, with = "opt_duration_text", skip_serializing_if = "Option::is_none")]
    pub time: Option<Duration>,
    /// Region length on each target (and the size of files lunmark creates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// Sweeps, as on the command line: "qd=2,4,8".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sweep: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Total issue rate, I/Os per second, spread over the groups that follow none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Jetstress-style rate: mailboxes x IOPS per mailbox = database IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mailboxes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_per_mailbox: Option<f64>,
    /// Pass criteria, as `--pass` takes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<String>,
    /// A knee search's bounds, as `--sla` takes them (a fio job's latency_target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<String>,
    /// Where `sla` was written when a fio job file's `latency_target` set it
    /// ("FILE, job 'j', line 8: latency_target=2ms"): a refusal of the search
    /// names that line, not a --sla the user never typed.
    #[serde(skip)]
    pub sla_origin: Option<String>,
    /// Measure this many I/Os per worker instead of a time (as --ios).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ios: Option<u64>,
    /// The profile's own targets (a profile imported from a fio job file names
    /// its files): used when no --target is given, and replaced by --target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// Start of the region on each target (as --offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<Bytes>,
    /// Seed of the offset/size stream (as --seed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// I/O engine for files and devices (as --engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<super::spec::EngineChoice>,
    /// Go through the page cache (as --buffered).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub buffered: bool,
    /// A kernel thread polls the submission queue (as --sqpoll[=CPU]): "any" or a CPU number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll: Option<super::polling::SqPoll>,
    /// Poll the device for completions (as --poll).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub poll: bool,
    /// Pin the workers to these CPUs (as --cpus): "0-3,8".
    #[serde(default, with = "super::cpus::opt_list_text", skip_serializing_if = "Option::is_none")]
    pub cpus: Option<super::cpus::CpuList>,
    /// How pinned workers share them (as --cpus-policy): "shared" or "split".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_policy: Option<super::cpus::CpuPolicy>,
    /// Check every byte read against what was written (as --verify).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    // Distribution, think time and arrivals for the whole profile (issue 15).
    /// Where random I/Os land, for every access line that sets none (as --dist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<super::dist::Distribution>,
    /// Pause of every worker after `thinktime_blocks` I/Os (as --thinktime).
    #[serde(default, with = "super::serde_text::opt_duration_unit_text", skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_blocks: Option<u32>,
    /// With a rate: fixed or poisson (as --arrivals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<super::timing::Arrivals>,
    /// Replay a recorded trace instead of generating I/Os (as --replay and its flags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<super::replay::ReplaySettings>,
    /// Compressible and duplicate written data (as --compress, --dedupe, --dedupe-unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<super::reduction::DataReduction>,
    /// `[data]`'s keys as the file writes them, and the file: the plan names
    /// them so when it checks the data settings with the flags applied.
    #[serde(skip)]
    pub data_written: DataKeys,
    /// End each point once steady (as --steady and --steady-*).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<super::steady::SteadySpec>,
    /// Run the points as rounds until one point is steady (the SNIA PTS structure, `pts-iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<super::rounds::Rounds>,
    /// A sync every N writes per worker and target: fsync or fdatasync on
    /// files, a cache flush on devices (as --fsync, --fdatasync, --flush; one of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<u64>,
    /// Latency percentiles to report besides lunmark's own (fio's
    /// `percentile_list`): percent, above 0 and at most 100.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
    /// Jetstress-style thread tuning (`--tune`): the group whose workers are
    /// the threads and the latency targets they are tuned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<Tune>,
    pub phases: Vec<Phase>,
}

/// A profile's `[tune]`: what `--tune` searches and the bounds it holds by default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tune {
    /// The group whose workers are the threads tuned; its I/O is the transactional I/O.
    pub group: String,
    /// The latency targets, in --pass's grammar (--sla replaces them).
    pub bounds: String,
}

impl Profile {
    /// The sync its `fsync`, `fdatasync` or `flush` key asks for.
    pub fn sync(&self) -> Result<Option<super::ops::SyncEvery>, String> {
        super::ops::sync_of(self.fsync, self.fdatasync, self.flush).map_err(|e| format!("profile '{}': {}", self.name, e.replace("--", "")))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub name: String,
    pub groups: Vec<WorkerGroup>,
}

/// The built-in profiles: (name, TOML text).
pub const BUILTIN: &[(&str, &str)] = &[
    ("quick", include_str!("builtin/quick.toml")),
    ("exchange", include_str!("builtin/exchange.toml")),
    ("jetstress", include_str!("builtin/jetstress.toml")),
    ("oltp-db", include_str!("builtin/oltp-db.toml")),
    ("oltp-redo", include_str!("builtin/oltp-redo.toml")),
    ("oltp-archive", include_str!("builtin/oltp-archive.toml")),
    ("data-warehouse", include_str!("builtin/data-warehouse.toml")),
    ("database", include_str!("builtin/database.toml")),
    ("fcoe-mix", include_str!("builtin/fcoe-mix.toml")),
    ("bandwidth", include_str!("builtin/bandwidth.toml")),
    ("line-rate", include_str!("builtin/line-rate.toml")),
    ("max-iops", include_str!("builtin/max-iops.toml")),
    ("service-demand", include_str!("builtin/service-demand.toml")),
    ("pts-iops", include_str!("builtin/pts-iops.toml")),
];

#[derive(Debug, Error)]
pub enum ProfileError {
    #[error("unknown profile '{name}'{}; `lunmark profiles` lists them all", suggestion.as_ref().map(|s| format!(": did you mean '{s}'?")).unwrap_or_default())]
    Unknown { name: String, suggestion: Option<String> },
    #[error("{origin}, line {line}: {message}")]
    Syntax { origin: String, line: usize, message: String },
    #[error("{origin}{}: phase '{phase}': {error}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Invalid { origin: String, line: Option<usize>, phase: String, error: SpecError },
    #[error("{origin}: {message}")]
    Settings { origin: String, message: String },
    #[error("{origin}: the profile has no phases: add at least one [[phases]] with a [[phases.groups]]")]
    NoPhases { origin: String },
    /// Not a regular file within the limit, or unreadable (`input_path`).
    #[error(transparent)]
    Read(#[from] crate::input_path::InputError),
}

/// A built-in profile by name.
pub fn builtin(name: &str) -> Result<Profile, ProfileError> {
    match BUILTIN.iter().find(|(n, _)| *n == name) {
        Some((n, text)) => parse(text, &format!("built-in profile '{n}'")),
        None => Err(ProfileError::Unknown { name: name.to_string(), suggestion: nearest(name, BUILTIN.iter().map(|(n, _)| *n)) }),
    }
}

pub fn load_file(path: &Path) -> Result<Profile, ProfileError> {
    let text = crate::input_path::read_to_string(path, &crate::input_path::PROFILE)?;
    parse(&text, &path.display().to_string())
}

/// Parses and checks a profile. `origin` names it in errors (a path, or "built-in profile 'x'").
/// Most percentiles a profile may ask for (fio's `percentile_list` takes 20).
pub const MAX_PERCENTILES: usize = 20;

pub fn parse(text: &str, origin: &str) -> Result<Profile, ProfileError> {
    let mut profile: Profile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        ProfileError::Syntax { origin: origin.to_string(), line, message: e.message().trim().to_string() }
    })?;
    if profile.phases.is_empty() {
        return Err(ProfileError::NoPhases { origin: origin.to_string() });
    }
    names_bounded(&profile).map_err(|message| ProfileError::Settings { origin: origin.to_string(), message })?;
    if let Err(message) = profile.sync() {
        return Err(ProfileError::Settings { origin: origin.to_string(), message });
    }
    // Named by the key here: the workload's own check would say "run.ios".
    if profile.ios == Some(0) {
        let message = "ios = 0: give at least 1 I/O per worker to measure (or remove ios and set time, for example time = \"10s\")".into();
        return Err(ProfileError::Settings { origin: origin.to_string(), message });
    }
    if profile.time.is_some_and(|t| t.is_zero()) {
        let message = "time = \"0s\": the measured time must be above 0 (for example time = \"10s\")".into();
        return Err(ProfileError::Settings { origin: origin.to_string(), message });
    }
    if let (Some(policy), None) = (profile.cpus_policy, &profile.cpus) {
        let message = format!("cpus_policy = \"{policy}\" says how workers share pinned CPUs: add cpus = \"LIST\" (for example \"0-3\")");
        return Err(ProfileError::Settings { origin: origin.to_string(), message });
    }
    if let Some(p) = profile.percentiles.iter().find(|p| !(**p > 0.0 && **p <= 100.0)) {
        let message = format!("percentiles = {p}: each percentile must be above 0 and at most 100 (for example [95.0, 99.5])");
        return Err(ProfileError::Settings { origin: origin.to_string(), message });
    }
    if profile.percentiles.len() > MAX_PERCENTILES {
        let message = format!("percentiles: {} given, at most {MAX_PERCENTILES}", profile.percentiles.len());
        return Err(ProfileError::Settings { origin: origin.to_string(), message });
    }
    // The data settings are checked by the plan, once the flags are applied over them.
    profile.data_written = data_keys(text, origin);
    for phase in &profile.phases {
        // Check each phase as a workload on stand-in targets; real targets come later.
        let ntargets = phase.groups.iter().flat_map(|g| g.targets.iter()).max().map(|m| m + 1).unwrap_or(1).max(profile.targets.len());
        // Data reduction and steady state are checked by the plan, where the flags and the run length are known.
        let mut spec = WorkloadSpec::plain(vec!["mem:1m".into(); ntargets], phase.groups.clone());
        // offset_increment splits the region: checked against the profile's size (the plan checks it again with --size).
        spec.size = profile.size;
        if let Err(error) = spec.validate() {
            let line = locate(text, &phase.name, &error);
            return Err(ProfileError::Invalid { origin: origin.to_string(), line, phase: phase.name.clone(), error });
        }
    }
    Ok(profile)
}

/// The profile's names (its own, its phases', its groups') are stored with
/// every result: each is bounded, named by its key when refused.
fn names_bounded(p: &Profile) -> Result<(), String> {
    use crate::units::{check_length, MAX_NAME_CHARS};
    check_length("name", &p.name, MAX_NAME_CHARS)?;
    for (i, ph) in p.phases.iter().enumerate() {
        check_length(&format!("phases[{i}].name"), &ph.name, MAX_NAME_CHARS)?;
        for (k, g) in ph.groups.iter().enumerate() {
            check_length(&format!("phases[{i}].groups[{k}].name"), &g.name, MAX_NAME_CHARS)?;
        }
    }
    Ok(())
}

/// The keys of `[data]` as the file writes them (`dedupe_unit = "4k"` as
/// `"4k"`), so that a refusal names them as the user wrote them.
fn data_keys(text: &str, origin: &str) -> DataKeys {
    // A second parse of the whole file only where it has a [data] table
    // (written `[data]` or `data = {...}`): parsing is most of the time a
    // profile of many phases takes to plan.
    let has_data = text.lines().any(|l| l.trim_start().starts_with("[data") || l.trim_start().starts_with("data"));
    let table: Option<toml::Table> = if has_data { toml::from_str(text).ok() } else { None };
    let keys = table.as_ref().and_then(|t| t.get("data")).and_then(|d| d.as_table());
    let as_written = |key: &str| keys.and_then(|t| t.get(key)).map(|v| v.to_string());
    DataKeys {
        origin: origin.to_string(),
        texts: Texts { compress: as_written("compress"), dedupe: as_written("dedupe"), dedupe_unit: as_written("dedupe_unit") },
    }
}

/// The profile as TOML that `parse` reads back to the same profile.
pub fn to_toml(profile: &Profile) -> String {
    toml::to_string(profile).expect("a profile always serialises to TOML")
}

fn line_of(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].matches('\n').count() + 1
}

/// The line a validation error points at: the first line naming the offending
/// field after the phase's (and group's) name.
fn locate(text: &str, phase: &str, error: &SpecError) -> Option<usize> {
    let field = match error {
        SpecError::Zero { field } | SpecError::TooLarge { field, .. } | SpecError::BadPercent { field, .. } => field.clone(),
        SpecError::SharesNot100 { group, .. } | SpecError::NoLines { group } => format!("group '{group}' share"),
        SpecError::BadRate { group, .. } | SpecError::BadFollow { group, .. } | SpecError::BadRatio { group, .. } => {
            format!("group '{group}' follow")
        }
        SpecError::BadTargetIndex { group, .. } => format!("group '{group}' targets"),
        _ => return None,
    };
    let group = field.split('\'').nth(1);
    let key = field.rsplit(' ').next()?;
    let lines: Vec<&str> = text.lines().collect();
    let name_line = |name: &str, from: usize| {
        (from..lines.len()).find(|&i| {
            let l = lines[i].trim();
            l.starts_with("name") && l.contains(&format!("\"{name}\""))
        })
    };
    let mut at = name_line(phase, 0)?;
    if let Some(g) = group {
        at = name_line(g, at).unwrap_or(at);
    }
    (at..lines.len()).find(|&i| lines[i].trim_start().starts_with(key)).map(|i| i + 1)
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let candidates: Vec<&str> = candidates.collect();
    let close = candidates
        .iter()
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, c)| *d <= 3.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_string());
    // A name cut short ("fcoe" for "fcoe-mix") is far by edit distance but
    // plainly meant: the one candidate it begins is the suggestion.
    let mut starting = candidates.iter().filter(|c| name.len() >= 2 && c.starts_with(name));
    match (starting.next(), starting.next()) {
        (Some(only), None) => Some(only.to_string()),
        _ => close,
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != *cb) as usize).min(row[j] + 1).min(row[j + 1] + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_round_trips_through_toml() {
        for (name, _) in BUILTIN {
            let p = builtin(name).unwrap();
            assert_eq!(&p.name, name);
            assert!(!p.source.is_empty(), "{name} names its source");
            let back = parse(&to_toml(&p), "round trip").unwrap();
            assert_eq!(p, back, "{name}");
        }
    }

    #[test]
    fn trim_shares_and_syncs_round_trip_through_toml() {
        let mut p = builtin("quick").unwrap();
        p.fdatasync = Some(8);
        p.phases[0].groups[0].access[0].read = 50.0;
        p.phases[0].groups[0].access[0].trim = 25.0;
        let text = to_toml(&p);
        assert!(text.contains("fdatasync = 8") && text.contains("trim = 25.0"), "{text}");
        let back = parse(&text, "round trip").unwrap();
        assert_eq!(p, back);
        assert_eq!(back.sync().unwrap().map(|s| s.every), Some(8));
        let e = parse(&text.replace("trim = 25.0", "trim = 60.0"), "t.toml").unwrap_err().to_string();
        assert!(e.contains("50% + 60%"), "{e}");
    }

    #[test]
    fn unknown_names_get_the_nearest_match() {
        let e = builtin("exchnage").unwrap_err().to_string();
        assert!(e.contains("did you mean 'exchange'"), "{e}");
        let e = builtin("zzzzzzzzzzzz").unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn a_name_cut_short_suggests_the_one_profile_it_begins() {
        let e = builtin("fcoe").unwrap_err().to_string();
        assert!(e.contains("did you mean 'fcoe-mix'"), "{e}");
        let e = builtin("service").unwrap_err().to_string();
        assert!(e.contains("did you mean 'service-demand'"), "{e}");
    }

    #[test]
    fn bad_profiles_name_line_field_and_value() {
        let text = builtin_text("quick").replacen("read = 100.0", "read = 150.0", 1);
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("my.toml, line 18") && e.contains("read is 150"), "{e}");
        let text = builtin_text("quick").replacen("qd = 32", "qd = 32\nqueue = 4", 1);
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("line 14") && e.contains("unknown field `queue`"), "{e}");
        let text = builtin_text("quick").replacen("share = 100.0", "share = 60.0", 1);
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("add up to 60%"), "{e}");
        let text = builtin_text("quick").replacen("bs = \"4k\"", "bs = \"4q\"", 1);
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("line 17") && e.contains("'4q' is not a size"), "{e}");
        // A zero run length names the profile's key, not the workload's inner name (run.ios, run.time).
        let text = format!("ios = 0\n{}", builtin_text("quick"));
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.starts_with("my.toml: ios = 0:") && !e.contains("run.ios"), "{e}");
        let text = builtin_text("quick").replacen("time = \"5s\"", "time = \"0s\"", 1);
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.starts_with("my.toml: time = \"0s\":") && !e.contains("run.time"), "{e}");
        let text = builtin_text("quick").replacen("qd = 32", "qd = 0", 1);
        let e = parse(&text, "my.toml").unwrap_err().to_string();
        assert!(e.contains("line 13") && e.contains("qd must be greater than 0"), "{e}");
    }

    #[test]
    fn the_data_keys_are_kept_as_written_and_checked_later_with_the_flags() {
        let with =
            |data: &str| parse(&builtin_text("quick").replacen("[[phases]]", &format!("[data]\n{data}\n\n[[phases]]"), 1), "my.toml");
        // A unit beside no reduction is not refused here: a flag may still give a share.
        let p = with("compress = 0.0\ndedupe = 0\ndedupe_unit = \"8k\"").unwrap();
        assert_eq!(p.data_written.origin, "my.toml");
        let t = &p.data_written.texts;
        assert_eq!((t.compress.as_deref(), t.dedupe.as_deref(), t.dedupe_unit.as_deref()), (Some("0.0"), Some("0"), Some("\"8k\"")));
        let p = with("dedupe_unit = \"4k\"").unwrap();
        assert_eq!((p.data_written.texts.dedupe.as_deref(), p.data_written.texts.dedupe_unit.as_deref()), (None, Some("\"4k\"")));
    }

    #[test]
    fn distributions_think_time_and_arrivals_round_trip_and_are_checked() {
        let text = builtin_text("quick")
            .replacen(
                "[[phases]]",
                "dist = \"zipf:0.9\"\nthinktime = \"2ms\"\nthinktime_blocks = 4\narrivals = \"poisson\"\n\n[[phases]]",
                1,
            )
            .replacen("random = 100.0", "random = 100.0\ndist = \"zoned:80/20:20/80:scattered\"\ndelay = \"5ms\"\nburst = 3", 1);
        let p = parse(&text, "my.toml").unwrap();
        let line = &p.phases[0].groups[0].access[0];
        assert_eq!(line.dist.as_ref().unwrap().to_string(), "zoned:80/20:20/80:scattered");
        assert_eq!((line.delay, line.burst), (Some(Duration::from_millis(5)), Some(3)));
        assert_eq!(p.dist.as_ref().unwrap().to_string(), "zipf:0.9");
        assert_eq!(parse(&to_toml(&p), "round trip").unwrap(), p);
        let e = parse(&text.replacen("delay = \"5ms\"\n", "", 1), "my.toml").unwrap_err().to_string();
        assert!(e.contains("burst is set without its pause"), "{e}");
        let e = parse(&text.replacen("zoned:80/20:20/80", "zoned:80/20", 1), "my.toml").unwrap_err().to_string();
        assert!(e.contains("my.toml, line") && e.contains("must add up to 100%"), "{e}");
    }

    /// Data reduction, steady state and rounds are profile keys that read back the same.
    #[test]
    fn data_steady_and_rounds_round_trip_through_toml() {
        // The tables go before the phases (after them, TOML would take them for the last phase's).
        let tables =
            "[data]\ncompress = 50.0\ndedupe = 30.0\ndedupe_unit = \"8k\"\n\n[steady]\nmetric = \"bw\"\nwindow = 3\nround = \"2s\"\n\n\
                      [rounds]\nwatch = \"read=0 bs=4k\"\nmax = 7\n\n[[phases]]";
        let text = builtin_text("quick").replacen("[[phases]]", tables, 1);
        let p = parse(&text, "t.toml").unwrap();
        let d = p.data.as_ref().unwrap();
        assert_eq!((d.compress, d.dedupe, d.dedupe_unit), (50.0, 30.0, Some(Bytes(8192))));
        let s = p.steady.as_ref().unwrap();
        assert_eq!((s.window, s.round.as_secs(), s.range), (3, 2, 20.0));
        let r = p.rounds.as_ref().unwrap();
        assert_eq!((r.max, r.window, r.purge), (7, 5, false));
        assert_eq!(parse(&to_toml(&p), "again").unwrap(), p);
    }

    fn builtin_text(name: &str) -> String {
        BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1.to_string()
    }
}
