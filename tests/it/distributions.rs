//! Access distributions, think time and Poisson arrivals, checked from what
//! the real binary issued: its `--trace` of a run on a RAM LUN. A run of
//! `--ios N` traces exactly the I/Os it counted.

use std::collections::HashMap;
use std::path::Path;

use lunmark::trace::{load_trace, TraceRecord};
use lunmark::workload::dist::{Distribution, Layout, Permutation};

use super::common::*;

/// Runs lunmark with `args` plus a trace, and returns the trace's records.
fn traced(args: &[&str]) -> Vec<TraceRecord> {
    let dir = shm_dir();
    let trace = dir.path().join("io.trace");
    let mut all = vec!["run", "-q", "--no-store", "--ramp", "0", "--trace", trace.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    load_trace(&trace).unwrap().1
}

/// The share of accesses on the hottest tenth of `n` blocks of 4 KiB, the
/// hottest being ranks 0..n/10 laid out as the distribution lays them.
fn hottest_tenth_share(records: &[TraceRecord], d: &Distribution, n: u64, seed: u64) -> f64 {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for r in records {
        *counts.entry(r.offset / 4096).or_default() += 1;
    }
    let perm = Permutation::new(n, seed);
    let hot: u64 = (0..n / 10)
        .map(|rank| if d.layout == Layout::Scattered { perm.apply(rank) } else { rank })
        .map(|b| counts.get(&b).copied().unwrap_or(0))
        .sum();
    hot as f64 / records.len() as f64
}

#[test]
fn zipf_skew_shows_in_the_trace_and_workers_share_the_hot_blocks() {
    // 64 MiB of 4 KiB blocks; two workers, each with its own stream, one seed.
    let n = 16_384;
    let common = ["-t", "mem:64m", "--bs", "4k", "--read", "100", "--random", "100", "--workers", "2", "--qd", "8", "--seed", "5"];
    let mut args = common.to_vec();
    args.extend(["--ios", "150000", "--dist", "zipf:0.9"]);
    let records = traced(&args);
    assert!(records.len() >= 300_000, "{} I/Os traced", records.len());
    let d: Distribution = "zipf:0.9".parse().unwrap();
    let got = hottest_tenth_share(&records, &d, n, 5);
    let want = d.hottest_share(n, 0.1).unwrap();
    assert!((got - want).abs() < 0.01, "hottest 10% of blocks: {:.2}% in the trace, {:.2}% exact", got * 100.0, want * 100.0);
    // The same blocks under the default distribution get their plain tenth.
    let mut args = common.to_vec();
    args.extend(["--ios", "50000"]);
    let uniform = hottest_tenth_share(&traced(&args), &d, n, 5);
    assert!((uniform - 0.1).abs() < 0.01, "uniform: {uniform}");
}

#[test]
fn zoned_shares_show_in_the_trace() {
    let zoned =
        traced(&["-t", "mem:16m", "--bs", "4k", "--read", "50", "--random", "100", "--ios", "200000", "--dist", "zoned:70/10:20/30:10/60"]);
    let region = 16u64 << 20;
    let share = |lo: f64, hi: f64| {
        zoned.iter().filter(|r| (r.offset as f64) >= lo * region as f64 && (r.offset as f64) < hi * region as f64).count() as f64
            / zoned.len() as f64
    };
    for (lo, hi, want) in [(0.0, 0.1, 0.7), (0.1, 0.4, 0.2), (0.4, 1.0, 0.1)] {
        let got = share(lo, hi);
        assert!((got - want).abs() < 0.005, "zone {lo}..{hi}: {got}");
    }
}

#[test]
fn poisson_arrivals_keep_the_rate_with_exponential_gaps() {
    let gaps = |arrivals: &str| {
        let records = traced(&[
            "-t",
            "mem:16m",
            "--bs",
            "4k",
            "--random",
            "100",
            "--rate",
            "3000",
            "--arrivals",
            arrivals,
            "--time",
            "5s",
            "--qd",
            "16",
        ]);
        let times: Vec<f64> = records.iter().map(|r| r.t_ns as f64 / 1e9).collect();
        let span = times.last().unwrap() - times.first().unwrap();
        let rate = (times.len() - 1) as f64 / span;
        let g: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        let cv = (g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64).sqrt() / mean;
        (rate, cv)
    };
    let (rate, cv) = gaps("poisson");
    assert!((rate / 3000.0 - 1.0).abs() < 0.02, "Poisson: {rate:.0} IOPS for 3000 asked");
    assert!((cv - 1.0).abs() < 0.15, "Poisson: coefficient of variation {cv:.3}");
    let (rate, cv) = gaps("fixed");
    assert!((rate / 3000.0 - 1.0).abs() < 0.02, "fixed: {rate:.0} IOPS");
    assert!(cv < 0.5, "fixed intervals: coefficient of variation {cv:.3}");
}

/// Think time: a pause after every burst, from the flags (fio's thinktime)
/// and from an access line (IOmeter's delay and burst).
#[test]
fn think_time_pauses_after_each_burst() {
    let dir = shm_dir();
    let profile = dir.path().join("bursts.toml");
    let text = "name = \"bursts\"\ndescription = \"IOmeter delay and burst\"\n\n[[phases]]\nname = \"main\"\n\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 8\n\n[[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 100.0\nrandom = 100.0\ndelay = \"20ms\"\nburst = 5\n";
    std::fs::write(&profile, text).unwrap();
    for args in [
        vec!["-t", "mem:16m", "--bs", "4k", "--qd", "8", "--thinktime", "20ms", "--thinktime-blocks", "5", "--time", "2s"],
        vec!["-t", "mem:16m", "--profile-file", profile.to_str().unwrap(), "--time", "2s"],
    ] {
        let records = traced(&args);
        // Bursts: runs of I/Os issued without a pause of 15 ms or more between them.
        let mut bursts = vec![1usize];
        for w in records.windows(2) {
            if w[1].t_ns - w[0].t_ns >= 15_000_000 {
                bursts.push(1);
            } else {
                *bursts.last_mut().unwrap() += 1;
            }
        }
        assert!(bursts.len() >= 40 && bursts.len() <= 101, "{args:?}: {} bursts in 2 s with 20 ms pauses", bursts.len());
        assert!(bursts.iter().all(|&b| b <= 5), "{args:?}: a burst longer than 5: {bursts:?}");
        assert!(bursts[..bursts.len() - 1].iter().filter(|&&b| b == 5).count() >= bursts.len() - 2, "{args:?}: {bursts:?}");
    }
}

#[test]
fn settings_show_in_the_dry_run_and_survive_a_profile_round_trip() {
    let out = run(&["run", "-t", "mem:16m", "--dist", "zipf:1.2", "--thinktime", "2ms", "--thinktime-blocks", "4", "--dry-run"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("random offsets zipf:1.2 (hot blocks scattered"), "{text}");
    assert!(text.contains("pauses 2ms after every 4 I/Os"), "{text}");
    let out = run(&["run", "-t", "mem:16m", "--rate", "500", "--arrivals", "poisson", "--dry-run"]);
    assert!(stdout(&out).contains("rate 500 IOPS (Poisson arrivals)"), "{}", stdout(&out));
    // A fio job file's skew and think time become a profile that reads back the same.
    let dir = shm_dir();
    let job = dir.path().join("skew.fio");
    std::fs::write(&job, "[db]\nrw=randread\nsize=16m\nrandom_distribution=zoned:80/20:20/80\nthinktime=1ms\nthinktime_blocks=8\n")
        .unwrap();
    let out = run(&["profiles", "import-fio", job.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let toml = dir.path().join("skew.toml");
    std::fs::write(&toml, &out.stdout).unwrap();
    let shown = stdout(&out);
    assert!(shown.contains("dist = \"zoned:80/20:20/80\"") && shown.contains("thinktime = \"1ms\""), "{shown}");
    let out = run(&["run", "-t", "mem:16m", "--profile-file", toml.to_str().unwrap(), "--dry-run"]);
    let text = stdout(&out);
    assert!(text.contains("random offsets zoned:80/20:20/80") && text.contains("pauses 1ms after every 8 I/Os"), "{text}{}", stderr(&out));
}

#[test]
fn bad_settings_are_refused_before_the_run_with_what_is_allowed() {
    for (args, says) in [
        (vec!["--dist", "zipf:0"], "--dist"),
        (vec!["--dist", "lognormal:2"], "uniform, zipf:THETA"),
        (vec!["--dist", "zipf:0.9", "--bs", "4k", "--random", "0"], "no access line of this workload is random"),
        (vec!["--arrivals", "poisson"], "add --rate"),
        (vec!["--arrivals", "bursty", "--rate", "10"], "fixed"),
        (vec!["--thinktime-blocks", "4"], "--thinktime"),
        (vec!["--thinktime", "1ms", "--rate", "100"], "use one of them"),
        (vec!["--thinktime", "1ms", "--thinktime-blocks", "0"], "at least 1"),
        // fio's thinktime is in µs: a bare number is refused, not read as seconds.
        (vec!["--thinktime", "5"], "give a unit: 5ms, 500us"),
    ] {
        let mut all = vec!["run", "-q", "--no-store", "-t", "mem:16m", "--time", "200ms", "--ramp", "0"];
        all.extend_from_slice(&args);
        let out = run(&all);
        assert!(matches!(out.status.code(), Some(1) | Some(2)), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

/// `lab cache` with a skewed stream (--dist; the lab's default is uniform, as
/// Jetstress spreads its I/O): a quarter of the LUN cached hits far more than
/// a quarter of the reads, the exact LRU prediction stands beside it, and the
/// disks' read and write times are the ones asked for.
#[test]
fn the_cache_lab_takes_a_skewed_stream_and_read_and_write_delays() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let labs = shm_dir();
    let out = lab_cache(labs.path(), &store, &["--lun-size", "16m", "--read-delay", "2ms", "--write-delay", "0ms"])
        .args(["--cache-sizes", "25", "--time", "1s", "--ramp", "1s", "-q", "--read", "100", "--dist", "zipf:0.9"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("a read holds its disk 2 ms, a write 0 ms") && text.contains("random offsets zipf:0.9"), "{text}");
    let row = &cache_table_rows(&text, &["25"])[0];
    let pct = |i: usize| row[i].trim_end_matches('%').parse::<f64>().unwrap();
    assert!(pct(6) > 50.0, "zipf 0.9: a 25% cache hits {}% of the reads", pct(6));
    assert!((pct(6) - pct(7)).abs() < 3.0, "prediction beside measurement: {row:?}");
    assert_lab_left_nothing(labs.path());
    let out = run(&["--store", store.to_str().unwrap(), "lab", "cache", "--write-delay", "500us", "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--write-delay: '500us'") && stderr(&out).contains("whole milliseconds"), "{}", stderr(&out));
}

/// A hot band of 10% taking 90% of the accesses crosses the region in 2 s:
/// at 1.0-1.2 s the accesses are around the middle, at 0-0.2 s at the start.
#[test]
fn the_hot_band_crosses_the_region_with_time() {
    let region = 16u64 << 20;
    let records = traced(&["-t", "mem:16m", "--bs", "4k", "--random", "100", "--dist", "hotband:10%/90%/2s", "--time", "2s"]);
    let share = |from_s: f64, to_s: f64, lo: f64, hi: f64| {
        let window: Vec<&TraceRecord> =
            records.iter().filter(|r| (r.t_ns as f64 / 1e9) >= from_s && (r.t_ns as f64 / 1e9) < to_s).collect();
        assert!(window.len() > 1000, "{} I/Os in {from_s}..{to_s} s", window.len());
        let inside = window.iter().filter(|r| r.offset as f64 >= lo * region as f64 && (r.offset as f64) < hi * region as f64).count();
        inside as f64 / window.len() as f64
    };
    // 90% in the band plus the uniform rest's share of the 20% window around it.
    for (from_s, lo, hi) in [(0.0, 0.0, 0.2), (1.0, 0.5, 0.7)] {
        let got = share(from_s, from_s + 0.2, lo, hi);
        assert!(got > 0.88, "{from_s} s: {got} of the accesses in {lo}..{hi} of the region");
    }
    assert!(share(1.0, 1.2, 0.0, 0.2) < 0.1, "the band has left the start");
}

/// I/O records of a lunmark trace (time-gap records left out).
fn trace_records(path: &Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"LMTRACE1");
    bytes[16..].chunks_exact(20).filter(|r| r[4] != 2).count()
}

/// `--ios N` issues no I/O past the N-th: the trace holds exactly the I/Os the
/// result counts, per worker, at any depth (before, up to QD-1 more that were
/// still in flight when the N-th completed).
#[test]
fn a_trace_of_an_ios_run_holds_exactly_the_counted_ios() {
    let dir = shm_dir();
    for (workers, qd) in [("1", "32"), ("2", "16"), ("1", "1")] {
        let trace = dir.path().join(format!("t-{workers}-{qd}"));
        let json = dir.path().join("r.json");
        let out = run(&[
            "run",
            "-q",
            "--no-store",
            "-t",
            "mem:16m",
            "--bs",
            "4k",
            "--read",
            "70",
            "--workers",
            workers,
            "--qd",
            qd,
            "--ios",
            "1000",
            "--ramp",
            "0",
            "--trace",
            trace.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let s = &read_json(&json)["points"][0]["summary"];
        let counted = s["ios_read"].as_u64().unwrap() + s["ios_written"].as_u64().unwrap();
        let w: usize = workers.parse().unwrap();
        assert_eq!(counted, 1000 * w as u64, "{workers} workers at QD {qd}: {s}");
        assert_eq!(trace_records(&trace), 1000 * w, "{workers} workers at QD {qd}: one record per counted I/O");
    }
}
