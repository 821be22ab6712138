//! The run plan: the points to run (one for a plain run; sweeps and repeats add
//! more), each with its effective workload, plus the warnings found on the way.
//! The `--dry-run` text of a plan is `report::terminal::plan_text`'s.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::engine::{uring, EngineKind};
use crate::results::pass::{self, Criterion, PassError};
use crate::results::repeats::Pick;
use crate::targets::{self, Target, TargetUri, UriError};
use crate::units::Bytes;
use crate::workload::phase_axis::{self, Overridden, PhasePoint};
use crate::workload::profile::{Phase, Profile};
use crate::workload::reduction::{check_unit_applies, AsWritten, DataReduction};
use crate::workload::steady::{SteadyMetric, SteadySpec};
use crate::workload::sweep::{self, Sweep, SweepError};
use crate::workload::{EngineChoice, RunLength, SpecError, WorkloadSpec};

#[derive(Clone, Debug)]
pub struct PlannedPoint {
    /// The sweep values of this point (empty for a plain run).
    pub params: BTreeMap<String, serde_json::Value>,
    /// Short text of the params for the live line, "qd=8 bs=4k".
    pub label: String,
    pub spec: WorkloadSpec,
    /// Each group's queue depth as asked, before an engine limited it (psync: 1).
    pub asked_qd: Vec<u32>,
    /// `spec.targets`, parsed (same order, same length): what the plan, the
    /// dry run and the run go by, instead of parsing the text again.
    pub targets: Vec<Target>,
    /// Each target's engine kind (same order), resolved once from
    /// `spec.engine` when the point is planned.
    pub engines: Vec<EngineKind>,
}

impl PlannedPoint {
    pub fn new(
        params: BTreeMap<String, serde_json::Value>,
        label: String,
        spec: WorkloadSpec,
        asked_qd: Vec<u32>,
        targets: Vec<Target>,
    ) -> PlannedPoint {
        let engines = kinds(&targets, spec.engine);
        PlannedPoint { params, label, spec, asked_qd, targets, engines }
    }

    /// The engine names this point uses, joined ("io_uring", "mem").
    pub fn engine_name(&self) -> String {
        names(&self.engines)
    }

    /// Opens this point's targets, each by its parsed kind (`targets::open_targets`).
    pub fn open_targets(
        &self,
        flags: targets::SafetyFlags,
        run: &mut targets::RunTargets,
    ) -> Result<Vec<targets::OpenTarget>, targets::TargetError> {
        targets::open_targets(&self.spec, &self.targets, flags, run)
    }
}

#[derive(Clone, Debug)]
pub struct RunPlan {
    pub points: Vec<PlannedPoint>,
    pub warnings: Vec<String>,
    /// Runs of each point (1 = no repeats).
    pub repeat: u32,
    pub pick: Pick,
    /// Judged on every point (empty: no verdict).
    pub criteria: Vec<Criterion>,
    /// The profile the points come from (None: flags only).
    pub profile: Option<String>,
    /// With --replay: the trace every point issues instead of generated I/Os.
    pub replay: Option<std::sync::Arc<super::replay::ReplayPlan>>,
    /// Run the points as rounds until one is steady (a profile's [rounds], `pts-iops`).
    pub rounds: Option<crate::workload::rounds::Rounds>,
    /// With --sla: search the queue depth for the most IOPS within the bounds (issue 28).
    pub search: Option<crate::results::search::SearchSpec>,
    /// With --curve: a maximum-rate point, then paced ones at percentages of it (issue 28).
    pub curve: Option<crate::results::curve::CurveSpec>,
}

#[derive(Debug, Error)]
pub enum PlanError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Uri(#[from] UriError),
    #[error("group '{group}' mixes target kinds ({kinds}): one worker drives targets through one engine, so put mem:, local and network targets in separate groups or runs")]
    MixedKinds { group: String, kinds: String },
    #[error(transparent)]
    Sweep(#[from] SweepError),
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error("{0}")]
    Ops(String),
    /// --sqpoll / --poll that cannot apply (run::polling says why).
    #[error("{0}")]
    Polling(String),
    /// --sla where a search makes no sense (run::search says why).
    #[error("{0}")]
    Search(String),
    #[error("--repeat must be at least 1")]
    ZeroRepeat,
    #[error(
        "--dist {dist} shapes where random I/Os land, but no access line of this workload is random: add --random PCT, or drop --dist"
    )]
    DistWithoutRandom { dist: String },
    #[error("poisson arrivals need a rate: add --rate IOPS (or rate = ... in the profile), or use --arrivals fixed")]
    PoissonWithoutRate,
    #[error("--engine io_uring was asked for, but this kernel refuses io_uring (check /proc/sys/kernel/io_uring_disabled): use --engine psync or auto")]
    NoUring,
    #[error("group '{group}': --qd {qd} with {per_worker} per worker is {slots} I/Os in flight per worker, but an io_uring ring holds at most {max} (the kernel's limit): use --qd 1 to {max_qd}, and more --workers for more outstanding I/Os", per_worker = crate::units::counted(*.targets as u64, "target"))]
    RingTooSmall { group: String, qd: u32, targets: usize, slots: u64, max: u32, max_qd: u64 },
}

/// The engine names a workload uses, joined ("io_uring", "mem"). For a
/// workload read back from a result; a planned point knows its targets' kinds
/// (`PlannedPoint::engine_name`).
pub fn engine_name(spec: &WorkloadSpec) -> String {
    let targets: Vec<Target> = spec.targets.iter().filter_map(|t| Target::parse(t).ok()).collect();
    names(&kinds(&targets, spec.engine))
}

/// Each target's engine kind, as `choice` resolves it.
pub fn kinds(targets: &[Target], choice: EngineChoice) -> Vec<EngineKind> {
    targets.iter().map(|t| EngineKind::for_uri(&t.uri, choice)).collect()
}

/// The names of these engine kinds, sorted, each once, joined.
fn names(kinds: &[EngineKind]) -> String {
    let mut names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    names.sort();
    names.dedup();
    names.join("+")
}

/// Validates a workload and adjusts it to what its engines can do. `targets`
/// are `spec.targets`, parsed. Returns the effective spec and warnings to show the user.
pub fn effective(mut spec: WorkloadSpec, targets: &[Target]) -> Result<(WorkloadSpec, Vec<String>), PlanError> {
    spec.validate()?;
    debug_assert_eq!(spec.targets.len(), targets.len(), "a point's parsed targets are its spec's");
    let uris: Vec<TargetUri> = targets.iter().map(|t| t.uri.clone()).collect();
    let engines = kinds(targets, spec.engine);
    targets::ops_support::check_uris(&spec, &uris).map_err(PlanError::Ops)?;
    if spec.engine == EngineChoice::IoUring && !uring::available() {
        return Err(PlanError::NoUring);
    }
    let mut warnings = Vec::new();
    let groups = spec.groups.clone();
    for (gi, g) in groups.iter().enumerate() {
        let mut kinds: Vec<EngineKind> = spec.group_targets(g).iter().map(|&i| engines[i]).collect();
        kinds.sort_by_key(|k| k.name());
        kinds.dedup();
        if kinds.len() > 1 {
            let kinds = kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ");
            return Err(PlanError::MixedKinds { group: g.name.clone(), kinds });
        }
        let Some(&kind) = kinds.first() else { continue };
        let caps = kind.capabilities();
        // `--buffered` itself is refused for such targets by the command line;
        // a profile's `buffered = true` (a fio job's default) only warns.
        if spec.buffered && !caps.direct_or_buffered {
            warnings.push(format!(
                "group '{}': buffered = true in the profile does not apply to the {} engine's targets, which have no page cache",
                g.name,
                kind.name()
            ));
        }
        if let Some(max) = caps.max_in_flight {
            // Each worker keeps all its slots in one ring: refused here rather
            // than failing in every worker once the run has started.
            let targets = spec.targets_per_worker(g);
            let slots = g.qd as u64 * targets as u64;
            if slots > max as u64 {
                let max_qd = max as u64 / targets.max(1) as u64;
                return Err(PlanError::RingTooSmall { group: g.name.clone(), qd: g.qd, targets, slots, max, max_qd });
            }
        }
        if let Some(max_qd) = caps.max_qd.filter(|&m| g.qd > m) {
            warnings.push(format!(
                "group '{}': the {} engine does one I/O at a time per worker, so {} outstanding I/Os per target become {max_qd}. Use --engine io_uring for queue depth, or more --workers",
                g.name,
                kind.name(),
                g.qd
            ));
            spec.groups[gi].qd = max_qd;
        }
    }
    super::polling::check(&spec, &uris, &engines).map_err(PlanError::Polling)?;
    Ok((spec, warnings))
}

/// A plan of one point.
pub fn single(spec: WorkloadSpec) -> Result<RunPlan, PlanError> {
    let asked_qd = spec.groups.iter().map(|g| g.qd).collect();
    let targets: Vec<Target> = spec.targets.iter().map(|t| Target::parse(t)).collect::<Result<_, _>>()?;
    let (spec, warnings) = effective(spec, &targets)?;
    Ok(RunPlan {
        points: vec![PlannedPoint::new(BTreeMap::new(), String::new(), spec, asked_qd, targets)],
        warnings,
        repeat: 1,
        pick: Pick::Mean,
        criteria: Vec::new(),
        profile: None,
        replay: None,
        rounds: None,
        search: None,
        curve: None,
    })
}

/// Values given on the command line; each replaces the profile's everywhere it
/// applies (every group, every access line).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub workers: Option<u32>,
    /// With `--workers MIN-MAX` (and --sla): the worker counts the search tries;
    /// `workers` is then MAX, so that the plan is checked at the most.
    pub workers_range: Option<crate::results::model::WorkerRange>,
    pub qd: Option<u32>,
    pub bs: Option<Bytes>,
    pub read: Option<f64>,
    pub random: Option<f64>,
    pub align: Option<Bytes>,
    pub run: Option<RunLength>,
    pub ramp: Option<std::time::Duration>,
    pub size: Option<Bytes>,
    pub offset: Option<Bytes>,
    pub seed: Option<u64>,
    pub engine: Option<EngineChoice>,
    pub buffered: bool,
    pub connections: Option<u32>,
    /// --sqpoll[=CPU] and --poll (each adds to what the profile sets).
    pub polling: crate::workload::polling::Polling,
    /// Total rate, I/Os per second.
    pub rate: Option<f64>,
    pub mailboxes: Option<u64>,
    pub iops_per_mailbox: Option<f64>,
    // Issue 15: distribution, think time, arrivals.
    /// Replaces every access line's distribution.
    pub dist: Option<crate::workload::dist::Distribution>,
    pub thinktime: Option<std::time::Duration>,
    pub thinktime_blocks: Option<u32>,
    pub arrivals: Option<crate::workload::timing::Arrivals>,
    /// Data reduction (--compress, --dedupe, --dedupe-unit): each replaces the profile's.
    pub compress: Option<f64>,
    pub dedupe: Option<f64>,
    pub dedupe_unit: Option<Bytes>,
    /// The three data flags as written, to name them in a refusal.
    pub data_written: crate::workload::reduction::Texts,
    /// Steady state (--steady, --steady-*): each replaces the profile's.
    pub steady: Option<SteadyMetric>,
    pub steady_window: Option<u32>,
    pub steady_round: Option<std::time::Duration>,
    pub steady_range: Option<f64>,
    pub steady_slope: Option<f64>,
    /// Share of trims on every access line (--trim).
    pub trim: Option<f64>,
    /// A sync every N writes (--fsync, --fdatasync, --flush); replaces the profile's.
    pub sync: Option<crate::workload::SyncEvery>,
}

impl Overrides {
    /// The data reduction of a profile with these flags applied (None when plain).
    fn data(&self, profile: Option<&DataReduction>) -> Option<DataReduction> {
        let mut d = profile.cloned().unwrap_or_default();
        d.compress = self.compress.unwrap_or(d.compress);
        d.dedupe = self.dedupe.unwrap_or(d.dedupe);
        d.dedupe_unit = self.dedupe_unit.or(d.dedupe_unit);
        (!d.is_plain()).then_some(d)
    }

    /// The steady-state setting of a profile with these flags applied.
    fn steady(&self, profile: Option<&SteadySpec>) -> Result<Option<SteadySpec>, SpecError> {
        let tuned =
            self.steady_window.is_some() || self.steady_round.is_some() || self.steady_range.is_some() || self.steady_slope.is_some();
        let mut s = match (profile, self.steady) {
            (_, Some(metric)) => SteadySpec { metric, ..profile.cloned().unwrap_or_else(|| SteadySpec::new(metric)) },
            (Some(p), None) => p.clone(),
            (None, None) if tuned => {
                return Err(SpecError::Setting(
                    "--steady-window, --steady-round, --steady-range and --steady-slope tune steady state: add --steady iops|bw|lat".into(),
                ))
            }
            (None, None) => return Ok(None),
        };
        s.window = self.steady_window.unwrap_or(s.window);
        s.round = self.steady_round.unwrap_or(s.round);
        s.range = self.steady_range.unwrap_or(s.range);
        s.slope = self.steady_slope.unwrap_or(s.slope);
        Ok(Some(s))
    }
}

/// Everything a plan is built from.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    pub profile: Profile,
    /// Name to record in the result (None when the workload came from flags only).
    pub profile_name: Option<String>,
    /// The targets the run uses, parsed where the request was read: --target's,
    /// else the profile's (CHAP secrets hidden).
    pub targets: Vec<Target>,
    /// True when `targets` came from the command line (--target): they replace
    /// a profile's own targets, and its groups then drive every one of them.
    pub targets_given: bool,
    pub overrides: Overrides,
    /// Sweeps from the command line; they replace the profile's sweep of the same key.
    pub sweeps: Vec<Sweep>,
    pub repeat: Option<u32>,
    pub pick: Pick,
    /// Pass criteria from the command line; they replace the profile's.
    pub pass: Option<String>,
    /// With --sla: the bounds of a knee search (issue 28), in the --pass grammar.
    pub sla: Option<String>,
    /// With --curve (and --curve-stop): the percentages of a load-latency curve, and its stop bounds.
    pub curve: Option<String>,
    pub curve_stop: Option<String>,
    /// With --tune: the group whose workers are the threads tuned, and the IOPS per mailbox.
    pub tune: Option<crate::results::tuning::TuneSpec>,
}

/// Default measured time and ramp when neither the profile nor a flag sets them.
pub const DEFAULT_TIME: std::time::Duration = std::time::Duration::from_secs(10);
pub const DEFAULT_RAMP: std::time::Duration = std::time::Duration::from_secs(2);

/// What applies to every point of a plan, worked out once from the profile
/// and the flags before the points are built.
struct Common {
    sweeps: Vec<Sweep>,
    combos: Vec<Vec<(&'static str, sweep::SweepValue)>>,
    repeat: u32,
    criteria: Vec<Criterion>,
    /// With --rate, or a profile's mailboxes: the total rate, spread over the groups.
    total_rate: Option<f64>,
    data: Option<DataReduction>,
    data_written: AsWritten,
    steady: Option<SteadySpec>,
    /// A sync every N writes: the flags', else the profile's.
    sync: Option<crate::workload::SyncEvery>,
}

impl Common {
    fn of(req: &PlanRequest) -> Result<Common, PlanError> {
        let (p, o) = (&req.profile, &req.overrides);
        let mut sweeps: Vec<Sweep> = p.sweep.iter().map(|t| sweep::parse(t)).collect::<Result<_, _>>()?;
        sweeps.retain(|s| !req.sweeps.iter().any(|c| c.key == s.key));
        sweeps.extend(req.sweeps.iter().cloned());
        flags_not_swept(req, &sweeps)?;
        let combos = sweep::product(&sweeps)?;
        let repeat = req.repeat.or(p.repeat).unwrap_or(1);
        if repeat == 0 {
            return Err(PlanError::ZeroRepeat);
        }
        let criteria = match req.pass.as_deref().or(p.pass.as_deref()) {
            Some(text) => pass::parse(text)?,
            None => Vec::new(),
        };
        let total_rate = o.rate.or(p.rate).or_else(|| {
            let mailboxes = o.mailboxes.or(p.mailboxes)?;
            Some(mailboxes as f64 * o.iops_per_mailbox.or(p.iops_per_mailbox).unwrap_or(1.0))
        });
        if o.thinktime_blocks.or(p.thinktime_blocks).is_some() && o.thinktime.or(p.thinktime).is_none() {
            return Err(SpecError::BurstWithoutDelay { field: "thinktime_blocks".into() }.into());
        }
        let data = o.data(p.data.as_ref());
        // The data settings are checked once, as they apply (the flags over the
        // profile's [data]), each named where it was written.
        let data_written = AsWritten::merge(&o.data_written, &p.data_written);
        if let Some(d) = &data {
            check_unit_applies(d, &data_written).map_err(SpecError::Setting)?;
        }
        let steady = o.steady(p.steady.as_ref())?;
        if let Some(r) = &p.rounds {
            r.check().map_err(SpecError::Setting)?;
            // The profile's time per point is the maximum of a steady point: said as the profile's, not as a --time never given.
            if let (Some(s), None, Some(time)) = (&steady, &o.run, p.time) {
                s.check_against(Some(time), "the profile's time per point").map_err(SpecError::Setting)?;
            }
        }
        let sync = match o.sync {
            Some(s) => Some(s),
            None => p.sync().map_err(PlanError::Ops)?,
        };
        Ok(Common { sweeps, combos, repeat, criteria, total_rate, data, data_written, steady, sync })
    }
}

/// --time or --ios is every group's run length: the groups' own times it
/// replaces, said (a fio job file's runtimes that differ, a profile group's `time`).
fn replaced_group_times(req: &PlanRequest) -> Option<String> {
    req.overrides.run?;
    let own: Vec<String> = req
        .profile
        .phases
        .iter()
        .flat_map(|p| &p.groups)
        .filter_map(|g| g.time.map(|t| format!("{} {}", g.name, crate::units::format_duration(t))))
        .collect();
    (!own.is_empty()).then(|| format!("--time/--ios is every group's run length: it replaces the groups' own times ({})", own.join(", ")))
}

/// A start delay every group of a phase shares only idles the target before
/// the point: the point starts its groups that much earlier, said.
fn shared_start_delay(req: &PlanRequest) -> Option<String> {
    let shared: Vec<String> = req
        .profile
        .phases
        .iter()
        .filter_map(|p| {
            let shared = p.groups.iter().map(|g| g.start_delay.unwrap_or_default()).min().unwrap_or_default();
            (!shared.is_zero()).then(|| format!("{} {}", p.name, crate::units::format_duration(shared)))
        })
        .collect();
    (!shared.is_empty()).then(|| {
        format!(
            "every group of a phase waits at least this long ({}): that only idles the target, so the point starts its first group at once and measures from there, the others that much less late",
            shared.join(", ")
        )
    })
}

/// Builds the points: every phase of the profile, times the product of the
/// sweeps, with the command line's overrides applied.
pub fn build(req: PlanRequest) -> Result<RunPlan, PlanError> {
    let common = Common::of(&req)?;
    let p = &req.profile;
    let mut points = Vec::new();
    let mut warnings: Vec<String> = replaced_group_times(&req).into_iter().chain(shared_start_delay(&req)).collect();
    for phase in &p.phases {
        let base = phase_spec(&req, &common, phase);
        for combo in &common.combos {
            let (point, w) = point_of(&req, &common, phase, &base, combo)?;
            for w in w {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            points.push(point);
        }
    }
    if p.phases.len() > 1 {
        let o = &req.overrides;
        let swept = |key: &str| common.sweeps.iter().any(|s| s.key == key);
        let overridden = Overridden {
            size: o.bs.is_some() || swept("bs"),
            direction: o.read.is_some() || swept("read"),
            order: o.random.is_some() || swept("random"),
            depth: o.qd.is_some() || swept("qd"),
        };
        points = fold_phases(points, &p.phases, common.combos.len(), overridden);
    }
    check_points(&req, &common, &points)?;
    let Common { repeat, criteria, .. } = common;
    // A search (--sla) or a curve (--curve) is added by `run::request`, which knows the whole request.
    Ok(RunPlan {
        points,
        warnings,
        repeat,
        pick: req.pick,
        criteria,
        profile: req.profile_name,
        replay: None,
        rounds: p.rounds.clone(),
        search: None,
        curve: None,
    })
}

/// A phase's workload with the flags applied, before any sweep.
fn phase_spec(req: &PlanRequest, common: &Common, phase: &Phase) -> WorkloadSpec {
    let (p, o) = (&req.profile, &req.overrides);
    let mut base = WorkloadSpec {
        targets: req.targets.iter().map(|t| t.text.clone()).collect(),
        size: o.size.or(p.size),
        offset: o.offset.or(p.offset).unwrap_or_default(),
        ramp: o.ramp.or(p.ramp).unwrap_or(DEFAULT_RAMP),
        run: o.run.unwrap_or(match p.ios {
            Some(n) => RunLength::Ios(n),
            None => RunLength::Time(p.time.unwrap_or(DEFAULT_TIME)),
        }),
        seed: o.seed.or(p.seed).unwrap_or(1),
        engine: o.engine.or(p.engine).unwrap_or_default(),
        buffered: o.buffered || p.buffered,
        connections: o.connections.unwrap_or(1),
        sync: common.sync,
        polling: crate::workload::polling::Polling { sqpoll: o.polling.sqpoll.or(p.sqpoll), poll: o.polling.poll || p.poll },
        groups: phase.groups.clone(),
        data: common.data.clone(),
        steady: common.steady.clone(),
        replay: None,
        percentiles: p.percentiles.clone(),
    };
    // --target replaces a profile's own targets; its groups then drive every --target.
    let own_targets_replaced = req.targets_given && !p.targets.is_empty();
    for g in &mut base.groups {
        if own_targets_replaced {
            g.targets.clear();
            g.worker_per_target = false;
        }
        g.workers = o.workers.unwrap_or(g.workers);
        g.qd = o.qd.unwrap_or(g.qd);
        // --time or --ios is every group's run length (a start delay stays).
        if o.run.is_some() {
            g.time = None;
        }
        if let Some(t) = o.thinktime.or(p.thinktime) {
            g.thinktime = Some(t);
            g.thinktime_blocks = o.thinktime_blocks.or(p.thinktime_blocks);
        }
        for l in &mut g.access {
            // --dist replaces every line's; the profile's fills lines without their own.
            l.dist = o.dist.clone().or(l.dist.take()).or(p.dist.clone());
            l.bs = o.bs.unwrap_or(l.bs);
            l.read = o.read.unwrap_or(l.read);
            l.trim = o.trim.unwrap_or(l.trim);
            l.random = o.random.unwrap_or(l.random);
            l.align = o.align.or(l.align);
        }
    }
    base
}

/// One point: the phase's workload at one combination of the swept values,
/// made effective on its targets (with the warnings that came of it).
fn point_of(
    req: &PlanRequest,
    common: &Common,
    phase: &Phase,
    base: &WorkloadSpec,
    combo: &[(&'static str, sweep::SweepValue)],
) -> Result<(PlannedPoint, Vec<String>), PlanError> {
    let (p, o) = (&req.profile, &req.overrides);
    let mut spec = base.clone();
    let mut params = BTreeMap::new();
    if p.phases.len() > 1 {
        params.insert("phase".to_string(), serde_json::Value::from(phase.name.clone()));
    }
    for (key, value) in combo {
        sweep::set(&mut spec, key, *value)?;
        params.insert(key.to_string(), value.to_json());
    }
    if let Some(rate) = common.total_rate {
        spread_rate(&mut spec, rate);
    }
    if let Some(arrivals) = o.arrivals.or(p.arrivals) {
        if arrivals == crate::workload::timing::Arrivals::Poisson && spec.groups.iter().all(|g| g.rate.is_none()) {
            return Err(PlanError::PoissonWithoutRate);
        }
        for g in spec.groups.iter_mut().filter(|g| g.rate.is_some()) {
            g.arrivals = arrivals;
        }
    }
    if let Some(d) = &spec.data {
        d.check_as_written(&spec.write_sizes(), &common.data_written).map_err(SpecError::Setting)?;
    }
    let asked_qd = spec.groups.iter().map(|g| g.qd).collect();
    // A targets=N sweep keeps the first N targets.
    let point_targets = req.targets[..spec.targets.len()].to_vec();
    let (spec, warnings) = effective(spec, &point_targets)?;
    let label = label_of(&params);
    Ok((PlannedPoint::new(params, label, spec, asked_qd, point_targets), warnings))
}

/// What only the whole set of points can show: a skew with nothing random,
/// data reduction with nothing written, a run of rounds that watches no point.
fn check_points(req: &PlanRequest, common: &Common, points: &[PlannedPoint]) -> Result<(), PlanError> {
    let p = &req.profile;
    if let Some(d) = req.overrides.dist.as_ref().filter(|d| !d.is_uniform()) {
        let random = points.iter().flat_map(|p| p.spec.groups.iter().flat_map(|g| g.access.iter())).any(|l| l.random > 0.0);
        if !random {
            return Err(PlanError::DistWithoutRandom { dist: d.to_string() });
        }
    }
    if common.data.is_some() && !points.iter().any(|p: &PlannedPoint| p.spec.has_writes()) {
        return Err(SpecError::Setting(DataReduction::writes_nothing()).into());
    }
    if let Some(r) = &p.rounds {
        rounds_judge_one_point(r, points, &p.name, &p.sweep)?;
    }
    Ok(())
}

/// A flag that sets what a sweep sets at every point (`exchange --qd 4`, its
/// sweep being of qd) would be overwritten by the sweep: refused, saying
/// whose sweep it is and how to run the one value instead.
fn flags_not_swept(req: &PlanRequest, sweeps: &[Sweep]) -> Result<(), PlanError> {
    let o = &req.overrides;
    let flags: [(&str, Option<String>); 5] = [
        ("qd", o.qd.map(|v| v.to_string())),
        ("bs", o.bs.map(|v| v.to_string())),
        ("read", o.read.map(|v| v.to_string())),
        ("random", o.random.map(|v| v.to_string())),
        ("workers", o.workers.map(|v| v.to_string())),
    ];
    for (key, value) in flags {
        let (Some(value), Some(sweep)) = (value, sweeps.iter().find(|s| s.key == key)) else { continue };
        let whose = match (&req.profile_name, req.sweeps.iter().any(|s| s.key == key)) {
            (_, true) => "--sweep".to_string(),
            (Some(name), false) => format!("the profile '{name}'"),
            (None, false) => "the profile".to_string(),
        };
        let values = sweep.values.iter().map(|v| v.to_json().to_string().trim_matches('"').to_string()).collect::<Vec<_>>().join(",");
        return Err(SpecError::Setting(format!(
            "--{key} {value}: {whose} sweeps {key} ({key}={values}), which sets it at every point, so --{key} would be ignored: \
             give --sweep {key}={value} to run only that value in place of the sweep, or drop --{key}"
        ))
        .into());
    }
    Ok(())
}

/// "qd=8 bs=4k": a point's parameters as its label.
fn label_of(params: &BTreeMap<String, serde_json::Value>) -> String {
    params.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"'))).collect::<Vec<_>>().join(" ")
}

/// The points of a profile with phases (built phase by phase, `per_phase`
/// sweep points each) with the phases a sweep made one workload run once, and
/// each phase named as `phase_axis` says: no `phase` where the phases are not
/// a separate axis (`database --sweep bs=8k,4k` is two points, `bs=8k` and `bs=4k`).
fn fold_phases(points: Vec<PlannedPoint>, phases: &[Phase], per_phase: usize, overridden: Overridden) -> Vec<PlannedPoint> {
    // Each phase's first twin as written: phases written alike are not folded.
    // Found through the groups' text, once each: comparing every phase with
    // every earlier one made a profile of 100 K phases take minutes to plan.
    let mut first: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let written_as: Vec<usize> = phases
        .iter()
        .enumerate()
        .map(|(i, a)| *first.entry(serde_json::to_string(&a.groups).expect("worker groups serialise")).or_insert(i))
        .collect();
    let mut keep: Vec<(usize, Option<String>)> = Vec::new();
    for combo in 0..per_phase {
        let of_combo: Vec<usize> = (0..phases.len()).map(|ph| ph * per_phase + combo).collect();
        let of_point: Vec<PhasePoint> = of_combo
            .iter()
            .zip(phases)
            .zip(&written_as)
            .map(|((&i, ph), &written_as)| PhasePoint { name: &ph.name, spec: &points[i].spec, written_as })
            .collect();
        keep.extend(phase_axis::distinct(&of_point, overridden).into_iter().map(|(ph, name)| (of_combo[ph], name)));
    }
    // Profile order, phase by phase, as the points were built.
    keep.sort_by_key(|(i, _)| *i);
    let mut points: Vec<Option<PlannedPoint>> = points.into_iter().map(Some).collect();
    keep.into_iter()
        .filter_map(|(i, name)| {
            let mut point = points[i].take()?;
            match name {
                Some(n) => point.params.insert("phase".into(), n.into()),
                None => point.params.remove("phase"),
            };
            point.label = label_of(&point.params);
            Some(point)
        })
        .collect()
}

/// The rounds judge the one point their `watch` names: a sweep of a key the
/// profile does not sweep (`--sweep qd=1,2`) would make it several, and which
/// one decides would be a guess. (No point at all is refused by the rounds.)
fn rounds_judge_one_point(
    r: &crate::workload::rounds::Rounds,
    points: &[PlannedPoint],
    profile: &str,
    own_sweeps: &[String],
) -> Result<(), PlanError> {
    let watched: Vec<&str> = points.iter().filter(|pt| r.watches(&pt.params)).map(|pt| pt.label.as_str()).collect();
    if watched.len() < 2 {
        return Ok(());
    }
    let own: Vec<&str> = own_sweeps.iter().filter_map(|t| t.split_once('=').map(|(k, _)| k.trim())).collect();
    let extra: Vec<&str> = points[0].params.keys().map(String::as_str).filter(|k| !own.contains(k) && *k != "phase").collect();
    Err(SpecError::Setting(format!(
        "profile '{profile}' runs rounds judged by the point '{}', and {} points of this run are that point ({}): \
         sweep only the profile's own keys ({}) and set {} with one value (--{} N) instead of --sweep",
        r.watch,
        watched.len(),
        watched.join(", "),
        own.join(", "),
        extra.join(", "),
        extra.first().copied().unwrap_or("qd")
    ))
    .into())
}

/// Spreads a total rate over the groups that follow no other group, in
/// proportion to their workers (followers keep their ratio on top of it).
pub(super) fn spread_rate(spec: &mut WorkloadSpec, total: f64) {
    let workers: Vec<u32> = spec.groups.iter().map(|g| spec.group_workers(g)).collect();
    let leaders: u32 = spec.groups.iter().zip(&workers).filter(|(g, _)| g.follow.is_none()).map(|(_, w)| *w).sum();
    for (g, w) in spec.groups.iter_mut().zip(workers) {
        if g.follow.is_none() && leaders > 0 {
            g.rate = Some(total * w as f64 / leaders as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PlanError;

    /// Counts in the plan's errors take the singular for one.
    #[test]
    fn a_ring_too_small_counts_its_targets() {
        let e = |targets| {
            PlanError::RingTooSmall { group: "main".into(), qd: 32768, targets, slots: 32768 * targets as u64, max: 32768, max_qd: 32768 }
                .to_string()
        };
        assert!(e(1).contains("--qd 32768 with 1 target per worker"), "{}", e(1));
        assert!(e(2).contains("--qd 32768 with 2 targets per worker"), "{}", e(2));
    }
}
