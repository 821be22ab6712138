//! Engine options (polling, sync, verify, fio's defaults), CPU pinning and data reduction.

use super::*;

/// `sqthread_poll` (pinned by `sqthread_poll_cpu`) is `--sqpoll[=CPU]` and
/// `hipri` is `--poll`: options of fio's io_uring engine (hipri also of
/// pvsync2, whose polled preadv2 lunmark has not). Whether the device can poll
/// is checked at the run, as for the flags.
pub(super) fn polling(set: &Settings, job: &str, problems: &mut Problems) -> crate::workload::polling::Polling {
    use crate::workload::polling::{Polling, SqPoll};
    let engine = set.value("ioengine").map(|(_, v)| v.trim()).unwrap_or("psync");
    let keys = ["sqthread_poll", "sqthread_poll_cpu", "hipri"];
    if engine != "io_uring" {
        for s in keys.iter().filter_map(|k| set.get(k)) {
            let message = if s.key == "hipri" && engine == "pvsync2" {
                "lunmark polls completions on io_uring only (--poll): use ioengine=io_uring with hipri".to_string()
            } else {
                format!("{} is an option of ioengine=io_uring only (lunmark's --sqpoll and --poll are io_uring's too)", s.key)
            };
            problems.push(s, message, false);
        }
        return Polling::default();
    }
    let sqpoll = set.switch("sqthread_poll", problems);
    let cpu = set.number::<u32>("sqthread_poll_cpu", problems);
    if let (Some(s), false) = (set.get("sqthread_poll_cpu"), sqpoll) {
        problems.push(
            s,
            "pins the submission queue poller, but sqthread_poll is not set: add sqthread_poll=1, or drop it (fio ignores it then)",
            true,
        );
    }
    let poll = set.switch("hipri", problems);
    // Said here, naming the job and its options: the run's own check can only name --poll and --buffered.
    let buffered = set.get("buffered").map(|_| set.switch("buffered", problems)).unwrap_or_else(|| !set.switch("direct", problems));
    if let (true, true, Some(s)) = (poll, buffered, set.get("hipri")) {
        let cause = if set.get("buffered").is_some() {
            "buffered=1"
        } else if set.get("direct").is_some() {
            "direct=0"
        } else {
            "no direct=1: fio's default"
        };
        problems.push(
            s,
            format!("job '{job}' polls for completions of direct I/O, but its I/O goes through the page cache ({cause}): set direct=1, or drop hipri"),
            false,
        );
    }
    Polling { sqpoll: sqpoll.then(|| cpu.map_or(SqPoll::AnyCpu, SqPoll::Cpu)), poll }
}

/// `cpus_allowed=0-3,8` is `--cpus` and `cpus_allowed_policy=shared|split` is
/// `--cpus-policy` (split: worker i on the i-th CPU, round robin, as fio gives
/// each job its own). Which CPUs the host has is checked at the run.
pub(super) fn pinning(
    set: &Settings,
    problems: &mut Problems,
) -> (Option<crate::workload::cpus::CpuList>, Option<crate::workload::cpus::CpuPolicy>) {
    use crate::workload::cpus::{CpuList, CpuPolicy};
    let cpus = set.value("cpus_allowed").and_then(|(s, v)| {
        let v = v.trim();
        CpuList::parse_syntax(v).map_err(|e| problems.push(s, e.replacen(&format!("--cpus {v}: "), "", 1), false)).ok()
    });
    let cpus = match (cpus, set.value("cpumask")) {
        (cpus, None) => cpus,
        (Some(_), Some((s, _))) => {
            problems.push(s, "give one of cpus_allowed and cpumask (both choose the CPUs)", false);
            None
        }
        (None, Some((s, v))) => cpumask(v.trim()).map_err(|m| problems.push(s, m, false)).ok(),
    };
    let cpus = match (cpus, set.value("numa_cpu_nodes")) {
        (cpus, None) => cpus,
        (Some(_), Some((s, _))) => {
            problems.push(s, "give one of cpus_allowed and numa_cpu_nodes (both choose the CPUs)", false);
            None
        }
        (None, Some((s, v))) => {
            numa_cpus(v.trim(), std::path::Path::new("/sys/devices/system/node")).map_err(|m| problems.push(s, m, false)).ok()
        }
    };
    let policy = set.value("cpus_allowed_policy").and_then(|(s, v)| match v.trim() {
        "shared" => Some(CpuPolicy::Shared),
        "split" => Some(CpuPolicy::Split),
        other => {
            problems.push(
                s,
                format!("'{other}' is not a policy: use shared (every job on all the CPUs) or split (each job on one)"),
                false,
            );
            None
        }
    });
    match (policy, set.get("cpus_allowed").or(set.get("cpumask"))) {
        (Some(_), None) => {
            let s = set.get("cpus_allowed_policy").expect("read above");
            problems.push(s, "says how jobs share the CPUs of cpus_allowed, which is not set: add cpus_allowed=LIST, or drop it", true);
            (cpus, None)
        }
        _ => (cpus, policy),
    }
}

/// `cpumask=MASK`: fio's older form of cpus_allowed, a bit per CPU (bit 0 is
/// CPU 0), in decimal or `0x` hexadecimal.
pub(super) fn cpumask(mask: &str) -> Result<crate::workload::cpus::CpuList, String> {
    let bits = match mask.strip_prefix("0x").or_else(|| mask.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => mask.parse(),
    }
    .ok()
    .filter(|b| *b != 0)
    .ok_or_else(|| format!("'{mask}' is not a CPU mask: use a bit per CPU, in decimal or 0x hexadecimal (0x3 is CPUs 0 and 1), not 0"))?;
    Ok(crate::workload::cpus::CpuList((0..64).filter(|i| bits >> i & 1 == 1).collect()))
}

/// `numa_cpu_nodes=LIST` (or `all`): the CPUs of those NUMA nodes, as
/// `--cpus` (fio binds the job to them the same way), read from `nodes`
/// (/sys/devices/system/node) at the import.
pub(super) fn numa_cpus(list: &str, nodes: &std::path::Path) -> Result<crate::workload::cpus::CpuList, String> {
    use crate::workload::cpus::CpuList;
    let wanted: Vec<u32> = if list == "all" {
        let online = std::fs::read_to_string(nodes.join("online")).map_err(|e| format!("{}: {e}", nodes.join("online").display()))?;
        CpuList::parse_syntax(online.trim())?.0
    } else {
        CpuList::parse_syntax(list).map_err(|e| e.replacen(&format!("--cpus {list}: "), "", 1))?.0
    };
    let mut cpus = Vec::new();
    for n in wanted {
        let path = nodes.join(format!("node{n}/cpulist"));
        let text = std::fs::read_to_string(&path)
            .map_err(|_| format!("NUMA node {n} does not exist on this host ({} is missing)", path.display()))?;
        cpus.extend(CpuList::parse_syntax(text.trim())?.0);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(format!("NUMA nodes {list} have no CPUs on this host"));
    }
    Ok(CpuList(cpus))
}

/// `buffer_compress_percentage` is `--compress` and `dedupe_percentage` is
/// `--dedupe` (the profile's `[data]`). fio repeats whole write buffers;
/// lunmark repeats units of the smallest write size, the same with one size.
pub(super) fn data_reduction(
    set: &Settings,
    lines: &[AccessLine],
    problems: &mut Problems,
    notes: &mut Notes,
) -> (Option<f64>, Option<f64>) {
    let mut share = |key: &str, max: f64, why: &str| {
        let (s, v) = set.value(key)?;
        match v.trim().parse::<f64>() {
            Ok(p) if (0.0..=max).contains(&p) => Some(p),
            _ => {
                problems.push(s, format!("'{}' is not a share from 0 to {max} percent{why}", v.trim()), false);
                None
            }
        }
    };
    let compress =
        share("buffer_compress_percentage", 99.0, " (lunmark's --compress keeps an 8-byte stamp in each unit, which does not compress)");
    let dedupe = share("dedupe_percentage", 100.0, "");
    let mut write_sizes: Vec<u64> = lines.iter().filter(|l| l.read < 100.0).map(|l| l.bs.get()).collect();
    write_sizes.sort_unstable();
    write_sizes.dedup();
    if dedupe.is_some_and(|d| d > 0.0) && write_sizes.len() > 1 {
        notes.push(format!(
            "dedupe_percentage: fio repeats whole write buffers; lunmark repeats units of the smallest write size ({}) within each write",
            Bytes(write_sizes[0])
        ));
    }
    if let Some((s, _)) = set.value("buffer_pattern") {
        if compress.is_some_and(|c| c > 0.0) {
            notes.push(format!("{} ({}): fio fills the compressible part of each write with this pattern, lunmark with zeros: both compress away, and no unit of lunmark's is zeros only", show(s), s.place()));
        } else {
            problems.push(s, "fio writes this pattern in every write (all alike: as compressible and deduplicable as can be); lunmark has no fixed pattern: drop it, or say how compressible writes are with buffer_compress_percentage", false);
        }
    }
    if let Some((s, v)) = set.value("buffer_compress_chunk") {
        compress_chunk(s, v, compress.is_some_and(|c| c > 0.0), &write_sizes, problems, notes);
    }
    (compress.filter(|c| *c > 0.0), dedupe.filter(|d| *d > 0.0))
}

/// `buffer_compress_chunk=N`: fio repeats its random and compressible parts
/// every N bytes of a write (0: once per write). lunmark lays them out once
/// per unit of the smallest write size, so 0, or N equal to that size, is
/// what lunmark runs; another N is refused, naming those.
pub(super) fn compress_chunk(s: &Setting, v: &str, compressing: bool, write_sizes: &[u64], problems: &mut Problems, notes: &mut Notes) {
    let Ok(chunk) = parse_size(v, 1024).map_err(|m| problems.push(s, m, false)) else { return };
    let Some(&unit) = write_sizes.first().filter(|_| compressing) else {
        notes.push(format!("{} ({}): it changes nothing without buffer_compress_percentage and writes (in fio too)", show(s), s.place()));
        return;
    };
    if chunk == 0 || chunk == unit {
        let mixed = if write_sizes.len() > 1 {
            format!(" (fio's chunk is each write's size, lunmark's unit the smallest, {})", Bytes(unit))
        } else {
            String::new()
        };
        notes.push(format!("{} ({}): lunmark lays out the random and compressible parts once per unit of the write size, as fio does with this chunk{mixed}", show(s), s.place()));
        return;
    }
    problems.push(
        s,
        format!("fio repeats its random and compressible parts every {} bytes; lunmark lays them out once per unit of the smallest write size ({} bytes): give buffer_compress_chunk=0 (or {unit}), or drop it", chunk, unit),
        false,
    );
}

/// `fsync=N` and `fdatasync=N`: a sync after every N writes (0, fio's default, is none).
pub(super) fn sync(set: &Settings, problems: &mut Problems) -> Option<crate::workload::ops::SyncEvery> {
    let fsync = set.number::<u64>("fsync", problems).filter(|n| *n > 0);
    let fdatasync = set.number::<u64>("fdatasync", problems).filter(|n| *n > 0);
    match crate::workload::ops::sync_of(fsync, fdatasync, None) {
        Ok(s) => s,
        Err(_) => {
            problems.push(set.get("fdatasync").expect("both given"), "give only one of fsync and fdatasync", false);
            None
        }
    }
}

/// `verify=`: any checksum runs as lunmark's own check.
pub(super) fn verify(set: &Settings, problems: &mut Problems, notes: &mut Notes) -> bool {
    const CHECKSUMS: &[&str] = &[
        "1",
        "md5",
        "crc64",
        "crc32c",
        "crc32c-intel",
        "crc32",
        "crc16",
        "crc7",
        "xxhash",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "meta",
    ];
    match set.value("verify") {
        None | Some((_, "0" | "none")) => false,
        Some((_, v)) if CHECKSUMS.contains(&v.trim()) => {
            notes.push("verify: lunmark checks every read with its own block header and CRC-32C (docs/verify.md), whatever checksum fio would have used".into());
            true
        }
        Some((s, _)) => {
            problems.push(
                s,
                "not a checksum lunmark maps: use one of md5, crc32c, crc64, sha256, xxhash (they all run as --verify)",
                false,
            );
            false
        }
    }
}

/// `verify=` on a job that only writes: fio reads every block back once the
/// writes are done (do_verify=1, its default); lunmark checks only what it
/// reads, so the job would check nothing. With --journal the run records its
/// writes and `lunmark verify` reads them back afterwards; without, refused.
pub(super) fn verify_write_only(set: &Settings, name: &str, journal: bool, problems: &mut Problems, notes: &mut Notes) {
    let s = set.get("verify").expect("verify is on");
    if journal {
        notes.push(format!("{} ({}): job '{name}' only writes; fio reads its blocks back when the writes are done; lunmark records every write in the --journal, and `lunmark verify TARGET --journal FILE` after the run reads them back and checks them (docs/verify.md)", show(s), s.place()));
        return;
    }
    problems.push(
        s,
        format!("job '{name}' only writes: fio reads every block back when the writes are done (do_verify=1) and checks it, but lunmark checks only what it reads, so this job would check nothing. Run it with --journal FILE, then `lunmark verify TARGET --journal FILE` reads every written block back (docs/verify.md); or set do_verify=0 to write unchecked"),
        false,
    );
}

/// Options whose common values lunmark runs as fio does (a note each) and
/// whose others it lacks (refused, naming what to use). Returns false when
/// `do_verify=0` turns checking off (fio then checks nothing either).
pub(super) fn fio_defaults(set: &Settings, name: &str, read: f64, trim: f64, problems: &mut Problems, notes: &mut Notes) -> bool {
    let on = |key: &str, problems: &mut Problems| set.get(key).map(|s| (s, set.switch(key, problems)));
    let mut note = |s: &Setting, why: &str| notes.push(format!("{} ({}): {why}", show(s), s.place()));
    if let Some((s, v)) = set.value("sync") {
        match v.trim() {
            "0" | "none" => note(s, "fio's default (no O_SYNC), as lunmark opens files"),
            _ => problems.push(
                s,
                "lunmark does not open files with O_SYNC or O_DSYNC: use fsync=1 (a sync after every write, timed apart) instead",
                false,
            ),
        }
    }
    let writes = read < 100.0 && trim < 100.0;
    match on("overwrite", problems) {
        Some((s, true)) => note(s, "fio writes a file it creates in full before the job; lunmark fills a file it creates before measuring, too"),
        Some((s, false)) if !writes => note(s, "it matters to fio only for jobs that write, and this one does not"),
        Some((s, false)) => note(s, &format!("fio's default: job '{name}' writes a file fio creates into blocks not written before; lunmark fills a file it creates before measuring, so name an existing file or device to compare the two")),
        None => {}
    }
    if let Some((s, v)) = set.value("fallocate") {
        match v.trim() {
            "none" | "0" | "native" | "posix" | "keep" | "truncate" | "1" => note(s, "it chooses how fio reserves the space of a file it creates; lunmark creates a missing file filled with data before measuring, as fio does for a job that reads or overwrite=1 (name an existing file or device to compare like for like)"),
            other => problems.push(s, format!("'{other}' is not one of fio's fallocate modes: none, native, posix, keep, truncate"), false),
        }
    }
    if let Some((s, true)) = on("verify_fatal", problems) {
        note(s, "fio ends the job at the first block that fails its check; lunmark runs on and counts every mismatch (summary.verify.mismatches), which changes no figure of a target that returns what was written");
    } else if let Some((s, false)) = on("verify_fatal", problems) {
        note(s, "fio's default");
    }
    let verifying = set.value("verify").is_some_and(|(_, v)| !matches!(v.trim(), "0" | "none"));
    match on("serialize_overlap", problems) {
        Some((s, true)) if verifying => {
            note(s, "with verify lunmark never issues a write while other I/O is in flight on its blocks, as fio's serialize_overlap=1")
        }
        Some((s, true)) => problems.push(
            s,
            "lunmark keeps overlapping I/O apart only when it verifies: add verify=crc32c (lunmark's --verify), or drop serialize_overlap",
            false,
        ),
        Some((s, false)) => note(s, "fio's default"),
        None => {}
    }
    match on("do_verify", problems) {
        Some((s, false)) => {
            if verifying {
                note(s, "fio writes its verify headers and checks nothing; lunmark checks nothing either (verify off)");
            }
            false
        }
        Some((s, true)) if verifying => {
            note(s, "fio's default with verify=");
            true
        }
        _ => true,
    }
}
