//! The knee search (`--sla`, issue 28) against a target of known shape: an
//! nbdkit server whose every read takes 4 ms (the delay filter) and which
//! serves at most 4 reads at once (--threads 4), so its capacity is about
//! 4 / 4 ms = 1,000 IOPS and, past 4 outstanding, the mean latency grows as
//! outstanding I/O over capacity (Little's law): a bound on it is met up to a
//! queue depth that can be computed from the measured capacity.

use crate::common::*;

/// The server of known shape: 4 ms per read, 4 served at once.
pub(crate) fn known_shape(dir: &std::path::Path) -> Nbdkit {
    Nbdkit::unix(dir, "64M", &["--threads", "4", "--filter=delay", "delay-read=4ms"])
}

/// A search on `uri` with `bound`, its result as JSON.
fn search(dir: &std::path::Path, uri: &str, bound: &str) -> (std::process::Output, serde_json::Value) {
    search_with(dir, uri, bound, &[])
}

/// A search on `uri` with `bound` and `extra` flags, its result as JSON (null when none was written).
fn search_with(dir: &std::path::Path, uri: &str, bound: &str, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let json = dir.join(format!("search-{}.json", rand_suffix()));
    let out = lunmark()
        .args(["run", "--no-store", "-t", uri, "--bs", "4k", "--read", "100", "--time", "2s", "--ramp", "300ms", "--sla", bound])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let result = if json.exists() { read_json(&json) } else { serde_json::Value::Null };
    (out, result)
}

/// The server's capacity as measured by the search's steps at 8 or more
/// outstanding (twice what it serves at once): the median of their IOPS.
/// Measured in the same minute as the knee, so a machine busy with other work
/// slows both alike.
fn capacity(search: &serde_json::Value) -> f64 {
    let saturated = search["steps"].as_array().unwrap().iter().filter(|s| s["qd"].as_u64().unwrap() >= 8);
    let mut iops: Vec<f64> = saturated.map(|s| s["iops"].as_f64().unwrap()).collect();
    assert!(iops.len() >= 2, "the search went past 8 outstanding: {search:#}");
    iops.sort_by(f64::total_cmp);
    iops[iops.len() / 2]
}

#[test]
fn the_search_finds_the_capacity_within_the_bound_at_the_computed_queue_depth() {
    let dir = shm_dir();
    let server = known_shape(dir.path());
    let (out, r) = search(dir.path(), &server.uri, "lat_avg<12ms");
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &r["search"];
    let cap = capacity(s);
    assert!(cap > 500.0 && cap < 1_100.0, "4 reads of 4 ms at once: about 1,000 IOPS, measured {cap}: {s:#}");
    let found = &s["found"];
    let iops = found["iops"].as_f64().unwrap();
    assert!((iops - cap).abs() <= 0.1 * cap, "found {iops} IOPS, capacity {cap}: {s:#}");
    let held = found["bounds"][0]["value"].as_f64().unwrap();
    assert!(held < 12_000.0 && found["passed"] == true, "the bound held at the found point: {held}");
    // Little's law: the mean latency reaches 12 ms at 12 ms x capacity outstanding.
    // Within 2 of it: the last bisection step is 1, and the capacity itself is
    // measured to a few percent on a machine shared with other work.
    let knee = (cap * 0.012).floor();
    // The boundary: the deepest pass below the first fail (the found point is
    // the passing step of most IOPS, which past saturation may be a shallower one).
    let fail = s["first_failing"]["qd"].as_f64().unwrap();
    let steps = s["steps"].as_array().unwrap();
    let passes = steps.iter().filter(|st| st["passed"] == true).map(|st| st["qd"].as_f64().unwrap());
    let qd = passes.filter(|&q| q < fail).fold(0.0, f64::max);
    assert!(fail - qd == 1.0, "bisected to within one queue depth: pass {qd}, fail {fail}");
    assert!((qd - knee).abs() <= 2.0, "the bound holds to qd {qd}, computed knee {knee} (capacity {cap}): {s:#}");
    // Each step is a point of the result, labelled by its queue depth, in the order run.
    let points = r["points"].as_array().unwrap();
    assert_eq!(steps.len(), points.len());
    let qds: Vec<u64> = steps.iter().map(|st| st["qd"].as_u64().unwrap()).collect();
    assert_eq!(&qds[..5], &[1, 2, 4, 8, 16], "doubled from 1 until the bound failed: {qds:?}");
    for (st, p) in steps.iter().zip(points) {
        assert_eq!(p["params"]["qd"], st["qd"]);
        assert_eq!(p["workload"]["groups"][0]["qd"], st["qd"], "the step ran at its queue depth");
    }
    let text = stdout(&out);
    assert!(text.contains("knee search (--sla lat_avg<12ms)") && text.contains(&format!("found: qd={}", found["qd"])), "{text}");
    assert!(text.contains("FAIL") && text.contains("pass"), "each bound's pass or FAIL per step: {text}");
}

/// A server of another known shape: every read takes 2 ms and the server
/// serves one at a time across all connections (noparallel, outside the
/// delay), so its capacity is about 500 IOPS from the first outstanding I/O
/// on, and the mean latency is outstanding I/O over capacity (Little's law)
/// however the I/O is spread over workers (connections) and queue depths.
fn one_at_a_time(dir: &std::path::Path) -> Nbdkit {
    Nbdkit::unix(dir, "64M", &["--filter=noparallel", "--filter=delay", "serialize=all-requests", "delay-read=2ms"])
}

#[test]
fn a_range_of_workers_is_searched_then_the_queue_depth_and_the_capacity_is_found_within_the_bound() {
    let dir = shm_dir();
    let server = one_at_a_time(dir.path());
    let (out, r) = search_with(dir.path(), &server.uri, "lat_avg<11ms", &["--workers", "1-2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = &r["search"];
    assert_eq!(s["workers"], serde_json::json!({"min": 1, "max": 2}), "{s:#}");
    let steps = s["steps"].as_array().unwrap();
    let load = |st: &serde_json::Value| (st["workers"].as_u64().unwrap(), st["qd"].as_u64().unwrap());
    let loads: Vec<(u64, u64)> = steps.iter().map(load).collect();
    // The workers first at qd 1 (2 and 4 ms: held), then the queue depth at 2
    // workers: 4 outstanding (about 8 ms) held, 8 (about 16 ms) failed.
    assert_eq!(&loads[..4], &[(1, 1), (2, 1), (2, 2), (2, 4)], "{s:#}");
    assert!(loads[4..].iter().all(|l| l.0 == 2 && l.1 > 2 && l.1 < 4), "bisected between qd 2 and 4: {loads:?}");
    // Serialized from one outstanding I/O on: every step measures the capacity.
    let mut iops: Vec<f64> = steps.iter().map(|st| st["iops"].as_f64().unwrap()).collect();
    iops.sort_by(f64::total_cmp);
    let cap = iops[iops.len() / 2];
    assert!(cap > 250.0 && cap < 550.0, "one 2 ms read at a time: about 500 IOPS, measured {cap}: {s:#}");
    let found = &s["found"];
    let found_iops = found["iops"].as_f64().unwrap();
    assert!((found_iops - cap).abs() <= 0.1 * cap, "found {found_iops} IOPS, capacity {cap}: {s:#}");
    assert!(found["passed"] == true && found["bounds"][0]["value"].as_f64().unwrap() < 11_000.0, "the bound held: {found:#}");
    assert!(found["workers"].as_u64().is_some() && found["qd"].as_u64().is_some(), "found carries both: {found:#}");
    // Little's law: 11 ms x capacity outstanding; the steps at 2 workers go by 2 outstanding.
    let knee = (cap * 0.011).floor();
    let out_of = |st: &serde_json::Value| (load(st).0 * load(st).1) as f64;
    let fail = out_of(&s["first_failing"]);
    let held = steps.iter().filter(|st| st["passed"] == true).map(out_of).filter(|&o| o < fail).fold(0.0, f64::max);
    assert!(fail - held <= 2.0 && held <= knee + 1.0 && fail >= knee - 1.0, "held to {held}, failed at {fail}, knee {knee}: {s:#}");
    // Each step is a point labelled with both, run with its workers and depth.
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), steps.len());
    for (st, p) in steps.iter().zip(points) {
        assert_eq!((&p["params"]["workers"], &p["params"]["qd"]), (&st["workers"], &st["qd"]), "{p:#}");
        assert_eq!(p["workload"]["groups"][0]["workers"], st["workers"], "the step ran with its workers");
        assert_eq!(p["workload"]["groups"][0]["qd"], st["qd"]);
    }
    let text = stdout(&out);
    let shown = format!("found: qd={} workers={}", found["qd"], found["workers"]);
    assert!(text.contains("workers searched from 1 to 2 at qd=1, then the queue depth at 2 workers") && text.contains(&shown), "{text}");
}

#[test]
fn a_bound_below_the_service_time_is_unmeetable_and_exits_6() {
    let dir = shm_dir();
    let server = known_shape(dir.path());
    let (out, r) = search(dir.path(), &server.uri, "read_lat_avg<1ms");
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let s = &r["search"];
    assert!(s["found"].is_null(), "{s:#}");
    assert_eq!(s["steps"].as_array().unwrap().len(), 1, "ended at the lightest load: {s:#}");
    assert_eq!(s["first_failing"]["qd"], 1);
    let lightest = s["first_failing"]["bounds"][0]["value"].as_f64().unwrap();
    assert!(lightest >= 2_000.0, "a read takes 2 ms: {lightest}");
    let text = stdout(&out);
    assert!(text.contains("NOT MET: no load meets these bounds; the lightest point (qd=1) gave"), "{text}");
    assert!(s["ended"].as_str().unwrap().contains("no load meets"), "{s:#}");
}

#[test]
fn a_lower_iops_bound_unmet_at_the_lightest_load_grows_the_load_and_is_met_at_the_found_point() {
    let dir = shm_dir();
    let server = known_shape(dir.path());
    // qd 1 gives about 250 IOPS (one 4 ms read at a time): too little load, not the end of the search.
    let (out, r) = search(dir.path(), &server.uri, "lat_avg<6ms,iops>400");
    assert!(out.status.success(), "{}", stderr(&out));
    // The live line counts steps as steps (it read "point 3/3", as if the last), with no time left it cannot know.
    let live = stderr(&out);
    assert!(live.contains("step 3 of at most ") && !live.contains("point 3/3") && !live.contains(" left)"), "{live}");
    let s = &r["search"];
    let steps = s["steps"].as_array().unwrap();
    assert!(steps[0]["passed"] == false && steps[0]["bounds"][1]["passed"] == false, "qd 1 is below 400 IOPS: {s:#}");
    assert!(steps.len() > 2, "the search grew past qd 1: {s:#}");
    let found = &s["found"];
    assert!(found["passed"] == true && found["iops"].as_f64().unwrap() > 400.0, "the found point meets every bound: {s:#}");
    assert!(found["qd"].as_u64().unwrap() >= 2 && s["first_failing"]["qd"].as_u64().unwrap() > 2, "{s:#}");
}

/// The dry run of a search on mem: with the bound lat_p99<2ms and `extra`: its stdout, after it succeeded.
fn dry_run_search(extra: &[&str]) -> String {
    let out = run(&[&["run", "--dry-run", "--no-store", "-t", "mem:16m", "--bs", "4k", "--sla", "lat_p99<2ms"][..], extra].concat());
    assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn the_dry_run_shows_the_search_and_its_worst_case_time() {
    let text = dry_run_search(&["--time", "2s", "--ramp", "1s", "--repeat", "2"]);
    // 1..1024 doubled is 11 steps, 512..1024 bisected 9 more: 20 steps of (1 s + 2 s) x 2.
    assert!(text.contains("knee search (--sla lat_p99<2ms)") && text.contains("queue depth at most 1024, so at most 20 steps"), "{text}");
    assert!(text.contains("at most 120s in all (6s each)"), "{text}");
    // A range of workers: 1, 2, 4, 8 then bisected (6 steps), then 19 more of the queue depth at 8 workers.
    let text = dry_run_search(&["--workers", "1-8", "--time", "1s", "--ramp", "0s"]);
    assert!(
        text.contains("workers doubled from 1 (to 8 at most) at qd=1") && text.contains("so at most 25 steps; at most 25s in all"),
        "{text}"
    );
    // With --qd the depth is held and only the workers are searched.
    let text = dry_run_search(&["--workers", "2-10", "--qd", "4", "--time", "1s", "--ramp", "0s"]);
    assert!(text.contains("workers doubled from 2 (to 10 at most) at qd=4") && text.contains("so at most 5 steps"), "{text}");
}

#[test]
fn bad_expressions_and_senseless_combinations_are_refused() {
    let t = ["run", "-t", "mem:16m", "--bs", "4k", "--time", "1s"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { t.iter().copied().chain(extra.iter().copied()).collect() };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (with(&["--sla", "p99<5ms"]), "pass criterion 'p99<5ms': unknown metric 'p99'"),
        (with(&["--sla", "lat_p99<5"]), "pass criterion 'lat_p99<5': latency needs a unit"),
        (with(&["--sla", "lat_p99=5ms"]), "no comparison"),
        (with(&["--sla", "lat_p99<5ms", "--sweep", "qd=1,2"]), "--sweep qd=... sets it too"),
        (with(&["--sla", "lat_p99<5ms", "--qd", "4"]), "the search chooses the queue depth, so --qd would be ignored"),
        (with(&["--workers", "1-8"]), "--workers 1-8: a range of workers is searched by --sla"),
        (with(&["--workers", "8-1", "--sla", "lat_p99<5ms"]), "not a range of workers: give a range MIN-MAX"),
        (with(&["--workers", "1-8", "--sla", "lat_p99<5ms", "--sweep", "qd=1,2"]), "the search chooses the workers (then the queue depth)"),
        (with(&["--workers", "1-8", "--curve", "10,50"]), "--workers 1-8: a range of workers is searched by --sla"),
        (with(&["--sla", "lat_p99<5ms", "--rate", "100"]), "a rate (--rate, --mailboxes, or the profile's) fixes the load"),
        (with(&["--sla", "lat_p99<5ms", "--sweep", "read=0,100"]), "this plan has 2 points (a sweep): drop the sweep"),
        (vec!["run", "-t", "mem:16m", "--sla", "lat_p99<5ms"], "the profile 'quick' has 4 points: give --bs and --read for one point"),
        (
            vec!["run", "-t", "{dir}/f.dat", "--size", "1m", "--bs", "4k", "--engine", "psync", "--sla", "lat_p99<5ms"],
            "the psync engine does one I/O at a time",
        ),
        (vec!["run", "-t", "mem:16m", "exchange", "--sla", "lat_p99<5ms"], "--sla lat_p99<5ms:"),
        (with(&["--sla", "iops>500"]), "--sla iops>500: --sla needs a latency bound to stop the search; add e.g. lat_p99<5ms"),
        (with(&["--sla", "lat_p99>5ms"]), "--sla lat_p99>5ms: lat_p99>5ms is a lower bound on latency: more load only helps meet it"),
        (with(&["--sla", "lat_avg<9ms,iops<1000"]), "iops<1000 is an upper bound on IOPS: the lightest load meets it best"),
    ];
    let cases: Vec<(&[&str], &str)> = cases.iter().map(|(a, s)| (a.as_slice(), *s)).collect();
    assert_refused(&cases);
    // The same text as --pass gives for the same expression.
    let pass = stderr(&run(&["run", "--no-store", "-t", "mem:16m", "--pass", "p99<5ms"]));
    let sla = stderr(&run(&["run", "--no-store", "-t", "mem:16m", "--sla", "p99<5ms"]));
    assert_eq!(pass, sla);
}

/// A bound mem: always meets: the search doubles to its cap (1024), each step
/// run --repeat times, and the store keeps the search with the result.
#[test]
fn a_bound_always_held_ends_at_the_cap_with_repeats_per_step_and_is_kept() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let args =
        ["run", "-q", "-t", "mem:16m", "--bs", "4k", "--sla", "lat_avg<10s,iops>1", "--time", "100ms", "--ramp", "0s", "--repeat", "2"];
    let out = with_store(&store, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = stored(&store, &saved_id(&out));
    let s = &r["search"];
    let qds: Vec<u64> = s["steps"].as_array().unwrap().iter().map(|st| st["qd"].as_u64().unwrap()).collect();
    assert_eq!(qds, vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], "{s:#}");
    assert!(s["first_failing"].is_null() && s["found"]["passed"] == true, "{s:#}");
    assert_eq!(s["found"]["bounds"].as_array().unwrap().len(), 2, "each bound judged: {s:#}");
    assert!(s["ended"].as_str().unwrap().contains("up to the highest queue depth tried (qd=1024)"), "{s:#}");
    for p in r["points"].as_array().unwrap() {
        assert_eq!(p["repeats"]["count"], 2, "each step run twice: {p:#}");
    }
    let shown = with_store(&store, &["results", "show", &saved_id(&out)]);
    assert!(stdout(&shown).contains("knee search (--sla lat_avg<10s,iops>1): 11 steps"), "{}", stdout(&shown));
    // The report carries the search as the terminal shows it.
    let html = dir.path().join("r.html");
    assert!(with_store(&store, &["report", &saved_id(&out), "-o", html.to_str().unwrap()]).status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Knee search: ") && page.contains("knee search (--sla lat_avg&lt;10s,iops&gt;1): 11 steps"), "{page}");
    // The steps are one line against queue depth, not a line each; the found point is the knee on the hockey stick.
    let qd_chart = &page[page.find("<figure id=\"chart-iops-qd\">").expect("the IOPS against QD chart")..];
    let qd_chart = &qd_chart[..qd_chart.find("</figure>").unwrap()];
    assert!(!qd_chart.contains("search_step"), "{qd_chart}");
    assert_eq!(texts(qd_chart).iter().filter(|t| t.contains(" on mem:16m")).count(), 1, "one line: {:?}", texts(qd_chart));
    assert!(page.contains("the knee (the found point (the step of most IOPS within every bound)) a vertical line"), "{page}");
}

/// Two searches side by side: their found points (qd, IOPS, latency) and the ratios.
#[test]
fn two_searches_are_compared_by_their_found_points() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let ids: Vec<String> = ["A", "B"]
        .iter()
        .map(|label| {
            let args =
                ["run", "-q", "-t", "mem:16m", "--bs", "4k", "--sla", "lat_avg<10s", "--time", "50ms", "--ramp", "0s", "--label", label];
            let out = with_store(&store, &args);
            assert!(out.status.success(), "{}", stderr(&out));
            saved_id(&out)
        })
        .collect();
    let out = with_store(&store, &["compare", &ids[0], &ids[1]]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("knee searches side by side: the found point and the first failing one"), "{text}");
    let found = text.lines().find(|l| l.starts_with("│ found ")).unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = found.split_whitespace().collect();
    for (i, id) in ids.iter().enumerate() {
        let f = &stored(&store, id)["search"]["found"];
        // After "found": each result's qd and IOPS, then p50, p99, p99.9.
        assert_eq!(cells[2 + 5 * i], f["qd"].to_string(), "{found}");
    }
    assert!(cells.iter().filter(|c| c.ends_with('x')).count() == 2, "the IOPS and p99 ratios: {found}");
    let ended = stored(&store, &ids[1])["search"]["ended"].as_str().unwrap().to_string();
    assert!(text.contains(&format!("B: --sla lat_avg<10s; ended: {ended}\n")), "{text}");
    let html = dir.path().join("r.html");
    assert!(with_store(&store, &["report", &ids[0], &ids[1], "-o", html.to_str().unwrap()]).status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Latency against load: knee searches compared") && !page.contains("searchs"), "{page}");
    // The search bisects: its depth axis does not claim a doubling.
    assert!(page.contains("outstanding I/Os per worker per target (queue depth)") && !page.contains("doubling per step"), "{page}");
}

/// A step the memory check refuses part way: under an address-space limit
/// (`ulimit -v` 640 MiB) the steps of 4 MiB reads fit up to qd=64 (256 MiB of
/// buffers) and qd=128 (512 MiB) does not. The search keeps the steps it
/// measured, says which step was refused and why, and exits 3 as a failed run;
/// the result is stored. (Before the check knew the limit, the step ran and
/// its worker panicked allocating its buffers.)
#[test]
fn a_deeper_step_refused_by_the_memory_check_ends_the_search_keeping_the_steps_so_far() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let out = std::process::Command::new("prlimit")
        .args(["--as=671088640", env!("CARGO_BIN_EXE_lunmark"), "--store", store.to_str().unwrap()])
        .args(["run", "-q", "-t", "mem:16m", "--bs", "4m", "--read", "100", "--sla", "lat_p99<10s", "--ios", "50", "--ramp", "0"])
        .env_remove("LUNMARK_STORE")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let r = stored(&store, &saved_id(&out));
    let s = &r["search"];
    let qds: Vec<u64> = s["steps"].as_array().unwrap().iter().map(|st| st["qd"].as_u64().unwrap()).collect();
    assert_eq!(qds, vec![1, 2, 4, 8, 16, 32, 64], "the steps before the refused one are kept: {s:#}");
    assert_eq!(r["points"].as_array().unwrap().len(), 7, "each kept step is a stored point");
    let ended = s["ended"].as_str().unwrap();
    assert!(ended.starts_with("the step at qd=128 could not run: this run needs about "), "{ended}");
    assert!(ended.contains("limit of 640 MiB (ulimit -v, RLIMIT_AS)") && ended.contains("1 worker x 128 slots x 4 MiB"), "{ended}");
    assert!(ended.ends_with("the steps so far are kept, the knee was not reached"), "{ended}");
    assert_eq!(r["status"], "failed", "{r:#}");
    assert!(r["status_reason"].as_str().unwrap().starts_with("the step at qd=128 could not run"), "{r:#}");
}
