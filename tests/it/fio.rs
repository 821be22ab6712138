//! fio job files: `run --fio` shows and runs the mapped workload, refuses what it
//! cannot apply (every option, with its line), `profiles import-fio` prints a
//! profile that runs back the same, and fio itself agrees on the same job file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio").join(name)
}

/// lunmark with ${SCRATCH} pointing at `dir`, as the fixtures expect.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    lunmark().env("SCRATCH", dir).current_dir(dir).args(args).output().expect("run lunmark")
}

#[test]
fn dry_run_shows_the_mapped_workload() {
    let dir = shm_dir();
    let f = fixture("phases.fio");
    let out = run_in(dir.path(), &["run", "--fio", f.to_str().unwrap(), "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    for want in [
        "note: ioengine=libaio runs on io_uring",
        "point 1/2: phase=seq-read+rand-write",
        "engine: io_uring   ramp: 500ms (not measured)   run: 1s measured",
        "region on each target: 16m from offset 0   (direct I/O)",
        "group 'seq-read': 1 worker x 1 target x 1 outstanding",
        "group 'rand-write': 2 workers x 1 target x 4 outstanding",
        "0% read / 100% write, 100% random",
        "point 2/2: phase=later",
        "group 'later': 1 worker x 2 targets x 4 outstanding",
        "25.0% of I/Os: 12k transfers, 100% read",
    ] {
        assert!(text.contains(want), "'{want}' missing from:\n{text}");
    }
    assert!(text.contains(&format!("target 1: {}/b.dat", dir.path().display())), "{text}");
    assert!(!dir.path().join("a.dat").exists(), "a dry run creates nothing");
    // --section runs one job; flags override the job file like a profile's values.
    let out = run_in(dir.path(), &["run", "--fio", f.to_str().unwrap(), "--section", "later", "--qd", "2", "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("group 'later': 1 worker x 2 targets x 2 outstanding") && !text.contains("seq-read"), "{text}");
    // --target replaces the job file's files: every group drives it.
    let out = run_in(dir.path(), &["run", "--fio", f.to_str().unwrap(), "-t", "mem:64m", "--dry-run"]);
    let text = stdout(&out);
    assert!(text.contains("target 0: mem:64m") && !text.contains("target 1:") && text.contains("engine: mem"), "{text}");
}

#[test]
fn every_unsupported_option_is_named_with_its_line_and_lenient_skips_only_what_changes_no_figure() {
    let dir = shm_dir();
    let f = fixture("unsupported.fio");
    let out = run_in(dir.path(), &["run", "--fio", f.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for want in [
        "line 3: zonemode=zbd",
        "line 11: thinktime_spin=10",
        "line 12: exec_prerun=true",
        "line 16: random_distribution=zoned_abs:10/90:90/10",
        "--fio-lenient",
    ] {
        assert!(err.contains(want), "'{want}' missing from:\n{err}");
    }
    assert_eq!(err.matches("error:").count(), 1, "one message: {err}");
    assert!(!dir.path().join("u.dat").exists(), "refused before anything ran");

    // Each of these changes the workload: --fio-lenient refuses them too.
    let out = run_in(dir.path(), &["run", "--fio", f.to_str().unwrap(), "--fio-lenient", "--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("line 12: exec_prerun=true") && err.contains("--fio-lenient cannot skip"), "{err}");
    // Options that change no figure are skipped with a warning each; offset_increment
    // lunmark cannot apply (a file per clone: four workers' parts it cannot place) is
    // refused even then (a trial found it dropped: four workers on the same blocks).
    let job = dir.path().join("lenient.fio");
    let per_clone = "[l]\ndirectory=${SCRATCH}\nsize=1m\nrw=read\nnumjobs=4\nunlink=1\noffset_increment=1m\n";
    std::fs::write(&job, per_clone).unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--fio-lenient", "--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("line 7: offset_increment=1m: job 'l' gives each clone a file of its own"), "{err}");
    // That refusal names only what blocks: unlink (line 6), which lenient would skip, is not in it.
    assert!(!err.contains("unlink"), "lenient names only what blocks: {err}");
    let body = "[l]\nioengine=null\nsize=1g\nrw=randread\nnumjobs=4\nruntime=300ms\ntime_based\nunlink=1\nstats=1\n";
    std::fs::write(&job, body).unwrap();
    let json = dir.path().join("r.json");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--fio-lenient", "-q", "--json", json.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("(skipped: --fio-lenient)").count(), 2, "{err}");
    assert!(err.contains("line 8: unlink=1") && err.contains("line 9: stats=1"), "{err}");
    assert!(read_json(&json)["points"][0]["summary"]["iops"].as_f64().unwrap() > 0.0);

    // --fio cannot be combined with a profile.
    let out = run(&["run", "quick", "--fio", f.to_str().unwrap(), "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn import_fio_prints_a_profile_that_runs_back_the_same() {
    let dir = shm_dir();
    let f = fixture("phases.fio");
    let out = run_in(dir.path(), &["profiles", "import-fio", f.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let toml = stdout(&out);
    assert!(toml.contains("# note: ioengine=libaio runs on io_uring") && toml.contains("engine = \"io_uring\""), "{toml}");
    let saved = dir.path().join("imported.toml");
    std::fs::write(&saved, &toml).unwrap();
    let from_fio = stdout(&run_in(dir.path(), &["run", "--fio", f.to_str().unwrap(), "--dry-run"]));
    let from_toml = run_in(dir.path(), &["run", "--profile-file", saved.to_str().unwrap(), "--dry-run"]);
    assert!(from_toml.status.success(), "{}", stderr(&from_toml));
    let without_notes: String = from_fio.lines().filter(|l| !l.starts_with("note:")).map(|l| format!("{l}\n")).collect();
    assert_eq!(plan_text(&stdout(&from_toml)), plan_text(&without_notes));
    // And `profiles show` prints it back unchanged.
    let shown = stdout(&run(&["profiles", "show", saved.to_str().unwrap()]));
    let body: String = toml.lines().filter(|l| !l.starts_with('#')).map(|l| format!("{l}\n")).collect();
    assert_eq!(shown, body);
}

#[test]
fn verify_in_a_job_file_turns_on_lunmarks_check() {
    let dir = shm_dir();
    let job = dir.path().join("v.fio");
    std::fs::write(&job, "[v]\nrw=randrw\nsize=4m\nverify=md5\nruntime=300ms\ntime_based\nfilename=${SCRATCH}/v.dat\ndirect=1\nioengine=io_uring\niodepth=4\n").unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    let text = stdout(&out);
    assert!(text.contains("note: verify: lunmark checks every read with its own block header and CRC-32C"), "{text}");
    assert!(text.contains("verify: every byte read is checked"), "{text}");
    let json = dir.path().join("r.json");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["points"][0]["summary"]["verify"]["mismatches"], 0, "{}", r["points"][0]["summary"]);
}

/// Read share, share of 4 KiB transfers (from the mean size of a 4k/8k mix) and IOPS.
struct Mix {
    read: f64,
    small: f64,
    iops: f64,
}

fn mix(reads: f64, ios: f64, bytes: f64, iops: f64) -> Mix {
    let mean = bytes / ios;
    Mix { read: reads / ios, small: (8192.0 - mean) / 4096.0, iops }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// fio and lunmark run the same job file on the same /dev/shm file: the same
/// op mix and transfer sizes, and IOPS within a factor of 3: after a warm-up pair, five
/// 1 s runs of each in turn, and the median of the five lunmark/fio ratios of neighbouring runs (a
/// busy host slows both of a pair alike, and one disturbed pair cannot decide).
/// Both run on CPU 0 only, so that a test running beside this one (the suite
/// runs two at a time) is moved to the other core instead of slowing one tool.
#[test]
fn fio_and_lunmark_agree_on_the_same_job_file() {
    // The op mix and sizes are checked on every run; the IOPS ratio, a timing,
    // gets a second set of runs when a neighbour disturbed the first (seen on a
    // loaded host: two lunmark runs of five at less than half their speed).
    // The bound is a factor of 3, not a speed claim (those live in bench/vs-fio.sh):
    // on a quiet host the ratio is within 15%, but with the suite's other test
    // and a build beside it the medians of five pairs read 1.31 and 2.17 on a job
    // whose op mix and sizes the exact checks in side_by_side found identical.
    // This catches only a gross mismatch; the exact checks carry the test.
    let first = side_by_side();
    if (1.0 / 3.0..=3.0).contains(&first.0) {
        return;
    }
    eprintln!("first set disturbed (ratio {:.3}): measuring again", first.0);
    let (ratio, fi, li) = side_by_side();
    assert!(
        (1.0 / 3.0..=3.0).contains(&ratio),
        "lunmark/fio IOPS ratio {ratio:.3} is beyond a factor of 3 (medians: fio {fi:.0}, lunmark {li:.0})"
    );
}

/// Five 1 s runs of each tool in turn (after a pair not counted) on the same
/// file; checks the op mix and sizes of each, returns the median of the pairs'
/// IOPS ratios and the two tools' median IOPS.
fn side_by_side() -> (f64, f64, f64) {
    let dir = shm_dir();
    let f = fixture("randrw-bssplit.fio");
    let (mut fio_runs, mut lunmark_runs) = (Vec::new(), Vec::new());
    // A first pair, not counted, lays out the file and warms both tools up.
    for i in 0..6 {
        let fj = dir.path().join(format!("fio-{i}.json"));
        let out = Command::new("taskset")
            .args(["-c", "0", "fio"])
            .env("SCRATCH", dir.path())
            .env("RUNTIME", "1")
            .current_dir(dir.path())
            .args(["--output-format=json", &format!("--output={}", fj.display())])
            .arg(&f)
            .output()
            .expect("run fio");
        assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
        let job = &read_json(&fj)["jobs"][0];
        let n = |d: &str, k: &str| job[d][k].as_f64().unwrap();
        let ios = n("read", "total_ios") + n("write", "total_ios");
        fio_runs.push(mix(
            n("read", "total_ios"),
            ios,
            n("read", "io_bytes") + n("write", "io_bytes"),
            n("read", "iops") + n("write", "iops"),
        ));

        let lj = dir.path().join(format!("lunmark-{i}.json"));
        let out = Command::new("taskset")
            .args(["-c", "0", env!("CARGO_BIN_EXE_lunmark")])
            .env("LUNMARK_STORE", dir.path().join("store.db"))
            .env("SCRATCH", dir.path())
            .env("RUNTIME", "1")
            .current_dir(dir.path())
            .args(["run", "--fio", f.to_str().unwrap(), "-q", "--json", lj.to_str().unwrap()])
            .output()
            .expect("run lunmark");
        assert!(out.status.success(), "lunmark: {}", stderr(&out));
        let s: &Value = &read_json(&lj)["points"][0]["summary"];
        let n = |k: &str| s[k].as_f64().unwrap();
        let ios = n("ios_read") + n("ios_written");
        lunmark_runs.push(mix(n("ios_read"), ios, n("bytes_read") + n("bytes_written"), n("iops")));
    }
    fio_runs.remove(0);
    lunmark_runs.remove(0);
    for (i, (f, l)) in fio_runs.iter().zip(&lunmark_runs).enumerate() {
        eprintln!(
            "run {i}: fio read {:.3} 4k {:.3} IOPS {:.0} | lunmark read {:.3} 4k {:.3} IOPS {:.0}",
            f.read, f.small, f.iops, l.read, l.small, l.iops
        );
        assert!((f.read - 0.70).abs() < 0.02 && (l.read - 0.70).abs() < 0.02, "read shares: fio {:.3}, lunmark {:.3}", f.read, l.read);
        assert!((f.read - l.read).abs() < 0.02, "read shares differ: fio {:.3}, lunmark {:.3}", f.read, l.read);
        assert!((f.small - l.small).abs() < 0.02 && (l.small - 0.5).abs() < 0.02, "4k shares: fio {:.3}, lunmark {:.3}", f.small, l.small);
    }
    let (fi, li) = (median(fio_runs.iter().map(|m| m.iops).collect()), median(lunmark_runs.iter().map(|m| m.iops).collect()));
    let ratio = median(fio_runs.iter().zip(&lunmark_runs).map(|(f, l)| l.iops / f.iops).collect());
    eprintln!("median IOPS: fio {fi:.0}, lunmark {li:.0}; median of the pairs' ratios {ratio:.3}");
    (ratio, fi, li)
}

/// fio's ssd-test example shape: four stonewalled jobs become four points, run
/// for `runtime` (fio would also stop after one pass over `size`: said in a note).
#[test]
fn stonewalled_jobs_run_as_points_in_order() {
    let dir = shm_dir();
    let f = fixture("ssd-test.fio");
    let json = dir.path().join("r.json");
    let out = lunmark()
        .env("SCRATCH", dir.path())
        .env("SIZE", "8m")
        .env("RUNTIME", "300ms")
        .args(["run", "--fio", f.to_str().unwrap(), "-q", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("note: job 'seq-read': without time_based fio ends it after 8m of I/O (2048 I/Os) or at runtime=300ms"), "{err}");
    let r = read_json(&json);
    let phases: Vec<&str> = r["points"].as_array().unwrap().iter().map(|p| p["params"]["phase"].as_str().unwrap()).collect();
    assert_eq!(phases, ["seq-read", "rand-read", "seq-write", "rand-write"]);
    for (p, (reads, writes)) in r["points"].as_array().unwrap().iter().zip([(true, false), (true, false), (false, true), (false, true)]) {
        let s = &p["summary"];
        assert_eq!((s["ios_read"].as_u64().unwrap() > 0, s["ios_written"].as_u64().unwrap() > 0), (reads, writes), "{}", p["params"]);
    }
    assert_eq!(r["workload"]["run"]["time"], "300ms");
    // Jobs that would end at different points need --time or --ios.
    let job = dir.path().join("two.fio");
    std::fs::write(&job, "[global]\nsize=4m\nfilename=${SCRATCH}/t.dat\n[big]\nbs=128k\n[small]\nstonewall\nbs=4k\n").unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    assert!(stderr(&out).contains("line 2: size=4m: job 'small' differs from job 'big' in how long it runs"), "{}", stderr(&out));
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--time", "1s", "--dry-run"]);
    assert!(out.status.success() && stdout(&out).contains("point 2/2: phase=small"), "{}", stderr(&out));
}

/// fio starts a job `startdelay` after the run and counts its runtime from
/// its own start: with startdelay=0 and 2, runtime=3, fio 3.33 reports each
/// job's `job_runtime` as 3 s. lunmark starts the later job's group 2 s into
/// the point (its trace: the first 8k read 2 s after the first 4k one, each
/// group issuing for 3 s), gives each group's figures over its own window, and
/// runs the point 5 s. Jobs that are not time based cannot start apart (their
/// runs would end where their sizes do): refused, naming the line, even with
/// --fio-lenient; an I/O count from the command line is refused too.
#[test]
fn startdelays_within_a_phase_start_each_job_late_as_in_fio() {
    let dir = shm_dir();
    let job = dir.path().join("sd.fio");
    let global = format!("[global]\nfilename={}/sd.dat\nsize=1m\nrw=randread\nioengine=psync\n", dir.path().display());
    let jobs = "[a]\nbs=4k\nstartdelay=0\n[b]\nbs=8k\nstartdelay=2\n";
    std::fs::write(&job, format!("{global}time_based\nruntime=3\n{jobs}")).unwrap();
    let fio = fio_json(&job);
    for j in fio["jobs"].as_array().unwrap() {
        let ms = j["job_runtime"].as_f64().unwrap();
        assert!((2900.0..=3200.0).contains(&ms), "fio runs each job 3 s from its own start: {ms} ms");
    }
    let (trace, json) = (dir.path().join("sd.trace"), dir.path().join("sd.json"));
    let args =
        ["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--trace", trace.to_str().unwrap(), "--json", json.to_str().unwrap()];
    let out = run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let ((a0, a1, _), (b0, b1, b_ios)) = (traced_span(&trace, 4096), traced_span(&trace, 8192));
    assert!((1.8..2.4).contains(&(b0 - a0)), "job b's first I/O {:.2} s after job a's", b0 - a0);
    assert!((2.7..3.3).contains(&(a1 - a0)) && (2.7..3.3).contains(&(b1 - b0)), "each issues for 3 s: a {:.2}, b {:.2}", a1 - a0, b1 - b0);
    let r = read_json(&json);
    let p = &r["points"][0];
    let duration = p["summary"]["duration_s"].as_f64().unwrap();
    assert!((4.95..5.1).contains(&duration), "the point runs until the last job ends: {duration}");
    let window = |g: usize, key: &str| p["groups"][g]["window"][key].as_f64().unwrap();
    assert_eq!((window(0, "start_s"), window(1, "start_s")), (0.0, 2.0));
    assert!((2.95..3.05).contains(&window(0, "duration_s")) && (2.95..3.05).contains(&window(1, "duration_s")), "{}", p["groups"]);
    // b's IOPS are over its own 3 s, not the point's 5 s (the trace also holds the few I/Os in flight at its end).
    let b_iops = p["groups"][1]["iops"].as_f64().unwrap();
    assert!((b_iops * 3.0 / b_ios as f64 - 1.0).abs() < 0.05, "group b: {b_iops} IOPS, {b_ios} I/Os traced");

    for lenient in [false, true] {
        std::fs::write(&job, format!("{global}{jobs}")).unwrap();
        let mut args = vec!["run", "--fio", job.to_str().unwrap(), "--no-store"];
        args.extend(lenient.then_some("--fio-lenient"));
        let out = run_in(dir.path(), &args);
        let err = stderr(&out);
        assert!(!out.status.success(), "lenient {lenient}: {err}");
        assert!(
            err.contains("line 11: startdelay=2: job 'b' starts 2s after job 'a', and fio counts a job's run from its own start")
                && err.contains("make the jobs time_based with a runtime (or give --time)"),
            "lenient {lenient}: {err}"
        );
    }
    std::fs::write(&job, format!("{global}time_based\nruntime=3\n{jobs}")).unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--ios", "100", "--no-store"]);
    assert!(!out.status.success() && stderr(&out).contains("group 'b' start_delay is 2s"), "{}", stderr(&out));
    // A later phase: fio counts startdelay from the run's start, so b (after a's 3 s) waits 2 s more.
    std::fs::write(&job, format!("{global}time_based\nruntime=3\n[a]\nstartdelay=0\n[b]\nstonewall\nstartdelay=5\n")).unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    let all = format!("{}{}", stderr(&out), stdout(&out));
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("point 2/2: phase=b")
            && all.contains("note: startdelay=5s (job 'b'): every job of phase b waits at least 2s more (fio counts startdelay from the run's start; the phase starts 3s in)"),
        "{all}"
    );
}

/// Jobs that run apart (a paced job, and a paced one 1 s later, each 2 s):
/// every figure says its basis (a trial found the rate line "achieved 500,
/// held" beside the point's 333 IOPS, the depth held as a plain mean, and the
/// report's worker rows not adding up to the target's, none saying why); a
/// curve, which paces the whole point, is refused; --time replacing the jobs'
/// own runtimes is said.
#[test]
fn jobs_that_run_apart_say_the_basis_of_each_figure() {
    let dir = shm_dir();
    let (job, json, store) = (dir.path().join("ap.fio"), dir.path().join("ap.json"), dir.path().join("s.db"));
    let global = "[global]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\ntime_based\nruntime=2\n";
    std::fs::write(&job, format!("{global}[a]\nrate_iops=200\n[b]\nrate_iops=300\nstartdelay=1\n")).unwrap();
    let out = with_store(&store, &["run", "--fio", job.to_str().unwrap(), "-q", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    let s = &r["points"][0]["summary"];
    assert!((s["iops"].as_f64().unwrap() - 333.0).abs() < 20.0, "500 I/Os a second for 1 s of 3, 200 for 2: {}", s["iops"]);
    let note = s["rate"]["note"].as_str().unwrap_or_default();
    assert!(note.contains("each over its own measured window") && note.contains("the groups run apart"), "{}", s["rate"]);
    assert!(s["queue_depth"]["note"].as_str().unwrap_or_default().contains("over its own group's measured window"), "{}", s["queue_depth"]);
    let terminal = stdout(&out);
    assert!(terminal.contains("group b (1 worker, measured 1.0-3.0 s of the span)"), "{terminal}");
    let md = dir.path().join("r.md");
    let id = r["id"].as_str().unwrap();
    assert!(with_store(&store, &["report", id, "--format", "md", "-o", md.to_str().unwrap()]).status.success());
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("each worker's figures are over its group's own measured window"), "{md}");
    assert!(md.contains("a: ") && md.contains("measured 0s-2s of the point") && md.contains("measured 1s-3s of the point"), "{md}");
    // compare says the basis too, beside a run of the same file.
    let again = with_store(&store, &["run", "--fio", job.to_str().unwrap(), "-q"]);
    assert!(again.status.success(), "{}", stderr(&again));
    let listed: Value = serde_json::from_str(&stdout(&with_store(&store, &["results", "list", "--format", "json"]))).unwrap();
    let other = listed.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).find(|o| o != id).unwrap();
    let cmp = with_store(&store, &["compare", id, &other]);
    assert!(
        stdout(&cmp).contains("'s groups ran apart (a start delay or a time of their own): its figures are over each point's whole span"),
        "{}{}",
        stdout(&cmp),
        stderr(&cmp)
    );
    let out = with_store(&store, &["run", "--fio", job.to_str().unwrap(), "--curve", "50,100", "--dry-run"]);
    assert!(!out.status.success() && stderr(&out).contains("the groups run apart"), "{}", stderr(&out));
    std::fs::write(&job, format!("{global}[a]\n[b]\nruntime=4\n")).unwrap();
    let out = with_store(&store, &["run", "--fio", job.to_str().unwrap(), "--time", "1s", "--dry-run"]);
    // The dry run prints its notes with the plan, on stdout.
    assert!(
        stdout(&out).contains("the jobs' runtimes differ (2s, 4s): --time or --ios on the command line is every job's run length"),
        "{}",
        stdout(&out)
    );
}

/// A profile's groups with a start delay and a time of their own (the TOML
/// docs/profiles.md shows): the plan gives each group's window and the span;
/// --time replaces the group's own time, with a warning saying so.
#[test]
fn a_profiles_groups_run_apart_and_time_replaces_their_own_times() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    let group = |name: &str, extra: &str| {
        format!("[[phases.groups]]\nname = \"{name}\"\nworkers = 1\nqd = 2\n{extra}\n[[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 100.0\n")
    };
    let text = format!(
        "name = \"apart\"\ndescription = \"d\"\nramp = \"0s\"\ntime = \"2s\"\n[[phases]]\nname = \"both\"\n{}{}",
        group("a", ""),
        group("b", "start_delay = \"1s\"\ntime = \"3s\"")
    );
    std::fs::write(&profile, text).unwrap();
    let plan = |extra: &[&str]| {
        let mut args = vec!["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:64m", "--dry-run"];
        args.extend_from_slice(extra);
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        format!("{}{}", stdout(&out), stderr(&out))
    };
    let own = plan(&[]);
    assert!(
        own.contains("run: 4s measured in all")
            && own.contains("group 'b': 1 worker x 1 target x 2 outstanding = 2 I/Os in flight, measured 1s-4s of the point"),
        "{own}"
    );
    let replaced = plan(&["--time", "1s"]);
    assert!(replaced.contains("warning: --time/--ios is every group's run length: it replaces the groups' own times (b 3s)"), "{replaced}");
    assert!(replaced.contains("measured 1s-2s of the point"), "{replaced}");
}

/// When the I/Os of one transfer size in a trace were issued: the first and
/// last (seconds from the trace's start) and how many.
fn traced_span(trace: &Path, len: u32) -> (f64, f64, usize) {
    let t: Vec<f64> = lunmark::trace::load_trace(trace).unwrap().1.iter().filter(|r| r.len == len).map(|r| r.t_ns as f64 / 1e9).collect();
    (t.iter().cloned().fold(f64::MAX, f64::min), t.iter().cloned().fold(0.0, f64::max), t.len())
}

/// Time-based jobs of one phase with their own runtime (2 s and 4 s): fio
/// 3.33 runs each its own (`job_runtime` 2000 and 4000 ms); lunmark's trace
/// shows the 4k job issuing for 2 s and the 8k one for 4 s from the same
/// start, each group's figures are over its own window and the point lasts
/// 4 s. --time gives every job the same time.
#[test]
fn runtimes_within_a_phase_are_each_jobs_own_as_in_fio() {
    let dir = shm_dir();
    let job = dir.path().join("rt.fio");
    let text = format!(
        "[global]\nfilename={}/rt.dat\nsize=1m\nrw=randread\nioengine=psync\ntime_based\nruntime=2\n[a]\nbs=4k\n[b]\nbs=8k\nruntime=4\n",
        dir.path().display()
    );
    std::fs::write(&job, text).unwrap();
    let fio: Vec<f64> = fio_json(&job)["jobs"].as_array().unwrap().iter().map(|j| j["job_runtime"].as_f64().unwrap()).collect();
    assert!((1900.0..2200.0).contains(&fio[0]) && (3900.0..4200.0).contains(&fio[1]), "fio runs each its own: {fio:?}");
    let (trace, json) = (dir.path().join("rt.trace"), dir.path().join("rt.json"));
    let args =
        ["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--trace", trace.to_str().unwrap(), "--json", json.to_str().unwrap()];
    let out = run_in(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let ((a0, a1, _), (b0, b1, _)) = (traced_span(&trace, 4096), traced_span(&trace, 8192));
    assert!((a0 - b0).abs() < 0.3, "both start together: {a0:.2} {b0:.2}");
    assert!((1.8..2.3).contains(&(a1 - a0)) && (3.8..4.3).contains(&(b1 - b0)), "a issues for {:.2} s, b for {:.2} s", a1 - a0, b1 - b0);
    let p = &read_json(&json)["points"][0];
    let window = |g: usize| p["groups"][g]["window"]["duration_s"].as_f64().unwrap();
    assert!((1.95..2.05).contains(&window(0)) && (3.95..4.05).contains(&window(1)), "{}", p["groups"]);
    assert!((3.95..4.1).contains(&p["summary"]["duration_s"].as_f64().unwrap()), "{}", p["summary"]["duration_s"]);
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--time", "1s", "--dry-run"]);
    let plan = stdout(&out);
    assert!(plan.contains("run: 1s measured ") && !plan.contains("its own window"), "--time is every job's: {plan}");
}

/// ioengine=null becomes a null: target of the job's size, as fio's null engine.
#[test]
fn null_engine_jobs_run_on_a_null_target() {
    let dir = shm_dir();
    let job = dir.path().join("n.fio");
    std::fs::write(&job, "[n]\nioengine=null\nsize=1g\nrw=randread\nbs=4k\niodepth=8\nnumjobs=2\nruntime=300ms\ntime_based\n").unwrap();
    let json = dir.path().join("r.json");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["workload"]["targets"][0], "null:1g");
    assert_eq!(r["engine"], "null");
    assert_eq!((r["workload"]["groups"][0]["workers"].as_u64(), r["workload"]["groups"][0]["qd"].as_u64()), (Some(2), Some(8)));
    assert!(r["points"][0]["summary"]["ios_read"].as_u64().unwrap() > 0);
}

/// ioengine=nbd (uri=) and ioengine=libiscsi (filename=iscsi\://...) reach real
/// servers on loopback: nbdkit and tgtd.
#[test]
fn nbd_and_libiscsi_jobs_reach_real_servers() {
    crate::require_root!();
    let dir = shm_dir();
    let nbd = Nbdkit::unix(dir.path(), "16M", &[]);
    let backing = dir.path().join("tgt-lun");
    std::fs::File::create(&backing).unwrap().set_len(16 << 20).unwrap();
    let tgt = lunmark::lab::servers::tgtd(&backing).expect("tgtd (Debian's tgt package)");
    for (engine, place, want) in
        [("nbd", format!("uri={}", nbd.uri), "nbd"), ("libiscsi", format!("filename={}", tgt.uri.replace(':', "\\:")), "iscsi")]
    {
        let job = dir.path().join(format!("{engine}.fio"));
        std::fs::write(&job, format!("[net]\nioengine={engine}\n{place}\nrw=randrw\nbs=4k\niodepth=4\nruntime=300ms\ntime_based\n"))
            .unwrap();
        let json = dir.path().join(format!("{engine}.json"));
        let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--json", json.to_str().unwrap()]);
        assert!(out.status.success(), "{engine}: {}", stderr(&out));
        let r = read_json(&json);
        assert_eq!(r["engine"], want);
        let target = r["workload"]["targets"][0].as_str().unwrap();
        assert!(target.starts_with(want), "{target}");
        let s = &r["points"][0]["summary"];
        assert!(s["ios_read"].as_u64().unwrap() > 0 && s["ios_written"].as_u64().unwrap() > 0, "{engine}: {s}");
    }
}

/// bsrange: fio's draw (MIN + MAX x u, rounded down to MIN, capped at MAX) and
/// lunmark's lines from it give the same mean transfer size, on null targets.
#[test]
fn bsrange_gives_the_mean_transfer_size_fio_gives() {
    let dir = shm_dir();
    for range in ["4k-16k", "4k-10k"] {
        let job = dir.path().join("br.fio");
        std::fs::write(&job, format!("[br]\nioengine=null\nsize=64g\nrw=randread\nnorandommap\nbsrange={range}\nnumber_ios=100000\n"))
            .unwrap();
        let fj = dir.path().join("fio.json");
        let out = Command::new("fio").args(["--output-format=json", &format!("--output={}", fj.display())]).arg(&job).output().unwrap();
        assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
        let r = &read_json(&fj)["jobs"][0]["read"];
        let fio_mean = r["io_bytes"].as_f64().unwrap() / r["total_ios"].as_f64().unwrap();
        let lj = dir.path().join("l.json");
        let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--json", lj.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        let s = &read_json(&lj)["points"][0]["summary"];
        let lunmark_mean = s["bytes_read"].as_f64().unwrap() / s["ios_read"].as_f64().unwrap();
        assert!((lunmark_mean / fio_mean - 1.0).abs() < 0.01, "{range}: fio {fio_mean:.0} B, lunmark {lunmark_mean:.0} B");
    }
}

/// bs=READ,WRITE with rwmixread: fio mixes by I/O count, and so do lunmark's
/// two lines (one per direction); each direction keeps its own size.
#[test]
fn separate_read_and_write_sizes_mix_as_in_fio() {
    let dir = shm_dir();
    let job = dir.path().join("bw.fio");
    std::fs::write(&job, "[bw]\nioengine=null\nsize=64g\nrw=randrw\nrwmixread=60\nnorandommap\nbs=4k,64k\nnumber_ios=100000\n").unwrap();
    let fj = dir.path().join("fio.json");
    let out = Command::new("fio").args(["--output-format=json", &format!("--output={}", fj.display())]).arg(&job).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let j = &read_json(&fj)["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_f64().unwrap();
    let fio = (
        n("read", "total_ios") / (n("read", "total_ios") + n("write", "total_ios")),
        n("read", "io_bytes") / n("read", "total_ios"),
        n("write", "io_bytes") / n("write", "total_ios"),
    );
    let lj = dir.path().join("l.json");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--json", lj.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &read_json(&lj)["points"][0]["summary"];
    let n = |k: &str| s[k].as_f64().unwrap();
    let lunmark =
        (n("ios_read") / (n("ios_read") + n("ios_written")), n("bytes_read") / n("ios_read"), n("bytes_written") / n("ios_written"));
    assert!((fio.0 - lunmark.0).abs() < 0.02, "read shares: fio {:.3}, lunmark {:.3}", fio.0, lunmark.0);
    assert_eq!((fio.1, fio.2), (4096.0, 65536.0));
    assert_eq!((lunmark.1, lunmark.2), (4096.0, 65536.0));
}

/// sqthread_poll with sqthread_poll_cpu, cpus_allowed with its policy, and
/// buffer_compress_percentage and dedupe_percentage run as --sqpoll=CPU,
/// --cpus/--cpus-policy and --compress/--dedupe (a user's trial found them
/// refused); hipri on a file is refused by the run with the reason, as --poll is.
#[test]
fn polling_pinning_and_data_reduction_of_a_job_file_apply() {
    let dir = shm_dir();
    let f = fixture("poll-pin-reduce.fio");
    let cpu = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let cpu = cpu.trim().split([',', '-']).next().unwrap().to_string();
    let json = dir.path().join("r.json");
    let lunmark_in =
        |args: &[&str]| lunmark().env("SCRATCH", dir.path()).env("CPU", &cpu).current_dir(dir.path()).args(args).output().unwrap();
    let out = lunmark_in(&["run", "--fio", f.to_str().unwrap(), "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    for want in [format!("kernel thread on CPU {cpu}"), format!("worker 0 on CPU {cpu}"), "data: written units of 4k".to_string()] {
        assert!(text.contains(&want), "'{want}' missing from:\n{text}");
    }
    let out = lunmark_in(&["run", "--fio", f.to_str().unwrap(), "-q", "--no-store", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&json);
    let n: u32 = cpu.parse().unwrap();
    assert_eq!(r["workload"]["polling"]["sqpoll"], n, "{}", r["workload"]);
    assert_eq!((&r["cpus"]["cpus"], &r["cpus"]["policy"]), (&serde_json::json!([n]), &serde_json::json!("split")));
    assert_eq!(
        (&r["workload"]["data"]["compress"], &r["workload"]["data"]["dedupe"]),
        (&serde_json::json!(50.0), &serde_json::json!(30.0))
    );
    assert_eq!(r["points"][0]["summary"]["ios_written"], 2000);
    // The flags replace what the job file says.
    let out = lunmark_in(&["run", "--fio", f.to_str().unwrap(), "--cpus", &cpu, "--cpus-policy", "shared", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("cpus: every worker pinned to CPU {cpu} (--cpus-policy shared)")), "{}", stdout(&out));
    // hipri maps to --poll, which a file cannot do: the run says why, before anything runs.
    let job = dir.path().join("hipri.fio");
    std::fs::write(&job, "[h]\nioengine=io_uring\ndirect=1\nfilename=${SCRATCH}/h.dat\nsize=1m\nhipri\nruntime=1\ntime_based\n").unwrap();
    let out = lunmark_in(&["run", "--fio", job.to_str().unwrap(), "-q", "--no-store"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // Named by the job file, job and option the user wrote, not by --poll they never gave.
    let e = stderr(&out);
    assert!(
        e.contains(&format!("{}, job 'h', line 6: hipri: {} cannot be polled", job.display(), dir.path().join("h.dat").display())),
        "{e}"
    );
    assert!(e.contains("Drop hipri from the job") && !e.contains("--poll"), "{e}");
    assert!(!dir.path().join("h.dat").exists(), "nothing ran");
}

/// fio's own reading of a job file: `fio --showcmd` prints every option as
/// fio resolved it (comments cut, ${VAR}, $ncpus arithmetic, includes read).
fn fio_showcmd(dir: &Path, job: &Path, env: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    let out = Command::new("fio").envs(env.iter().copied()).current_dir(dir).arg("--showcmd").arg(job).output().expect("run fio");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success() && text.starts_with("fio "), "fio --showcmd: {text}{}", String::from_utf8_lossy(&out.stderr));
    text.split_whitespace()
        .skip(1)
        .filter_map(|a| a.strip_prefix("--"))
        .map(|a| {
            let (k, v) = a.split_once('=').unwrap_or((a, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// The profile lunmark imports from a job file, as TOML.
fn imported(dir: &Path, job: &Path, env: &[(&str, &str)]) -> toml::Value {
    let out =
        lunmark().envs(env.iter().copied()).current_dir(dir).args(["profiles", "import-fio", job.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).parse().expect("import-fio prints TOML")
}

/// Inline comments, ${VAR}, fio's $ncpus/$pagesize arithmetic, an include
/// relative to the including file (not the working directory) holding
/// another include, and empty trailing parts: lunmark reads each value as
/// `fio --showcmd` resolves it (a user's trial: 0 of 3 everyday files ran).
#[test]
fn job_file_grammar_reads_as_fio_reads_it() {
    let dir = shm_dir();
    let jobs = dir.path().join("jobs");
    std::fs::create_dir_all(jobs.join("inc")).unwrap();
    std::fs::write(jobs.join("inc/common.inc"), "direct=1  # O_DIRECT\ninclude more.inc\n").unwrap();
    std::fs::write(jobs.join("inc/more.inc"), "rate_iops=100*$ncpus ; per CPU\n").unwrap();
    let job = jobs.join("grammar.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null    ; fio's null engine\nsize=${SIZE}     # from the environment\nruntime=3        # seconds\ntime_based\ninclude inc/common.inc\n\n[grammar] ; the job\nrw=randread,\nnumjobs=$ncpus/2+1 ; half the CPUs and one\niodepth=$ncpus*4\nbs=$pagesize*2\nnorandommap\n",
    )
    .unwrap();
    let env = [("SIZE", "1g")];
    let fio = fio_showcmd(dir.path(), &job, &env);
    let p = imported(dir.path(), &job, &env);
    let g = &p["phases"][0]["groups"][0];
    let n = |k: &str| fio[k].parse::<i64>().unwrap_or_else(|_| panic!("{k}={}", fio[k]));
    assert_eq!(g["workers"].as_integer(), Some(n("numjobs")), "{p}");
    assert_eq!(g["qd"].as_integer(), Some(n("iodepth")), "{p}");
    assert_eq!(g["rate"].as_float(), Some((n("rate_iops") * n("numjobs")) as f64), "fio's rate_iops is per clone: {p}");
    let bs = g["access"][0]["bs"].as_str().unwrap();
    assert_eq!(bs.strip_suffix('k').map(|k| k.parse::<i64>().unwrap() * 1024), Some(n("bs")), "{p}");
    assert_eq!(p["time"].as_str(), Some(format!("{}s", fio["runtime"]).as_str()));
    assert_eq!(p["targets"][0].as_str(), Some(format!("null:{}", fio["size"]).as_str()));
    assert_eq!((g["access"][0]["read"].as_float(), g["access"][0]["random"].as_float()), (Some(100.0), Some(100.0)), "rw=randread,");
    assert!(fio.contains_key("direct") && fio.contains_key("norandommap"), "{fio:?}");

    // A cycle, a device and an oversized file are refused, naming the line.
    std::fs::write(jobs.join("inc/more.inc"), "include common.inc\n").unwrap();
    let out = lunmark().env("SIZE", "1g").args(["run", "--fio", job.to_str().unwrap(), "--dry-run"]).output().unwrap();
    assert!(stderr(&out).contains("includes itself"), "{}", stderr(&out));
    for (name, says) in [("/dev/zero", "not a regular file"), ("big.inc", "an included job file may be at most 1048576 bytes")] {
        std::fs::write(jobs.join("big.inc"), vec![b'#'; (1 << 20) + 1]).unwrap();
        std::fs::write(&job, format!("[j]\nioengine=null\nsize=1g\ninclude {name}\n")).unwrap();
        let out = lunmark().args(["run", "--fio", job.to_str().unwrap(), "--dry-run"]).output().unwrap();
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{e}");
        assert!(e.contains(&format!("{}, line 4: include {name}:", job.display())) && e.contains(says), "{e}");
    }
}

/// size=P% and offset=P% of the file: fio's iolog shows where its job reads;
/// lunmark's region is the same (a user's trial found them refused).
#[test]
fn shares_of_the_file_match_fios_region() {
    let dir = shm_dir();
    let data = dir.path().join("f.dat");
    std::fs::File::create(&data).unwrap().set_len(64 << 20).unwrap();
    let job = dir.path().join("pct.fio");
    let log = dir.path().join("io.log");
    std::fs::write(
        &job,
        format!("[pct]\nfilename={}\nrw=read\nbs=64k\nsize=25%\noffset=10%\nwrite_iolog={}\n", data.display(), log.display()),
    )
    .unwrap();
    let out = Command::new("fio").arg("--output-format=json").arg(&job).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let reads: Vec<u64> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().collect::<Vec<_>>().get(2..4).filter(|w| w[0] == "read").map(|w| w[1].parse().unwrap()))
        .collect();
    // lunmark writes no iolog: without the option the job is the same.
    let text = std::fs::read_to_string(&job).unwrap().lines().filter(|l| !l.starts_with("write_iolog")).collect::<Vec<_>>().join("\n");
    std::fs::write(&job, text).unwrap();
    let p = imported(dir.path(), &job, &[]);
    let (offset, size) = (p["offset"].as_str().unwrap().to_string(), p["size"].as_str().unwrap().to_string());
    let bytes = |s: &str| -> u64 {
        let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
        num.parse::<u64>().unwrap() << (10 * ["", "k", "m", "g", "t"].iter().position(|u| *u == unit.to_lowercase()).unwrap())
    };
    assert_eq!(bytes(&offset), reads[0], "fio's first read is at the offset: {p}");
    assert_eq!(bytes(&size), reads.len() as u64 * 65536, "fio reads the region once: {p}");
    assert_eq!(p["ios"].as_integer(), Some(reads.len() as i64));
}

/// fio-plot from PyPI, in the venv scripts/setup.sh makes.
fn fio_plot() -> PathBuf {
    let venv = std::env::var_os("LUNMARK_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&std::env::var_os("HOME").expect("HOME")).join(".cache/lunmark-venv"));
    let bin = venv.join("bin/fio-plot");
    assert!(bin.exists(), "{} is missing: run scripts/setup.sh (it installs fio-plot from PyPI into a venv)", bin.display());
    bin
}

/// fio-plot (what many fio users chart with) crashed on lunmark's fio-json
/// (KeyError: 'iops_stddev'). The same job file run by fio and by lunmark: the
/// same charts drawn from each JSON without an error, and lunmark's JSON has
/// every key fio's has but those docs/fio-json.md lists as not computed.
#[test]
fn fio_plot_draws_the_same_charts_from_fios_json_and_lunmarks() {
    let plot = fio_plot();
    let dir = shm_dir();
    let job = dir.path().join("randread.fio");
    std::fs::write(
        &job,
        format!(
            "[randread]\nfilename={}/fp.dat\nsize=16m\nrw=randread\nbs=4k\niodepth=4\nnumjobs=1\nioengine=io_uring\ndirect=1\nruntime=1\ntime_based\n",
            dir.path().display()
        ),
    )
    .unwrap();
    // fio-plot finds its files by their job options: rw, iodepth and numjobs.
    let name = "randread-iodepth-4-numjobs-1.json";
    let (fio_dir, lunmark_dir) = (dir.path().join("fio"), dir.path().join("lunmark"));
    std::fs::create_dir_all(&fio_dir).unwrap();
    std::fs::create_dir_all(&lunmark_dir).unwrap();
    let out = Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--output={}", fio_dir.join(name).display()))
        .arg(&job)
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--output-format", "fio-json", "--no-store", "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(lunmark_dir.join(name), &out.stdout).unwrap();

    let (fio, ours) = (read_json(&fio_dir.join(name)), read_json(&lunmark_dir.join(name)));
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<String>>();
    let missing = |a: &Value, b: &Value| keys(a).difference(&keys(b)).cloned().collect::<Vec<_>>().join(" ");
    let (fj, oj) = (&fio["jobs"][0], &ours["jobs"][0]);
    assert_eq!(missing(oj, fj), "", "lunmark writes only fio's keys");
    assert_eq!(
        missing(fj, oj),
        "ctx elapsed error eta iodepth_complete iodepth_level iodepth_submit latency_depth latency_percentile latency_target latency_window majf minf sync"
    );
    assert_eq!(missing(&fj["read"], &oj["read"]), "drop_ios short_ios slat_ns");
    assert_eq!(missing(&fj["read"]["lat_ns"], &oj["read"]["lat_ns"]), "");
    assert_eq!(oj["jobname"], fj["jobname"], "the job's name as written");
    assert!(oj["read"]["clat_ns"]["percentile"]["95.000000"].as_u64().unwrap() > 0);
    let pct: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| oj[k].as_object().unwrap().values())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((pct - 100.0).abs() < 1e-6, "the latency ranges hold every I/O: {pct}");

    // -l: IOPS and latency (with their standard deviations) by queue depth; -H: the latency ranges.
    for (mode, args) in [("bargraph2d-qd", vec!["-l", "-d", "4", "-n", "1"]), ("histogram", vec!["-H", "-d", "4", "-n", "1"])] {
        for input in [&fio_dir, &lunmark_dir] {
            let png = dir.path().join(format!("{mode}-{}.png", input.file_name().unwrap().to_string_lossy()));
            let out = Command::new(&plot)
                .current_dir(dir.path())
                .args(["-i", input.to_str().unwrap(), "-T", "randread", "-r", "randread", "-o", png.to_str().unwrap()])
                .args(&args)
                .output()
                .unwrap();
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && !text.contains("Traceback"), "fio-plot {mode} on {}: {text}", input.display());
            assert!(
                std::fs::metadata(&png).map(|m| m.len() > 10_000).unwrap_or(false),
                "fio-plot {mode} drew no chart from {}: {text}",
                input.display()
            );
        }
    }
}

/// offset_increment: fio's four sequential clones each read their own part of
/// the file (its iolog: every 4k block of 4 MiB from 64k once); lunmark's
/// trace of the same job file shows the same blocks, each once (a trial
/// found it dropped: four workers reading the same offsets).
#[test]
fn offset_increment_gives_each_worker_its_own_part_as_in_fio() {
    let dir = shm_dir();
    let job = dir.path().join("oi.fio");
    let text = format!(
        "[oi]\nfilename={}/oi.dat\nrw=read\nbs=4k\nsize=1m\nnumjobs=4\noffset_increment=1m\noffset=64k\nioengine=psync\n",
        dir.path().display()
    );
    std::fs::write(&job, &text).unwrap();
    // fio's io debug log names each I/O's offset as its clone (process) fills it in
    // (its write_iolog is one file the four clones overwrite each other in).
    let out = Command::new("fio").arg("--debug=io").arg(&job).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let mut by_clone: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for l in log.lines().filter(|l| l.contains(" fill: ")) {
        let pid = l.split_whitespace().nth(1).unwrap().to_string();
        let off = l.split("off=0x").nth(1).unwrap().split(',').next().unwrap();
        by_clone.entry(pid).or_default().push(u64::from_str_radix(off, 16).unwrap());
    }
    let mut starts: Vec<u64> = by_clone.values().map(|o| *o.iter().min().unwrap()).collect();
    starts.sort_unstable();
    assert_eq!(starts, [65536, 65536 + (1 << 20), 65536 + (2 << 20), 65536 + (3 << 20)], "fio's four clones start 1m apart");
    let mut fio: Vec<u64> = by_clone.into_values().flatten().collect();
    fio.sort_unstable();
    let want: Vec<u64> = (0..1024).map(|k| 65536 + k * 4096).collect();
    assert_eq!(fio, want, "fio reads each block of the four parts once");

    std::fs::write(&job, &text).unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    let plan = stdout(&out);
    assert!(plan.contains("offset_increment 1m: each worker on its own 1m: worker 0 from offset 64k, worker 1 from offset 1088k, worker 2 from offset 2112k, worker 3 from offset 3136k"), "{plan}{}", stderr(&out));
    let trace = dir.path().join("oi.trace");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--trace", trace.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut ours: Vec<u64> = lunmark::trace::load_trace(&trace).unwrap().1.iter().map(|r| r.offset).collect();
    ours.sort_unstable();
    assert_eq!(ours, want, "lunmark's four workers read the same blocks as fio's four clones, each once");
}

/// fio's JSON for a job file (one job, or the group's sum).
fn fio_json(job: &Path) -> Value {
    let out = Command::new("fio").arg("--output-format=json").arg(job).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("fio's JSON")
}

/// loops, rate (bytes a second) and blockalign, each as fio 3.33 runs them on
/// its null engine (a trial found them refused): loops=3 moves three passes,
/// rate=4m at 4k with two clones is 2,048 IOPS, blockalign=512 puts random
/// offsets on 512-byte boundaries (most of them off 4 KiB ones).
#[test]
fn loops_rate_and_blockalign_apply_as_in_fio() {
    let dir = shm_dir();
    let job = dir.path().join("j.fio");
    let lunmark_json = |extra: &[&str]| {
        let json = dir.path().join("r.json");
        let mut args = vec!["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--json", json.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        read_json(&json)
    };
    std::fs::write(&job, "[l]\nioengine=null\nsize=1m\nbs=4k\nrw=read\nloops=3\n").unwrap();
    let fio = fio_json(&job)["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(fio, 768);
    assert_eq!(lunmark_json(&[])["points"][0]["summary"]["ios_read"].as_u64(), Some(fio));

    std::fs::write(&job, "[r]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\nrate=4m\nruntime=2\ntime_based\nnumjobs=2\ngroup_reporting\n")
        .unwrap();
    let fio = fio_json(&job)["jobs"][0]["read"]["iops"].as_f64().unwrap();
    let ours = lunmark_json(&[])["points"][0]["summary"]["read_iops"].as_f64().unwrap();
    assert!((fio / 2048.0 - 1.0).abs() < 0.05 && (ours / 2048.0 - 1.0).abs() < 0.05, "fio {fio:.0} IOPS, lunmark {ours:.0}");

    std::fs::write(&job, "[b]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\nblockalign=512\nnumber_ios=2000\nnorandommap\n").unwrap();
    let trace = dir.path().join("b.trace");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--trace", trace.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let offsets: Vec<u64> = lunmark::trace::load_trace(&trace).unwrap().1.iter().map(|r| r.offset).collect();
    let off_4k = offsets.iter().filter(|o| *o % 4096 != 0).count() as f64 / offsets.len() as f64;
    assert!(offsets.len() == 2000 && offsets.iter().all(|o| o % 512 == 0), "{} offsets", offsets.len());
    assert!(off_4k > 0.8, "with 512-byte alignment most offsets miss 4 KiB boundaries (7 in 8): {off_4k:.3}");
    let out = Command::new("fio").arg("--debug=io").arg(&job).output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let fio: Vec<u64> = log
        .lines()
        .filter(|l| l.contains(" fill: "))
        .map(|l| u64::from_str_radix(l.split("off=0x").nth(1).unwrap().split(',').next().unwrap(), 16).unwrap())
        .collect();
    let fio_off_4k = fio.iter().filter(|o| *o % 4096 != 0).count() as f64 / fio.len() as f64;
    assert!(
        fio.len() == 2000 && fio.iter().all(|o| o % 512 == 0) && fio_off_4k > 0.8,
        "fio: {} offsets, {fio_off_4k:.3} off 4k",
        fio.len()
    );
}

/// write_bw_log, write_iops_log and write_lat_log with log_avg_msec: lunmark
/// writes fio's log files (their names and line format, checked against fio
/// 3.33's own) from its per-second intervals, and fio-plot's log mode draws
/// the same chart from fio's logs and lunmark's (a trial found them refused).
#[test]
fn fio_logs_are_written_as_fio_writes_them_and_fio_plot_reads_them() {
    let plot = fio_plot();
    let dir = shm_dir();
    // fio-plot finds logs by the name bench-fio gives them: RW-iodepth-D-numjobs-N_TYPE.
    let name = "randread-iodepth-1-numjobs-1";
    let job = dir.path().join("logs.fio");
    std::fs::write(
        &job,
        format!("[{name}]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\nruntime=3\ntime_based\nwrite_bw_log={name}\nwrite_iops_log={name}\nwrite_lat_log={name}\nlog_avg_msec=1000\n"),
    )
    .unwrap();
    let (fio_dir, ours_dir) = (dir.path().join("fio"), dir.path().join("lunmark"));
    for d in [&fio_dir, &ours_dir] {
        std::fs::create_dir_all(d).unwrap();
    }
    let out = Command::new("fio").current_dir(&fio_dir).arg(&job).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let json = dir.path().join("r.json");
    let out = lunmark()
        .current_dir(&ours_dir)
        .args(["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("no {name}_slat")), "{}", stderr(&out));
    let files = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    let mut fio_files = files(&fio_dir);
    fio_files.retain(|f| !f.contains("_slat"));
    assert_eq!(files(&ours_dir), fio_files, "fio's names, but _slat (lunmark does not time submission apart)");
    // fio's averaged line: "TIME_MS, VALUE, DDIR, 0, 0".
    // fio's clock puts its first window at 1000 ms or a little after (1017 on a busy host).
    let shape = |line: &str| {
        let f: Vec<&str> = line.split(", ").collect();
        let t: u64 = f[0].parse().unwrap();
        let t = if (1000..1200).contains(&t) { "~1000".to_string() } else { t.to_string() };
        [t.as_str(), "V"].into_iter().chain(f[2..].iter().copied()).collect::<Vec<_>>().join(", ")
    };
    for f in &fio_files {
        let (a, b) = (std::fs::read_to_string(fio_dir.join(f)).unwrap(), std::fs::read_to_string(ours_dir.join(f)).unwrap());
        let (a1, b1) = (a.lines().next().unwrap_or(""), b.lines().next().unwrap());
        assert!(b1.starts_with("1000, ") && shape(b1) == "~1000, V, 0, 0, 0", "{f}: {b}");
        assert!(a1.is_empty() || shape(a1) == shape(b1), "{f}: fio '{a1}', lunmark '{b1}'");
    }
    // A profile holds no log: import-fio says where the logs come from.
    let out = lunmark().args(["profiles", "import-fio", job.to_str().unwrap()]).output().unwrap();
    assert!(stdout(&out).contains(&format!("# note: {name}_bw.1.log is written by `lunmark run --fio")), "{}", stdout(&out));
    // The values are the result's own per-second figures.
    let r = read_json(&json);
    let iops: Vec<u64> = r["points"][0]["summary"]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["read_iops"].as_f64().unwrap().round() as u64)
        .collect();
    let logged: Vec<u64> = std::fs::read_to_string(ours_dir.join(format!("{name}_iops.1.log")))
        .unwrap()
        .lines()
        .map(|l| l.split(", ").nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(logged, iops);
    for input in [&fio_dir, &ours_dir] {
        let png = dir.path().join(format!("log-{}.png", input.file_name().unwrap().to_string_lossy()));
        let out = Command::new(&plot)
            .args([
                "-i",
                input.to_str().unwrap(),
                "-T",
                "logs",
                "-g",
                "-t",
                "bw",
                "iops",
                "lat",
                "-r",
                "randread",
                "-d",
                "1",
                "-n",
                "1",
                "-o",
                png.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && !text.contains("Traceback"), "fio-plot -g on {}: {text}", input.display());
        assert!(std::fs::metadata(&png).map(|m| m.len() > 10_000).unwrap_or(false), "no chart from {}: {text}", input.display());
    }
}

/// Options that change nothing lunmark measures run as written (a trial found
/// thread, randrepeat, gtod_reduce and the like refused): the dry run says of
/// each, in one line, why it changes nothing; fio 3.33 reads the same file.
#[test]
fn harmless_options_run_with_a_note_each_in_the_dry_run() {
    let dir = shm_dir();
    let job = dir.path().join("h.fio");
    let options = [
        "thread",
        "randrepeat=0",
        "gtod_reduce=1",
        "invalidate=1",
        "refill_buffers",
        "group_reporting=1",
        "lat_percentiles=1",
        "disable_slat=1",
        "disk_util=0",
    ];
    std::fs::write(
        &job,
        format!("[h]\nioengine=null\nsize=1g\nrw=randread\ndirect=1\nnorandommap\nruntime=1\ntime_based\n{}\n", options.join("\n")),
    )
    .unwrap();
    let out = Command::new("fio").arg("--parse-only").arg(&job).output().unwrap();
    assert!(out.status.success(), "fio --parse-only: {}", String::from_utf8_lossy(&out.stderr));
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    for (i, o) in options.iter().enumerate() {
        let want = format!("note: {o} (line {}): accepted, it changes nothing lunmark measures: ", i + 9);
        assert_eq!(text.matches(&want).count(), 1, "'{want}' missing from:\n{text}");
    }
}

/// fio's latency_target (at latency_percentile, over latency_window) is
/// lunmark's knee search: the bound, the window as each step's time; a
/// percentile lunmark cannot bound is refused naming the line.
#[test]
fn latency_target_maps_onto_the_knee_search() {
    let dir = shm_dir();
    let d = dir.path().display().to_string();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, format!("[j]\nfilename={d}/f.dat\nsize=1m\nrw=randread\nbs=4k\nioengine=io_uring\niodepth=8\nlatency_target=2ms\nlatency_percentile=99\nlatency_window=500ms\n")).unwrap();
    let out = run(&["run", "--fio", job.to_str().unwrap(), "--dry-run", "--no-store"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("knee search (--sla lat_p99<2000us)"), "{text}");
    assert!(text.contains("at most 10s in all (500ms each)"), "the window is each step's time: {text}");
    // The dry run says the job file's notes with the plan.
    assert!(text.contains("latency_target: lunmark searches the queue depth for the most IOPS with lat_p99<2000us"), "{text}");
    // fio ramps up to iodepth and no further; lunmark's search is not capped there, and says so.
    assert!(text.contains("the job's iodepth=8 is replaced by the depth searched, which may go past 8 (up to 1024) where fio's search stays at or below it"), "{text}");
    std::fs::write(
        &job,
        format!("[j]\nfilename={d}/f.dat\nsize=1m\nrw=randread\nioengine=io_uring\nlatency_target=2\nlatency_percentile=99.5\n"),
    )
    .unwrap();
    let out = run(&["run", "--fio", job.to_str().unwrap(), "--dry-run", "--no-store"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("line 7: latency_percentile=99.5: lunmark bounds the percentiles 50, 90, 99, 99.9, 99.99 or 100"),
        "{}",
        stderr(&out)
    );
    std::fs::write(&job, format!("[j]\nfilename={d}/f.dat\nsize=1m\nrw=randread\nlatency_window=1s\n")).unwrap();
    let out = run(&["run", "--fio", job.to_str().unwrap(), "--dry-run", "--no-store"]);
    assert!(stderr(&out).contains("latency_window shapes fio's latency_target search: add latency_target=TIME"), "{}", stderr(&out));
    // latency_target=0 is fio's default, no search: the job runs at its iodepth.
    std::fs::write(&job, format!("[j]\nfilename={d}/f.dat\nsize=1m\nrw=randread\nioengine=io_uring\niodepth=8\nlatency_target=0\n"))
        .unwrap();
    let out = run(&["run", "--fio", job.to_str().unwrap(), "--dry-run", "--no-store"]);
    let text = stdout(&out);
    assert!(out.status.success() && !text.contains("knee search") && text.contains("latency_target=0: fio's default"), "{text}");
}

/// A job's latency_target searches the queue depth; what the run says of it
/// is what the search uses (from a new-user trial): `--sla` on the command
/// line replaces the job's bound and the note says so; `--qd` is refused
/// naming the job file's line, not a `--sla` nobody typed; the dry run's group
/// line says the depth is searched instead of showing the job's iodepth.
#[test]
fn latency_target_messages_say_what_the_search_uses() {
    let dir = shm_dir();
    let d = dir.path().display().to_string();
    let job = dir.path().join("lt.fio");
    let body = format!("[j]\nfilename={d}/f.dat\nsize=1m\nrw=randread\nbs=4k\nioengine=io_uring\niodepth=64\nlatency_target=2ms\n");
    std::fs::write(&job, body).unwrap();
    let f = job.to_str().unwrap();
    // (a) --sla given: the note names the flag's bound, and the job's as replaced.
    let out = run(&["run", "--fio", f, "--dry-run", "--no-store", "--sla", "lat_p99<1ms"]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{err}");
    let all = format!("{err}{text}");
    assert!(
        all.contains("note: latency_target (line 8: latency_target=2ms, as lat_max<2000us) is replaced by --sla 'lat_p99<1ms': lunmark searches the queue depth for the most IOPS with lat_p99<1ms"),
        "{all}"
    );
    assert!(!all.contains("most IOPS with lat_max<2000us"), "the job's bound is not what the search uses: {all}");
    assert!(text.contains("knee search (--sla lat_p99<1ms)"), "{text}");
    // (c) the group line says the depth is searched, not the job's 64.
    assert!(
        text.contains("group 'j': 1 worker x 1 target x the searched queue depth (1 to 1024, the knee search below; not 64) = 1 to 1024 I/Os in flight"),
        "{text}"
    );
    assert!(!text.contains("64 outstanding") && text.contains("total: 1 worker, the I/Os in flight the search chooses"), "{text}");
    // (b) --qd with the job's latency_target: refused naming the file, the job and the line.
    let out = run(&["run", "--fio", f, "--dry-run", "--no-store", "--qd", "8"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("{f}, job 'j', line 8: latency_target=2ms (the knee search --sla 'lat_max<2000us'): the search chooses the queue depth, so --qd would be ignored: drop --qd, or drop latency_target")),
        "{err}"
    );
    assert!(!err.contains("error: --sla"), "the user gave no --sla: {err}");
    // With --sla typed, the refusal names the flag, as without a job file.
    let out = run(&["run", "--fio", f, "--dry-run", "--no-store", "--qd", "8", "--sla", "lat_p99<1ms"]);
    assert!(
        stderr(&out).contains("--sla lat_p99<1ms: the search chooses the queue depth, so --qd would be ignored: drop --qd\n"),
        "{}",
        stderr(&out)
    );
}

/// fio's `percentile_list` chooses the latency percentiles reported: the
/// result keeps them beside lunmark's own, and fio-json's percentile map
/// holds them alone, in their order, as fio's does.
#[test]
fn percentile_list_chooses_the_percentiles_reported() {
    let dir = shm_dir();
    let job = dir.path().join("p.fio");
    let body = "[p]\nioengine=null\nsize=1g\nrw=randread\nruntime=300ms\ntime_based\npercentile_list=1:50:99.5:10\n";
    std::fs::write(&job, body).unwrap();
    let json = dir.path().join("r.json");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let read = &read_json(&json)["points"][0]["summary"]["latency_us"]["read"];
    let p = read["percentiles"].as_object().unwrap_or_else(|| panic!("no percentiles: {read}"));
    let keys: Vec<&str> = p.keys().map(|k| k.as_str()).collect();
    assert_eq!(keys.len(), 4, "{read}");
    for k in ["1", "10", "50", "99.5"] {
        assert!(p.contains_key(k), "{k} missing: {read}");
    }
    let at = |k: &str| p[k].as_f64().unwrap();
    assert!(at("1") <= at("10") && at("10") <= at("50") && at("50") <= at("99.5"), "{read}");
    assert_eq!(at("50"), read["p50"].as_f64().unwrap(), "the same histogram as p50");
    assert!(read["p99"].as_f64().is_some(), "lunmark's own percentiles stay");

    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--output-format", "fio-json", "--no-store", "-q"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let fio: Value = serde_json::from_str(&text).unwrap();
    let map = fio["jobs"][0]["read"]["clat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(
        map.keys().cloned().collect::<Vec<_>>(),
        ["1.000000", "10.000000", "50.000000", "99.500000"],
        "fio's keys, in order: {text}"
    );
}

/// The offsets of a job file's I/Os as fio 3.33 issues them (its io debug log).
fn fio_offsets(job: &Path) -> Vec<u64> {
    let out = Command::new("fio").arg("--debug=io").arg(job).output().unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let log = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    log.lines()
        .filter(|l| l.contains(" fill: "))
        .map(|l| u64::from_str_radix(l.split("off=0x").nth(1).unwrap().split(',').next().unwrap(), 16).unwrap())
        .collect()
}

/// rw=read:8k leaves a hole of 8k after each I/O, rw=randread:4 draws an
/// offset every 4 I/Os with sequential ones between (rw_sequencer=identical:
/// the same offset 4 times): lunmark's trace of the job file shows the same
/// pattern as fio's own offsets (a trial found both suffixes refused).
#[test]
fn rw_skips_and_random_runs_issue_the_offsets_fio_issues() {
    let dir = shm_dir();
    let job = dir.path().join("s.fio");
    let trace = dir.path().join("s.trace");
    let ours = |text: &str| {
        std::fs::write(&job, text).unwrap();
        let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--trace", trace.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        lunmark::trace::load_trace(&trace).unwrap().1.iter().map(|r| r.offset).collect::<Vec<u64>>()
    };
    let skip = "[s]\nioengine=null\nsize=1m\nbs=4k\nrw=read:8k\n";
    let want: Vec<u64> = (0..86).map(|k| k * 12288).collect();
    std::fs::write(&job, skip).unwrap();
    assert_eq!(fio_offsets(&job), want, "fio: one 4k read every 12k, 86 over 1m");
    assert_eq!(ours(skip), want, "lunmark: the same blocks, the holes between left out");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    assert!(stdout(&out).contains("aligned to 4k, a hole of 8k after each sequential I/O"), "{}", stdout(&out));

    // One worker at QD1: the trace is in issue order, as fio's log.
    for (sequencer, step) in [("sequential", 4096), ("identical", 0)] {
        let text = format!("[r]\nioengine=null\nsize=1g\nbs=4k\nrw=randread:4\nrw_sequencer={sequencer}\nnumber_ios=400\nnorandommap\n");
        std::fs::write(&job, &text).unwrap();
        for (who, offs) in [("fio", fio_offsets(&job)), ("lunmark", ours(&text))] {
            assert_eq!(offs.len(), 400, "{who}");
            for run in offs.chunks(4) {
                let steps: Vec<u64> = run.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
                assert_eq!(steps, [step; 3], "{who} with rw_sequencer={sequencer}: {run:?}");
            }
            let starts: std::collections::HashSet<u64> = offs.iter().step_by(4).copied().collect();
            assert!(starts.len() > 95, "{who}: a fresh random offset every 4 I/Os ({} distinct of 100)", starts.len());
        }
    }
}

/// ss=iops_slope:X% with ss_dur runs as lunmark's --steady, the mapping said
/// in the dry run: a paced job is steady after its window and ends there,
/// long before its runtime (a trial found ss refused).
#[test]
fn fio_steady_state_ends_the_point_as_lunmarks_steady() {
    let dir = shm_dir();
    let job = dir.path().join("ss.fio");
    std::fs::write(
        &job,
        "[ss]\nioengine=null\nsize=1g\nbs=4k\nrw=randread\nrate_iops=500\nruntime=30\ntime_based\nss=iops_slope:2%\nss_dur=3\n",
    )
    .unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    let plan = stdout(&out);
    assert!(
        plan.contains("ss=iops_slope:2% (line 9), ss_dur=3s: job 'ss' -> --steady iops, window 3 x 1 s, slope excursion 4% of the mean"),
        "{plan}{}",
        stderr(&out)
    );
    assert!(plan.contains("steady: the point ends when the last 3 rounds of 1s are steady in iops"), "{plan}");
    let json = dir.path().join("ss.json");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &read_json(&json)["points"][0]["summary"];
    assert_eq!(s["steady"]["reached"], true, "{}", s["steady"]);
    assert_eq!(s["steady"]["window"].as_array().unwrap().len(), 3);
    let d = s["duration_s"].as_f64().unwrap();
    assert!((2.9..10.0).contains(&d), "ended when steady, not at runtime=30: {d} s");
}

/// verify= on a job that only writes: fio reads every block back after the
/// writes, lunmark checks only what it reads, so the job would check nothing
/// (a trial found it ran with `blocks_checked` 0). Refused naming --journal;
/// with it, `lunmark verify` reads every written block back, and finds a
/// block damaged after the run.
#[test]
fn verify_on_a_job_that_only_writes_is_read_back_through_the_journal() {
    let dir = shm_dir();
    let job = dir.path().join("w.fio");
    let file = dir.path().join("w.dat");
    std::fs::write(
        &job,
        format!("[w]\nfilename={}\nrw=randwrite\nbs=4k\nsize=1m\nnumber_ios=300\nverify=crc32c\nioengine=psync\n", file.display()),
    )
    .unwrap();
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "--dry-run"]);
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("line 7: verify=crc32c: job 'w' only writes") && err.contains("Run it with --journal FILE"), "{err}");

    let journal = dir.path().join("w.journal");
    let out = run_in(dir.path(), &["run", "--fio", job.to_str().unwrap(), "-q", "--no-store", "--journal", journal.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let check = || {
        lunmark().current_dir(dir.path()).args(["verify", file.to_str().unwrap(), "--journal", journal.to_str().unwrap()]).output().unwrap()
    };
    let out = check();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // Damage every block: the read-back finds the writes gone.
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(5), "{}{}", stdout(&out), stderr(&out));
}
