//! Where a job does its I/O: engine and files, a share of the file, the region,
//! `offset_increment`, and the queue depth per file.

use super::*;

/// Where a job does its I/O, as its engine decides.
pub(super) struct Place {
    pub(super) targets: Vec<String>,
    /// One file per clone (fio's own names).
    pub(super) per_clone: bool,
    /// Files the job's iodepth spreads over (1 with one file per clone).
    pub(super) files: u32,
    /// For files and devices: the engine and whether the page cache is used.
    pub(super) file_engine: Option<(EngineChoice, bool)>,
    /// The region on each target.
    pub(super) file_size: Option<u64>,
    /// Bytes of one pass over the job's region (fio's default amount of I/O).
    pub(super) pass_bytes: Option<u64>,
}

/// The job's targets from `ioengine` with `filename`, `directory`, `uri`,
/// `size`, `filesize`, `direct`/`buffered`.
pub(super) fn place(set: &Settings, name: &str, numjobs: u32, kb_base: u64, problems: &mut Problems, notes: &mut Notes) -> Place {
    let engine = set.value("ioengine").map(|(s, v)| (s, v.trim().to_string()));
    let engine_name = engine.as_ref().map(|(_, e)| e.as_str()).unwrap_or("psync");
    // A share of the file (size=50%) is resolved once the files are known.
    let size = set.value("size").filter(|(_, v)| fio_job::parse_percent(v).is_none()).and_then(|_| set.size("size", kb_base, problems));
    // size=0 is fio's "not set": the whole of each file, as without it.
    let size = size.filter(|b| *b != 0);
    if let Some((s, _)) = set.value("size").filter(|_| size.is_none() && set.size("size", kb_base, &mut Problems::default()) == Some(0)) {
        notes.push(format!(
            "{} ({}): job '{name}': fio reads size=0 as not set, so the job covers the whole of each file, as lunmark does",
            show(s),
            s.place()
        ));
    }
    // filesize=0, like size=0, is fio's "not set".
    let filesize = set.size("filesize", kb_base, problems).filter(|b| *b != 0);
    let buffered = cache_mode(set, problems);
    let uri = set.value("uri");
    engine_options_apart(set, engine_name, problems);
    let filenames = set.value("filename").map(|(_, v)| split_filenames(v)).unwrap_or_default();
    let mut place = Place { targets: Vec::new(), per_clone: false, files: 1, file_engine: None, file_size: size, pass_bytes: size };
    let named = || engine.as_ref().expect("named").0;
    match engine_name {
        "null" => match size {
            Some(sz) => place.targets.push(format!("null:{}", Bytes(sz))),
            None => problems.push(named(), "ioengine=null needs size= (the size of the null device)", false),
        },
        "nbd" => match uri {
            Some((_, u)) => place.targets.push(u.trim().to_string()),
            None => problems.push(named(), "ioengine=nbd needs uri=nbd://host[:port]/export", false),
        },
        "libiscsi" => {
            if filenames.is_empty() || !filenames.iter().all(|n| n.starts_with("iscsi://")) {
                problems.push(named(), "ioengine=libiscsi needs filename=iscsi\\://host[\\:port]/IQN/LUN", false);
            }
            place.targets = filenames;
        }
        other => {
            let choice = file_engine(other, named, problems, notes);
            place_files(set, name, numjobs, filenames, &mut place, problems, notes);
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

/// Whether the page cache is used: fio's default is buffered; `direct=1` or
/// `buffered=0` is O_DIRECT, and the two given against each other are refused.
fn cache_mode(set: &Settings, problems: &mut Problems) -> bool {
    let direct = set.switch("direct", problems);
    let buffered_given = set.get("buffered").map(|_| set.switch("buffered", problems));
    if buffered_given.is_some_and(|b| b == direct) && set.get("direct").is_some() {
        problems.push(set.get("buffered").expect("given"), "contradicts direct: give one of direct=1 and buffered=0", false);
    }
    buffered_given.unwrap_or(!direct)
}

/// Options of one engine given with another: `uri` (nbd), `fixedbufs` and
/// `registerfiles` (io_uring, whose lunmark engine always registers both).
fn engine_options_apart(set: &Settings, engine_name: &str, problems: &mut Problems) {
    if let (Some((s, _)), false) = (set.value("uri"), engine_name == "nbd") {
        problems.push(s, "uri is an option of ioengine=nbd only", false);
    }
    for key in ["fixedbufs", "registerfiles"] {
        if let (Some(s), false) = (set.get(key), engine_name == "io_uring") {
            problems.push(s, format!("{key} is an option of ioengine=io_uring only"), true);
        }
    }
}

/// The engine of files and devices that fio's `ioengine` maps onto; None (and
/// a problem on the `ioengine` line `named` gives) for one lunmark lacks.
fn file_engine<'s>(engine: &str, named: impl Fn() -> &'s Setting, problems: &mut Problems, notes: &mut Notes) -> Option<EngineChoice> {
    match engine {
        "io_uring" => Some(EngineChoice::IoUring),
        "libaio" => {
            notes.push("ioengine=libaio runs on io_uring, lunmark's asynchronous engine (same queue depth, same O_DIRECT)".into());
            Some(EngineChoice::IoUring)
        }
        "psync" | "sync" | "pvsync" | "pvsync2" => Some(EngineChoice::Psync),
        other => {
            let m = format!("engine '{other}' is not one lunmark has: use io_uring, libaio, psync, sync, pvsync, null, nbd or libiscsi");
            problems.push(named(), m, false);
            None
        }
    }
}

/// The job's files in `directory`: `filename`'s, or without it fio's own
/// names, one file per clone.
fn place_files(
    set: &Settings,
    name: &str,
    numjobs: u32,
    filenames: Vec<String>,
    place: &mut Place,
    problems: &mut Problems,
    notes: &mut Notes,
) {
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
}

/// The file of clone `clone` of a job without `filename=`: fio's
/// `jobname.clone.0`, or `filename_format` with `$jobname`, `$jobnum` (the
/// clone: fio 3.33 names the files of two jobs of two clones `file0.0` and
/// `file1.0` with `file$jobnum.$filenum`) and `$filenum` (0: one file a clone).
pub(super) fn clone_file(set: &Settings, name: &str, clone: u32, problems: &mut Problems) -> String {
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
pub(super) fn shares_of_the_file(
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
pub(super) fn real_size(targets: &[String]) -> Result<u64, String> {
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
pub(super) fn queue_depth(set: &Settings, name: &str, files: u32, problems: &mut Problems, notes: &mut Notes) -> u32 {
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

/// `offset_increment`: fio starts clone N of a job at offset + N x increment,
/// each clone on its own part of the file (without it, lunmark's workers
/// would read the same blocks: from an array's cache). lunmark's group gets
/// the same `offset_increment`, and the region on each file grows to hold
/// every clone's part. Needs a size, and one file shared by the clones.
pub(super) fn offset_increment(
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
