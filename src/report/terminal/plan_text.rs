//! What `--dry-run` says of the plan: each point's effective workload (engine,
//! ramp and run length, region, targets, groups and their access lines, sync,
//! replay, data reduction, steady state), then the rounds, repeats and pass
//! criteria, in words a user can check. Pure: a view of the plan in, text out.
//!
//! The view is filled where the plan is (`lab::plan_view`): which engine a
//! point runs through, how each target is reached and what a replay holds are
//! the run's to say, so they come in as data.

use std::fmt::Write;

use crate::results::model::Pick;
use crate::results::pass::Criterion;
use crate::units::{counted, Bytes};
use crate::workload::polling::Polling;
use crate::workload::replay::{OffsetMode, ReplaySettings, ReplaySpeed};
use crate::workload::rounds::Rounds;
use crate::workload::{RunLength, WorkloadSpec};

/// A run plan as the dry run states it.
#[derive(Clone, Debug)]
pub struct PlanView<'a> {
    pub warnings: &'a [String],
    pub points: Vec<PointView<'a>>,
    /// Run the points as rounds until one is steady.
    pub rounds: Option<&'a Rounds>,
    /// Runs of each point (1 = no repeats).
    pub repeat: u32,
    pub pick: Pick,
    pub criteria: &'a [Criterion],
    /// A knee search (--sla, --tune, a fio job's latency_target) chooses the
    /// queue depth or the workers: what the workload gives is not what runs.
    pub search: Option<&'a crate::results::search::SearchSpec>,
}

/// One point of a plan.
#[derive(Clone, Debug)]
pub struct PointView<'a> {
    /// Its sweep values, "qd=8 bs=4k" (empty for a plain run).
    pub label: &'a str,
    /// Its effective workload.
    pub spec: &'a WorkloadSpec,
    /// The engines it runs through, joined: "io_uring", "mem".
    pub engine: String,
    /// How each of its targets is reached, by target index.
    pub transports: Vec<Transport>,
    /// With --replay: the trace the point issues instead of its groups' own I/Os.
    pub replay: Option<ReplayView<'a>>,
}

/// A trace to replay, as loaded and mapped onto the run's targets.
#[derive(Clone, Copy, Debug)]
pub struct ReplayView<'a> {
    pub settings: &'a ReplaySettings,
    /// The trace's format: lunmark, blkparse or msr.
    pub format: &'a str,
    /// I/O records replayed, and of them reads and writes.
    pub records: usize,
    pub reads: u64,
    pub writes: u64,
    /// The largest transfer, bytes.
    pub max_len: u32,
    /// Recorded time from the first record replayed to the last.
    pub span_ns: u64,
    /// Trace events that are not reads or writes (discards, flushes), not replayed.
    pub not_io: u64,
    /// Records of devices the map leaves out, not replayed.
    pub unmapped: u64,
    /// (device name, run target index) of each device replayed.
    pub mapping: &'a [(String, usize)],
    /// The highest byte any record reaches, per run target.
    pub reach: &'a [u64],
}

/// How a target is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A file or block device through the local kernel: direct I/O, or the
    /// page cache with --buffered.
    Local,
    /// A RAM LUN or sink inside lunmark (mem:, null:): no kernel, no page cache.
    InProcess,
    /// NBD through libnbd.
    Nbd,
    /// iSCSI through libiscsi.
    Iscsi,
}

impl PointView<'_> {
    /// How target `index` is reached (a file or device when the view does not say).
    fn transport(&self, index: usize) -> Transport {
        self.transports.get(index).copied().unwrap_or(Transport::Local)
    }
}

/// Direct I/O or the page cache, said of the files and devices only: RAM LUNs,
/// sinks and network targets have no page cache on this host, so neither applies.
fn io_path(p: &PointView) -> &'static str {
    let s = p.spec;
    let local = (0..s.targets.len()).filter(|&i| p.transport(i) == Transport::Local).count();
    match (local, s.buffered) {
        (0, _) => "",
        (n, false) if n == s.targets.len() => "   (direct I/O)",
        (n, true) if n == s.targets.len() => "   (buffered: page cache in the path)",
        (_, false) => "   (direct I/O to the files and devices)",
        (_, true) => "   (buffered: page cache in the path of the files and devices)",
    }
}

/// The polling line of `--dry-run`.
fn polling(p: &Polling) -> String {
    let mut parts = Vec::new();
    if let Some(sq) = p.sqpoll {
        parts.push(format!("submission queue polled by a kernel thread on {sq} (--sqpoll; its CPU time is in the busy CPU)"));
    }
    if p.poll {
        parts.push("completions polled from the device's poll queues (--poll)".to_string());
    }
    parts.join("; ")
}

/// What `--dry-run` says about a replay onto `targets`.
pub fn replay(r: &ReplayView, targets: &[String]) -> String {
    let mut out = String::new();
    let s = r.settings;
    let speed = match s.speed {
        ReplaySpeed::Max => "max (as fast as the queue allows; the recorded timing is not kept)".to_string(),
        ReplaySpeed::Factor(1.0) => "1 (the recorded timing)".to_string(),
        ReplaySpeed::Factor(f) => format!("{f} (the recorded timing, {f} times as fast)"),
    };
    let _ =
        writeln!(out, "replay: {} ({} format{})", s.file.display(), r.format, if s.format.is_some() { ", as given" } else { ", detected" });
    let _ = writeln!(
        out,
        "replay: {} I/O record{} ({} read{}, {} write{}, largest transfer {}) over {:.3} s recorded; speed {speed}",
        r.records,
        crate::units::plural(r.records as u64),
        r.reads,
        crate::units::plural(r.reads),
        r.writes,
        crate::units::plural(r.writes),
        Bytes(r.max_len as u64),
        r.span_ns as f64 / 1e9
    );
    let skipped = r.not_io + r.unmapped;
    if skipped > 0 {
        let _ = writeln!(
            out,
            "replay: {} skipped ({} not reads or writes: discards, flushes, events without data; {} of devices not mapped)",
            counted(skipped, "trace event"),
            r.not_io,
            r.unmapped
        );
    }
    for (d, t) in r.mapping {
        let _ = writeln!(
            out,
            "replay: device {d} -> target {t} ({}), reaching byte {}",
            targets.get(*t).map(String::as_str).unwrap_or("?"),
            r.reach[*t]
        );
    }
    let _ = writeln!(
        out,
        "replay: offsets beyond a target's region: {}",
        match s.offsets {
            OffsetMode::Refuse => "refused before the run (--replay-offsets wrap to wrap them)",
            OffsetMode::Wrap => "wrapped into the region",
        }
    );
    if s.speed.timed() {
        let _ = writeln!(
            out,
            "replay: latency is counted from each record's recorded time (service time beside); the lag of issue behind it is reported"
        );
    }
    out
}

/// What `--dry-run` prints of the plan.
/// One access line of a group, in words.
fn access_line(l: &crate::workload::AccessLine) -> String {
    format!(
        "  {:>5.1}% of I/Os: {} transfers, {}% read / {}{}% write, {}% random / {}% sequential, aligned to {}{}{}{}",
        l.share,
        l.bs,
        l.read,
        if l.trim > 0.0 { format!("{}% trim / ", l.trim) } else { String::new() },
        100.0 - l.read - l.trim,
        l.random,
        100.0 - l.random,
        crate::units::Bytes(l.alignment()),
        // A distribution only shapes random offsets: unsaid on sequential lines.
        crate::workload::dist::describe(l.dist.as_ref().filter(|_| l.random > 0.0)),
        crate::workload::spec::describe_think(l),
        crate::workload::spec::describe_runs(l)
    )
}

/// A group's line: its workers, targets and outstanding I/Os (or what a search chooses), and its pace.
fn group_line(
    s: &crate::workload::WorkloadSpec,
    g: &crate::workload::WorkerGroup,
    search: Option<&crate::results::search::SearchSpec>,
) -> String {
    let nt = if g.worker_per_target { 1 } else { s.group_targets(g).len() as u64 };
    let per_worker = s.targets_per_worker(g) as u64;
    let workers = s.group_workers(g);
    let index = s.groups.iter().position(|x| x.name == g.name);
    let searched = searched_load(search, index, g.qd);
    // Searched, the group's own workers or depth never run: say what does.
    let (workers_text, depth, in_flight) = match searched {
        None => (counted(workers, "worker"), format!("{} outstanding", g.qd), counted(workers as u64 * per_worker * g.qd as u64, "I/O")),
        Some(((w_lo, w_hi), (q_lo, q_hi))) => {
            let workers_text = if w_lo == w_hi { counted(w_lo, "worker") } else { format!("{w_lo} to {w_hi} workers (searched)") };
            let depth = if q_lo == q_hi {
                format!("{q_lo} outstanding")
            } else {
                format!("the searched queue depth ({q_lo} to {q_hi}, the knee search below; not {})", g.qd)
            };
            let lo = w_lo as u64 * per_worker * q_lo as u64;
            (workers_text, depth, format!("{lo} to {}", counted(w_hi as u64 * per_worker * q_hi as u64, "I/O")))
        }
    };
    let mut late = crate::report::point_view::window_text(s, g);
    if !late.is_empty() && !s.ramp.is_zero() {
        late += " (its ramp before)";
    }
    format!(
        "group '{}': {workers_text} x {} x {depth} = {in_flight} in flight{}{late}",
        g.name,
        counted(nt, "target"),
        g.rate
            .map(|r| format!(", rate {r:.0} IOPS{}", if g.arrivals.is_fixed() { "" } else { " (Poisson arrivals)" }))
            .or(g.follow.as_ref().map(|f| format!(", IOPS held at {} x group '{}'", f.ratio, f.group)))
            .unwrap_or_default()
    )
}

/// The (workers, queue depth) ranges a search runs group `index` at, None
/// where the search leaves it as the workload has it (--tune's other groups).
fn searched_load(search: Option<&crate::results::search::SearchSpec>, index: Option<usize>, qd: u32) -> Option<((u32, u32), (u32, u32))> {
    let spec = search?;
    let workers = (spec.workers.min, spec.workers.max);
    match spec.group {
        // --tune: the tuned group's threads, each at its own depth; the others as they are.
        Some(t) => (index == Some(t)).then_some((workers, (qd, qd))),
        None => Some((workers, spec.fixed_qd.map_or((1, spec.max_qd), |q| (q, q)))),
    }
}

/// Where each worker of a group with offset_increment starts (the first three and the last).
fn offset_increment_line(s: &crate::workload::WorkloadSpec, g: &crate::workload::WorkerGroup) -> Option<String> {
    let (inc, size) = (g.offset_increment?, s.size?);
    let n = s.group_workers(g);
    let parts: Vec<String> = (0..n)
        .filter(|w| *w < 3 || *w == n - 1)
        .filter_map(|w| s.worker_part(g, w).map(|(shift, _)| (w, s.offset.get() + shift)))
        .map(|(w, at)| format!("{}worker {w} from offset {}", if w == n - 1 && n > 4 { "..., " } else { "" }, crate::units::Bytes(at)))
        .collect();
    let len = size.get().saturating_sub(s.worker_part(g, 0)?.1);
    Some(format!("  offset_increment {inc}: each worker on its own {}: {}", crate::units::Bytes(len), parts.join(", ")))
}

/// The whole run's length: each point's ramp and run time, times its
/// repeats; unknown where a point runs by I/O count, rounds run until steady,
/// or a trace sets the pace.
pub fn duration(plan: &PlanView) -> String {
    if plan.rounds.is_some() {
        return "duration: unknown: the rounds run until the watched point is steady (see the rounds above)".into();
    }
    let mut total = std::time::Duration::ZERO;
    for p in &plan.points {
        match (p.spec.run, &p.replay) {
            (RunLength::Time(_), None) => total += p.spec.planned_length().unwrap_or_default() * plan.repeat,
            (RunLength::Ios(_), _) => return "duration: unknown: points run until each worker completes its I/Os (--ios)".into(),
            (_, Some(_)) => return "duration: unknown: the trace sets the pace (see the replay above)".into(),
        }
    }
    let runs = plan.points.len() * plan.repeat as usize;
    let each = if runs == 1 { String::new() } else { format!(" over {}", counted(runs as u64, "measured run")) };
    format!("duration: {} of ramp and measurement{each}, plus set-up and any idle baseline", crate::units::format_duration(total))
}

pub fn render(plan: &PlanView) -> String {
    let mut out = String::new();
    for w in plan.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let n = plan.points.len();
    for (i, p) in plan.points.iter().enumerate() {
        // A single swept value is a point too: named as the run's output names it.
        if n > 1 || !p.label.is_empty() {
            let _ = writeln!(out, "point {}/{}: {}", i + 1, n, p.label);
        }
        point_head(&mut out, p);
        for g in &p.spec.groups {
            group_lines(&mut out, p, g, plan.search);
        }
        point_tail(&mut out, p, plan.search);
    }
    if let Some(r) = plan.rounds {
        let _ = writeln!(out, "{}", r.describe());
    }
    if plan.repeat > 1 {
        let _ = writeln!(
            out,
            "each point runs {} times; the point reports {}",
            plan.repeat,
            crate::report::terminal::table::pick_text(plan.pick)
        );
    }
    let _ = writeln!(out, "{}", duration(plan));
    if !plan.criteria.is_empty() {
        let _ = writeln!(out, "pass criteria: {}", plan.criteria.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(", "));
    }
    out
}

/// A point's engine, ramp, run, polling, region and targets.
fn point_head(out: &mut String, p: &PointView) {
    let s = p.spec;
    let run = match s.run {
        RunLength::Time(d) if s.groups_apart() => format!(
            "{} measured in all, each group over its own window (on its line)",
            crate::units::format_duration(s.planned_span().unwrap_or(d))
        ),
        RunLength::Time(d) => format!("{} measured", crate::units::format_duration(s.planned_span().unwrap_or(d))),
        RunLength::Ios(k) => format!("{} per worker measured", counted(k, "I/O")),
    };
    let _ = writeln!(
        out,
        "engine: {}   ramp: {} (not measured)   run: {}   seed: {}",
        p.engine,
        crate::units::format_duration(s.ramp),
        run,
        s.seed
    );
    if !s.polling.is_off() {
        let _ = writeln!(out, "polling: {}", polling(&s.polling));
    }
    let region = match s.size {
        Some(len) => format!("{} from offset {}", len, s.offset),
        None => format!("whole target from offset {}", s.offset),
    };
    let _ = writeln!(out, "region on each target: {region}{}", io_path(p));
    for (ti, t) in s.targets.iter().enumerate() {
        let how = match p.transport(ti) {
            Transport::Nbd => format!("   (NBD through libnbd: each worker opens {})", counted(s.connections.max(1), "connection")),
            Transport::Iscsi => {
                format!("   (iSCSI through libiscsi: each worker logs in {}, READ16/WRITE16)", counted(s.connections.max(1), "session"))
            }
            Transport::Local | Transport::InProcess => String::new(),
        };
        let _ = writeln!(out, "target {ti}: {t}{how}");
    }
}

/// A worker group: its line, offsets and think time, and its access lines
/// (a replay's I/Os are the trace's).
fn group_lines(out: &mut String, p: &PointView, g: &crate::workload::WorkerGroup, search: Option<&crate::results::search::SearchSpec>) {
    let s = p.spec;
    let _ = writeln!(out, "{}", group_line(s, g, search));
    if let Some(line) = offset_increment_line(s, g) {
        let _ = writeln!(out, "{line}");
    }
    if let Some(t) = g.thinktime {
        let _ = writeln!(
            out,
            "  think time: each worker pauses {} after every {}",
            crate::units::format_duration(t),
            counted(g.thinktime_blocks.unwrap_or(1), "I/O")
        );
    }
    if p.replay.is_some() {
        let _ = writeln!(out, "  I/Os: the replayed trace's, in its order (replay: below)");
        return;
    }
    for l in &g.access {
        let _ = writeln!(out, "{}", access_line(l));
    }
}

/// A point's sync, totals, replay, data reduction and steady-state lines.
fn point_tail(out: &mut String, p: &PointView, search: Option<&crate::results::search::SearchSpec>) {
    let s = p.spec;
    if let Some(sync) = s.sync {
        let _ = writeln!(out, "sync: {sync} ({}), latency recorded apart as sync", sync.kind.flag());
    }
    let total = match search {
        Some(spec) if spec.searches_workers() => "the workers and I/Os in flight the search chooses".to_string(),
        Some(_) => format!("{}, the I/Os in flight the search chooses", counted(s.total_workers(), "worker")),
        None => format!("{}, {} in flight", counted(s.total_workers(), "worker"), counted(s.total_in_flight(), "I/O")),
    };
    let _ = writeln!(out, "total: {total}");
    if let Some(r) = &p.replay {
        out.push_str(&replay(r, &s.targets));
    }
    // Data reduction shapes written data only: a read-only phase has none to describe.
    if let Some(d) = s.data.as_ref().filter(|_| !s.write_sizes().is_empty()) {
        let _ = writeln!(out, "{}", d.describe(s.data_unit()));
    }
    if let Some(st) = &s.steady {
        let _ = writeln!(out, "{}", st.describe());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::check_golden;
    use crate::units::Bytes;
    use crate::workload::profile::builtin;

    #[test]
    fn a_swept_plan_on_network_targets_matches_its_snapshot() {
        let mut groups = builtin("exchange").unwrap().phases[0].groups.clone();
        groups[0].thinktime = Some(std::time::Duration::from_millis(2));
        groups[0].thinktime_blocks = Some(4);
        let targets = vec!["nbd://127.0.0.1:10809/lun".to_string(), "iscsi://127.0.0.1/iqn.2004-01.org.example:lun/1".to_string()];
        let mut base = WorkloadSpec {
            size: Some(Bytes(1 << 30)),
            offset: Bytes(4096),
            ramp: std::time::Duration::from_secs(2),
            connections: 2,
            sync: Some(crate::workload::SyncEvery { kind: crate::workload::ops::SyncKind::Flush, every: 8 }),
            data: Some(crate::workload::reduction::DataReduction { compress: 50.0, dedupe: 0.0, dedupe_unit: None }),
            steady: Some(crate::workload::steady::SteadySpec::new(crate::workload::steady::SteadyMetric::Iops)),
            ..WorkloadSpec::plain(targets, groups)
        };
        let specs: Vec<WorkloadSpec> = [2, 4]
            .into_iter()
            .map(|qd| {
                base.groups.iter_mut().for_each(|g| g.qd = qd);
                base.clone()
            })
            .collect();
        let labels = ["qd=2", "qd=4"];
        let criteria = crate::results::pass::parse("read_lat_avg<20ms,iops>1000").unwrap();
        let warnings = vec!["group 'log': an example warning".to_string()];
        let plan = PlanView {
            warnings: &warnings,
            points: specs
                .iter()
                .zip(labels)
                .map(|(spec, label)| PointView {
                    label,
                    spec,
                    engine: "iscsi+nbd".into(),
                    transports: vec![Transport::Nbd, Transport::Iscsi],
                    replay: None,
                })
                .collect(),
            rounds: None,
            repeat: 3,
            pick: Pick::Median,
            criteria: &criteria,
            search: None,
        };
        check_golden("plan-sweep.txt", &render(&plan));
    }

    #[test]
    fn direct_or_buffered_is_said_of_the_files_and_devices_only() {
        let groups = builtin("quick").unwrap().phases[0].groups.clone();
        let targets = vec!["/dev/loop9".to_string(), "mem:1g".to_string()];
        let region = |transports: Vec<Transport>, buffered: bool| {
            let spec = WorkloadSpec { buffered, ..WorkloadSpec::plain(targets.clone(), groups.clone()) };
            let point = PointView { label: "", spec: &spec, engine: "io_uring".into(), transports, replay: None };
            let plan =
                PlanView { warnings: &[], points: vec![point], rounds: None, repeat: 1, pick: Pick::Mean, criteria: &[], search: None };
            render(&plan).lines().find(|l| l.starts_with("region")).unwrap_or_default().to_string()
        };
        let tail = |t: &str| format!("region on each target: whole target from offset 0{t}");
        assert_eq!(region(vec![Transport::InProcess, Transport::Nbd], false), tail(""));
        assert_eq!(region(vec![Transport::Local, Transport::Local], false), tail("   (direct I/O)"));
        assert_eq!(region(vec![Transport::Local, Transport::Local], true), tail("   (buffered: page cache in the path)"));
        assert_eq!(region(vec![Transport::Local, Transport::InProcess], false), tail("   (direct I/O to the files and devices)"));
        assert_eq!(
            region(vec![Transport::Local, Transport::InProcess], true),
            tail("   (buffered: page cache in the path of the files and devices)")
        );
    }

    #[test]
    fn a_replayed_plan_of_rounds_matches_its_snapshot() {
        let profile = builtin("pts-iops").unwrap();
        let mut groups = builtin("quick").unwrap().phases[0].groups.clone();
        for l in groups.iter_mut().flat_map(|g| g.access.iter_mut()) {
            l.trim = 10.0;
            l.dist = Some("zipf:0.9".parse().unwrap());
        }
        let spec = WorkloadSpec {
            buffered: true,
            run: RunLength::Ios(1000),
            polling: Polling { sqpoll: None, poll: true },
            ..WorkloadSpec::plain(vec!["mem:1g".into()], groups.clone())
        };
        let settings = ReplaySettings {
            file: "/tmp/trace.blktrace.txt".into(),
            speed: ReplaySpeed::Factor(2.0),
            offsets: OffsetMode::Wrap,
            ..Default::default()
        };
        let mapping = vec![("8:0".to_string(), 0)];
        let reach = vec![1 << 20];
        let trace = ReplayView {
            settings: &settings,
            format: "blkparse",
            records: 13,
            reads: 9,
            writes: 4,
            max_len: 16384,
            span_ns: 1_234_567,
            not_io: 1,
            unmapped: 2,
            mapping: &mapping,
            reach: &reach,
        };
        let one = |replay| PlanView {
            warnings: &[],
            points: vec![PointView { label: "", spec: &spec, engine: "mem".into(), transports: vec![Transport::InProcess], replay }],
            rounds: profile.rounds.as_ref(),
            repeat: 1,
            pick: Pick::Mean,
            criteria: &[],
            search: None,
        };
        let replayed = render(&one(Some(trace)));
        assert!(replayed.contains("I/Os: the replayed trace's") && !replayed.contains("% of I/Os:"), "{replayed}");
        check_golden("plan-replay.txt", &replayed);
        let generated = render(&one(None));
        assert!(generated.contains("10% trim") && generated.contains("zipf:0.9"), "{generated}");
        check_golden("plan-rounds.txt", &generated);
    }
}
