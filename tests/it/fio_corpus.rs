//! The corpus of real fio job files (tests/fixtures/fio-corpus, each file's
//! source, commit and license in its SOURCES.md): every one runs as written in
//! a dry run, or is refused naming what lunmark lacks. The table holds each
//! file's outcome, so a file that stops running, or a refusal that names
//! another option, fails here. docs/fio.md shows the same table.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

use Outcome::*;

/// What lunmark does with a job file.
enum Outcome {
    /// The dry run shows its workload (exit 0).
    Runs,
    /// Refused before anything runs, naming exactly these options (in line order).
    Refused(&'static [&'static str]),
    /// Refused with this message (not an option: the file itself).
    Fails(&'static str),
}

/// Every job file of the corpus (the kbench `*-include.fio` files are parts
/// the jobs include, not jobs).
const CORPUS: &[(&str, Outcome)] = &[
    ("kbench/fio/bandwidth-quick.fio", Runs),
    ("kbench/fio/bandwidth-random-read.fio", Runs),
    ("kbench/fio/bandwidth-random-write.fio", Runs),
    ("kbench/fio/bandwidth-sequential-read.fio", Runs),
    ("kbench/fio/bandwidth-sequential-write.fio", Runs),
    ("kbench/fio/bandwidth.fio", Runs),
    ("kbench/fio/iops-quick.fio", Runs),
    ("kbench/fio/iops-random-read.fio", Runs),
    ("kbench/fio/iops-random-write.fio", Runs),
    ("kbench/fio/iops-sequential-read.fio", Runs),
    ("kbench/fio/iops-sequential-write.fio", Runs),
    ("kbench/fio/iops.fio", Runs),
    ("kbench/fio/latency-quick.fio", Runs),
    ("kbench/fio/latency-random-read.fio", Runs),
    ("kbench/fio/latency-random-write.fio", Runs),
    ("kbench/fio/latency-sequential-read.fio", Runs),
    ("kbench/fio/latency-sequential-write.fio", Runs),
    ("kbench/fio/latency.fio", Runs),
    ("spdk/app/fio/bdev/example_config.fio", Refused(&["ioengine", "spdk_json_conf"])),
    ("spdk/app/fio/bdev/full_bench.fio", Refused(&["ioengine", "spdk_conf"])),
    (
        "spdk/app/fio/bdev/zbd_example.fio",
        Refused(&["ioengine", "spdk_json_conf", "zonemode", "max_open_zones", "initial_zone_reset", "zone_append"]),
    ),
    ("spdk/app/fio/nvme/example_config.fio", Refused(&["ioengine"])),
    ("spdk/app/fio/nvme/full_bench.fio", Refused(&["ramp_time", "runtime"])),
    ("spdk/app/fio/nvme/mock_sgl_config.fio", Refused(&["ioengine", "enable_sgl", "verify_backlog"])),
    ("spdk/docker/traffic-generator/fio-nvme.conf", Refused(&["ioengine", "spdk_json_conf", "spdk_mem"])),
    ("spdk/docker/traffic-generator/fio-virtio.conf", Refused(&["ioengine", "spdk_json_conf", "spdk_single_seg", "spdk_mem"])),
    ("spdk/scripts/perf/nvme/fio_test.conf", Runs),
    ("spdk/test/ftl/config/fio/drive-prep.fio", Refused(&["ioengine", "spdk_json_conf", "size"])),
    ("spdk/test/ftl/config/fio/randr.fio", Refused(&["ioengine", "spdk_json_conf", "size"])),
    ("spdk/test/ftl/config/fio/randrw.fio", Refused(&["ioengine", "spdk_json_conf", "size"])),
    ("spdk/test/ftl/config/fio/randw-verify-depth128.fio", Refused(&["ioengine", "spdk_json_conf", "verify", "random_distribution"])),
    (
        "spdk/test/ftl/config/fio/randw-verify-j2.fio",
        Refused(&["ioengine", "spdk_json_conf", "verify", "verify_backlog", "random_distribution", "size", "offset"]),
    ),
    ("spdk/test/ftl/config/fio/randw-verify-qd128-ext.fio", Refused(&["ioengine", "spdk_json_conf", "verify", "random_distribution"])),
    ("spdk/test/ftl/config/fio/randw-verify-qd2048-ext.fio", Refused(&["ioengine", "spdk_json_conf", "size", "verify"])),
    (
        "spdk/test/ftl/config/fio/randw-verify-qd256-nght.fio",
        Refused(&["ioengine", "spdk_json_conf", "verify", "random_distribution", "size"]),
    ),
    (
        "spdk/test/ftl/config/fio/randw-verify.fio",
        Refused(&["ioengine", "spdk_json_conf", "verify", "verify_backlog", "random_distribution"]),
    ),
    ("spdk/test/ftl/config/fio/randw.fio", Refused(&["ioengine", "spdk_json_conf", "size"])),
    (
        "spdk/test/ftl/config/fio/unmap.fio",
        Refused(&["ioengine", "spdk_json_conf", "serialize_overlap", "size", "verify", "verify_only", "verify_pattern"]),
    ),
    (
        "spdk/test/ftl/config/fio/write_after_write.fio",
        Refused(&["ioengine", "spdk_json_conf", "random_distribution", "io_size", "buffer_pattern"]),
    ),
    ("spdk/test/iscsi_tgt/perf/perf.job", Runs),
    ("spdk/test/ocf/integrity/test.fio", Refused(&["verify", "verify_backlog", "offset"])),
    ("spdk/test/vhost/common/fio_jobs/default_fsdev.job", Runs),
    ("spdk/test/vhost/common/fio_jobs/default_initiator.job", Refused(&["time_based", "verify_backlog"])),
    (
        "spdk/test/vhost/common/fio_jobs/default_integrity.job",
        Refused(&["iodepth_batch", "iodepth_low", "verify", "verify_backlog", "fsync_on_close"]),
    ),
    ("spdk/test/vhost/common/fio_jobs/default_integrity_nightly.job", Refused(&["verify", "verify_backlog"])),
    ("spdk/test/vhost/common/fio_jobs/default_performance.job", Refused(&["iodepth_batch", "iodepth_low", "fsync_on_close"])),
    ("spdk/test/vhost/fio/vhost_fio.job", Refused(&["blocksize", "verify", "verify_backlog"])),
    ("spdk/test/vhost/hotplug/fio_jobs/default_integrity.job", Fails("no job section to run")),
    ("spdk/test/vhost/initiator/bdev.fio", Refused(&["verify", "verify_backlog", "offset", "trim_verify_zero", "size"])),
    ("spdk/test/vhost/migration/migration-tc1.job", Refused(&["verify", "runtime"])),
    ("spdk/test/vhost/migration/migration-tc2.job", Refused(&["verify", "verify_backlog"])),
    ("spdk/test/vhost/nvmf/nvmf_vhost_fio.job", Refused(&["blocksize", "verify", "verify_backlog"])),
    ("spdk/test/vmd/config/config.fio", Refused(&["ioengine", "enable_vmd"])),
    ("PerfKitBenchmarker/perfkitbenchmarker/data/fio.job", Refused(&["end_fsync", "size"])),
    ("PerfKitBenchmarker/tests/data/fio/fio.job", Refused(&["end_fsync", "size"])),
    ("PerfKitBenchmarker/tests/data/fio/hist/pkb-7fb0c9d8-0_fio.job", Runs),
    ("fio-plot/bench_fio/templates/precondition.fio", Runs),
    ("zfs/tests/zfs-tests/tests/perf/fio/mkfiles.fio", Runs),
    ("zfs/tests/zfs-tests/tests/perf/fio/random_reads.fio", Runs),
    ("zfs/tests/zfs-tests/tests/perf/fio/random_readwrite.fio", Refused(&["nrfiles"])),
    ("zfs/tests/zfs-tests/tests/perf/fio/random_readwrite_fixed.fio", Refused(&["nrfiles"])),
    ("zfs/tests/zfs-tests/tests/perf/fio/random_writes.fio", Runs),
    ("zfs/tests/zfs-tests/tests/perf/fio/sequential_reads.fio", Runs),
    ("zfs/tests/zfs-tests/tests/perf/fio/sequential_readwrite.fio", Refused(&["nrfiles"])),
    ("zfs/tests/zfs-tests/tests/perf/fio/sequential_writes.fio", Runs),
];

/// What the harnesses that use these files give them: ${VAR}s (SPDK's FTL and
/// perf scripts, ZFS's perf tests, with their own values), and a device or
/// file as --target (kbench, SPDK and PKB pass it on fio's command line).
const ENV: &[(&str, &str)] = &[
    ("FTL_JSON_CONF", "/tmp/ftl.json"),
    ("FTL_BDEV_NAME", "ftl0"),
    ("IOENGINE", "libaio"),
    ("BLK_SIZE", "4096"),
    ("RW", "randrw"),
    ("MIX", "70"),
    ("IODEPTH", "32"),
    ("RUNTIME", "10"),
    ("SYNC_TYPE", "0"),
    ("DIRECT", "0"),
    ("NUMJOBS", "2"),
    ("RANDSEED", "1234"),
    ("COMPPERCENT", "66"),
    ("COMPCHUNK", "0"),
    ("FILESIZE", "64m"),
    ("FILE_SIZE", "64m"),
    ("BLOCKSIZE", "128k"),
    ("PERF_RANDSEED", "1234"),
    ("PERF_COMPPERCENT", "66"),
    ("PERF_COMPCHUNK", "0"),
];

fn corpus(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-corpus").join(file)
}

/// A target of data (a job that only reads refuses a file of holes).
fn data_target(dir: &Path) -> PathBuf {
    let t = dir.join("target.dat");
    let data: Vec<u8> = (0..64u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&t, data).unwrap();
    t
}

fn run_job(dir: &Path, file: &str, target: &Path, extra: &[&str]) -> Output {
    let mut cmd = lunmark();
    cmd.current_dir(dir).env("DIRECTORY", dir).envs(ENV.iter().copied());
    let path = corpus(file);
    cmd.args(["run", "--fio", path.to_str().unwrap(), "--target", target.to_str().unwrap()]).args(extra);
    cmd.output().expect("run lunmark")
}

/// The options a refusal names: `  line N: KEY=...` (or `  FILE, line N: KEY...`).
fn named_options(err: &str) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for line in err.lines().filter(|l| l.starts_with("  ")) {
        let Some((_, rest)) = line.split_once("line ") else { continue };
        let Some((_, rest)) = rest.split_once(": ") else { continue };
        let key: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

#[test]
fn every_job_file_of_the_corpus_runs_or_is_refused_naming_what_lunmark_lacks() {
    let dir = shm_dir();
    let target = data_target(dir.path());
    let files = std::fs::read_to_string(corpus("SOURCES.md")).unwrap();
    let mut wrong = Vec::new();
    for (file, want) in CORPUS {
        assert!(files.contains(&format!("| `{file}` |")), "{file} has no source in SOURCES.md");
        let out = run_job(dir.path(), file, &target, &["--dry-run"]);
        let err = stderr(&out);
        let ok = match want {
            Runs => out.status.success() && stdout(&out).contains("engine: "),
            Refused(keys) => {
                out.status.code() == Some(1) && named_options(&err) == *keys && err.contains("lunmark cannot run this job file")
            }
            Fails(message) => out.status.code() == Some(1) && err.contains(message),
        };
        if !ok {
            wrong.push(format!("{file}: exit {:?}, options named {:?}\n{err}", out.status.code(), named_options(&err)));
        }
    }
    assert!(wrong.is_empty(), "{} of {} files not as the table says:\n{}", wrong.len(), CORPUS.len(), wrong.join("\n"));
    // At least 60 job files, and every file in the folder is in the table (or included by one).
    assert!(CORPUS.len() >= 60, "{}", CORPUS.len());
    let listed = files.lines().filter(|l| l.starts_with("| `")).count();
    let includes = files.lines().filter(|l| l.starts_with("| `") && l.contains("-include.fio`")).count();
    assert_eq!(listed, CORPUS.len() + includes, "SOURCES.md and the table list the same files");
}

#[test]
fn a_corpus_job_runs_for_real_on_a_file() {
    // kbench's 4 KiB random-read IOPS job (iodepth 64, libaio, direct), as
    // written but for its 5 s ramp and 20 s run: 1 s here.
    let dir = shm_dir();
    let target = data_target(dir.path());
    let json = dir.path().join("r.json");
    let out = run_job(
        dir.path(),
        "kbench/fio/iops-random-read.fio",
        &target,
        &["--time", "1s", "--ramp", "0", "-q", "--json", json.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    let s = &r["points"][0]["summary"];
    assert!(s["iops"].as_f64().unwrap() > 0.0, "{s}");
    assert_eq!(s["ios_written"].as_u64(), Some(0), "a read job writes nothing: {s}");
}
