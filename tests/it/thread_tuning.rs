//! Jetstress-style thread tuning (`--tune`, issue 28) of the jetstress and
//! exchange profiles: the most database threads (the db group's workers) at
//! which the latency targets hold, the transactional IOPS (the db group's
//! reads and writes, the log's excluded) and the mailboxes they support.
//! Run against a target of known shape: an nbdkit server that serves one
//! request at a time across all connections (noparallel) and delays each
//! write by 1 ms, so its capacity is fixed and every thread added (16 more
//! outstanding database I/Os) adds to the database's latency (measured here:
//! about 22, 35 and 56 ms at 1, 2 and 4 threads, 83 ms at 5).

use crate::common::*;

fn one_write_at_a_time(dir: &std::path::Path) -> Nbdkit {
    Nbdkit::unix(dir, "64M", &["--filter=noparallel", "--filter=delay", "serialize=all-requests", "delay-write=1ms"])
}

#[test]
fn the_tuned_threads_hold_the_bounds_one_more_breaks_one_and_the_mailboxes_are_the_transactional_iops_over_the_profile() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let server = one_write_at_a_time(dir.path());
    // One thread keeps 16 database I/Os (and the log's) outstanding: 20 ms or
    // more on this server, at or past the profile's own targets (20 ms, 10 ms),
    // so the test's are wider; the thread count they give depends on the
    // machine's load, and the test checks the relation, not the count.
    let bounds = "db.read_lat_avg<60ms,log.write_lat_avg<60ms";
    let args = [
        "run",
        "jetstress",
        "--tune",
        "-t",
        &server.uri,
        "--time",
        "2s",
        "--ramp",
        "300ms",
        "--workers",
        "1-8",
        "--sla",
        bounds,
        "--iops-per-mailbox",
        "0.1",
    ];
    let out = with_store(&store, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let id = saved_id(&out);
    let r = stored(&store, &id);
    let s = &r["search"];
    let t = &s["tuning"];
    let steps = s["steps"].as_array().unwrap();
    let n = t["threads"].as_u64().unwrap_or_else(|| panic!("no thread count held: {s:#}"));
    let tuned = &steps[t["step"].as_u64().unwrap() as usize];
    assert_eq!(tuned["workers"].as_u64(), Some(n), "{s:#}");
    assert!(
        tuned["passed"] == true && tuned["bounds"].as_array().unwrap().iter().all(|b| b["passed"] == true),
        "the tuned threads held: {tuned:#}"
    );
    // One more thread broke a bound, or the cap (8) was reached and it says so.
    match t["one_more"].as_u64() {
        Some(i) => {
            let more = &steps[i as usize];
            assert_eq!(more["workers"].as_u64(), Some(n + 1), "{s:#}");
            assert!(more["passed"] == false && t["limit"].as_str().unwrap().starts_with(&format!("one thread more ({})", n + 1)), "{t:#}");
        }
        None => assert!(n == 8 && t["limit"].as_str().unwrap().contains("the cap was reached"), "{t:#}"),
    }
    // Each step ran the db group at its threads, the log at its one worker, both at the profile's depths.
    let points = r["points"].as_array().unwrap();
    for (st, p) in steps.iter().zip(points) {
        let groups = p["workload"]["groups"].as_array().unwrap();
        assert_eq!(
            (groups[0]["name"].as_str(), &groups[0]["workers"], &groups[0]["qd"]),
            (Some("db"), &st["workers"], &serde_json::json!(16))
        );
        assert_eq!(
            (&groups[1]["workers"], &groups[1]["qd"]),
            (&serde_json::json!(1), &serde_json::json!(4)),
            "the log as the profile has it"
        );
    }
    // Transactional IOPS: the db group's reads and writes at the tuned step, the log's excluded.
    let p = &points[tuned["point"].as_u64().unwrap() as usize];
    let db = p["groups"].as_array().unwrap().iter().find(|g| g["name"] == "db").unwrap();
    let log = p["groups"].as_array().unwrap().iter().find(|g| g["name"] == "log").unwrap();
    let trans = t["transactional_iops"].as_f64().unwrap();
    assert!((trans - (db["read_iops"].as_f64().unwrap() + db["write_iops"].as_f64().unwrap())).abs() < 1e-6, "{t:#}");
    assert!(trans > 0.0 && (t["excluded_iops"].as_f64().unwrap() - log["iops"].as_f64().unwrap()).abs() < 0.01 * trans, "{t:#}\n{p:#}");
    assert_eq!(t["iops_per_mailbox"], 0.1);
    assert_eq!(t["mailboxes"].as_u64(), Some((trans / 0.1).floor() as u64));
    // The terminal, the HTML and the Markdown report say it alike.
    let line = format!("tuning (db threads): {n} threads; transactional IOPS");
    let mailboxes = format!("mailboxes supported {} at 0.1 IOPS per mailbox", t["mailboxes"]);
    assert!(stdout(&out).contains(&line) && stdout(&out).contains(&mailboxes), "{}", stdout(&out));
    for format in ["html", "md"] {
        let file = dir.path().join(format!("r.{format}"));
        assert!(with_store(&store, &["report", &id, "--format", format, "-o", file.to_str().unwrap()]).status.success());
        let page = std::fs::read_to_string(&file).unwrap();
        assert!(page.contains(&line) && page.contains(&mailboxes), "{format}: {page}");
    }
}

#[test]
fn the_dry_run_shows_the_tuning_with_the_profiles_targets_and_its_worst_case_time() {
    for (profile, bounds) in
        [("jetstress", "db.read_lat_avg<20ms,log.write_lat_avg<10ms"), ("exchange", "db.read_lat_avg<20ms,log.read_lat_avg<10ms")]
    {
        let out = run(&["run", profile, "--tune", "--dry-run", "--no-store", "-t", "mem:64m", "--time", "2s", "--ramp", "1s"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("tuning (--tune): the threads are the workers of group 'db', 1 to 64 at its queue depth of"), "{text}");
        assert!(
            text.contains("over 0.1 IOPS per mailbox") || profile == "jetstress",
            "exchange has no IOPS per mailbox: the default: {text}"
        );
        // 1..64 doubled is 7 steps, 32..64 bisected 5 more: 12 steps of 3 s.
        assert!(
            text.contains(&format!("knee search (--sla {bounds})")) && text.contains("so at most 12 steps; at most 36s in all (3s each)"),
            "{text}"
        );
        assert!(!text.contains("paced at"), "the tuning runs without the profile's rate: {text}");
        // The threads are searched at the group's own depth; the log's group runs as the profile has it.
        let qd = if profile == "jetstress" { 16 } else { 8 };
        let db = format!("group 'db': 1 to 64 workers (searched) x 1 target x {qd} outstanding = {qd} to {} I/Os in flight", 64 * qd);
        assert!(text.contains(&db) && text.contains("group 'log': 1 worker x 1 target x"), "{text}");
        assert!(!text.contains("searched queue depth"), "the depth is not searched: {text}");
    }
}

#[test]
fn tuning_without_targets_or_with_flags_that_fix_what_it_tunes_is_refused() {
    let t = ["run", "jetstress", "--tune", "-t", "mem:64m", "--time", "1s"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { t.iter().copied().chain(extra.iter().copied()).collect() };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "quick", "--tune", "-t", "mem:64m"], "--tune: the profile 'quick' has no latency targets to tune threads to"),
        (vec!["run", "--tune", "-t", "mem:64m", "--bs", "4k"], "has no latency targets to tune threads to"),
        (with(&["--qd", "4"]), "--tune --qd 4: the threads are tuned at the profile's queue depth per thread (16 for db)"),
        (with(&["--workers", "4"]), "--tune --workers 4: the tuning chooses the thread count"),
        (with(&["--mailboxes", "100"]), "and --mailboxes fixes the load: drop --mailboxes"),
        (with(&["--rate", "100"]), "and --rate fixes the load: drop --rate"),
        (with(&["--sweep", "bs=4k,8k"]), "--tune --sweep bs=4k,8k:"),
        (with(&["--curve", "10,50"]), "--tune and --curve"),
        (with(&["--sla", "lat_p99<5"]), "latency needs a unit"),
    ];
    let cases: Vec<(&[&str], &str)> = cases.iter().map(|(a, s)| (a.as_slice(), *s)).collect();
    assert_refused(&cases);
}
