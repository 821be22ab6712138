//! The jobs assembled into one profile: phases, groups, targets, and the
//! settings every job must agree on.

use super::*;

/// Refuses jobs that differ from the first in something lunmark holds once per run.
/// `keys`: the options behind the value, the first the job sets is named.
pub(super) fn agree_among(jobs: &[&Job], what: &str, keys: &[&str], same: &dyn Fn(&Job, &Job) -> bool, problems: &mut Problems) {
    let Some(first) = jobs.first() else { return };
    if let Some(j) = jobs.iter().find(|j| !same(j, first)) {
        let key = keys.iter().find(|k| j.given.contains_key(*k)).unwrap_or(&keys[0]);
        let s = j.cause(key);
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

/// Every sized job's region must be the same; offset_increment grows a job's
/// region (it holds every clone's part), so where it is behind the difference
/// the refusal names it rather than a size the jobs agree on.
fn same_region(jobs: &[&Job], problems: &mut Problems) {
    let Some(first) = jobs.first() else { return };
    let Some(j) = jobs.iter().find(|j| j.file_size != first.file_size) else { return };
    let Some((grown, other)) = [(j, first), (first, j)].into_iter().find(|(a, _)| a.offset_increment.is_some()) else {
        return agree_among(
            jobs,
            "the size of each target's region (size, filesize)",
            &["size", "filesize"],
            &|a, b| a.file_size == b.file_size,
            problems,
        );
    };
    let region = |job: &Job| job.file_size.map_or("the whole file".to_string(), |b| Bytes(b).to_string());
    problems.push(
        &grown.cause("offset_increment"),
        format!(
            "job '{}' spreads its {} clones apart, which grows its region on each target to {} where job '{}' has {}: lunmark holds one region for the whole run, so give the jobs regions of the same size (size, filesize, offset_increment)",
            grown.name,
            grown.numjobs,
            region(grown),
            other.name,
            region(other)
        ),
        false,
    );
}

/// When each phase starts on fio's clock, which `startdelay` counts from (the
/// start of the whole run, not of the job's phase): the first at 0, each next
/// one when the last job before it ends (its delay, ramp and runtime). None
/// from the first phase after a job that is not time based, or when --time
/// replaces the runtimes: fio would then start it at a time lunmark cannot tell.
fn phase_starts(members: &[Vec<&Job>], run_length_given: bool) -> Vec<Option<Duration>> {
    let mut starts = Vec::with_capacity(members.len());
    let mut at = Some(Duration::ZERO);
    for jobs in members {
        starts.push(at);
        at = at.filter(|_| !run_length_given).and_then(|start| {
            let ends = jobs.iter().map(|j| match j.end {
                End::Time(t) => Some(start.max(j.startdelay.0) + j.ramp + t),
                _ => None,
            });
            ends.collect::<Option<Vec<Duration>>>().map(|e| e.into_iter().max().unwrap_or(start))
        });
    }
    starts
}

/// `startdelay` within a phase. fio counts it from the start of the run: a
/// job of a phase that starts at `phase_start` waits what is left of its
/// delay then. What every job of the phase waits alike only starts the phase
/// later, which changes no figure; a job that waits longer than the phase's
/// first starts that much later in the point (its group's start delay), its
/// ramp and runtime counted from its own start, as fio's are. That needs a
/// run of a time, and a phase start lunmark can tell.
fn phase_delays(
    jobs: &[&Job],
    groups: &mut [WorkerGroup],
    phase_start: Option<Duration>,
    timed: bool,
    problems: &mut Problems,
    notes: &mut Notes,
) {
    let known = phase_start.unwrap_or_default();
    let left = |j: &Job| j.startdelay.0.saturating_sub(known);
    let Some(first) = jobs.iter().min_by_key(|j| left(j)) else { return };
    let shared = left(first);
    let phase = jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join("+");
    let format = crate::units::format_duration;
    let since = if known.is_zero() {
        String::new()
    } else {
        format!(" (fio counts startdelay from the run's start; the phase starts {} in)", format(known))
    };
    if !shared.is_zero() {
        let wait = match phase_start {
            Some(start) if start.is_zero() => "waits at least that long, so fio starts the phase that much later".to_string(),
            Some(_) => format!("waits at least {} more{since}, so fio starts the phase that much later", format(shared)),
            None => "waits until at least that long after the run's start (fio's startdelay), so fio may start the phase later".into(),
        };
        notes.push(format!(
            "startdelay={} (job '{}'): every job of phase {phase} {wait}; lunmark starts it at once, which changes no figure (the target only idles meanwhile in fio)",
            format(first.startdelay.0),
            first.name
        ));
    }
    for (job, group) in jobs.iter().zip(groups.iter_mut()).filter(|(j, _)| left(j) > shared) {
        let late = left(job) - shared;
        let why = match (timed, phase_start) {
            (false, _) => format!(
                "job '{}' starts {} after job '{}', and fio counts a job's run from its own start: lunmark measures such a job over its own window, which needs a run of a time; make the jobs time_based with a runtime (or give --time), give them the same startdelay, or start the job after the others end with stonewall (a phase of its own)",
                job.name,
                format(late),
                first.name
            ),
            (true, None) => format!(
                "job '{}' and job '{}' of phase {phase} wait different times, and fio counts startdelay from the start of the whole run: when this phase starts depends on how long the jobs before it run, which lunmark cannot tell (a job before it is not time based, or --time replaces the runtimes); give them the same startdelay, or make every earlier job time_based with a runtime",
                job.name,
                first.name
            ),
            (true, Some(_)) => {
                group.start_delay = Some(late);
                notes.push(format!(
                    "startdelay={} (job '{}'): it starts {} after job '{}' in phase {phase}{since}, its ramp and runtime counted from its own start as fio's are; its figures are over its own measured window, the phase's over the whole span until the last job ends",
                    job.startdelay.2,
                    job.name,
                    format(late),
                    first.name
                ));
                continue;
            }
        };
        problems.push(&job.cause("startdelay"), why, false);
    }
}

/// Time-based jobs whose `runtime` differs from the profile's (the first
/// job's, `first_time`): each keeps its own, as a group's own time, measured
/// from its own start while the others go on, as fio runs them.
fn own_times(jobs: &[&Job], groups: &mut [WorkerGroup], first_time: Option<(Duration, &str)>, notes: &mut Notes) {
    let Some((first, first_job)) = first_time else { return };
    for (job, group) in jobs.iter().zip(groups.iter_mut()) {
        let End::Time(t) = job.end else { continue };
        if t == first {
            continue;
        }
        group.time = Some(t);
        notes.push(format!(
            "runtime={} (job '{}'): it runs {} from its own start, as fio runs it, where the profile's time is {} (job '{first_job}''s); beside jobs of other runtimes its figures are over its own measured window, the point's over the whole span until the last job ends",
            crate::units::format_duration(t),
            job.name,
            crate::units::format_duration(t),
            crate::units::format_duration(first)
        ));
    }
}

/// The phases of a profile: each one's job names and groups.
type Phases = Vec<(Vec<String>, Vec<WorkerGroup>)>;

/// Jobs into phases and one profile; settings lunmark holds once per profile
/// must agree across jobs.
pub(super) fn assemble(
    jobs: &[Job],
    name: &str,
    origin: &str,
    run_length_given: bool,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Profile {
    // With --time or --ios the command line decides; an --ios is refused by the spec's own check.
    let timed = run_length_given || matches!(jobs[0].end, End::Time(_));
    let (targets, phases) = phases_of(jobs, timed, run_length_given, problems, notes);
    agreements(jobs, run_length_given, problems);
    let data = data_of(jobs, problems, notes);
    let sized: Vec<&Job> = jobs.iter().filter(|j| !j.targets.iter().all(|t| t.starts_with("null:"))).collect();
    same_region(&sized, problems);
    let (engine, buffered) = one_engine(jobs, problems);
    let first = &jobs[0];
    if first.end == End::Unknown && first.file_engine.is_some() && first.file_size.is_none() {
        notes.push("no size given: lunmark uses the whole of each existing file or device".into());
    }
    let (sync, flush) = sync_or_flush(first, &targets, notes);
    let plural = |n: usize, word: &str| if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") };
    let description = format!("fio job file {origin} ({} in {})", plural(jobs.len(), "job"), plural(phases.len(), "phase"));
    let profile = Profile {
        name: name.to_string(),
        description,
        source: format!("imported from the fio job file {origin}"),
        size: sized.first().and_then(|f| f.file_size).map(Bytes),
        targets,
        engine,
        buffered,
        data,
        fsync: sync.filter(|s| s.kind == crate::workload::ops::SyncKind::Fsync).map(|s| s.every),
        fdatasync: sync.filter(|s| s.kind == crate::workload::ops::SyncKind::Fdatasync).map(|s| s.every),
        flush,
        phases: phases.into_iter().map(|(names, groups)| Phase { name: names.join("+"), groups }).collect(),
        ..Profile::default()
    };
    with_first_job(profile, first, origin)
}

/// What the profile takes from the first job (the others agree with it, or were refused).
fn with_first_job(profile: Profile, first: &Job, origin: &str) -> Profile {
    let window = first.sla.as_ref().and_then(|s| s.window);
    Profile {
        ramp: Some(first.ramp),
        time: match (&first.end, window) {
            // latency_window: the time each step of the search is judged over.
            (_, Some(window)) => Some(window),
            (End::Time(t), None) => Some(*t),
            _ => None,
        },
        sla: first.sla.as_ref().map(|s| s.expr.clone()),
        sla_origin: first.sla.as_ref().map(|s| format!("{origin}, {}", s.origin)),
        ios: match first.end {
            End::Ios(n) if window.is_none() => Some(n),
            _ => None,
        },
        offset: first.offset.map(Bytes),
        seed: first.seed,
        sqpoll: first.polling.sqpoll,
        poll: first.polling.poll,
        cpus: first.cpus.clone(),
        cpus_policy: first.cpus_policy,
        verify: first.verify,
        steady: first.steady.clone(),
        percentiles: first.percentiles.clone(),
        // Distribution, think time and arrivals are the jobs' own (each group's), so none is set here.
        ..profile
    }
}

/// The jobs into phases of groups, and the targets they name (each once);
/// each phase's start delays.
/// `timed`: the run is a time (the jobs' or --time), which jobs that start
/// apart need; `run_length_given`: --time or --ios, every job's run length.
fn phases_of(jobs: &[Job], timed: bool, run_length_given: bool, problems: &mut Problems, notes: &mut Notes) -> (Vec<String>, Phases) {
    let mut targets: Vec<String> = Vec::new();
    let mut phases: Phases = Vec::new();
    let mut used_names: BTreeSet<String> = BTreeSet::new();
    // Each phase's jobs, for their start delays.
    let mut members: Vec<Vec<&Job>> = Vec::new();
    for job in jobs {
        if starts_phase(jobs, job, &phases, problems) {
            phases.push((Vec::new(), Vec::new()));
            members.push(Vec::new());
        }
        let group = group_of(job, &mut used_names, &mut targets);
        let phase = phases.last_mut().expect("pushed above");
        phase.0.push(job.name.clone());
        phase.1.push(group);
        members.last_mut().expect("pushed with the phase").push(job);
    }
    // The profile's time is the first job's; a time-based job that runs another keeps its own.
    let first_time = match jobs[0].end {
        End::Time(t) if !run_length_given => Some((t, jobs[0].name.as_str())),
        _ => None,
    };
    if run_length_given {
        let mut times: Vec<Duration> = jobs.iter().filter_map(|j| if let End::Time(t) = j.end { Some(t) } else { None }).collect();
        times.sort_unstable();
        times.dedup();
        if times.len() > 1 {
            let each: Vec<String> = times.into_iter().map(crate::units::format_duration).collect();
            notes.push(format!(
                "the jobs' runtimes differ ({}): --time or --ios on the command line is every job's run length instead",
                each.join(", ")
            ));
        }
    }
    let starts = phase_starts(&members, run_length_given);
    for ((jobs, (_, groups)), start) in members.iter().zip(phases.iter_mut()).zip(starts) {
        phase_delays(jobs, groups, start, timed, problems, notes);
        own_times(jobs, groups, first_time, notes);
    }
    (targets, phases)
}

/// Whether `job` starts a new phase: the first job, `stonewall`, or
/// `wait_for` a job of the current phase that runs alone in it.
fn starts_phase(jobs: &[Job], job: &Job, phases: &Phases, problems: &mut Problems) -> bool {
    match &job.wait_for {
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
    }
}

/// The job's worker group, named after it (made unique with -2, -3, ...),
/// its files added to `targets` where they are not yet.
fn group_of(job: &Job, used_names: &mut BTreeSet<String>, targets: &mut Vec<String>) -> WorkerGroup {
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
    WorkerGroup {
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
        start_delay: None,
        time: None,
        access: job.lines.clone(),
    }
}

/// Refuses jobs that differ in what lunmark holds once per run.
fn agreements(jobs: &[Job], run_length_given: bool, problems: &mut Problems) {
    let all: Vec<&Job> = jobs.iter().collect();
    let mut agree = |what: &str, keys: &[&str], same: &dyn Fn(&Job, &Job) -> bool| agree_among(&all, what, keys, same, problems);
    if !run_length_given {
        let what = "how long it runs (runtime, time_based, io_size, number_ios, size; or give --time or --ios)";
        let keys = ["runtime", "number_ios", "io_size", "time_based", "size"];
        // Time-based jobs may each run their own time (a group's own window), unless a
        // latency_target search judges each step over one window.
        let windowed = jobs.iter().any(|j| j.sla.as_ref().is_some_and(|s| s.window.is_some()));
        agree(what, &keys, &|a, b| a.end == b.end || (!windowed && matches!((&a.end, &b.end), (End::Time(_), End::Time(_)))));
    }
    agree("ramp_time", &["ramp_time"], &|a, b| a.ramp == b.ramp);
    agree("randseed", &["randseed"], &|a, b| a.seed == b.seed);
    agree("verify", &["verify"], &|a, b| a.verify == b.verify);
    agree("ss and ss_dur (lunmark ends a point on one steady state, --steady)", &["ss", "ss_dur"], &|a, b| a.steady == b.steady);
    agree("percentile_list (lunmark reports the same percentiles of every group)", &["percentile_list"], &|a, b| {
        a.percentiles == b.percentiles
    });
    agree("fsync and fdatasync (lunmark syncs every job alike)", &["fsync", "fdatasync"], &|a, b| a.sync == b.sync);
    agree("offset", &["offset"], &|a, b| a.offset == b.offset);
    agree(
        "sqthread_poll, sqthread_poll_cpu and hipri (lunmark sets up every ring alike)",
        &["sqthread_poll", "sqthread_poll_cpu", "hipri"],
        &|a, b| a.polling == b.polling,
    );
    agree(
        "cpus_allowed and cpus_allowed_policy (lunmark pins every worker of the run alike)",
        &["cpus_allowed", "cpus_allowed_policy"],
        &|a, b| (&a.cpus, a.cpus_policy) == (&b.cpus, b.cpus_policy),
    );
}

/// The data reduction of the jobs that write, which must agree; data content
/// matters to the jobs that write only (a job that only reads has none, in fio too).
fn data_of(jobs: &[Job], problems: &mut Problems, notes: &mut Notes) -> Option<crate::workload::reduction::DataReduction> {
    let writers: Vec<&Job> = jobs.iter().filter(|j| j.lines.iter().any(|l| l.read < 100.0)).collect();
    agree_among(
        &writers,
        "buffer_compress_percentage and dedupe_percentage (lunmark fills every write of the run alike)",
        &["buffer_compress_percentage", "dedupe_percentage"],
        &|a, b| (a.compress, a.dedupe) == (b.compress, b.dedupe),
        problems,
    );
    for j in jobs.iter().filter(|j| (j.compress.is_some() || j.dedupe.is_some()) && !writers.iter().any(|w| std::ptr::eq(*w, *j))) {
        notes.push(format!("job '{}' only reads: its buffer_compress_percentage and dedupe_percentage shape no data (as in fio)", j.name));
    }
    writers.first().filter(|w| w.compress.is_some() || w.dedupe.is_some()).map(|w| crate::workload::reduction::DataReduction {
        compress: w.compress.unwrap_or(0.0),
        dedupe: w.dedupe.unwrap_or(0.0),
        dedupe_unit: None,
    })
}

/// The one engine and cache mode of every file (jobs that differ are refused).
fn one_engine(jobs: &[Job], problems: &mut Problems) -> (Option<EngineChoice>, bool) {
    let files: Vec<&Job> = jobs.iter().filter(|j| j.file_engine.is_some()).collect();
    let first = files.first();
    if let Some(j) = first.and_then(|f| files.iter().find(|j| j.file_engine != f.file_engine)) {
        let f = first.expect("some");
        let s = Setting { key: "ioengine/direct".into(), value: None, line: j.line, file: None };
        problems.push(
            &s,
            format!(
                "job '{}' differs from job '{}' in ioengine or direct: lunmark uses one engine and one cache mode for every file",
                j.name, f.name
            ),
            false,
        );
    }
    first.and_then(|f| f.file_engine).map(|(e, b)| (Some(e), b)).unwrap_or((None, false))
}

/// The job's fsync or fdatasync; on block devices, fio's fsync is a flush of
/// their write cache: lunmark's `flush`.
fn sync_or_flush(first: &Job, targets: &[String], notes: &mut Notes) -> (Option<crate::workload::ops::SyncEvery>, Option<u64>) {
    let devices = !targets.is_empty() && targets.iter().all(|t| t.starts_with("/dev/"));
    match first.sync {
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
    }
}
