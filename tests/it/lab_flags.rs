//! Requests checked whole before anything runs (issue 13, item 1's parts):
//! every point of a sweep, the power source's name, and the lab subcommands,
//! which apply or refuse each run flag: `--dry-run` prints the whole study and
//! starts nothing, `--json FILE` gets the list of the lab's results, `--label`
//! prefixes each result's label, and flags a study cannot apply are refused
//! (`lab protocols` with an engine flag or a cache, with a lab's message). A
//! lab's dry run ends quietly on a closed stdout.

use std::time::{Duration, Instant};

use crate::common::*;

#[test]
fn a_sweep_point_the_cache_cannot_serve_is_refused_before_point_one() {
    let dir = shm_dir();
    let target = dir.path().join("lun");
    let json = dir.path().join("r.json");
    let out = run(&[
        "run",
        "-q",
        "--no-store",
        "-t",
        target.to_str().unwrap(),
        "--size",
        "4m",
        "--buffered",
        "--time",
        "1s",
        "--ramp",
        "0",
        "--sweep",
        "bs=4k,512",
        "--cache",
        "25%",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("512") && err.contains("4096-byte cache blocks"), "{err}");
    // Nothing ran: no point measured, no target created, no result written.
    assert!(!stdout(&out).contains("point 1"), "{}", stdout(&out));
    assert!(!target.exists() && !json.exists());
}

#[test]
fn a_mistyped_power_source_is_refused_before_the_run_not_a_null_figure() {
    for extra in [&["--dry-run"][..], &[][..]] {
        let mut args = vec!["run", "-q", "--no-store", "-t", "mem:1m", "--time", "1s", "--ramp", "0", "--power", "rapll"];
        args.extend(extra);
        let out = run(&args);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains("--power rapll") && err.contains("did you mean 'rapl'"), "{err}");
        assert!(!stdout(&out).contains("point 1") && !stdout(&out).contains("IOPS"), "printed before the refusal: {}", stdout(&out));
    }
    // cmd and log without what they read are refused the same way.
    let out = run(&["run", "-q", "--no-store", "-t", "mem:1m", "--time", "1s", "--power", "cmd"]);
    assert!(!out.status.success() && stderr(&out).contains("--power-cmd"), "{}", stderr(&out));
}

#[test]
fn lab_dry_runs_print_the_whole_study_and_start_nothing() {
    let dir = shm_dir();
    let store = dir.path().join("store.db");
    let json = dir.path().join("lab.json");
    let started = Instant::now();
    let out = run(&[
        "lab",
        "protocols",
        "--dry-run",
        "--label",
        "before upgrade",
        "--lun-size",
        "64m",
        "--time",
        "1s",
        "--store",
        store.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for leg in ["mem: (lunmark alone)", "file in /dev/shm", "NBD unix socket", "NBD TCP 127.0.0.1", "iSCSI TCP 127.0.0.1 (tgtd)"] {
        assert!(text.contains(&format!("before upgrade: lab protocols: {leg}")), "{leg} missing:\n{text}");
    }
    assert!(text.contains("64m") && text.contains("point 1/") && text.contains("lab.json"), "{text}");
    let out = run(&[
        "lab",
        "cache",
        "--dry-run",
        "--cache-sizes",
        "0,50",
        "--lun-size",
        "16m",
        "--time",
        "1s",
        "--store",
        store.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("lab cache: 0% of the LUN") && text.contains("lab cache: 50% of the LUN") && text.contains("group 'db'"),
        "{text}"
    );
    // Nothing ran: no result kept, no JSON written, and no time spent measuring.
    assert!(!store.exists() && !json.exists());
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn lab_flags_a_study_cannot_apply_are_refused_with_what_to_do() {
    let cases: &[(&[&str], &str)] = &[
        (&["lab", "protocols", "--size", "1g"], "--lun-size 1g"),
        (&["lab", "protocols", "--force"], "drop them"),
        (&["lab", "cache", "--pass", "iops>1"], "judges no verdict"),
        (&["lab", "protocols", "--sla", "lat_p99<5ms", "--dry-run"], "a knee search chooses its own"),
        (&["lab", "cache", "--rate", "100"], "flat out"),
        (&["lab", "cache", "--target", "mem:1m"], "drop --target"),
        (&["lab", "protocols", "--journal", "/dev/shm/never-written"], "--journal"),
        // The legs are a file, mem: and network LUNs: no sync applies to all (the dry run refuses it too).
        (&["lab", "protocols", "--flush", "4"], "--flush 4: lab protocols runs the same workload on a file, on mem:"),
        (&["lab", "protocols", "--flush", "4", "--dry-run"], "no sync applies to all of them"),
        (&["lab", "protocols", "--fsync", "4"], "no sync applies to all of them"),
        (&["lab", "protocols", "--fdatasync", "4", "--dry-run"], "no sync applies to all of them"),
        (&["lab", "cache", "--fsync", "4", "--dry-run"], "use --flush N"),
        // The lab chooses each leg's engine; a cache would hide the protocols' costs; the LUN has its own size flag.
        (&["lab", "protocols", "--buffered"], "lab protocols chooses the engine of each leg"),
        (&["lab", "protocols", "--engine", "psync"], "lab protocols chooses the engine of each leg"),
        (&["lab", "protocols", "--sqpoll"], "lab protocols chooses the engine of each leg"),
        (&["lab", "protocols", "--cache", "25%"], "lunmark lab cache"),
        (&["lab", "cache", "--size", "1g"], "--lun-size 1g"),
    ];
    for (args, says) in cases {
        let out = run(args);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn lab_json_lists_every_result_and_label_prefixes_them() {
    let dir = shm_dir();
    let store = dir.path().join("store.db");
    let json = dir.path().join("lab.json");
    let out = run(&[
        "lab",
        "cache",
        "--cache-sizes",
        "0,50",
        "--lun-size",
        "8m",
        "--delay",
        "1ms",
        "--time",
        "1s",
        "--ramp",
        "0",
        "--label",
        "rig 2",
        "--store",
        store.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list = read_json(&json);
    let list = list.as_array().expect("a JSON list");
    assert_eq!(list.len(), 2, "one result per cache size");
    for (r, pct) in list.iter().zip(["0%", "50%"]) {
        let label = r["label"].as_str().unwrap();
        assert!(label.starts_with("rig 2: lab cache: ") && label.contains(pct), "{label}");
        assert!(r["points"][0]["summary"]["iops"].as_f64().unwrap() > 0.0);
    }
    // The same results are in the store.
    let listed = run(&["results", "list", "--format", "json", "--store", store.to_str().unwrap()]);
    let ids: Vec<String> = serde_json::from_str::<serde_json::Value>(&stdout(&listed))
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().into())
        .collect();
    for r in list {
        assert!(ids.contains(&r["id"].as_str().unwrap().to_string()), "{} not in the store", r["id"]);
    }
}

/// A flag with a value it would take in use, and the flags it needs beside it
/// (its context). `{dir}` is the test's directory.
struct Sample {
    flag: &'static str,
    context: &'static [&'static str],
    args: &'static [&'static str],
}

const fn s(flag: &'static str, context: &'static [&'static str], args: &'static [&'static str]) -> Sample {
    Sample { flag, context, args }
}

/// A sample for every long flag of `run` and the labs (a new flag without one
/// fails the walk, so it cannot go untested). Targets: `mem:16m` unless the
/// context gives one.
const SAMPLES: &[Sample] = &[
    s("profile-file", &[], &["--profile-file", "{dir}/p.toml"]),
    s("fio", &[], &["--fio", "{dir}/job.fio"]),
    s("section", &["--fio", "{dir}/job.fio"], &["--section", "b"]),
    s("sweep", &[], &["--sweep", "qd=1,2"]),
    s("repeat", &[], &["--repeat", "3"]),
    s("pick", &["--repeat", "3"], &["--pick", "best"]),
    s("rate", &[], &["--rate", "100"]),
    s("mailboxes", &[], &["--mailboxes", "100"]),
    s("iops-per-mailbox", &["--mailboxes", "100"], &["--iops-per-mailbox", "0.5"]),
    s("pass", &[], &["--pass", "iops>1"]),
    s("sla", &["--bs", "4k"], &["--sla", "lat_p99<5ms"]),
    s("curve", &["--bs", "4k"], &["--curve", "50,90"]),
    s("tune", &["jetstress"], &["--tune"]),
    s("curve-stop", &["--bs", "4k", "--curve", "50,90"], &["--curve-stop", "lat_p99<5ms"]),
    s("target", &[], &["--target", "mem:8m"]),
    s("workers", &[], &["--workers", "2"]),
    s("qd", &[], &["--qd", "4"]),
    s("bs", &[], &["--bs", "8k"]),
    s("read", &[], &["--read", "50"]),
    s("random", &[], &["--random", "0"]),
    s("align", &["--bs", "8k"], &["--align", "4k"]),
    s("time", &[], &["--time", "2s"]),
    s("ios", &[], &["--ios", "100"]),
    s("ramp", &[], &["--ramp", "0"]),
    s("size", &[], &["--size", "8m"]),
    s("offset", &["--size", "8m"], &["--offset", "1m"]),
    s("seed", &[], &["--seed", "5"]),
    s("engine", &["-t", "{dir}/lun", "--size", "16m"], &["--engine", "psync"]),
    s("sqpoll", &["-t", "{dir}/lun", "--size", "16m"], &["--sqpoll"]),
    // A file cannot poll for completions: refused, with why.
    s("poll", &["-t", "{dir}/lun", "--size", "16m"], &["--poll"]),
    s("connections", &["-t", "nbd://127.0.0.1:9/x"], &["--connections", "2"]),
    s("buffered", &["-t", "{dir}/lun", "--size", "16m"], &["--buffered"]),
    s("destructive", &[], &["--destructive"]),
    s("force", &[], &["--force"]),
    s("no-store", &[], &["--no-store"]),
    s("store", &[], &["--store", "{dir}/s.db"]),
    s("json", &[], &["--json", "{dir}/r.json"]),
    s("hdr-log", &[], &["--hdr-log", "{dir}/h.hdr"]),
    s("output-format", &[], &["--output-format", "fio-json"]),
    s("label", &[], &["--label", "x"]),
    s("power", &[], &["--power", "none"]),
    s("power-cmd", &[], &["--power-cmd", "echo 100"]),
    s("power-log", &[], &["--power-log", "{dir}/power.csv"]),
    s("idle", &[], &["--idle", "2s"]),
    s("verify", &[], &["--verify"]),
    s("verify-stop", &[], &["--verify-stop"]),
    s("journal", &[], &["--journal", "{dir}/j"]),
    s("cache", &[], &["--cache", "25%"]),
    s("cache-mode", &["--cache", "25%"], &["--cache-mode", "writeback"]),
    s("cache-dev", &["--cache", "25%"], &["--cache-dev", "{dir}/cache-dev"]),
    s("cache-block", &["--cache", "25%"], &["--cache-block", "8k"]),
    s("trace", &[], &["--trace", "{dir}/t"]),
    s("continue-on-error", &[], &["--continue-on-error"]),
    s("link", &["-t", "nbd://127.0.0.1:9/x"], &["--link", "10gbe"]),
    s("quiet", &[], &["--quiet"]),
    s("lun-size", &[], &["--lun-size", "32m"]),
    s("legs", &[], &["--legs", "nbd-unix"]),
    s("targets", &[], &["--targets", "2"]),
    s("server-cpus", &[], &["--server-cpus", "none"]),
    s("port-limit", &["--legs", "nbd-unix"], &["--port-limit", "1ms"]),
    s("delay", &[], &["--delay", "8ms"]),
    s("read-delay", &[], &["--read-delay", "9ms"]),
    s("write-delay", &[], &["--write-delay", "8ms"]),
    s("cache-sizes", &[], &["--cache-sizes", "0,10"]),
    s("disks", &[], &["--disks", "2"]),
    s("profile", &[], &["--profile", "max-iops"]),
    s("dist", &[], &["--dist", "zipf:1.2"]),
    s("thinktime", &[], &["--thinktime", "1ms"]),
    s("thinktime-blocks", &["--thinktime", "1ms"], &["--thinktime-blocks", "4"]),
    s("arrivals", &["--rate", "100"], &["--arrivals", "poisson"]),
    s("cpus", &[], &["--cpus", "0"]),
    s("cpus-policy", &["--cpus", "0"], &["--cpus-policy", "split"]),
    s("detail", &[], &["--detail"]),
    s("replay", &[], &["--replay", "{dir}/trace.csv"]),
    s("replay-format", &["--replay", "{dir}/trace.csv"], &["--replay-format", "msr"]),
    s("replay-speed", &["--replay", "{dir}/trace.csv"], &["--replay-speed", "2"]),
    s("replay-map", &["-t", "mem:16m", "-t", "mem:8m", "--replay", "{dir}/trace.csv"], &["--replay-map", "0=1"]),
    s("replay-offsets", &["--replay", "{dir}/trace.csv"], &["--replay-offsets", "wrap"]),
    s("trim", &["--read", "50"], &["--trim", "20"]),
    s("fsync", &["-t", "{dir}/lun", "--size", "16m"], &["--fsync", "8"]),
    s("fdatasync", &["-t", "{dir}/lun", "--size", "16m"], &["--fdatasync", "8"]),
    s("flush", &["-t", "nbd://127.0.0.1:9/x"], &["--flush", "8"]),
    s("compress", &[], &["--compress", "50"]),
    s("dedupe", &[], &["--dedupe", "30"]),
    s("dedupe-unit", &["--dedupe", "30"], &["--dedupe-unit", "8k"]),
    s("steady", &[], &["--steady", "iops"]),
    s("steady-window", &["--steady", "iops"], &["--steady-window", "7"]),
    s("steady-round", &["--steady", "iops"], &["--steady-round", "2s"]),
    s("steady-range", &["--steady", "iops"], &["--steady-range", "15"]),
    s("steady-slope", &["--steady", "iops"], &["--steady-slope", "5"]),
    s("live-json", &[], &["--live-json", "{dir}/live.jsonl"]),
    s("metrics-listen", &[], &["--metrics-listen", ":0"]),
];

/// Flags the walk does not judge, each with why. Keep it short.
const NOT_WALKED: &[(&str, &str)] = &[
    ("help", "clap's own"),
    ("dry-run", "the walk's own flag"),
    ("fio-lenient", "changes only a job file with an option lunmark cannot apply: it::fio covers it"),
];

fn dry_run(base: &[&str], extra: &[String]) -> std::process::Output {
    let mut args: Vec<String> = base.iter().map(|a| a.to_string()).collect();
    args.extend(extra.iter().cloned());
    lunmark().env_remove("LUNMARK_STORE").args(&args).output().unwrap()
}

/// Every flag of `run`, `lab protocols` and `lab cache`, from clap's own tree,
/// either changes what the dry run prints (the effective request) or is
/// refused with a message in that context: none is accepted and ignored.
#[test]
fn every_flag_changes_the_dry_run_or_is_refused() {
    use clap::CommandFactory;
    let dir = shm_dir();
    let d = dir.path().display().to_string();
    let builtin = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/workload/builtin/max-iops.toml")).unwrap();
    std::fs::write(dir.path().join("p.toml"), builtin).unwrap();
    std::fs::write(dir.path().join("job.fio"), "[a]\nrw=randread\nbs=8k\n[b]\nrw=randwrite\nbs=16k\n").unwrap();
    std::fs::write(dir.path().join("power.csv"), "1700000000,100\n1700000001,101\n").unwrap();
    // A two-I/O MSR Cambridge trace for --replay.
    std::fs::write(dir.path().join("trace.csv"), "100,h,0,Read,0,4096,1\n200,h,0,Write,8192,4096,1\n").unwrap();
    let fill = |args: &[&str]| -> Vec<String> { args.iter().map(|a| a.replace("{dir}", &d)).collect() };
    let cli = lunmark::cli::Cli::command();
    let commands: [(&str, Vec<&str>, &[&str]); 3] = [
        ("run", vec!["run"], &["run", "--dry-run"]),
        ("lab protocols", vec!["lab", "protocols"], &["lab", "protocols", "--dry-run"]),
        ("lab cache", vec!["lab", "cache"], &["lab", "cache", "--dry-run"]),
    ];
    let mut ignored = Vec::new();
    for (name, path, base) in commands {
        let mut cmd = &cli;
        for p in &path {
            cmd = cmd.find_subcommand(p).unwrap_or_else(|| panic!("no subcommand {p}"));
        }
        let flags: Vec<String> = cmd.get_arguments().chain(cli.get_arguments()).filter_map(|a| a.get_long().map(String::from)).collect();
        for flag in flags {
            if NOT_WALKED.iter().any(|(f, _)| *f == flag) {
                continue;
            }
            let sample = SAMPLES.iter().find(|s| s.flag == flag).unwrap_or_else(|| panic!("--{flag} of {name}: add a sample to SAMPLES"));
            let target: Vec<String> = if name == "run" && !sample.context.contains(&"-t") { fill(&["-t", "mem:16m"]) } else { vec![] };
            let context: Vec<String> = target.into_iter().chain(fill(sample.context)).collect();
            let without = dry_run(base, &context);
            let with = dry_run(base, &context.iter().cloned().chain(fill(sample.args)).collect::<Vec<_>>());
            let refused = !with.status.success() && !stderr(&with).trim().is_empty();
            let changed = with.status.success() != without.status.success() || stdout(&with) != stdout(&without);
            if !refused && !changed {
                ignored.push(format!("{name} {}", fill(sample.args).join(" ")));
            }
        }
    }
    assert!(ignored.is_empty(), "accepted and ignored (the dry run is the same, nothing refused):\n{}", ignored.join("\n"));
}

#[test]
fn lab_protocols_refuses_engine_flags_and_a_cache_with_a_lab_message() {
    assert_refused(&[
        (&["lab", "protocols", "--buffered", "--dry-run"], "--buffered: lab protocols chooses the engine of each leg"),
        (
            &["lab", "protocols", "--engine", "psync", "--lun-size", "8m", "--time", "200ms", "--ramp", "0"],
            "--engine psync: lab protocols chooses the engine of each leg",
        ),
        (&["lab", "protocols", "--engine", "psync", "--buffered", "--dry-run"], "drop --engine psync"),
        // Not the run's message about a mem: target the user never named.
        (&["lab", "protocols", "--sqpoll", "--dry-run"], "--sqpoll: lab protocols chooses the engine of each leg"),
        (&["lab", "protocols", "--sqpoll=1", "--dry-run"], "drop --sqpoll=1"),
        (&["lab", "protocols", "--poll", "--dry-run"], "drop --poll"),
        (&["lab", "protocols", "--cache", "25%", "--dry-run"], "--cache 25%: lab protocols compares what each protocol costs"),
        (&["lab", "protocols", "--cache", "25%", "--dry-run"], "lunmark lab cache"),
    ]);
    let (out, _) = run_in_store(shm_dir().path(), &["lab", "protocols", "--sqpoll", "--dry-run"]);
    assert!(!stderr(&out).contains("mem:1g"), "{}", stderr(&out));
}

/// `lab cache --dry-run | head -0`: the plan is only printed, so a closed
/// stdout ends the process as it ends `run --dry-run` (by SIGPIPE, quietly),
/// never with a panic and exit 101. The reader is closed before lunmark
/// writes, so every write meets a closed pipe.
#[test]
fn a_closed_stdout_ends_a_lab_dry_run_quietly() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    for study in [&["cache", "--cache-sizes", "25.5", "--lun-size", "8m", "--delay", "1ms"][..], &["protocols", "--lun-size", "8m"]] {
        let out = with_stdout_closed(lunmark().arg("--store").arg(&store).arg("lab").args(study).args(["--time", "1s", "--dry-run"]));
        let err = stderr(&out);
        assert!(!err.contains("panicked") && out.status.code() != Some(101), "lab {study:?}: {err}");
        assert!(err.is_empty(), "lab {study:?} should end quietly: {err}");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "lab {study:?} ends as run --dry-run does: {:?}", out.status);
        assert!(!store.exists(), "a dry run keeps nothing");
    }
}
