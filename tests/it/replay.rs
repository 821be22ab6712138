//! `run --replay`: a recorded trace issued against real files (lunmark's own
//! trace, MSR Cambridge CSV written here, the blkparse fixture), its timing,
//! mapping and offsets, the lag it reports, and the refusals before a run.

use std::path::{Path, PathBuf};

use crate::common::*;
use crate::require_root;

/// (op, target, offset, len) of every record of a lunmark binary trace
/// (docs/trace-format.md: a 16-byte header, then 20-byte records).
fn trace_ops(path: &Path) -> Vec<(u8, u16, u64, u32)> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"LMTRACE1");
    bytes[16..]
        .chunks_exact(20)
        .filter(|r| r[4] != 2)
        .map(|r| {
            (
                r[4],
                u16::from_le_bytes([r[6], r[7]]),
                u64::from_le_bytes(r[8..16].try_into().unwrap()),
                u32::from_le_bytes(r[16..20].try_into().unwrap()),
            )
        })
        .collect()
}

/// An MSR Cambridge CSV of `n` I/Os `gap_us` apart, alternating between two
/// devices (usr/0 and proj/2), offsets within `span` bytes: (path, records as
/// (device, is_write, offset, len)).
fn msr_trace(dir: &Path, n: u64, gap_us: u64, span: u64) -> (PathBuf, Vec<(usize, bool, u64, u32)>) {
    let start: u64 = 128_166_372_003_061_629;
    let mut text = String::new();
    let mut records = Vec::new();
    for i in 0..n {
        let dev = (i % 3 == 2) as usize;
        let write = i % 4 == 1;
        let len: u32 = if i % 5 == 0 { 65536 } else { 4096 };
        let offset = (i * 7919 * 4096) % (span - 65536);
        let host = if dev == 0 { "usr,0" } else { "proj,2" };
        let ticks = start + i * gap_us * 10;
        text.push_str(&format!("{ticks},{host},{},{offset},{len},{}\n", if write { "Write" } else { "Read" }, 100 + i));
        records.push((dev, write, offset, len));
    }
    let path = dir.join("msr.csv");
    std::fs::write(&path, text).unwrap();
    (path, records)
}

/// Writes `lines` as the trace `trace` and replays it on mem:16m: its output
/// (checked a success) and where the result's JSON is.
fn replay_lines(dir: &Path, trace: &Path, lines: &[String]) -> (std::process::Output, PathBuf) {
    std::fs::write(trace, lines.join("\n") + "\n").unwrap();
    let json = dir.join("r.json");
    let out = lunmark()
        .args(["run", "-q", "--no-store", "--replay", trace.to_str().unwrap(), "-t", "mem:16m", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (out, json)
}

fn run_json(args: &[&str], json: &Path) -> serde_json::Value {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-q", "--no-store", "--json", json.to_str().unwrap()]);
    let out = run(&all);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    read_json(json)
}

/// A run recorded with --trace and replayed with --trace again issues the same
/// sequence of (op, target, offset, length), here from two workers' mixed I/O.
#[test]
fn a_recorded_trace_replays_the_same_operations() {
    let dir = shm_dir();
    let target = dir.path().join("lun");
    let t = target.to_str().unwrap();
    let first = dir.path().join("first.lmt");
    let again = dir.path().join("again.lmt");
    let json = dir.path().join("r.json");
    let base = ["run", "-t", t, "--size", "16m"];
    let mut record = base.to_vec();
    record.extend(["--bs", "8k", "--read", "50", "--random", "60", "--workers", "2", "--qd", "4", "--ios", "400", "--ramp", "0s"]);
    record.extend(["--trace", first.to_str().unwrap()]);
    run_json(&record, &json);
    let mut replay = base.to_vec();
    replay.extend(["--replay", first.to_str().unwrap(), "--replay-speed", "max", "--trace", again.to_str().unwrap()]);
    let r = run_json(&replay, &json);
    let recorded = trace_ops(&first);
    assert!(recorded.len() >= 800, "two workers measured 400 I/Os each: {}", recorded.len());
    assert!(recorded.iter().any(|o| o.0 == 0) && recorded.iter().any(|o| o.0 == 1), "reads and writes");
    assert_eq!(trace_ops(&again), recorded, "the replay issues the recorded (op, target, offset, length) in order");
    let s = &r["points"][0]["summary"];
    assert_eq!(s["replay"]["format"], "lunmark");
    assert_eq!(s["replay"]["issued"], recorded.len() as u64);
    assert_eq!(s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap(), recorded.len() as u64);
    assert!(s["replay"].get("lag_mean_us").is_none(), "no lag at max speed: {}", s["replay"]);
}

/// MSR Cambridge CSV at the recorded pace and twice as fast: the point lasts the
/// trace's span divided by the speed, devices go to the targets the map names
/// (checked in the replay's own trace), and the lag is reported.
#[test]
fn an_msr_trace_keeps_its_timing_and_mapping() {
    let dir = shm_dir();
    let (csv, records) = msr_trace(dir.path(), 300, 4000, 8 << 20); // 1.196 s recorded
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let json = dir.path().join("r.json");
    let traced = dir.path().join("t.lmt");
    for (speed, want_s) in [("1", 1.196), ("2", 0.598)] {
        let args = [
            "run",
            "-t",
            a.to_str().unwrap(),
            "-t",
            b.to_str().unwrap(),
            "--size",
            "8m",
            "--replay",
            csv.to_str().unwrap(),
            "--replay-speed",
            speed,
            "--replay-map",
            "usr/0=1,proj/2=0",
            "--trace",
            traced.to_str().unwrap(),
        ];
        let r = run_json(&args, &json);
        let s = &r["points"][0]["summary"];
        let rp = &s["replay"];
        assert_eq!(rp["format"], "msr");
        assert_eq!(rp["records"], 300);
        assert_eq!(rp["issued"], 300);
        assert_eq!(rp["speed"], speed);
        assert_eq!(rp["mapping"], serde_json::json!(["usr/0 -> target 1", "proj/2 -> target 0"]));
        // The stored workload says it is this replay, not the unused default access line.
        let want_replay = serde_json::json!({"file": csv.to_str().unwrap(), "format": "msr", "speed": speed, "records": 300});
        assert_eq!(r["workload"]["replay"], want_replay, "{}", r["workload"]);
        assert_eq!(r["points"][0]["workload"]["replay"], want_replay);
        assert!((rp["span_s"].as_f64().unwrap() - 1.196).abs() < 1e-6, "{rp}");
        let duration = s["duration_s"].as_f64().unwrap();
        assert!(
            duration >= want_s * 0.98 && duration < want_s + 0.35,
            "speed {speed}: the point lasted {duration} s, the trace {want_s} s"
        );
        let (mean, max) = (rp["lag_mean_us"].as_f64().unwrap(), rp["lag_max_us"].as_f64().unwrap());
        assert!(mean >= 0.0 && max >= mean, "{rp}");
        assert!(s["service_latency_us"]["all"]["count"].as_u64().unwrap() == 300, "service time beside latency from recorded time");
        // The recorded order, with usr/0 on target 1 and proj/2 on target 0.
        let issued = trace_ops(&traced);
        let want: Vec<(u8, u16, u64, u32)> = records.iter().map(|&(d, w, o, l)| (w as u8, if d == 0 { 1 } else { 0 }, o, l)).collect();
        assert_eq!(issued, want, "speed {speed}");
    }
}

/// The replayed reads and writes reach a real device: the kernel's counts on a
/// loop device (/sys/block/loopN/stat) agree with the trace's records of the
/// mapped device, within 1% (bytes read: up to 1 MiB of probes more); the other
/// device's records are left out and counted as skipped.
#[test]
fn a_replay_reaches_a_loop_device_as_recorded() {
    require_root!();
    let dir = shm_dir();
    let (csv, records) = msr_trace(dir.path(), 900, 50, 8 << 20);
    let dev = LoopDevice::new(dir.path(), 16 << 20);
    let json = dir.path().join("r.json");
    let before = dev.stat();
    let args = [
        "run",
        "-t",
        dev.path.to_str().unwrap(),
        "--destructive",
        "--qd",
        "8",
        "--replay",
        csv.to_str().unwrap(),
        "--replay-speed",
        "max",
        "--replay-map",
        "usr/0=0",
    ];
    let r = run_json(&args, &json);
    let after = dev.stat();
    let mine: Vec<_> = records.iter().filter(|r| r.0 == 0).collect();
    let sum = |write: bool| -> (u64, u64) {
        let of: Vec<_> = mine.iter().filter(|r| r.1 == write).collect();
        (of.len() as u64, of.iter().map(|r| r.3 as u64).sum())
    };
    let ((reads, read_bytes), (writes, write_bytes)) = (sum(false), sum(true));
    let s = &r["points"][0]["summary"];
    assert_eq!(s["replay"]["skipped"], (records.len() - mine.len()) as u64);
    assert_eq!((s["ios_read"].as_u64(), s["ios_written"].as_u64()), (Some(reads), Some(writes)));
    assert_eq!((s["bytes_read"].as_u64(), s["bytes_written"].as_u64()), (Some(read_bytes), Some(write_bytes)));
    let close = |ours: u64, kernel: u64| (ours as f64 - kernel as f64).abs() <= 0.01 * kernel as f64;
    let k = (after.0 - before.0, after.1 - before.1, after.2 - before.2, after.3 - before.3);
    assert!(close(reads, k.0) && close(writes, k.2), "I/Os: trace {reads} reads {writes} writes, kernel {k:?}");
    // Reads of the device's first sectors besides the replay (lunmark's in-use
    // check, udev's probe of a new loop device) add up to a few hundred KiB.
    let extra = (k.1 * 512).checked_sub(read_bytes);
    assert!(extra.is_some_and(|x| x <= 1 << 20), "bytes read: trace {read_bytes}, kernel {k:?}");
    assert!(close(write_bytes, k.3 * 512), "bytes written: trace {write_bytes}, kernel {k:?}");
}

/// An offset beyond the target's region is refused before anything runs,
/// naming the record and the region (and the file lunmark created is gone);
/// with --replay-offsets wrap it is wrapped and counted.
#[test]
fn offsets_beyond_the_region_are_refused_or_wrapped() {
    let dir = shm_dir();
    let csv = dir.path().join("far.csv");
    std::fs::write(&csv, "100,h,0,Read,0,4096,1\n200,h,0,Write,8192,4096,1\n300,h,0,Read,2097152,4096,1\n400,h,0,Read,4096,4096,1\n")
        .unwrap();
    let target = dir.path().join("small");
    let t = target.to_str().unwrap();
    let out = run(&["run", "-q", "--no-store", "-t", t, "--size", "1m", "--replay", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(e.contains("I/O record 3 of") && e.contains("at offset 2097152") && e.contains("1048576 bytes"), "{e}");
    assert!(e.contains("--replay-offsets wrap"), "{e}");
    assert!(!target.exists(), "the target created for the refused run is removed");
    let json = dir.path().join("r.json");
    let r = run_json(&["run", "-t", t, "--size", "1m", "--replay", csv.to_str().unwrap(), "--replay-offsets", "wrap"], &json);
    let rp = &r["points"][0]["summary"]["replay"];
    assert_eq!((rp["issued"].as_u64(), rp["wrapped"].as_u64()), (Some(4), Some(1)), "{rp}");
}

/// blkparse text (the fixture): its queued reads and writes replay; the bare
/// flush is skipped and counted; the second device needs a second target.
#[test]
fn blkparse_text_replays_and_counts_what_it_skips() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/blkparse/sample.txt");
    let dir = shm_dir();
    let json = dir.path().join("r.json");
    let out = run(&["run", "-q", "--no-store", "-t", "mem:1g", "--replay", fixture, "--replay-speed", "max"]);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(e.contains("2 devices (0 (8:0), 1 (8:16)), the run 1 target"), "{e}");
    let r = run_json(&["run", "-t", "mem:1g", "-t", "mem:512m", "--replay", fixture, "--replay-speed", "max"], &json);
    let rp = &r["points"][0]["summary"]["replay"];
    assert_eq!(rp["format"], "blkparse");
    assert_eq!(rp["issued"], 13);
    assert!(rp["skipped"].as_u64().unwrap() >= 1, "{rp}");
}

/// Bad replay input is refused once, before anything runs, naming the flag and what is allowed.
#[test]
fn bad_replay_settings_are_refused_with_what_is_allowed() {
    let dir = shm_dir();
    let (csv, _) = msr_trace(dir.path(), 10, 100, 1 << 20);
    let c = csv.to_str().unwrap();
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "100,h,0,Read,0,4096,1\n200,h,0,Flush,0,0,1\n").unwrap();
    let trim1 = dir.path().join("trim1.csv");
    std::fs::write(&trim1, "100,h,0,Trim,0,4096,1\n").unwrap();
    let named_twice = format!("that is also the file this command reads (--replay {c})");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--replay", "/nonexistent/t.csv"], "no such file"),
        (vec!["--replay", c, "--replay-speed", "0"], "--replay-speed"),
        (vec!["--replay", c, "--replay-offsets", "clip"], "wrap or refuse"),
        (vec!["--replay", c, "--replay-format", "vhd"], "lunmark (what --trace writes), blkparse"),
        (vec!["--replay", c, "--replay-map", "usr/0=0,nfs/9=1"], "no device nfs/9"),
        (vec!["--replay", c, "--bs", "8k", "--read", "50"], "--bs, --read cannot apply to a replay"),
        (vec!["--replay", c, "--workers", "2"], "from one worker"),
        (vec!["--replay", c, "--dist", "zipf:1.2"], "--dist cannot apply to a replay"),
        (vec!["--replay", c, "--trim", "10"], "--trim cannot apply"),
        (vec!["--replay", c, "--thinktime", "1ms", "--thinktime-blocks", "4"], "--thinktime, --thinktime-blocks cannot apply"),
        (vec!["--replay", c, "--arrivals", "fixed"], "--arrivals cannot apply"),
        (
            vec!["--replay", c, "--compress", "50", "--dedupe", "30", "--dedupe-unit", "8k"],
            "--compress, --dedupe, --dedupe-unit cannot apply",
        ),
        (vec!["--replay", c, "--fsync", "8"], "--fsync cannot apply"),
        (vec!["--replay", c, "--fdatasync", "4"], "--fdatasync cannot apply"),
        (vec!["--replay", c, "--flush", "2"], "--flush cannot apply"),
        (vec!["--replay", c, "--steady", "iops"], "--steady cannot apply"),
        (vec!["--replay-speed", "2"], "add --replay FILE"),
        (vec!["--replay", c, "--trace", c], &named_twice),
        (vec!["--replay", bad.to_str().unwrap()], "line 2: Type 'Flush' is neither Read nor Write"),
        (vec!["--replay", trim1.to_str().unwrap()], "line 1: Type 'Trim' is neither Read nor Write"),
        (
            vec!["--replay", c, "--replay-format", "blkparse"],
            "is not blkparse output (--replay-format blkparse): it looks like MSR Cambridge CSV",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", "-q", "--no-store", "-t", "mem:16m", "-t", "mem:8m", "--dry-run"];
        args.extend(&extra);
        let out = run(&args);
        assert!(!out.status.success(), "{extra:?} was accepted");
        let e = stderr(&out);
        assert!(e.contains(want), "{extra:?}: {e}");
        assert!(stdout(&out).is_empty(), "{extra:?}: nothing is printed before the refusal");
    }
}

/// --dry-run shows the replay; a profile carries the same settings in a
/// [replay] table; cache-curve reads the MSR CSV.
#[test]
fn dry_run_profiles_and_cache_curve_know_the_replay() {
    let dir = shm_dir();
    let (csv, _) = msr_trace(dir.path(), 50, 1000, 4 << 20);
    let c = csv.to_str().unwrap();
    let out = run(&["run", "-t", "mem:16m", "-t", "mem:8m", "--replay", c, "--replay-speed", "2", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "(msr format, detected)",
        "50 I/O records (",
        "over 0.049 s recorded; speed 2",
        "device usr/0 -> target 0 (mem:16m)",
        "device proj/2 -> target 1 (mem:8m)",
        "run: 50 I/Os per worker measured",
        "refused before the run",
    ] {
        assert!(text.contains(want), "missing '{want}' in:\n{text}");
    }
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"replayed\"\ndescription = \"a replay\"\n[replay]\nfile = \"{c}\"\nspeed = \"max\"\noffsets = \"wrap\"\n\
             [[phases]]\nname = \"main\"\n[[phases.groups]]\nname = \"main\"\nworkers = 1\nqd = 8\n\
             [[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 0.0\n"
        ),
    )
    .unwrap();
    let out = run(&["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:1m", "-t", "mem:1m", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("speed max") && text.contains("wrapped into the region") && text.contains("x 8 outstanding"), "{text}");
    let out = run(&["cache-curve", c, "--sizes", "0,50,100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("MSR Cambridge CSV"), "{}", stdout(&out));
}

/// A stored replay says it is one: compare refuses it against a generated
/// workload without --force (as for any workload difference), the CSV export
/// gives no access line, and the HTML report reads "replay of FILE (...)".
#[test]
fn a_stored_replay_is_not_compared_with_a_generated_workload() {
    let dir = shm_dir();
    let (csv, _) = msr_trace(dir.path(), 20, 100, 1 << 20);
    let c = csv.to_str().unwrap();
    let store = dir.path().join("store.db");
    let id = |args: &[&str]| -> String {
        let out = lunmark().env("LUNMARK_STORE", &store).args(args).args(["-q", "--json", "-"]).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["id"].as_str().unwrap().to_string()
    };
    let generated = id(&["run", "-t", "mem:8m", "-t", "mem:8m", "--bs", "4k", "--ios", "20", "--ramp", "0"]);
    let replayed = id(&["run", "-t", "mem:8m", "-t", "mem:8m", "--replay", c, "--replay-speed", "max"]);
    let cmp = lunmark().env("LUNMARK_STORE", &store).args(["compare", &generated, &replayed]).output().unwrap();
    assert!(!cmp.status.success(), "a replay was compared with a generated workload:\n{}", stdout(&cmp));
    let e = stderr(&cmp);
    assert!(e.contains("not comparable") && e.contains("replay.file") && e.contains("--force"), "{e}");
    let forced = lunmark().env("LUNMARK_STORE", &store).args(["compare", &generated, &replayed, "--force"]).output().unwrap();
    assert!(forced.status.success(), "{}", stderr(&forced));
    let out = lunmark().env("LUNMARK_STORE", &store).args(["results", "export", &replayed, "--format", "csv"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(",replay,,,"), "bs says replay, read and random are empty:\n{text}");
    let html = dir.path().join("r.html");
    let rep = lunmark().env("LUNMARK_STORE", &store).args(["report", &replayed, "-o", html.to_str().unwrap()]).output().unwrap();
    assert!(rep.status.success(), "{}", stderr(&rep));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains(&format!("replay of {c} (msr, 20 records, speed max)")), "{text}");
    assert!(!text.contains("bs 4k"), "{text}");
}

/// blkparse records out of time order (the second at 0.5 s, the rest between
/// 3 ms and 0.2 s after it in the file) and three with times that are not
/// times: replayed in recorded-time order, so no I/O waits behind a record
/// listed before it (that lateness was counted as up to 500 ms of latency),
/// the span is the trace's, and both are counted and said.
#[test]
fn out_of_order_and_timeless_blkparse_records_are_sorted_and_counted() {
    let dir = shm_dir();
    let trace = dir.path().join("ooo.txt");
    let mut lines = vec![
        "  8,0    0        1     0.000000000  100  Q   R 0 + 8 [app]".to_string(),
        "  8,0    0        2     0.500000000  100  Q   R 8 + 8 [app]".to_string(),
    ];
    for i in 3..200u64 {
        lines.push(format!("  8,0    1        {i}     {:.9}  100  Q   R {} + 8 [app]", 0.001 * i as f64, i * 8));
    }
    for bad in ["nan", "-0.5", "99999999999.0"] {
        lines.push(format!("  8,0    1        300     {bad}  100  Q   R 16 + 8 [app]"));
    }
    let (out, json) = replay_lines(dir.path(), &trace, &lines);
    let e = stderr(&out);
    assert!(
        e.contains("197 of its I/O records came after a later-timed one; they are replayed in the order of their recorded times"),
        "{e}"
    );
    assert!(e.contains("3 events skipped: their recorded time is not a time"), "{e}");
    let r = read_json(&json);
    let s = &r["points"][0]["summary"];
    assert_eq!(s["replay"]["reordered"], 197, "{}", s["replay"]);
    assert_eq!(s["replay"]["bad_times"], 3, "{}", s["replay"]);
    assert_eq!(s["replay"]["skipped"], 3, "{}", s["replay"]);
    assert_eq!(s["replay"]["issued"], 199, "{}", s["replay"]);
    assert_eq!(s["replay"]["span_s"], 0.5, "{}", s["replay"]);
    // In order, every I/O is due at its own time: what is left is lunmark's
    // own lateness (milliseconds on a busy machine), not the 300-500 ms the
    // file's order imposed on 197 records.
    let max_ms = s["latency_us"]["all"]["max"].as_f64().unwrap() / 1e3;
    let mean_ms = s["latency_us"]["all"]["mean"].as_f64().unwrap() / 1e3;
    assert!(mean_ms < 50.0 && max_ms < 250.0, "latency from the recorded time: mean {mean_ms} ms, max {max_ms} ms");
}

/// MSR lines out of time order (the second 0.5 s after the first, the rest
/// 3 ms to 0.2 s after the first, listed after it) keep their own times:
/// sorted and counted as blkparse's are, where they were moved to the time
/// of the line before (197 I/Os issued at 0.5 s, none said reordered).
#[test]
fn out_of_order_msr_records_keep_their_times_and_are_counted() {
    let dir = shm_dir();
    let trace = dir.path().join("ooo.csv");
    let t0 = 128166372003061629u64;
    let mut lines = vec![format!("{t0},usr,0,Read,0,4096,10"), format!("{},usr,0,Read,4096,4096,10", t0 + 5_000_000)];
    for i in 3..200u64 {
        lines.push(format!("{},usr,0,Read,{},4096,10", t0 + 10_000 * i, i * 4096));
    }
    let (out, json) = replay_lines(dir.path(), &trace, &lines);
    assert!(stderr(&out).contains("197 of its I/O records came after a later-timed one"), "{}", stderr(&out));
    let s = &read_json(&json)["points"][0]["summary"];
    assert_eq!((s["replay"]["reordered"].as_u64(), s["replay"]["issued"].as_u64()), (Some(197), Some(199)), "{}", s["replay"]);
    assert_eq!(s["replay"]["span_s"], 0.5, "{}", s["replay"]);
}
