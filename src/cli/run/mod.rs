//! `lunmark run`: flags (`flags.rs`) to a request (`request.rs`), the plan
//! checked once, then the run itself and where its output goes: the store,
//! `--json`, the printed summary, fio's logs, and the exit code.

mod flags;
mod request;
mod tune;

pub use flags::*;
use request::refuse_unused_engine_flags;

use std::path::PathBuf;

use std::sync::atomic::Ordering;

use anyhow::Result;

use super::exit;
use super::keep::{JsonWriter, Problems, StoreKeeper};
use crate::output_path::{self, Destination, Mode};
use crate::report;
use crate::results::model::{RunResult, Status};
use crate::results::store::{self, Store};
use crate::run::{self, RunContext, RunObserver, RunPlan};
use crate::workload::fio_map;

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
    // So is --hdr-log: rank 0 writes the job's log, from the histograms merged over every rank.
    let hdr_log = match &args.hdr_log {
        Some(path) if root && !args.dry_run => Some(output_path::check("--hdr-log", path, Mode::Replace)?),
        _ => None,
    };
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
    refuse_for_plan(&args, &plan)?;
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
        return dry_run(&args, &ready, &ctx, store_flag);
    }
    if !root {
        return run_off_root(&args, &ready, ctx, cluster);
    }
    run_at_root(&args, &ready, ctx, store_flag, hdr_log, &fio_logs, cluster)
}

/// A rank other than 0: quiet, keeping nothing (rank 0 writes the merged
/// result); its notes are still said, and its seconds go to rank 0 for the
/// job's live telemetry.
fn run_off_root(args: &RunArgs, ready: &run::ReadyPlan, mut ctx: run::RunContext, cluster: run::cluster::ClusterRef) -> Result<i32> {
    // Ranks other than 0 are quiet and keep nothing: rank 0 writes the merged result.
    // Their notes (an idle power measurement, an incomplete trace) are still said.
    ctx.quiet = true;
    let mut notes = super::live_view::LiveView::notes_only();
    // Live telemetry under MPI: each measured second goes to rank 0, which tells the job's.
    let mut post = crate::mpi::seconds::PostSeconds(cluster.clone());
    let mut observers: Vec<&mut dyn RunObserver> = vec![&mut notes];
    if args.live_json.is_some() || args.metrics_listen.is_some() {
        observers.push(&mut post);
    }
    let result = run::execute(ready, &ctx, &mut run::Fanout(observers))?;
    Ok(exit_code(&result, false))
}

/// Rank 0 (or a run without MPI): runs, prints, keeps the result and closes
/// the telemetry and logs.
fn run_at_root(
    args: &RunArgs,
    ready: &run::ReadyPlan,
    mut ctx: run::RunContext,
    store_flag: Option<&std::path::Path>,
    hdr_log: Option<crate::output_path::OutputFile>,
    fio_logs: &[(fio_map::FioLog, crate::output_path::OutputFile)],
    cluster: run::cluster::ClusterRef,
) -> Result<i32> {
    let store = ResultStore::choose(args, store_flag)?;
    let (json, shape) = args.json_output();
    let mut telemetry = args.telemetry(json.as_deref()).open()?;
    telemetry.hdr_log = hdr_log.map(super::telemetry::hdr_log::HdrLogWriter::new);
    if let (Some(m), true) = (cluster.get().facts(), args.live_json.is_some() || args.metrics_listen.is_some()) {
        telemetry.job = Some(crate::mpi::seconds::JobSeconds::new(cluster.clone(), m.ranks));
    }
    ctx.live_json = telemetry.counts.clone();
    let print = Print::Summary { detail: args.detail };
    let kept = measure_and_keep_as(ready, &ctx, json.as_deref(), shape, &store, print, Some(&mut telemetry));
    let hdr_log_failed = close_telemetry(telemetry);
    let kept = kept?;
    let mut unwritten = !write_fio_logs(&kept.result, fio_logs);
    if let Some(e) = hdr_log_failed {
        crate::ewriteln!("error: {e}");
        unwritten = true;
    }
    Ok(exit_code(&kept.result, !kept.unwritten.is_empty() || unwritten))
}

/// Ends the run's telemetry, saying how many --live-json lines were dropped;
/// returns the histogram log's first failure to write, if any.
fn close_telemetry(telemetry: super::telemetry::Telemetry) -> Option<String> {
    let counts = telemetry.counts.clone();
    if let Some(j) = telemetry.job.as_ref().filter(|j| j.late + j.partial > 0) {
        crate::ewriteln!(
            "note: under MPI, {} told without every rank's share (each names its missing ranks), and {} of a rank's second \
             came after the second was told (it waits {} s) and left out: the live figures lack them, the stored result has them",
            crate::units::counted(j.partial, "second"),
            crate::units::counted(j.late, "share"),
            crate::mpi::seconds::GRACE.as_secs()
        );
    }
    let hdr_log_failed = telemetry.close();
    if let Some(c) = counts {
        let (lines, dropped) = (c.lines.load(Ordering::Relaxed), c.dropped.load(Ordering::Relaxed));
        if dropped > 0 {
            crate::ewriteln!(
                "note: --live-json dropped {dropped} of {lines} lines: its reader fell behind or went away, and the run did not wait for it"
            );
        }
    }
    hdr_log_failed
}

/// What the flags cannot do with this plan, said before it is checked:
/// engine flags no target uses,
/// --pick without repeats.
fn refuse_for_plan(args: &RunArgs, plan: &run::RunPlan) -> Result<()> {
    refuse_unused_engine_flags(args, plan)?;
    refuse_a_journal_without_writes(args, plan)?;
    if plan.repeat <= 1 && args.pick != crate::results::model::Pick::Mean {
        anyhow::bail!("--pick {} chooses among the repeats of a point: add --repeat N (N of 2 or more), or drop --pick", args.pick);
    }
    Ok(())
}

/// The dry run: the checked plan, what it will use (memory, the request, the
/// link, the outputs), and nothing run.
fn dry_run(args: &RunArgs, ready: &run::ReadyPlan, ctx: &RunContext, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let plan = ready.plan();
    let link = &ctx.link;
    let store = ResultStore::choose(args, store_flag)?;
    let escape = crate::report::escape::terminal;
    let mut text = escape(&crate::lab::plan_view::describe(plan));
    if let Some(m) = ctx.cluster.get().facts() {
        text += &format!(
            "mpi: {} on {} ({}), {}; each rank runs this plan on its own targets (above: rank 0's), \
             every point starts after a barrier, rank 0 writes the merged result\n",
            crate::units::counted(m.ranks, "rank"),
            crate::units::counted(m.hosts.len() as u64, "host"),
            m.hosts.join(", "),
            crate::units::counted(m.machines, "machine")
        );
    }
    if let Some(s) = &plan.search {
        text += &escape(&report::search_text::describe(s, search_step_time(plan)));
    }
    if let Some(c) = &plan.curve {
        text += &escape(&report::curve_text::describe(c, search_step_time(plan)));
    }
    text += &format!("{}\n", run::resources::describe(plan, ctx.resource_extras()));
    text += &escape(&super::request_text::render(ctx, plan, store.path()));
    if let Some(link) = link {
        text += &format!("{}\n", link.describe());
    }
    let (json, shape) = args.json_output();
    if args.output_format.is_some() || args.json.is_some() {
        let what = if shape == JsonShape::Fio { "fio-json (fio's JSON shape)" } else { "json (the result model)" };
        text += &match json.as_deref() {
            None => "output: the summary only (no JSON)\n".to_string(),
            Some("-") if shape != JsonShape::Fio => {
                format!("output: {what} to stdout, the summary on stderr; this dry run's plan as JSON on stdout\n")
            }
            Some("-") => format!("output: {what} to stdout, the summary on stderr\n"),
            Some(file) => format!("output: {what} to {file}, the summary on stdout\n"),
        };
    }
    if let Some(log) = &args.hdr_log {
        text += &format!(
            "hdr log: {} (an HdrHistogram interval log, one histogram a second per operation, replaced after each point)\n",
            log.display()
        );
    }
    if args.detail {
        text += "detail: each worker's and each target's figures are printed beside the summary (--detail)\n";
    }
    for line in args.telemetry(json.as_deref()).describe()? {
        text += &format!("{line}\n");
    }
    // The result model to stdout: a script reading it gets JSON from the dry
    // run too (the plan), and the text goes where the run's summary would, to
    // stderr. (fio-json's readers expect fio's shape, which a plan has not.)
    let plan_as_json = json.as_deref() == Some("-") && shape != JsonShape::Fio;
    if plan_as_json {
        crate::ewrite!("{text}");
        println!("{}", plan_json(plan));
    } else {
        print!("{text}");
    }
    Ok(exit::OK)
}

/// The plan a dry run shows, as JSON: each point's sweep values and its
/// workload (as a result records it), repeats, profile and warnings.
fn plan_json(plan: &crate::run::RunPlan) -> String {
    let points: Vec<serde_json::Value> =
        plan.points.iter().map(|p| serde_json::json!({ "params": p.params, "workload": p.spec })).collect();
    let value = serde_json::json!({
        "dry_run": true,
        "profile": plan.profile,
        "repeat": plan.repeat,
        "points": points,
        "warnings": plan.warnings,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// `--journal` records the generation of each block a run writes: on a run
/// that writes nothing it would be accepted and stay empty, so it is refused
/// (a replay's writes are the trace's, known only as it runs: not judged).
fn refuse_a_journal_without_writes(args: &RunArgs, plan: &crate::run::RunPlan) -> Result<()> {
    let Some(journal) = &args.journal else { return Ok(()) };
    if plan.replay.is_none() && plan.points.iter().all(|p| p.spec.write_sizes().is_empty()) {
        anyhow::bail!(
            "--journal {}: the journal records each block's write generation for `lunmark verify`, and this run writes nothing \
             (every point only reads or trims); drop --journal, or give a workload that writes (--read below 100)",
            journal.display()
        );
    }
    Ok(())
}

/// One step's time of a search or a curve: its ramp and measured time, times the repeats
/// (None when it measures a count of I/Os, whose time is not known beforehand).
fn search_step_time(plan: &RunPlan) -> Option<std::time::Duration> {
    Some(plan.points[0].spec.planned_length()? * plan.repeat)
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
                if let Err(e) = file.replace_with(crate::report::export::fio_log::render(log, p).as_bytes()) {
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
    measure_and_keep_as(
        &ready,
        ctx,
        json,
        JsonShape::Model,
        store,
        if print { Print::Summary { detail: false } } else { Print::Nothing },
        None,
    )
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
    telemetry: Option<&mut super::telemetry::Telemetry>,
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
    // --live-json - takes stdout: the summary goes to stderr, as with --json -.
    let summary_to_stderr = telemetry.as_ref().is_some_and(|t| t.takes_stdout);
    observers.extend(telemetry.map(|t| t.observers()).unwrap_or_default());
    let result = run::execute(plan, ctx, &mut run::Fanout(observers))?;
    let (store_failed, deleted, notes) = keeper.map(|k| (k.failed, k.deleted, k.notes)).unwrap_or_default();
    drop(writer);
    if print {
        if let Err(e) = emit(&result, json, shape, detail, summary_to_stderr) {
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
fn emit(result: &RunResult, json: Option<&str>, shape: JsonShape, detail: bool, summary_to_stderr: bool) -> Result<()> {
    let table = report::terminal::table::render_with(result, detail);
    if summary_to_stderr {
        crate::ewrite!("{table}");
        return Ok(());
    }
    match json {
        Some("-") => {
            crate::ewrite!("{table}");
            super::print_out(&shape.render(result), "the JSON result")
        }
        _ => super::print_out(&table, "the summary"),
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
    if result.status == Status::Completed && result.search.as_ref().is_some_and(|s| s.unmeetable()) {
        return exit::SLA_UNMET;
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
