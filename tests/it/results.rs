//! Results: the store, browsing, compare, and the HTML report in a real browser.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// A store of this test's own.
struct Store {
    dir: tempfile::TempDir,
}

impl Store {
    fn new() -> Store {
        Store { dir: shm_dir() }
    }
    fn path(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }
    fn run(&self, args: &[&str]) -> Output {
        with_store(&self.path(), args)
    }
    /// Runs lunmark, returns the id it saved the result as.
    fn measure(&self, args: &[&str]) -> String {
        let out = self.run(&[&["run", "-q"][..], args].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        saved_id(&out)
    }
    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

#[test]
fn a_result_round_trips_through_the_store() {
    let s = Store::new();
    let json = s.dir.path().join("r.json");
    let id = s.measure(&[
        "-t",
        "mem:16m",
        "--read",
        "100",
        "--sweep",
        "qd=1,4",
        "--time",
        "500ms",
        "--ramp",
        "0",
        "--label",
        "first",
        "--json",
        json.to_str().unwrap(),
    ]);
    let written = read_json(&json);
    let exported = s.json(&["results", "export", &id[..6], "--format", "json"]);
    assert_eq!(written, exported, "the stored result equals the one written by --json");
    let id2 = s.measure(&["-t", "mem:16m", "--read", "100", "--time", "300ms", "--ramp", "0"]);
    let list = stdout(&s.run(&["results", "list"]));
    assert!(list.contains(&id) && list.contains(&id2) && list.contains("first"), "{list}");
    let csv = stdout(&s.run(&["results", "export", &id, "--format", "csv"]));
    assert_eq!(csv.lines().count(), 3, "header and two points: {csv}");
    assert!(csv.lines().next().unwrap().starts_with("id,label,profile,started_at,status,point,param_qd,bs,read_pct"), "{csv}");
    // Trims and syncs have their columns: counts, rates and latency, equal to the result's own.
    let file = s.dir.path().join("t.dat");
    let id3 = s.measure(&[
        "-t",
        file.to_str().unwrap(),
        "--size",
        "16m",
        "--bs",
        "4k",
        "--read",
        "50",
        "--trim",
        "20",
        "--fsync",
        "8",
        "--ios",
        "4000",
        "--ramp",
        "0",
    ]);
    let with_trims = stdout(&s.run(&["results", "export", &id3, "--format", "csv"]));
    let sum = s.json(&["results", "export", &id3, "--format", "json"])["points"][0]["summary"].clone();
    let header: Vec<&str> = with_trims.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = with_trims.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| -> f64 {
        let i = header.iter().position(|c| *c == name).unwrap_or_else(|| panic!("no {name} column: {with_trims}"));
        row[i].parse().unwrap_or_else(|_| panic!("{name} = {:?}", row[i]))
    };
    assert!(sum["ios_trimmed"].as_u64().unwrap() > 0 && sum["ios_synced"].as_u64().unwrap() > 0, "{sum}");
    assert_eq!(col("ios_trimmed"), sum["ios_trimmed"].as_f64().unwrap());
    assert_eq!(col("ios_synced"), sum["ios_synced"].as_f64().unwrap());
    assert!((col("trim_iops") - sum["trim_iops"].as_f64().unwrap()).abs() <= 1e-3 * sum["trim_iops"].as_f64().unwrap());
    assert!((col("sync_per_s") - sum["sync_per_s"].as_f64().unwrap()).abs() <= 1e-3 * sum["sync_per_s"].as_f64().unwrap());
    for (op, stat) in [("trim", "mean"), ("trim", "p99"), ("sync", "mean"), ("sync", "p99")] {
        let want = sum["latency_us"][op][stat].as_f64().unwrap();
        assert!(want > 0.0 && (col(&format!("lat_{op}_{stat}_us")) - want).abs() <= 1e-3 * want + 1e-3, "lat_{op}_{stat}_us");
    }
    // A point without trims leaves their latency empty (not 0) and counts 0 of them.
    let first: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let point1: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let at = |name: &str| point1[first.iter().position(|c| *c == name).unwrap()];
    assert_eq!((at("ios_trimmed"), at("lat_trim_mean_us"), at("lat_sync_p99_us")), ("0", "", ""), "{csv}");
    let md = stdout(&s.run(&["results", "export", &id, "--format", "md"]));
    assert!(md.starts_with("| id | label |") && md.contains("qd=4"), "{md}");

    // Import into another store, delete from the first.
    let other = Store::new();
    let out = other.run(&["results", "import", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(other.json(&["results", "export", &id, "--format", "json"]), written);
    let out = other.run(&["results", "import", json.to_str().unwrap()]);
    assert!(stderr(&out).contains("already in"), "{}", stderr(&out));
    assert!(s.run(&["results", "delete", &id]).status.success());
    let out = s.run(&["results", "show", &id]);
    assert!(!out.status.success() && stderr(&out).contains("no result with id"), "{}", stderr(&out));
}

#[test]
fn ids_resolve_by_unique_prefix_and_ambiguity_is_explained() {
    let s = Store::new();
    // 17 ids: two share their first hex digit (pigeonhole).
    let ids: Vec<String> = (0..17).map(|_| s.measure(&["-t", "mem:1m", "--read", "100", "--time", "100ms", "--ramp", "0"])).collect();
    let first: Vec<char> = ids.iter().map(|i| i.chars().next().unwrap()).collect();
    let shared = first.iter().find(|c| first.iter().filter(|d| d == c).count() > 1).expect("17 ids over 16 digits");
    let out = s.run(&["results", "show", &shared.to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("matches") && stderr(&out).contains("give more digits"), "{}", stderr(&out));
    let out = s.run(&["results", "show", &ids[0][..10]]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// SIGKILL in the middle of a sweep: the store stays readable and holds the
/// points that finished.
#[test]
fn sigkill_mid_sweep_leaves_a_readable_store_with_finished_points() {
    let s = Store::new();
    let earlier = s.measure(&["-t", "mem:1m", "--read", "100", "--time", "100ms", "--ramp", "0"]);
    let child = lunmark()
        .env("LUNMARK_STORE", s.path())
        .args(["run", "-q", "-t", "mem:16m", "--read", "100", "--sweep", "qd=1,2,4,8,16", "--time", "1s", "--ramp", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once two points are stored (a fixed sleep raced a slow start on a
    // loaded machine), while the third of five runs.
    let stored = |s: &Store| -> Option<(String, Value)> {
        let list = stdout(&s.run(&["results", "list"]));
        let id = list.lines().find(|l| l.contains("running"))?.split_whitespace().nth(1)?.to_string();
        let r = s.json(&["results", "export", &id, "--format", "json"]);
        Some((id, r))
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let two_stored = |s: &Store| stored(s).is_some_and(|(_, r)| r["points"].as_array().is_some_and(|p| p.len() >= 2));
    while !two_stored(&s) {
        assert!(std::time::Instant::now() < deadline, "the sweep stored two points within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    signal(&child, libc::SIGKILL);
    let _ = child.wait_with_output();
    let list = stdout(&s.run(&["results", "list"]));
    assert!(list.contains(&earlier), "earlier result intact: {list}");
    let (_, r) = stored(&s).unwrap_or_else(|| panic!("the killed run is listed as running: {list}"));
    let points = r["points"].as_array().unwrap();
    assert!((2..5).contains(&points.len()), "finished points kept: {}", points.len());
    assert_eq!(points[0]["params"]["qd"], 1);
    assert!(points[1]["summary"]["iops"].as_f64().unwrap() > 0.0);
}

/// Two real runs of one workload on two targets: percent and ratio as
/// METHODOLOGY.md defines them, and the right direction per metric.
#[test]
fn compare_computes_difference_ratio_and_direction() {
    let s = Store::new();
    let file = s.dir.path().join("lun");
    let common = ["--read", "100", "--qd", "8", "--time", "1s", "--ramp", "0"];
    let a = s.measure(&[&["-t", "mem:16m", "--label", "mem"][..], &common].concat());
    let b = s.measure(&[&["-t", file.to_str().unwrap(), "--size", "16m", "--label", "tmpfs"][..], &common].concat());
    let c = s.json(&["compare", &a, &b, "--format", "json"]);
    assert_eq!(c["results"], serde_json::json!(["mem", "tmpfs"]));
    let base = s.json(&["results", "export", &a]);
    let other = s.json(&["results", "export", &b]);
    let rows = c["points"][0]["rows"].as_array().unwrap();
    let row = |m: &str| rows.iter().find(|r| r["metric"] == m).unwrap_or_else(|| panic!("no {m}"));
    let check = |metric: &str, path: &[&str], higher_better: bool| {
        let get = |r: &Value| path.iter().fold(&r["points"][0]["summary"], |v, k| &v[*k]).as_f64().unwrap();
        let (x, y) = (get(&base), get(&other));
        let r = row(metric);
        assert_eq!(r["baseline"].as_f64().unwrap(), x);
        let v = &r["versus"][0];
        assert!((v["diff_pct"].as_f64().unwrap() - (y - x) / x * 100.0).abs() < 1e-9, "{metric} diff");
        assert!((v["ratio"].as_f64().unwrap() - y / x).abs() < 1e-12, "{metric} ratio");
        let better = if higher_better { y > x } else { y < x };
        // Equal figures are "same" (CPU at 100% on both sides of a saturated host),
        // and so are figures whose difference shows as 0.0%.
        let want = if x == y || ((y - x) / x * 100.0).abs() < 0.05 {
            "same"
        } else if better {
            "better"
        } else {
            "worse"
        };
        assert_eq!(v["verdict"], want, "{metric}: {x} vs {y}");
        assert_eq!(v["significance"], "unknown (no repeats)", "{metric}");
        assert_eq!(r["better"], if higher_better { "higher" } else { "lower" });
    };
    check("IOPS", &["iops"], true);
    check("MB/s", &["mbps"], true);
    check("latency p99", &["latency_us", "all", "p99"], false);
    check("CPU", &["cpu", "utilization_pct"], false);
    check("IOPS per CPU%", &["cpu", "iops_per_cpu_pct"], true);
    check("service demand", &["cpu", "service_demand_us_per_kb"], false);
    let table = stdout(&s.run(&["compare", &a, &b]));
    assert!(table.contains("mem (baseline)") && table.contains("tmpfs"), "{table}");
    let md = stdout(&s.run(&["compare", &a, &b, "--format", "md"]));
    assert!(md.contains("| IOPS | IO/s |"), "{md}");

    // A different workload is refused, naming the difference.
    let d = s.measure(&["-t", "mem:16m", "--read", "70", "--qd", "8", "--time", "300ms", "--ramp", "0"]);
    let out = s.run(&["compare", &a, &d]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("groups[0].access[0].read: 100.0 vs 70.0") && stderr(&out).contains("--force"), "{}", stderr(&out));
    assert!(s.run(&["compare", &a, &d, "--force"]).status.success());
    // `report` compares them too with --force, and says how when it leaves one out.
    let md = s.dir.path().join("r.md");
    let report = |force: &[&str]| {
        let out = s.run(&[&["report", &a, &d, "--format", "md", "-o", md.to_str().unwrap()][..], force].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        std::fs::read_to_string(&md).unwrap()
    };
    let left_out = report(&[]);
    assert!(left_out.contains("is not compared") && left_out.contains("report --force") && !left_out.contains("### point"), "{left_out}");
    let forced = report(&["--force"]);
    assert!(forced.contains("compared anyway (--force)") && forced.contains("### point"), "{forced}");
    // A result given twice (by its id and a prefix of it) would be compared with itself: refused, naming both.
    let html = s.dir.path().join("r.html");
    for args in [vec!["compare", &a, &a[..8]], vec!["report", &a, &a[..8], "-o", html.to_str().unwrap()]] {
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let want = format!("'{a}' and '{}' are the same result ({a})", &a[..8]);
        assert!(stderr(&out).contains(&want) && stderr(&out).contains("give each result once"), "{}", stderr(&out));
    }
    assert!(!html.exists());
}

/// Repeats: Welch's t-test at 95% marks each difference. qd 1 against qd 128
/// on mem: (compared with --force): queueing makes mean latency about 100x,
/// significant in every format; the t and degrees of freedom are Welch's on the
/// stored repeats. The same stored result imported again under another id
/// gives t = 0: nothing is significant.
#[test]
fn compare_tests_significance_over_repeats() {
    let s = Store::new();
    let run = |qd: &str| s.measure(&["-t", "mem:16m", "--read", "100", "--qd", qd, "--repeat", "5", "--time", "200ms", "--ramp", "0"]);
    let (a, b) = (run("1"), run("128"));
    let c = s.json(&["compare", &a, &b, "--force", "--format", "json"]);
    assert!(c["significance_rule"].as_str().unwrap().contains("Welch"), "{c}");
    let rows = c["points"][0]["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["versus"][0]["p_value"].is_f64()), "every metric is tested: {c}");
    let lat = rows.iter().find(|r| r["metric"] == "latency mean").unwrap();
    let v = &lat["versus"][0];
    assert_eq!(v["significance"], "significant", "{lat}");
    assert_eq!(v["verdict"], "worse", "{lat}");
    assert!(v["p_value"].as_f64().unwrap() < 0.05, "{lat}");
    // Welch's t and df from the stored spreads.
    let spread = |id: &str| {
        let r = s.json(&["results", "export", id]);
        let f = &r["points"][0]["repeats"]["figures"]["latency_us.all.mean"];
        (f["mean"].as_f64().unwrap(), f["stdev"].as_f64().unwrap(), f["n"].as_f64().unwrap())
    };
    let ((m1, s1, n1), (m2, s2, n2)) = (spread(&a), spread(&b));
    let (v1, v2) = (s1 * s1 / n1, s2 * s2 / n2);
    let t = (m2 - m1) / (v1 + v2).sqrt();
    let df = (v1 + v2).powi(2) / (v1 * v1 / (n1 - 1.0) + v2 * v2 / (n2 - 1.0));
    assert_eq!(n1, 5.0);
    assert!((v["t"].as_f64().unwrap() - t).abs() < 1e-9 * t.abs(), "t {t}: {lat}");
    assert!((v["df"].as_f64().unwrap() - df).abs() < 1e-9 * df, "df {df}: {lat}");
    // The other formats carry it and state the rule.
    let table = stdout(&s.run(&["compare", &a, &b, "--force"]));
    assert!(table.contains("significance: Welch's t-test") && table.contains("worse"), "{table}");
    let md = stdout(&s.run(&["compare", &a, &b, "--force", "--format", "md"]));
    assert!(md.contains("| p |") && md.contains("significance: Welch's t-test"), "{md}");
    let csv = stdout(&s.run(&["compare", &a, &b, "--force", "--format", "csv"]));
    assert!(
        csv.starts_with(
            "point,metric,unit,better,result,value,baseline,diff_pct,ratio,verdict,significance,p_value,baseline_basis,basis\n"
        ),
        "{csv}"
    );
    assert!(csv.lines().any(|l| l.contains(",latency mean,") && l.contains(",worse,significant,")), "{csv}");

    // The same figures under another id: t = 0, p = 1, nothing significant.
    let mut copy = s.json(&["results", "export", &a]);
    let twin = "0123456789ab";
    copy["id"] = twin.into();
    let file = s.dir.path().join("twin.json");
    std::fs::write(&file, copy.to_string()).unwrap();
    let out = s.run(&["results", "import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let c = s.json(&["compare", &a, twin, "--format", "json"]);
    for row in c["points"][0]["rows"].as_array().unwrap() {
        let v = &row["versus"][0];
        assert_eq!(v["significance"], "not significant", "{row}");
        assert_eq!(v["verdict"], "not significant", "{row}");
        assert_eq!(v["p_value"].as_f64(), Some(1.0), "{row}");
    }
}

/// Without repeats significance is unknown, and said; runs that differ only in
/// run time or ramp are compared with a note instead of refused.
#[test]
fn compare_without_repeats_and_with_other_run_times() {
    let s = Store::new();
    let a = s.measure(&["-t", "mem:16m", "--read", "100", "--time", "1s", "--ramp", "0"]);
    let b = s.measure(&["-t", "mem:16m", "--read", "100", "--time", "300ms", "--ramp", "200ms"]);
    let out = s.run(&["compare", &a, &b]);
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert!(table.contains("significance: unknown (no repeats)"), "{table}");
    assert!(table.contains("note: ") && table.contains("run.time: 1s vs 300ms") && table.contains("ramp: 0s vs 200ms"), "{table}");
    let c = s.json(&["compare", &a, &b, "--format", "json"]);
    assert_eq!(c["points"][0]["rows"][0]["versus"][0]["significance"], "unknown (no repeats)");
    assert!(c["points"][0]["rows"][0]["versus"][0]["p_value"].is_null());
    assert_eq!(c["notes"].as_array().unwrap().len(), 1, "{c}");
}

/// The report opened in real headless Chromium: no console errors, every chart's
/// SVG present with data marks, and a screenshot that is not blank.
#[test]
fn the_report_renders_in_a_real_browser() {
    let s = Store::new();
    let file = s.dir.path().join("lun");
    let common = ["--read", "100", "--sweep", "bs=4k,64k", "--sweep", "qd=1,8", "--time", "500ms", "--ramp", "0"];
    let a = s.measure(&[&["-t", "mem:64m", "--label", "mem: (no kernel)"][..], &common].concat());
    let b = s.measure(&[&["-t", file.to_str().unwrap(), "--size", "64m", "--label", "tmpfs file"][..], &common].concat());
    let html = s.dir.path().join("report.html");
    let out = s.run(&["report", &a, &b, "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&html).unwrap();
    // Self-contained: no external resource (xmlns URIs are names, not fetches).
    for fetch in ["src=\"http", "href=\"http", "url(http", "@import", "<link"] {
        assert!(!text.contains(fetch), "the report fetches something: {fetch}");
    }

    let url = format!("file://{}", html.display());
    let dom = chromium(&["--enable-logging=stderr", "--v=1", "--dump-dom", &url]);
    let dom_text = stdout(&dom);
    let log = stderr(&dom);
    assert!(!log.lines().any(|l| l.contains("CONSOLE") && (l.contains("rror") || l.contains("Uncaught"))), "console errors: {log}");
    assert!(!log.contains("Failed to load resource"), "the page fetched something: {log}");
    let figures: Vec<&str> = dom_text.split("<figure").skip(1).collect();
    assert!(figures.len() >= 7, "charts: {}", figures.len());
    for f in &figures {
        assert!(f.contains("<svg"), "a chart without SVG");
        let marks = f.matches("<rect").count() + f.matches("<polyline").count() + f.matches("<circle").count();
        assert!(marks > 5, "a chart without data marks: {}", &f[..200.min(f.len())]);
    }
    for label in ["mem: (no kernel)", "tmpfs file", "IOPS (I/O per second)", "latency (µs)", "bs=64k qd=8", "outstanding I/Os"] {
        assert!(dom_text.contains(label) || text.contains(label), "missing label {label}");
    }

    let png = s.dir.path().join("report.png");
    let shot = chromium(&["--enable-logging=stderr", "--v=1", "--window-size=1240,3400", &format!("--screenshot={}", png.display()), &url]);
    assert!(png.exists(), "{}", stderr(&shot));
    let (colors, ink) = picture_stats(&png);
    assert!(colors > 8, "a blank screenshot: {colors} colours");
    assert!(ink > 0.03, "a blank screenshot: {:.1}% non-white", ink * 100.0);
    if std::env::var_os("LUNMARK_KEEP_SCREENSHOT").is_some() {
        std::fs::copy(&png, concat!(env!("CARGO_MANIFEST_DIR"), "/docs/report.png")).unwrap();
    }
}

/// `--format md`: Markdown with the charts as SVG files beside it; a transfer-size
/// sweep gives bars by transfer size.
#[test]
fn the_markdown_report_has_svg_files_beside_it() {
    let s = Store::new();
    let common = ["--read", "100", "--sweep", "bs=4k,16k,64k", "--time", "300ms", "--ramp", "0"];
    let a = s.measure(&[&["-t", "mem:16m", "--label", "one"][..], &common].concat());
    let b = s.measure(&[&["-t", "null:16m", "--label", "two"][..], &common].concat());
    let md = s.dir.path().join("rep.md");
    assert!(s.run(&["report", &a, &b, "--format", "md", "-o", md.to_str().unwrap()]).status.success());
    let text = std::fs::read_to_string(&md).unwrap();
    let svgs: Vec<&str> =
        text.lines().filter_map(|l| l.strip_prefix("![")).filter_map(|l| l.split("](").nth(1)).map(|l| l.trim_end_matches(')')).collect();
    assert!(svgs.len() >= 5, "{text}");
    for f in svgs {
        let svg = std::fs::read_to_string(s.dir.path().join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("<rect"), "{f}");
    }
    let bars = std::fs::read_to_string(s.dir.path().join("rep-iops.svg")).unwrap();
    assert!(bars.contains("transfer size") && bars.contains("16k") && bars.contains("one") && bars.contains("two"));
}

/// (distinct colours, share of non-white pixels) of a PNG.
fn picture_stats(path: &Path) -> (usize, f64) {
    let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let mut colors = std::collections::HashSet::new();
    let mut ink = 0usize;
    let pixels = buf[..info.buffer_size()].chunks(channels);
    let total = pixels.len();
    for px in pixels {
        colors.insert(px[..3].to_vec());
        if px[..3].iter().any(|&c| c < 240) {
            ink += 1;
        }
    }
    (colors.len(), ink as f64 / total as f64)
}

/// Spawns lunmark with stdout piped and the pipe closed at once (as `| head -0`
/// would), then waits: the output of the command on stderr, and its exit.
fn closed_stdout_in(s: &Store, args: &[&str]) -> (String, std::process::ExitStatus) {
    let out = with_stdout_closed(lunmark().env("LUNMARK_STORE", s.path()).args(args));
    (stderr(&out), out.status)
}

#[test]
fn a_closed_stdout_ends_listing_quietly_and_a_run_still_saves() {
    let s = Store::new();
    let id = s.measure(&["-t", "mem:16m", "--time", "300ms", "--ramp", "0"]);
    let (err, status) = closed_stdout_in(&s, &["results", "list"]);
    assert!(!err.contains("panicked"), "results list panicked on a closed stdout: {err}");
    assert_ne!(status.code(), Some(101), "{err}");
    assert!(err.is_empty(), "results list should end quietly on a closed stdout: {err}");

    let (err, status) = closed_stdout_in(&s, &["run", "-t", "mem:16m", "--time", "1s", "--ramp", "0"]);
    assert!(!err.contains("panicked"), "run panicked on a closed stdout: {err}");
    assert_ne!(status.code(), Some(101), "{err}");
    assert!(err.contains("stdout was closed"), "the failed print is not reported: {err}");
    let saved = err.lines().find(|l| l.starts_with("saved as ")).unwrap_or_else(|| panic!("no 'saved as' in: {err}"));
    let new_id = saved.split_whitespace().nth(2).unwrap();
    let list = stdout(&s.run(&["results", "list"]));
    assert!(list.contains(&id) && list.contains(new_id), "the run with a closed stdout was not saved: {list}");

    // With --json -, what stdout lost is the JSON result (the summary went to stderr); it said "the summary".
    let (err, _) = closed_stdout_in(&s, &["run", "-t", "mem:16m", "--time", "300ms", "--ramp", "0", "--json", "-"]);
    assert!(err.contains("error: the JSON result was not printed: stdout was closed (broken pipe)"), "{err}");
    assert!(!err.contains("the summary was not printed"), "{err}");
}

/// Runs lunmark, killing it (by its own handle) if it has not ended in 20 s.
fn run_bounded(s: &Store, args: &[&str]) -> Output {
    output_within(lunmark().env("LUNMARK_STORE", s.path()).args(args), 20)
}

#[test]
fn import_refuses_what_is_not_a_regular_file_of_sane_size() {
    let s = Store::new();
    let out = run_bounded(&s, &["results", "import", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev/zero is a character device"), "{}", stderr(&out));

    let out = run_bounded(&s, &["results", "import", s.dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));

    // Sparse: takes no memory on tmpfs.
    let big = s.dir.path().join("big.json");
    let size = (1u64 << 30) + 1;
    std::fs::File::create(&big).unwrap().set_len(size).unwrap();
    let out = run_bounded(&s, &["results", "import", big.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("big.json is {size} bytes")), "{err}");
}

/// A result edited so that its figures disagree (or a field is missing) is
/// refused, each naming the field by its JSON path; nothing is imported.
#[test]
fn import_refuses_inconsistent_figures_and_names_each_field() {
    let s = Store::new();
    let golden = format!("{}/tests/golden/result-a.json", env!("CARGO_MANIFEST_DIR"));
    let base: Value = serde_json::from_str(&std::fs::read_to_string(golden).unwrap()).unwrap();
    type Edit = fn(&mut Value);
    let cases: &[(&str, Edit, &str)] = &[
        ("duration 0", |r| r["points"][0]["summary"]["duration_s"] = 0.into(), "points[0].summary.duration_s is 0, but the point has"),
        ("iops x10", |r| r["points"][0]["summary"]["iops"] = 44256640.0.into(), "points[0].summary.iops is 44256640, but its 4425664 I/Os"),
        ("yesterday", |r| r["started_at"] = "yesterday".into(), "started_at is 'yesterday', not an RFC 3339 date-time"),
        ("year 9999", |r| r["started_at"] = "9999-01-01T00:00:00Z".into(), "started_at is 9999-01-01T00:00:00Z, which no run started at"),
        ("year 1990", |r| r["started_at"] = "1990-01-01T00:00:00Z".into(), "started_at is 1990-01-01T00:00:00Z, which no run started at"),
        ("end first", |r| r["finished_at"] = "2026-11-22T18:00:00Z".into(), "finished_at is 2026-11-22T18:00:00Z, before started_at"),
        ("no points", |r| r["points"] = Value::Array(vec![]), "points is empty, but status is completed"),
        ("no id", |r| drop(r.as_object_mut().unwrap().remove("id")), "id: missing field `id`"),
        (
            "no iops",
            |r| drop(r["points"][1]["summary"].as_object_mut().unwrap().remove("iops")),
            "points[1].summary.iops: missing field `iops`",
        ),
        (
            "wrong type",
            |r| r["points"][0]["summary"]["ios_read"] = "many".into(),
            "points[0].summary.ios_read: invalid type: string \"many\"",
        ),
    ];
    for (name, edit, said) in cases {
        let mut r = base.clone();
        edit(&mut r);
        let file = s.dir.path().join("edited.json");
        std::fs::write(&file, serde_json::to_string_pretty(&r).unwrap()).unwrap();
        let out = s.run(&["results", "import", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}{}", stdout(&out), stderr(&out));
        assert!(stderr(&out).contains(said), "{name}: {}", stderr(&out));
    }
    assert!(!s.path().exists() || !stdout(&s.run(&["results", "list", "--format", "csv"])).contains(base["id"].as_str().unwrap()));
}

/// `results export` of several ids writes an array; importing it back adds
/// every result, refused as a whole when one is already there.
#[test]
fn a_multi_result_export_imports_back() {
    let s = Store::new();
    let args = ["-t", "mem:16m", "--read", "100", "--time", "100ms", "--ramp", "0"];
    let (a, b) = (s.measure(&args), s.measure(&args));
    let file = s.dir.path().join("both.json");
    let out = s.run(&["results", "export", &a, &b]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&file, &out.stdout).unwrap();
    let other = Store::new();
    let out = other.run(&["results", "import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("imported {a} (1 point)\nimported {b} (1 point)\n"));
    let back: Value = other.json(&["results", "export", &a, &b]);
    let before: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(back, before, "the results changed on the way");
    let again = other.run(&["results", "import", file.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains(&format!("result {a} (result [0]) is already in")), "{}", stderr(&again));
}

/// Two results with no point in common (one a `qd` sweep, one a plain run):
/// `compare` compared nothing and exited 0; it is an error naming the points.
#[test]
fn compare_with_no_point_in_common_fails_and_says_why() {
    let s = Store::new();
    let common = ["-t", "mem:16m", "--read", "100", "--time", "200ms", "--ramp", "0"];
    let a = s.measure(&[&common[..], &["--sweep", "qd=1,2"]].concat());
    let b = s.measure(&common);
    let out = s.run(&["compare", &a, &b, "--force"]);
    assert!(!out.status.success(), "exit 0 with nothing compared:\n{}", stdout(&out));
    let e = stderr(&out);
    assert!(e.contains("no point is in every result, so nothing was compared") && e.contains("qd=1 (not in every result)"), "{e}");
    assert_eq!(e.matches("error").count(), 1, "{e}");
}
