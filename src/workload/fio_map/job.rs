//! One job section read into what lunmark runs of it (`Job::read`), and how it ends.

use super::*;

/// How a job ends, as fio would end it.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum End {
    Time(Duration),
    Ios(u64),
    /// Nothing lunmark can derive (one pass over a device of unknown size).
    Unknown,
}

/// One job section, read into what lunmark needs.
pub(super) struct Job {
    pub(super) name: String,
    pub(super) line: usize,
    pub(super) numjobs: u32,
    pub(super) stonewall: bool,
    pub(super) wait_for: Option<(String, usize)>,
    pub(super) lines: Vec<AccessLine>,
    pub(super) qd: u32,
    /// Targets of the job; with `per_clone` one per clone.
    pub(super) targets: Vec<String>,
    pub(super) per_clone: bool,
    /// Bytes each file's region spans.
    pub(super) file_size: Option<u64>,
    pub(super) offset: Option<u64>,
    pub(super) end: End,
    pub(super) ramp: Duration,
    pub(super) seed: Option<u64>,
    /// For files and devices: the engine and whether the page cache is used.
    pub(super) file_engine: Option<(EngineChoice, bool)>,
    pub(super) rate: Option<f64>,
    pub(super) verify: bool,
    /// thinktime, thinktime_blocks and rate_process (src/workload/timing.rs).
    pub(super) thinktime: Option<Duration>,
    pub(super) thinktime_blocks: Option<u32>,
    pub(super) arrivals: crate::workload::timing::Arrivals,
    /// fsync=N or fdatasync=N.
    pub(super) sync: Option<crate::workload::ops::SyncEvery>,
    /// latency_target with latency_percentile: lunmark's --sla bound; latency_window: each step's measured time.
    pub(super) sla: Option<Sla>,
    /// sqthread_poll (with sqthread_poll_cpu) and hipri.
    pub(super) polling: crate::workload::polling::Polling,
    /// cpus_allowed and cpus_allowed_policy.
    pub(super) cpus: Option<crate::workload::cpus::CpuList>,
    pub(super) cpus_policy: Option<crate::workload::cpus::CpuPolicy>,
    /// buffer_compress_percentage and dedupe_percentage, percent.
    pub(super) compress: Option<f64>,
    pub(super) dedupe: Option<f64>,
    /// offset_increment, bytes.
    pub(super) offset_increment: Option<u64>,
    /// percentile_list, percent.
    pub(super) percentiles: Vec<f64>,
    /// ss and ss_dur, as lunmark's steady state.
    pub(super) steady: Option<crate::workload::steady::SteadySpec>,
    /// startdelay, its line and its text as written (0, 0, "" when not given).
    pub(super) startdelay: (Duration, usize, String),
    /// The settings in force, by key: a refusal names the line that set a value.
    pub(super) given: std::collections::HashMap<&'static str, Setting>,
}

impl Job {
    /// The setting behind `key` for a refusal to name: its own line, or the
    /// job's section line saying the value is fio's default.
    pub(super) fn cause(&self, key: &str) -> Setting {
        if let Some(s) = self.given.get(key) {
            return s.clone();
        }
        let default = match key {
            "offset" | "startdelay" | "ramp_time" | "verify" => " 0",
            _ => "",
        };
        Setting { key: format!("{key} (not set: fio's default{default})"), value: None, line: self.line, file: None }
    }
}

impl Job {
    pub(super) fn read(section: &JobSection, options: &ImportOptions, problems: &mut Problems, notes: &mut Notes) -> Job {
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
        let numjobs = counts(&set, &name, problems);
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
            given: set.0.iter().map(|(k, s)| (*k, (*s).clone())).collect(),
        }
    }
}

/// The job's `numjobs`, with `numjobs=0` and `iodepth=0` refused as fio
/// refuses them (rather than run as 1, a workload the file does not ask for).
fn counts(set: &Settings, name: &str, problems: &mut Problems) -> u32 {
    if let Some((s, 0)) = set.get("iodepth").zip(set.number::<u32>("iodepth", problems)) {
        problems.push(s, format!("min value out of range: 0 (1 min), as fio says: job '{name}' needs an iodepth of 1 or more"), false);
    }
    match set.get("numjobs").zip(set.number::<u32>("numjobs", problems)) {
        Some((s, 0)) => {
            problems.push(
                s,
                format!("job '{name}' would run no clone: fio parses numjobs=0 but then fails to start (\"maximum number of jobs reached\"); give numjobs=1 or more"),
                false,
            );
            1
        }
        Some((_, n)) => n,
        None => 1,
    }
}

/// `percentile_list=1:5:99.5`: the latency percentiles to report, as fio
/// reports them (each above 0 and at most 100, at most 20 of them, as fio).
pub(super) fn percentile_list(set: &Settings, problems: &mut Problems, notes: &mut Notes) -> Vec<f64> {
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
    if list.len() > crate::workload::profile::MAX_PERCENTILES {
        problems.push(
            s,
            format!("{} percentiles: fio and lunmark take at most {}", list.len(), crate::workload::profile::MAX_PERCENTILES),
            false,
        );
        return Vec::new();
    }
    notes.push(format!("{} ({}): the result reports these latency percentiles too (latency_us.*.percentiles), and fio-json's percentile maps hold them, as fio's do", show(s), s.place()));
    list
}
