//! `lunmark lab protocols`: the protocol comparison on loopback.

use anyhow::Result;
use clap::{Args, Subcommand};

use super::exit;
use super::live_view::LiveView;
use super::run::{measure_and_keep, ResultStore, RunArgs};
use crate::run::request::RunRequest;
use crate::targets::Target;

#[derive(Subcommand, Debug)]
pub enum Study {
    /// mem:, a /dev/shm file, NBD over a unix socket and over TCP: same workload, side by side.
    Protocols(Box<ProtocolsArgs>),
    /// A host read cache of 0-100% of a LUN striped over disks that serve one I/O at a time (nbdkit): measured and predicted, the QLogic table.
    Cache(Box<CacheArgs>),
}

#[derive(Args, Debug)]
pub struct CacheArgs {
    /// Size of the LUN, striped over the disks (small, so that the ramp warms a whole-LUN cache).
    #[arg(long = "lun-size", default_value = crate::lab::cache::DEFAULT_LUN_SIZE, value_name = "SIZE", allow_hyphen_values = true)]
    pub lun_size: String,
    /// Disks of the array behind the cache, each serving one I/O at a time (an nbdkit each).
    #[arg(long, value_name = "N", default_value_t = crate::lab::cache::DEFAULT_DISKS,
          value_parser = clap::value_parser!(u32).range(1..=crate::lab::cache::MAX_DISKS as i64))]
    pub disks: u32,
    /// How long every read and write holds its disk (nbdkit's delay filter): sets both
    /// --read-delay and --write-delay.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub delay: Option<String>,
    /// How long a read holds its disk, whole ms [default: 8ms, a 10K-rpm disk's seek and half a rotation].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub read_delay: Option<String>,
    /// How long a write holds its disk, whole ms [default: 1ms, destaged from the array's write cache in gathered batches].
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub write_delay: Option<String>,
    /// Cache sizes to measure, % of the LUN.
    #[arg(long = "cache-sizes", default_value = "0,25,30,50,75,100", value_name = "PCT,...", allow_hyphen_values = true)]
    pub cache_sizes: String,
    /// A built-in profile to run (default: jetstress, without its fixed rate).
    #[arg(long = "profile", value_name = "NAME")]
    pub profile_name: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Args, Debug)]
pub struct ProtocolsArgs {
    /// Size of each RAM target.
    #[arg(long = "lun-size", default_value = "1g", value_name = "SIZE", allow_hyphen_values = true)]
    pub lun_size: String,
    /// A built-in profile to run against each target (default: the flags, or quick).
    #[arg(long = "profile", value_name = "NAME")]
    pub profile_name: Option<String>,
    /// The legs to run, in the lab's order: mem, file, nbd-unix, nbd-tcp, iscsi [default: all].
    #[arg(long, value_name = "LEG,...", allow_hyphen_values = true)]
    pub legs: Option<String>,
    /// Targets of every leg: N nbdkit servers (a port each) or N tgtd LUNs
    /// [default: 1, or the largest of --sweep targets=...].
    #[arg(long = "targets", value_name = "N")]
    pub target_count: Option<u32>,
    /// Each NBD target's own limit: a service time (1ms, one I/O at a time), an
    /// IOPS cap of 1000/k (500iops) or a byte rate each way (100MB/s).
    #[arg(long = "port-limit", value_name = "LIMIT", allow_hyphen_values = true)]
    pub port_limit: Option<String>,
    /// CPUs the target servers run on, apart from lunmark's (--cpus), or none
    /// [default: those --cpus leaves; without --cpus, on 4 or more CPUs the upper half (lunmark the lower), on fewer none apart].
    #[arg(long = "server-cpus", value_name = "LIST|none", allow_hyphen_values = true)]
    pub server_cpus: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

impl Study {
    /// The `run` flags the study takes.
    pub fn run_args(&self) -> &RunArgs {
        match self {
            Study::Protocols(a) => &a.run,
            Study::Cache(a) => &a.run,
        }
    }
}

pub fn execute(study: Study, store_flag: Option<&std::path::Path>) -> Result<i32> {
    let run = study.run_args();
    // Every flag is applied or refused. `--json FILE` gets the list of the
    // lab's results, judged here before anything starts and written at the end.
    let json = match &run.json {
        Some(j) => Some(crate::output_path::destination("--json", j, true, crate::output_path::Mode::Replace)?),
        None => None,
    };
    if let Some(replay) = &run.replay {
        anyhow::bail!(
            "--replay {}: a lab runs its own workloads at each row; replay a trace with `lunmark run --replay FILE`",
            replay.display()
        );
    }
    if let Some(journal) = &run.journal {
        anyhow::bail!(
            "--journal {}: a lab's targets are removed when it ends, so the journal could never be checked; drop --journal (--verify still checks every read)",
            journal.display()
        );
    }
    if let (Study::Protocols(_), Some(trace)) = (&study, &run.trace) {
        anyhow::bail!(
            "--trace {}: each row of lab protocols would overwrite the trace of the one before; record a trace with `lunmark run --trace` against one target",
            trace.display()
        );
    }
    if let Some(log) = &run.hdr_log {
        anyhow::bail!(
            "--hdr-log {}: a lab runs many results, one log could not hold them apart; write a log with `lunmark run --hdr-log FILE`",
            log.display()
        );
    }
    if run.live_json.is_some() || run.metrics_listen.is_some() {
        anyhow::bail!(
            "--live-json and --metrics-listen follow one run: a lab runs many; watch a point with `lunmark run --live-json FILE` or `--metrics-listen PORT`"
        );
    }
    if run.detail {
        anyhow::bail!("--detail: a lab prints its own table; show a row's workers and targets with `lunmark results show ID --detail`");
    }
    refuse_unapplied(&study)?;
    if run.output_format.is_some() {
        anyhow::bail!("a lab prints its own table and keeps each result in the store: drop --output-format and export them with `lunmark results export ID --format json|fio-json`");
    }
    match study {
        Study::Protocols(a) => protocols(*a, json, store_flag),
        Study::Cache(a) => cache(*a, json, store_flag),
    }
}

type JsonOut = Option<crate::output_path::Destination>;

/// The profile `lab cache` runs: `--profile NAME` or the positional PROFILE
/// (not both, unless they agree), jetstress otherwise.
fn cache_profile(a: &CacheArgs) -> Result<String> {
    match (&a.profile_name, &a.run.profile) {
        (Some(flag), Some(given)) if flag != given => {
            anyhow::bail!("lab cache: the profile is given twice, '{given}' and --profile {flag}: give one")
        }
        (Some(name), _) | (None, Some(name)) => Ok(name.clone()),
        (None, None) => Ok("jetstress".into()),
    }
}

/// `lab protocols`: the workload over each protocol's targets, one row a leg.
fn protocols(mut a: ProtocolsArgs, json: JsonOut, store_flag: Option<&std::path::Path>) -> Result<i32> {
    if a.profile_name.is_some() {
        a.run.profile = a.profile_name.clone();
    }
    if !a.run.targets.is_empty() {
        anyhow::bail!("lab protocols starts its own targets: drop --target");
    }
    let topology = topology(&mut a)?;
    let request = lab_request(&a.run, &a.lun_size)?;
    if a.run.dry_run {
        let text = crate::lab::protocols::plan_text(&request, &a.lun_size, &topology)?;
        crate::tprint!("{text}{}", request_text(&request, &a.run, &a.lun_size, store_flag)?);
        return Ok(exit::OK);
    }
    // The workload is checked as the first leg (mem:) checks it, before any server starts.
    crate::lab::protocols::check(&request, &a.lun_size, &topology)?;
    // The store is proved writable before any server starts.
    let store = ResultStore::choose(&a.run, store_flag)?;
    store.open()?;
    // Ctrl-C from here on only asks the lab to stop, so that it returns
    // through the guards that remove the link and stop the servers.
    crate::run::signals::interrupt_flag();
    // Removed when dropped, after the servers in them (run() drops those before it returns).
    let shaped = crate::lab::protocols::shaped_links(&topology)?;
    crate::lab::servers::pin_servers_to(&topology.server_cpus);
    if let Some(s) = shaped.describe() {
        crate::ewriteln!("== {s}");
    }
    let mut measure =
        |plan: &crate::run::RunPlan, ctx: &crate::run::RunContext| measure_and_keep(plan, ctx, None, &store, false).map(|k| k.result);
    let rows = crate::lab::protocols::run(&request, &a.lun_size, &topology, &shaped, &mut measure, &mut LiveView::notes_only())?;
    // The rows are saved already: a closed stdout is reported, not a panic.
    show(&crate::lab::protocols::render(&rows, &shaped, &topology), json.as_ref());
    write_json(json.as_ref(), rows.iter().filter_map(|(_, r)| r.as_ref().ok()));
    drop(shaped);
    if let Some(code) = interrupted() {
        return Ok(code);
    }
    let failed = rows.iter().any(|(_, r)| r.as_ref().is_ok_and(|r| r.status != crate::results::Status::Completed));
    Ok(if failed { exit::RUN_FAILED } else { exit::OK })
}

/// The lab's topology from its flags (`--legs`, `--targets`, `--port-limit`,
/// `--link`), checked before anything starts. `--link` is taken from the run's
/// flags: the lab gives each TCP leg its link itself.
fn topology(a: &mut ProtocolsArgs) -> Result<crate::lab::protocols::Topology> {
    use crate::lab::topology as t;
    let legs = t::parse_legs(a.legs.as_deref())?;
    let port_limit = t::check_port_limit(&legs, a.port_limit.as_deref())?;
    let links = t::LegLinks::parse(&a.run.link, &legs)?;
    a.run.link.clear();
    let targets = t::target_count(a.target_count, &a.run.sweep)?;
    let targets_swept = a.run.sweep.iter().any(|s| s.trim_start().starts_with("targets="));
    let (server_cpus, cpus_note) = cpus_apart(a)?;
    Ok(crate::lab::protocols::Topology { legs, targets, targets_swept, port_limit, links, server_cpus, cpus_note })
}

/// The CPUs the servers run on, apart from lunmark's, and the lab's line that
/// says so. Sets lunmark's own (`--cpus`) when the lab splits the host.
fn cpus_apart(a: &mut ProtocolsArgs) -> Result<(Vec<usize>, String)> {
    use crate::workload::cpus::{online_cpus, CpuList};
    let online = online_cpus();
    let list = |cpus: &[u32]| CpuList(cpus.to_vec()).to_string();
    let mine = match &a.run.cpus {
        Some(c) => Some(CpuList::parse(c, &online).map_err(anyhow::Error::msg)?.0),
        None => None,
    };
    let servers: Vec<u32> = match a.server_cpus.as_deref() {
        Some("none") => Vec::new(),
        Some(text) => CpuList::parse(text, &online).map_err(|e| anyhow::anyhow!("{}", e.replacen("--cpus", "--server-cpus", 1)))?.0,
        // The default: the CPUs --cpus leaves; without it, apart only where
        // each side keeps 2 CPUs or more.
        None => match &mine {
            Some(m) => online.iter().copied().filter(|c| !m.contains(c)).collect(),
            None if online.len() >= 4 => online[online.len() / 2..].to_vec(),
            None => Vec::new(),
        },
    };
    if servers.is_empty() {
        let why = match (a.server_cpus.as_deref(), &mine) {
            (Some(_), _) => "--server-cpus none".to_string(),
            (None, Some(_)) => "--cpus leaves no CPU for them".to_string(),
            (None, None) => {
                format!("this host has {} CPUs, and the lab sets servers apart on 4 or more (--server-cpus LIST to choose)", online.len())
            }
        };
        return Ok((Vec::new(), format!(
            "CPUs: none apart ({why}): lunmark, the target servers and the kernel share the CPUs, so the initiator's CPU below is lunmark's own time and the target side's the servers' own"
        )));
    }
    let initiator: Vec<u32> = match mine {
        Some(m) => {
            if let Some(c) = m.iter().find(|c| servers.contains(c)) {
                anyhow::bail!(
                    "--server-cpus {} and --cpus {}: CPU {c} is in both, so the servers' work would count as the initiator's; give CPUs apart",
                    list(&servers),
                    list(&m)
                );
            }
            m
        }
        None => online.iter().copied().filter(|c| !servers.contains(c)).collect(),
    };
    if initiator.is_empty() {
        anyhow::bail!("--server-cpus {}: that is every CPU of this host, and lunmark needs one apart; give fewer", list(&servers));
    }
    a.run.cpus = Some(list(&initiator));
    let note = format!(
        "CPUs apart: lunmark (the initiator) on CPUs {}, the target servers on CPUs {}: the initiator's CPU below is that of its own CPUs",
        list(&initiator),
        list(&servers)
    );
    Ok((servers.iter().map(|c| *c as usize).collect(), note))
}

/// `lab cache`: the workload through a cache of each size in front of a slow LUN.
fn cache(mut a: CacheArgs, json: JsonOut, store_flag: Option<&std::path::Path>) -> Result<i32> {
    if !a.run.link.is_empty() {
        anyhow::bail!(
            "lab cache serves its LUN on a unix socket, so no link is crossed: drop --link (lab protocols --link RATE shapes one)"
        );
    }
    if !a.run.targets.is_empty() || a.run.cache.is_some() || a.run.trace.is_some() {
        anyhow::bail!("lab cache starts its own LUN and sets the cache and trace of each point: drop --target, --cache and --trace");
    }
    let sizes = super::cache_sizes::parse("--cache-sizes", &a.cache_sizes)?;
    // The error names the flag the value came from: --delay sets both.
    let delay = |flag: &str, own: &Option<String>, default: &str| {
        let (flag, text) = match (own, &a.delay) {
            (Some(t), _) => (flag, t.as_str()),
            (None, Some(t)) => ("--delay", t.as_str()),
            (None, None) => (flag, default),
        };
        crate::lab::cache::delay_ms(text).map_err(|e| anyhow::anyhow!("{flag}: {e}"))
    };
    let read_delay_ms = delay("--read-delay", &a.read_delay, crate::lab::cache::DEFAULT_READ_DELAY)?;
    let write_delay_ms = delay("--write-delay", &a.write_delay, crate::lab::cache::DEFAULT_WRITE_DELAY)?;
    a.run.profile = Some(cache_profile(&a)?);
    // A skewed stream unless --dist says otherwise (README: why zipf 0.9).
    let dist = match a.run.dist.take() {
        Some(d) => d,
        None => crate::lab::cache::DEFAULT_DIST.parse().expect("the lab's default distribution parses"),
    };
    a.run.dist = Some(dist);
    // The cache of every size, from --cache-mode, --cache-dev and --cache-block;
    // each row sets its size. The request itself has no cache of its own.
    let cache_tuned = a.run.cache_mode.is_some() || a.run.cache_dev.is_some() || a.run.cache_block.is_some();
    let cache = RunArgs { cache: Some("100%".into()), ..a.run.clone() }.cache_config()?.expect("a cache was set");
    (a.run.cache_mode, a.run.cache_dev, a.run.cache_block) = (None, None, None);
    let opts = crate::lab::cache::LabOptions {
        lun_size: a.lun_size.clone(),
        disks: a.disks,
        read_delay_ms,
        write_delay_ms,
        sizes,
        cache,
        cache_tuned,
    };
    // Refused here, before anything starts: a LUN too small for its disks.
    opts.disk_bytes()?;
    // A short study by default (the profile's own 60 s per size would take 6
    // minutes): the ramp warms the cache, the rest is measured.
    a.run.time.get_or_insert_with(|| crate::lab::cache::DEFAULT_TIME.into());
    a.run.ramp.get_or_insert_with(|| crate::lab::cache::DEFAULT_RAMP.into());
    let request = lab_request(&a.run, &a.lun_size)?;
    opts.check_memory(&request)?;
    if a.run.dry_run {
        let text = crate::lab::cache::plan_text(&request, &opts)?;
        crate::tprint!("{text}{}", request_text(&request, &a.run, &a.lun_size, store_flag)?);
        return Ok(exit::OK);
    }
    let store = ResultStore::choose(&a.run, store_flag)?;
    store.open()?;
    crate::lab::servers::require("nbdkit", "nbdkit")?;
    // As in lab protocols: Ctrl-C from here on stops the lab through its guards.
    crate::run::signals::interrupt_flag();
    let mut measure =
        |plan: &crate::run::RunPlan, ctx: &crate::run::RunContext| measure_and_keep(plan, ctx, None, &store, false).map(|k| k.result);
    let points = crate::lab::cache::run(&request, &opts, &mut measure, &mut LiveView::notes_only())?;
    let rows = crate::lab::cache::rows(&points, &opts);
    show(&crate::lab::cache::render(&points, &rows, &opts, &a.run.dist.as_ref().map(|d| d.to_string()).unwrap_or_default()), json.as_ref());
    write_json(json.as_ref(), points.iter().filter_map(|p| p.result.as_ref().ok()));
    if let Some(code) = interrupted() {
        return Ok(code);
    }
    let failed = points.iter().any(|p| p.result.as_ref().map_or(true, |r| r.status != crate::results::Status::Completed));
    Ok(if failed { exit::RUN_FAILED } else { exit::OK })
}

/// Flags `lab` takes from `run` that a study cannot apply: refused, naming
/// the flag and what to do instead (the rest are applied to every row).
fn refuse_unapplied(study: &Study) -> Result<()> {
    if let Some(curve) = &study.run_args().curve {
        anyhow::bail!("--curve {curve}: a lab runs the points of its study, and a curve paces its own: run `lunmark run --curve {curve} -t TARGET` on one target");
    }
    if study.run_args().tune {
        anyhow::bail!("--tune: a lab runs the points of its study, and a tuning chooses its own threads: run `lunmark run jetstress --tune -t TARGET` on one target");
    }
    if let Some(w) = study.run_args().workers.filter(|w| w.min < w.max) {
        anyhow::bail!("--workers {w}: a range of workers is searched by a knee search, which a lab does not run: give one count");
    }
    if let Some(sla) = &study.run_args().sla {
        anyhow::bail!("--sla {sla}: a lab runs the points of its study, and a knee search chooses its own: run `lunmark run --sla '{sla}' -t TARGET` to search one target");
    }
    match study {
        Study::Protocols(a) => {
            if let Some(size) = &a.run.size {
                anyhow::bail!("--size {size}: lab protocols sizes every target itself; give --lun-size {size} instead");
            }
            if a.run.destructive || a.run.force {
                anyhow::bail!(
                    "--destructive and --force guard devices and files of yours; lab protocols writes only targets it creates: drop them"
                );
            }
            // The lab chooses each leg's engine (mem:, a file, NBD, iSCSI): a flag
            // that tunes one engine would apply to one leg of five, or fail a leg mid-study.
            if let Some(flag) = engine_flag(&a.run) {
                anyhow::bail!(
                    "{flag}: lab protocols chooses the engine of each leg (mem:, a file in /dev/shm, NBD, iSCSI), and it would apply to the file leg alone: \
                     drop {flag}, or run `lunmark run {flag} --target FILE` to measure it on a file"
                );
            }
            // A host cache in front of every leg would hide part of what each protocol costs.
            if a.run.cache.is_some() || a.run.cache_mode.is_some() || a.run.cache_dev.is_some() || a.run.cache_block.is_some() {
                let given = a
                    .run
                    .cache
                    .as_deref()
                    .map(|c| format!("--cache {c}"))
                    .unwrap_or_else(|| "--cache-mode/--cache-dev/--cache-block".into());
                anyhow::bail!(
                    "{given}: lab protocols compares what each protocol costs, and a host cache in front of every leg would hide it: \
                     drop it, or study a cache with `lunmark lab cache` (or `lunmark run --cache` on one target)"
                );
            }
            // The legs are a file, mem: and network LUNs: no one sync kind applies to all of them.
            if let Some(flag) = sync_flag(&a.run) {
                anyhow::bail!(
                    "{flag}: lab protocols runs the same workload on a file, on mem: and on network LUNs, and no sync applies to all of them \
                     (--fsync/--fdatasync need a file, --flush a device or network LUN, mem: has none): drop it, or run `lunmark run {flag} ...` on one target"
                );
            }
        }
        Study::Cache(a) => {
            if let Some(pass) = &a.run.pass {
                anyhow::bail!(
                    "--pass {pass}: lab cache is a study and judges no verdict; run `lunmark run --cache PCT --pass ...` to judge one size"
                );
            }
            if a.run.rate.is_some() || a.run.mailboxes.is_some() || a.run.iops_per_mailbox.is_some() {
                anyhow::bail!(
                    "--rate, --mailboxes and --iops-per-mailbox: lab cache runs flat out so that the cache shows in IOPS; drop them"
                );
            }
            if let Some(size) = &a.run.size {
                anyhow::bail!("--size {size}: lab cache sizes its LUN itself; give --lun-size {size} instead");
            }
            if a.run.destructive || a.run.force {
                anyhow::bail!(
                    "--destructive and --force guard devices and files of yours; lab cache writes only the LUN it creates: drop them"
                );
            }
            // The LUN is an NBD export: --flush (NBD_CMD_FLUSH) applies, a file's fsync does not.
            if a.run.fsync.is_some() || a.run.fdatasync.is_some() {
                let flag = if a.run.fsync.is_some() { "--fsync" } else { "--fdatasync" };
                anyhow::bail!("{flag}: lab cache's LUN is an NBD export, not a file; use --flush N to flush its write cache, or drop it");
            }
        }
    }
    Ok(())
}

/// The engine-tuning flag (--engine, --buffered, --sqpoll, --poll) a lab's run
/// arguments carry, as typed (None: none).
fn engine_flag(run: &RunArgs) -> Option<String> {
    if let Some(e) = &run.engine {
        return Some(format!("--engine {e}"));
    }
    if run.buffered {
        return Some("--buffered".into());
    }
    if let Some(cpu) = &run.sqpoll {
        return Some(if cpu == "any" { "--sqpoll".into() } else { format!("--sqpoll={cpu}") });
    }
    run.poll.then(|| "--poll".into())
}

/// The sync flag a lab's run arguments carry, as typed (None: none).
fn sync_flag(run: &RunArgs) -> Option<String> {
    [("--fsync", run.fsync), ("--fdatasync", run.fdatasync), ("--flush", run.flush)]
        .into_iter()
        .find_map(|(flag, n)| n.map(|n| format!("{flag} {n}")))
}

/// The typed request of a lab's rows, from its flags, checked whole before
/// anything starts; each row sets its own targets, size, cache and label.
fn lab_request(run: &RunArgs, lun_size: &str) -> Result<RunRequest> {
    crate::units::parse_size(lun_size).map_err(|e| anyhow::anyhow!("--lun-size: {e}"))?;
    run.request(Vec::new())
}

/// The rest of a lab's request, as `run --dry-run` says it: what every row
/// applies (verify, cache, power, errors, store, the live view).
fn request_text(request: &RunRequest, run: &RunArgs, lun_size: &str, store_flag: Option<&std::path::Path>) -> Result<String> {
    let mut r = request.on(vec![Target::parse(&format!("mem:{lun_size}"))?]);
    r.context.label = None; // said per row above
    let plan = r.plan()?;
    let store = ResultStore::choose(run, store_flag)?;
    Ok(super::request_text::render(&r.context, &plan, store.path()))
}

/// The lab's table: on stdout, or on stderr when stdout carries the JSON
/// (`--json -`). A closed stdout is reported, not a panic: the rows are saved.
fn show(table: &str, json: Option<&crate::output_path::Destination>) {
    if json == Some(&crate::output_path::Destination::Stdout) {
        crate::ewrite!("{table}");
    } else if let Err(e) = super::print_out(table, "the summary") {
        crate::ewriteln!("error: {e}");
    }
}

/// `--json`: the lab's results (those that ran) as one JSON list.
fn write_json<'a>(json: Option<&crate::output_path::Destination>, results: impl Iterator<Item = &'a crate::results::model::RunResult>) {
    let Some(dest) = json else { return };
    let list: Vec<&crate::results::model::RunResult> = results.collect();
    let text = serde_json::to_string_pretty(&list).expect("results serialise") + "\n";
    let written = match dest {
        crate::output_path::Destination::Stdout => super::print_out(&text, "the JSON results"),
        crate::output_path::Destination::File(f) => f.replace_with(text.as_bytes()).map_err(anyhow::Error::from),
    };
    if let Err(e) = written {
        crate::ewriteln!("error: {e:#}");
    }
}

/// After a lab: when Ctrl-C or SIGTERM stopped it (in set-up or in a row), says
/// so, and gives the exit code of an interrupted run; None when it ran through.
fn interrupted() -> Option<i32> {
    if !crate::run::signals::interrupt_flag().load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    // The rows are saved: a closed stdout was reported with the table, and must not panic here.
    let _ = super::print_out(
        &format!(
            "lab {}: no further row ran; the rows above (an interrupted one marked) are kept in the store\n",
            crate::run::signals::reason()
        ),
        "the summary",
    );
    Some(exit::INTERRUPTED)
}
