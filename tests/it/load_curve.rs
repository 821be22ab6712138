//! The load-latency curve (`--curve`, `--curve-stop`; issue 28) against an
//! nbdkit server of known shape: every read takes 4 ms (the delay filter) and
//! at most 4 are served at once, so its capacity is about 1,000 IOPS; paced
//! below it, reads take about the service time, and at the maximum rate (16
//! outstanding) about 16 ms.

use crate::common::*;

fn known_shape(dir: &std::path::Path) -> Nbdkit {
    Nbdkit::unix(dir, "64M", &["--threads", "4", "--filter=delay", "delay-read=4ms"])
}

fn curve_args<'a>(uri: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "-q", "-t", uri, "--bs", "4k", "--read", "100", "--qd", "16", "--time", "1s", "--ramp", "300ms"];
    a.extend(extra);
    a
}

#[test]
fn the_curve_paces_each_percentage_of_the_maximum_and_the_report_draws_it() {
    let dir = shm_dir();
    let server = known_shape(dir.path());
    let store = dir.path().join("s.db");
    let out = with_store(&store, &curve_args(&server.uri, &["--curve", "25,50", "--curve-stop", "lat_p99<2s"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let id = saved_id(&out);
    let r = stored(&store, &id);
    let c = &r["curve"];
    let max = c["max_iops"].as_f64().unwrap();
    assert!(max > 500.0 && max < 1_100.0, "4 reads of 4 ms at once: {c:#}");
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "the maximum, then 25% and 50%: {c:#}");
    assert!(points[0]["pct"].is_null() && points[0]["rate"].is_null());
    for (p, pct) in points[1..].iter().zip([25.0, 50.0]) {
        let asked = max * pct / 100.0;
        assert!((p["rate"].as_f64().unwrap() - asked).abs() < 1.0, "{p:#}");
        let got = p["iops"].as_f64().unwrap();
        assert!((got - asked).abs() <= 0.15 * asked, "paced at {pct}% of {max}: {got} IOPS: {p:#}");
        let idx = p["point"].as_u64().unwrap() as usize;
        assert_eq!(r["points"][idx]["params"]["curve_pct"], pct, "each point of the curve is a point of the result");
        assert_eq!(p["passed"], true);
    }
    // Below capacity a read takes about its 4 ms; at the maximum rate it waits behind 12 others.
    let p50_low = points[1]["p50_us"].as_f64().unwrap();
    let p50_max = points[0]["p50_us"].as_f64().unwrap();
    assert!(p50_low < 9_000.0 && p50_max > 1.5 * p50_low, "the hockey stick: {p50_low} us paced, {p50_max} us at the maximum");
    let text = stdout(&out);
    assert!(text.contains("load-latency curve (--curve 25,50, stop at lat_p99<2s)"), "{text}");
    // The report charts latency against achieved IOPS, the bound drawn.
    let html = dir.path().join("r.html");
    assert!(with_store(&store, &["report", &id, "-o", html.to_str().unwrap()]).status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Latency against achieved IOPS, load-latency curve of"), "the curve's chart");
    assert!(page.contains("bound lat_p99&lt;2s") || page.contains("bound lat_p99<2s"), "the bound drawn and named in the legend");
    assert!(page.contains("p99.9 latency"));
    // On a log latency axis (the saturated point does not flatten the paced ones), the knee drawn and named.
    let chart = figure(&page, "chart-curve-1");
    let words = texts(chart);
    assert!(words.iter().any(|t| t == "latency (µs, log scale)"), "{words:?}");
    assert!(words.iter().any(|t| t == "knee") && words.iter().any(|t| t.starts_with("knee ") && t != "knee"), "{words:?}");
    // The summary says which points are timed from their schedule.
    assert!(
        page.contains("from each I/O&#39;s scheduled time at the paced ones") && page.contains("curve_pct=25.0, curve_pct=50.0"),
        "{page}"
    );
    // And the curve's table and how it ended, as the terminal said them.
    let ended = text.lines().find(|l| l.starts_with("ended: ")).expect("the terminal says how the curve ended");
    assert!(page.contains("<h2>Load-latency curve: ") && page.contains(&ended.replace('<', "&lt;")), "{ended}");
    let md = dir.path().join("r.md");
    assert!(with_store(&store, &["report", &id, "--format", "md", "-o", md.to_str().unwrap()]).status.success());
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("## Load-latency curve: ") && md.contains(&format!("    {ended}")), "{md}");
}

#[test]
fn the_curve_stops_at_the_first_paced_point_breaking_a_bound() {
    let dir = shm_dir();
    let server = known_shape(dir.path());
    let json = dir.path().join("c.json");
    let mut args = curve_args(&server.uri, &["--curve", "25,50,90", "--curve-stop", "read_lat_avg<1ms", "--no-store", "--json"]);
    let path = json.to_str().unwrap().to_string();
    args.push(&path);
    let out = lunmark().args(&args).output().unwrap();
    assert!(out.status.success(), "a stopped curve is a completed run: {}", stderr(&out));
    let c = read_json(&json)["curve"].clone();
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "the maximum (saturated by design, not a stop), then 25%, which breaks 1 ms: {c:#}");
    assert_eq!(points[1]["passed"], false);
    assert!(c["ended"].as_str().unwrap().contains("stopped at 25% of the maximum"), "{c:#}");
}

#[test]
fn curve_flags_that_make_no_sense_are_refused() {
    let t = ["run", "-t", "mem:16m", "--bs", "4k", "--time", "1s"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { t.iter().copied().chain(extra.iter().copied()).collect() };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (with(&["--curve-stop", "lat_p99<5ms"]), "--curve-stop lat_p99<5ms ends a load-latency curve: add --curve"),
        (with(&["--curve", "0,50"]), "--curve 0,50: 0 is not above 0 and at most 100"),
        (with(&["--curve", "50", "--curve-stop", "p99<1ms"]), "unknown metric 'p99'"),
        (with(&["--curve", "50", "--rate", "100"]), "the curve sets the rates itself"),
        (with(&["--curve", "50", "--sla", "lat_p99<5ms"]), "use one of them per run"),
        (with(&["--curve", "50", "--sweep", "read=0,100"]), "this plan has 2 points"),
        (vec!["lab", "protocols", "--curve", "50", "--dry-run"], "a curve paces its own"),
    ];
    let cases: Vec<(&[&str], &str)> = cases.iter().map(|(a, s)| (a.as_slice(), *s)).collect();
    assert_refused(&cases);
    let out = run(&["run", "--dry-run", "--no-store", "-t", "mem:16m", "--bs", "4k", "--curve", "10,90", "--time", "2s", "--ramp", "1s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(
            "then paced at 10%, 90% of the IOPS it measured (latency from each I/O's scheduled time): 3 points; at most 9s in all"
        ),
        "{}",
        stdout(&out)
    );
}

/// The SVG of the report's figure `id`.
fn figure<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page.find(&format!("<figure id=\"{id}\">")).unwrap_or_else(|| panic!("no figure {id}"));
    &page[start..start + page[start..].find("</figure>").unwrap()]
}

/// A curve on mem: labelled `label`, kept in `store`: its id.
fn mem_curve(store: &std::path::Path, label: &str) -> String {
    let args = ["run", "-q", "-t", "mem:16m", "--bs", "4k", "--qd", "4", "--time", "300ms", "--ramp", "0s", "--label", label];
    let out = with_store(store, &[&args[..], &["--curve", "10,20", "--curve-stop", "lat_p99<10s"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    saved_id(&out)
}

/// Two curves on mem: labelled `labels`, kept in `store`, then compared
/// (which must succeed): their ids and compare's output.
fn compared_curves(store: &std::path::Path, labels: [&str; 2]) -> (String, String, std::process::Output) {
    let (a, b) = (mem_curve(store, labels[0]), mem_curve(store, labels[1]));
    let out = with_store(store, &["compare", &a, &b]);
    assert!(out.status.success(), "{}", stderr(&out));
    (a, b, out)
}

#[test]
fn two_curves_are_compared_side_by_side_and_drawn_on_one_chart() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    // Each curve is paced from its own maximum, so their paced points' rates differ: compared all the same.
    let (a, b, out) = compared_curves(&store, ["A", "B"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("load-latency curves side by side, by percentage of each one's own maximum (the first, A, is the baseline"),
        "{text}"
    );
    for row in ["│ max ", "│ 10% ", "│ 20% "] {
        let line = text.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no row {row}: {text}"));
        let ratios = line.split_whitespace().filter(|w| w.strip_suffix('x').is_some_and(|n| n.parse::<f64>().is_ok())).count();
        assert_eq!(ratios, 2, "the IOPS and p99 ratios: {line}");
    }
    // Two header lines: whose, then what.
    let whose = text.lines().find(|l| l.starts_with("│ load ")).unwrap_or_else(|| panic!("no header: {text}"));
    assert_eq!(whose.split_whitespace().filter(|w| *w == "A" || *w == "B").count(), 10, "{whose}");
    assert!(text.contains("p99.9") && text.contains("IOPS ratio"), "{text}");
    let json: serde_json::Value = serde_json::from_slice(&with_store(&store, &["compare", &a, &b, "--format", "json"]).stdout).unwrap();
    let side = &json["side_by_side"];
    assert_eq!(side["kind"], "curve");
    let loads: Vec<&str> = side["rows"].as_array().unwrap().iter().map(|r| r["load"].as_str().unwrap()).collect();
    assert_eq!(loads, ["max", "10%", "20%"]);
    let (ra, rb) = (stored(&store, &a), stored(&store, &b));
    let row = &side["rows"][1];
    assert_eq!(row["figures"][0]["iops"], ra["curve"]["points"][1]["iops"]);
    assert_eq!(row["figures"][1]["iops"], rb["curve"]["points"][1]["iops"]);
    let ratio = rb["curve"]["points"][1]["iops"].as_f64().unwrap() / ra["curve"]["points"][1]["iops"].as_f64().unwrap();
    assert!((row["iops_ratio"][0].as_f64().unwrap() - ratio).abs() < 1e-9, "{row:#}");
    // The report: both hockey sticks on one chart, one line per result per percentile, both knees.
    let html = dir.path().join("r.html");
    assert!(with_store(&store, &["report", &a, &b, "-o", html.to_str().unwrap()]).status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("chart-curve-1"), "one chart for both curves, not one each");
    let words = texts(figure(&page, "chart-curve-compared-curve"));
    for label in ["A p50", "A p99", "A p99.9", "B p50", "B p99", "B p99.9", "bound lat_p99&lt;10s", "knee of A", "knee of B"] {
        assert!(words.iter().any(|t| t == label), "{label} not in the legend: {words:?}");
    }
    // Beside each knee's line, whose it is (the short name the table heads its columns with).
    for whose in ["A knee ", "B knee "] {
        assert!(words.iter().any(|t| t.starts_with(whose)), "no '{whose}' beside a knee: {words:?}");
    }
    assert!(page.contains("<h2>Load-latency curves side by side: A, B</h2>"), "{page}");
}

#[test]
fn an_interrupted_curve_point_is_kept_and_marked() {
    let dir = shm_dir();
    let json = dir.path().join("c.json");
    let child = lunmark()
        .args(["run", "--no-store", "-t", "mem:16m", "--bs", "4k", "--qd", "4", "--time", "3s", "--ramp", "0s", "--curve", "50", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The maximum-rate point's worker, then the paced point's: interrupted a moment into it.
    let first = worker_tid(child.id(), None);
    worker_tid(child.id(), Some(first));
    std::thread::sleep(std::time::Duration::from_millis(800));
    signal(&child, libc::SIGINT);
    let out = wait_within(child, 60);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let c = read_json(&json)["curve"].clone();
    let points = c["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "the interrupted point stays in the curve: {c:#}");
    assert!(points[1]["cut_short"].as_str().unwrap().contains("interrupted"), "{c:#}");
    assert!(points[1]["iops"].as_f64().unwrap() > 0.0);
    let ended = c["ended"].as_str().unwrap();
    assert!(ended.starts_with("interrupted at 50%: its figures and the points before it are kept"), "{ended}");
    let text = stdout(&out);
    assert!(text.contains("50% (cut short)") && text.contains("ended: interrupted at 50%"), "{text}");
}

#[test]
fn curves_with_long_labels_are_compared_in_a_table_a_terminal_holds() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let long = ["a-very-long-label-for-the-first-configuration", "another-rather-long-label-for-the-second"];
    let (a, b, out) = compared_curves(&store, long);
    let text = stdout(&out);
    // The headers name each result by its id's first 8 characters; a line above names it in full.
    for (id, label) in [(&a, long[0]), (&b, long[1])] {
        assert!(text.lines().any(|l| l == format!("{}: {label}", &id[..8])), "{text}");
    }
    let table: Vec<&str> = text.lines().filter(|l| l.starts_with('│')).take(5).collect();
    assert!(table.len() == 5 && table.iter().all(|l| l.chars().count() <= 130), "{}", table.join("\n"));
}

/// Labels holding a terminal escape (ESC [31m, red) and a carriage return:
/// `compare` of the two curves shows them escaped (^[[31m, ^M) in its legend,
/// headers and endings, and writes no raw ESC or CR to the terminal.
#[test]
fn curve_labels_with_control_characters_are_escaped_in_compare() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let (_, _, out) = compared_curves(&store, ["red\x1b[31mA", "B\rover"]);
    assert!(!out.stdout.contains(&0x1b) && !out.stdout.contains(&b'\r'), "a raw control byte: {:?}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("red^[[31mA") && text.contains("B^Mover"), "each label shown, escaped: {text}");
}
