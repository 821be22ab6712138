//! `lunmark run`'s flags turned into a request: the profile they start from,
//! each flag typed and checked (naming the flag and the value as typed), the
//! run's context (safety, power, verification, cache), and what a plan cannot
//! use refused.

use anyhow::{Context, Result};

use super::flags::*;
use crate::metrics::power::PowerRequest;
use crate::results::repeats::Pick;
use crate::run::plan::{Overrides, PlanRequest};
use crate::run::request::RunRequest;
use crate::run::{RunContext, RunPlan};
use crate::targets::{SafetyFlags, Target};
use crate::units::{parse_duration, parse_percent, parse_size, Bytes};
use crate::workload::fio_map;
use crate::workload::profile::{self, Phase, Profile};
use crate::workload::replay::ReplaySettings;
use crate::workload::spec::{MAX_BS, MAX_QD};
use crate::workload::sweep::{self, Sweep};
use crate::workload::{AccessLine, RunLength, WorkerGroup};

impl RunArgs {
    pub fn default_run() -> Self {
        RunArgs { pick: crate::results::model::Pick::Mean, ..RunArgs::default() }
    }

    /// Where the run's JSON goes and in which shape, from --json and --output-format.
    /// The telemetry flags (--live-json, --metrics-listen), with where the JSON result goes.
    pub(in crate::cli) fn telemetry<'a>(&'a self, json: Option<&'a str>) -> crate::cli::telemetry::Asked<'a> {
        crate::cli::telemetry::Asked {
            live_json: self.live_json.as_deref(),
            metrics_listen: self.metrics_listen.as_deref(),
            detail: self.detail,
            json,
        }
    }

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
    pub(in crate::cli) fn base_profile(&self) -> Result<(Profile, Option<String>, Vec<String>)> {
        self.base_profile_and_logs().map(|(p, n, t, _)| (p, n, t))
    }

    /// `base_profile`, and the fio-format logs a fio job file asks for.
    #[allow(clippy::type_complexity)]
    pub(in crate::cli) fn base_profile_and_logs(&self) -> Result<(Profile, Option<String>, Vec<String>, Vec<fio_map::FioLog>)> {
        if let Some(path) = &self.fio {
            let options = fio_map::ImportOptions {
                sections: self.section.clone(),
                lenient: self.fio_lenient,
                run_length_given: self.time.is_some() || self.ios.is_some(),
                targets: self.targets.clone(),
                journal: self.journal.is_some(),
                sla: self.sla.clone(),
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
    pub(in crate::cli) fn request_from(&self, profile: Profile, profile_name: Option<String>, targets: Vec<String>) -> Result<RunRequest> {
        // CHAP secrets leave the URIs here, before anything can record them.
        let targets: Vec<String> = targets.iter().map(|t| crate::targets::credentials::hide(t)).collect();
        let mut profile = Profile { targets: profile.targets.iter().map(|t| crate::targets::credentials::hide(t)).collect(), ..profile };
        let tune = self.tuning(&mut profile, profile_name.as_deref())?;
        let targets_given = !targets.is_empty();
        let targets = self.parsed_targets(if targets_given { &targets } else { &profile.targets })?;
        let (sweeps, bs) = self.sweeps_and_bs()?;
        self.check_numbers(bs, &profile, tune.is_some())?;
        let overrides = self.overrides(bs, tune.is_some())?;
        check_overrides(&overrides, &profile)?;
        let pick: Pick = self.pick;
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
            sla: self.sla.clone(),
            curve: self.curve.clone(),
            curve_stop: self.curve_stop.clone(),
            tune,
        };
        Ok(RunRequest { plan, replay, run_given, ramp_given, context: self.context()?, json: self.json.clone() })
    }

    /// The targets, parsed once here (the plan and the run match on the
    /// parsed URI); `--buffered` refused for a target with no page cache.
    fn parsed_targets(&self, given: &[String]) -> Result<Vec<Target>> {
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
        Ok(targets)
    }

    /// The sweeps: `--sweep`'s, and `--bs LIST` as a sweep over transfer
    /// sizes (else `--bs`'s one size).
    fn sweeps_and_bs(&self) -> Result<(Vec<Sweep>, Option<Bytes>)> {
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
        Ok((sweeps, bs))
    }

    /// The numbers refused by their flag (the plan's own check could only
    /// name the group and access line).
    fn check_numbers(&self, bs: Option<Bytes>, profile: &Profile, tuned: bool) -> Result<()> {
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
        // A mailbox does a fraction of an I/O per second (Jetstress's usual 0.06-0.10), a target thousands.
        for (flag, value, example) in [("--rate", self.rate, "5000"), ("--iops-per-mailbox", self.iops_per_mailbox, "0.1")] {
            if let Some(v) = value.filter(|v| !(v.is_finite() && *v > 0.0)) {
                anyhow::bail!("{flag} {v}: give a positive number of I/Os per second (for example {example})");
            }
        }
        if self.ios == Some(0) {
            anyhow::bail!("--ios 0: give at least 1 I/O per worker to measure (or --time DURATION)");
        }
        if self.iops_per_mailbox.is_some() && self.mailboxes.is_none() && profile.mailboxes.is_none() && !tuned {
            anyhow::bail!(
                "--iops-per-mailbox sets the rate per mailbox, but no mailbox count is set: add --mailboxes N (or use a profile that sets mailboxes, such as jetstress)"
            );
        }
        Ok(())
    }

    /// The flags' values over the profile's, each parsed and named by its flag.
    fn overrides(&self, bs: Option<Bytes>, tuned: bool) -> Result<Overrides> {
        let run = match (self.ios, &self.time) {
            (Some(n), _) => Some(RunLength::Ios(n)),
            (None, Some(t)) => match parse_duration(t).context("--time")? {
                d if d.is_zero() => anyhow::bail!("--time {t}: the measured time must be above 0 (for example 10s or 1m)"),
                d => Some(RunLength::Time(d)),
            },
            (None, None) => None,
        };
        Ok(Overrides {
            workers: self.workers.filter(|_| !tuned).map(|w| w.max),
            workers_range: self.workers_range(tuned),
            qd: self.qd,
            bs,
            read: self.read.as_deref().map(parse_percent).transpose().context("--read")?,
            random: self.random.as_deref().map(parse_percent).transpose().context("--random")?,
            align: self.align.as_deref().map(parse_size).transpose().context("--align")?,
            run,
            ramp: self.ramp.as_deref().map(parse_duration).transpose().context("--ramp")?,
            size: self.size.as_deref().map(parse_size).transpose().context("--size")?.map(region_size).transpose()?,
            offset: self.offset.as_deref().map(parse_size).transpose().context("--offset")?,
            seed: self.seed,
            engine: self.engine,
            buffered: self.buffered,
            connections: self.connections,
            polling: crate::workload::polling::Polling {
                sqpoll: self.sqpoll.as_deref().map(str::parse).transpose().map_err(anyhow::Error::msg).context("--sqpoll")?,
                poll: self.poll,
            },
            rate: self.rate,
            mailboxes: self.mailboxes,
            iops_per_mailbox: self.iops_per_mailbox,
            dist: self.dist.clone(),
            thinktime: self
                .thinktime
                .as_deref()
                .map(crate::units::parse_duration_with_unit)
                .transpose()
                .map_err(|e| anyhow::anyhow!("--thinktime {e}"))?,
            thinktime_blocks: self.thinktime_blocks,
            arrivals: self.arrivals,
            compress: self.compress.as_deref().map(parse_percent).transpose().context("--compress")?,
            dedupe: self.dedupe.as_deref().map(parse_percent).transpose().context("--dedupe")?,
            dedupe_unit: self.dedupe_unit.as_deref().map(parse_size).transpose().context("--dedupe-unit")?,
            data_written: crate::workload::reduction::Texts {
                compress: self.compress.clone(),
                dedupe: self.dedupe.clone(),
                dedupe_unit: self.dedupe_unit.clone(),
            },
            steady: self.steady,
            steady_window: self.steady_window,
            steady_round: self.steady_round.as_deref().map(parse_duration).transpose().context("--steady-round")?,
            steady_range: self.steady_range.as_deref().map(parse_percent).transpose().context("--steady-range")?,
            steady_slope: self.steady_slope.as_deref().map(parse_percent).transpose().context("--steady-slope")?,
            trim: self.trim.as_deref().map(parse_percent).transpose().context("--trim")?,
            sync: crate::workload::ops::sync_of(self.fsync, self.fdatasync, self.flush).map_err(anyhow::Error::msg)?,
        })
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
        self.refuse_outputs_onto(&s.file)?;
        self.refuse_shaping_flags_with(&s.file)?;
        Ok(Some(s))
    }

    /// An output that names the trace being replayed would overwrite it as it is read.
    fn refuse_outputs_onto(&self, replayed: &std::path::Path) -> Result<()> {
        // cli::paths refuses these against --replay on the command line; a
        // profile's [replay] file is only known here.
        let json = self.json.as_deref().filter(|j| *j != "-").map(std::path::Path::new);
        let outputs = [
            ("--trace", self.trace.as_deref()),
            ("--json", json),
            ("--journal", self.journal.as_deref()),
            ("--hdr-log", self.hdr_log.as_deref()),
        ];
        for (flag, out) in outputs.into_iter().filter_map(|(f, o)| o.map(|o| (f, o))) {
            let same = match (std::fs::canonicalize(out), std::fs::canonicalize(replayed)) {
                (Ok(a), Ok(b)) => a == b,
                _ => out == replayed,
            };
            if same {
                anyhow::bail!(
                    "{flag} {} names the trace being replayed: writing it would overwrite the trace as it is read; give {flag} another file",
                    out.display()
                );
            }
        }
        Ok(())
    }

    /// Flags that shape generated I/O cannot apply to a replay, whose trace gives every I/O.
    fn refuse_shaping_flags_with(&self, replayed: &std::path::Path) -> Result<()> {
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
                replayed.display(),
                given.join(", "),
                if given.len() == 1 { "it" } else { "them" }
            );
        }
        Ok(())
    }
}

/// A sweep given by `flag` (its text `given`), parsed as `text`: the error
/// names the flag and the value as the user typed them.
pub(in crate::cli) fn parse_sweep_flag(flag: &str, given: &str, text: &str) -> Result<Sweep> {
    sweep::parse(text).map_err(|e| anyhow::anyhow!(e.to_string().replacen(&format!("sweep '{text}'"), &format!("{flag} {given}"), 1)))
}

/// The single-phase workload of a run described by flags alone: 4 KiB random,
/// 70% read, 32 outstanding, 1 worker (each flag replaces its part).
pub(in crate::cli) fn flags_profile() -> Profile {
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
pub(in crate::cli) fn refuse_unused_engine_flags(args: &RunArgs, plan: &RunPlan) -> Result<()> {
    use crate::targets::TargetUri;
    let uris: Vec<&TargetUri> = plan.points.iter().flat_map(|p| p.targets.iter()).map(|t| &t.uri).collect();
    if let Some(engine) = args.engine {
        if engine != crate::workload::EngineChoice::Auto && !uris.iter().any(|u| matches!(u, TargetUri::File(_) | TargetUri::Device(_))) {
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
            baseline: None,
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
            live_json: None,
        })
    }

    /// A refusal of completion polling that a fio job's hipri asked for (not
    /// --poll): named by the job file, job and option the user wrote.
    pub(in crate::cli) fn poll_named_by_job(&self, e: anyhow::Error) -> anyhow::Error {
        let text = e.to_string();
        let (Some(path), false, true) = (&self.fio, self.poll, text.starts_with("--poll")) else {
            return e;
        };
        let options = fio_map::ImportOptions { sections: self.section.clone(), lenient: self.fio_lenient, ..Default::default() };
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
pub(in crate::cli) const DEFAULT_CACHE_BLOCK: &str = "4k";

/// Refuses `--size 0` naming the flag (the workload's own check says only
/// "size must be greater than 0").
fn region_size(size: crate::units::Bytes) -> Result<crate::units::Bytes> {
    if size.0 == 0 {
        anyhow::bail!("--size 0: the region must hold at least one transfer (for example --size 1g); leave --size out to use the whole of an existing file or device");
    }
    Ok(size)
}

/// Refuses a --power-log that is not a readable regular file before anything
/// runs: it is read after each point, and a missing one only gave "power: not
/// measured" on every point of a run that had already taken its time.
pub(in crate::cli) fn check_power_log(log: &std::path::Path) -> Result<()> {
    crate::input_path::check(log, &crate::input_path::POWER_LOG)
        .map_err(|e| anyhow::anyhow!("--power-log {e} (it is read after each point; create it first or give a path that exists)"))
}

/// The overrides refused together or against the profile (a think time
/// with a rate, Poisson arrivals without a mean rate).
fn check_overrides(overrides: &Overrides, profile: &Profile) -> Result<()> {
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
    Ok(())
}
