//! Requests checked whole before anything runs (issue 13, item 1's parts):
//! every point of a sweep, the power source's name, and the lab subcommands,
//! which apply or refuse each run flag: `--dry-run` prints the whole study and
//! starts nothing, `--json FILE` gets the list of the lab's results, `--label`
//! prefixes each result's label, and flags a study cannot apply are refused.

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
        (&["lab", "cache", "--rate", "100"], "flat out"),
        (&["lab", "cache", "--target", "mem:1m"], "drop --target"),
        (&["lab", "protocols", "--journal", "/dev/shm/never-written"], "--journal"),
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
