//! The option tables: the options lunmark reads, those that change nothing it
//! measures, and those lenient mode may skip; and the notes and refusals they give.

use super::*;

/// The options lunmark reads (others are refused).
pub(super) const KNOWN: &[&str] = &[
    "name",
    "description",
    "group_reporting",
    "thread",
    "new_group",
    "stonewall",
    "wait_for_previous",
    "wait_for",
    "numjobs",
    "rw",
    "readwrite",
    "rw_sequencer",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bssplit",
    "bsrange",
    "blocksize_range",
    "iodepth",
    "filename",
    "directory",
    "size",
    "filesize",
    "offset",
    "io_size",
    "io_limit",
    "number_ios",
    "direct",
    "buffered",
    "ioengine",
    "uri",
    "runtime",
    "timeout",
    "time_based",
    "ramp_time",
    "startdelay",
    "random_distribution",
    "rate_iops",
    "thinktime",
    "thinktime_blocks",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "rate_process",
    "verify",
    "fsync",
    "fdatasync",
    "randseed",
    "kb_base",
    "norandommap",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "hipri",
    "cpus_allowed",
    "cpus_allowed_policy",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "offset_increment",
    "rate",
    "loops",
    "blockalign",
    "ba",
    "write_bw_log",
    "write_iops_log",
    "write_lat_log",
    "log_avg_msec",
    "numa_cpu_nodes",
    "steadystate",
    "ss",
    "ss_dur",
    "steadystate_duration",
    "ss_ramp",
    "steadystate_ramp_time",
    "cpumask",
    "sync",
    "overwrite",
    "do_verify",
    "verify_fatal",
    "serialize_overlap",
    "fallocate",
    "buffer_compress_chunk",
    "buffer_pattern",
    "filename_format",
    "percentile_list",
];

/// Options that change nothing lunmark measures: accepted, each with a note
/// saying why (docs/fio.md lists them). `harmless` writes the notes.
pub(super) const HARMLESS: &[&str] = &[
    "thread",
    "randrepeat",
    "gtod_reduce",
    "invalidate",
    "refill_buffers",
    "scramble_buffers",
    "group_reporting",
    "lat_percentiles",
    "clat_percentiles",
    "slat_percentiles",
    "disk_util",
    "write_hist_log",
    "log_hist_msec",
    "per_job_logs",
    "log_offset",
    "significant_figures",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw",
    "verify_dump",
    "verify_state_save",
];

/// Options lunmark does not apply that change no figure it reports (fio's
/// housekeeping and output): `--fio-lenient` may skip these, and only these.
pub(super) const NO_FIGURE: &[&str] = &[
    "unlink",
    "unlink_each_loop",
    "stats",
    "unified_rw_reporting",
    "log_compression",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_max_value",
    "log_hist_coarseness",
    "exec_postrun",
    "allow_file_create",
    "allow_mounted_write",
    "create_serialize",
    "clocksource",
];

/// The random map fio keeps.
pub(super) fn refuse_what_lunmark_lacks(set: &Settings, name: &str, random: f64, problems: &mut Problems, notes: &mut Notes) {
    if random > 0.0 && !set.switch("norandommap", problems) {
        notes.push(format!(
            "job '{name}': fio's random map visits each block once per pass and shortens transfers that would overlap blocks already done; lunmark draws every offset afresh and keeps the sizes, as fio does with norandommap"
        ));
    }
}

/// Options that change nothing lunmark measures: a note each, saying why.
/// `invalidate=1` on a buffered job is the exception: fio drops the file's
/// cached pages before the job, lunmark does not, so the cache would differ.
pub(super) fn harmless(set: &Settings, name: &str, buffered: bool, problems: &mut Problems, notes: &mut Notes) {
    let why = |key: &str| -> Option<&'static str> {
        Some(match key {
            "thread" => "fio runs the job in threads instead of processes; lunmark's workers are always threads",
            "randrepeat" => "it chooses whether fio's random offsets repeat from run to run; lunmark draws from its own stream (randseed= sets its seed), with the same distribution",
            "gtod_reduce" => "it makes fio read the clock less (and drop its latency figures); lunmark times every I/O anyway",
            "invalidate" => "fio drops the file's cached pages before the job; with direct=1 nothing is read from the page cache",
            "refill_buffers" | "scramble_buffers" => "it changes what fio writes, not how much or where; lunmark writes incompressible random data (a target that deduplicates or compresses could tell them apart: --dedupe and --compress set that)",
            "group_reporting" => "it sums fio's jobs in its report; lunmark reports each group and the point",
            "lat_percentiles" | "clat_percentiles" | "slat_percentiles" | "significant_figures" => "it chooses what fio prints; lunmark reports p50, p90, p95, p99, p99.9 and p99.99 of every I/O's latency (percentile_list adds others)",
            "disk_util" => "it makes fio print the disks' own counters; lunmark does not read them",
            "write_hist_log" | "log_hist_msec" => "fio writes latency histogram logs; lunmark writes none, its latency histogram's figures are in the result",
            "per_job_logs" | "log_offset" => "it shapes fio's log files; lunmark writes the bandwidth, IOPS and latency logs of a job that runs alone, one file each, without offsets",
            "disable_lat" | "disable_clat" | "disable_slat" | "disable_bw" => "it turns off figures fio keeps and prints; lunmark keeps every I/O's latency and the bandwidth anyway",
            "verify_dump" => "it makes fio dump a block that fails its check to files; lunmark reports where the first failing blocks are and what it found there (summary.verify)",
            "verify_state_save" => "fio saves where its writes got to for a later verify run; lunmark runs none later",
            _ => return None,
        })
    };
    if buffered && set.value("invalidate").is_none() {
        notes.push(format!(
            "job '{name}' goes through the page cache and leaves invalidate to fio's default (1), which empties the file's cached pages before the job; lunmark does not, so its reads may come from the cache where fio's came from the device: set direct=1, or write invalidate=0 to run on what is cached in both"
        ));
    }
    for key in HARMLESS {
        let Some((s, v)) = set.value(key) else { continue };
        let on = parse_bool(s.value.as_ref().map(|_| v)).unwrap_or(true);
        if *key == "invalidate" && buffered && !on {
            notes.push(format!("{} ({}): accepted: fio keeps the file's cached pages, as lunmark does", show(s), s.place()));
            continue;
        }
        if *key == "invalidate" && buffered && on {
            problems.push(
                s,
                format!("job '{name}' goes through the page cache, which fio empties of the file before the job and lunmark does not: set direct=1, or invalidate=0 to run on what is cached, as lunmark does"),
                false,
            );
            continue;
        }
        if let Some(reason) = why(key) {
            notes.push(format!("{} ({}): accepted, it changes nothing lunmark measures: {reason}", show(s), s.place()));
        }
    }
}
