//! Flags a user trial found accepted and then ignored or misleading (fix
//! helper FX3): each is now refused before anything runs, with what was wrong,
//! what is allowed and how to fix it, once, and a non-zero exit; the values
//! that apply still run.

use crate::common::*;

/// Runs lunmark with `args` (`{dir}` is `dir`) and a store in `dir`; returns
/// the output and whether the store was created.
fn refused(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, bool) {
    let d = dir.display().to_string();
    let store = dir.join("s.db");
    let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", &d)).collect();
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(&store).args(&args).output().unwrap();
    (out, store.exists())
}

/// Each case is refused with its message, once, exit non-zero, nothing kept.
fn assert_refused(cases: &[(&[&str], &str)]) {
    let dir = shm_dir();
    for (args, says) in cases {
        let (out, stored) = refused(dir.path(), args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{args:?} was accepted:\n{}{err}", stdout(&out));
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "{args:?}: said once: {err}");
        assert!(!stored, "{args:?}: a result was kept before the refusal");
    }
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
    let (out, _) = refused(shm_dir().path(), &["lab", "protocols", "--sqpoll", "--dry-run"]);
    assert!(!stderr(&out).contains("mem:1g"), "{}", stderr(&out));
}

#[test]
fn lab_cache_refuses_size_unitless_delays_and_repeated_sizes() {
    assert_refused(&[
        (&["lab", "cache", "--size", "1g", "--dry-run"], "--size 1g: lab cache sizes its LUN itself; give --lun-size 1g instead"),
        (
            &["lab", "cache", "--size", "1g", "--lun-size", "8m", "--cache-sizes", "0", "--time", "200ms", "--ramp", "0"],
            "give --lun-size 1g",
        ),
        // A bare number was taken as seconds (+5000ms): a unit is required, the flag named.
        (&["lab", "cache", "--delay", "5", "--dry-run"], "--delay: '5' has no unit"),
        (&["lab", "cache", "--read-delay", "5", "--dry-run"], "--read-delay: '5' has no unit"),
        (&["lab", "cache", "--write-delay", "2", "--dry-run"], "--write-delay: '2' has no unit"),
        (&["lab", "cache", "--cache-sizes", "10,10", "--dry-run"], "--cache-sizes 10,10: 10% is given twice"),
        (&["lab", "cache", "--cache-sizes", "0,25,25%", "--dry-run"], "25% is given twice"),
    ]);
    // With a unit the delay applies, as the dry run shows.
    let out = lunmark()
        .env_remove("LUNMARK_STORE")
        .args(["lab", "cache", "--delay", "5ms", "--cache-sizes", "0,10", "--lun-size", "8m", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("+5ms read, +5ms write"), "{}", stdout(&out));
}

#[test]
fn dedupe_unit_alone_and_a_sweep_beside_its_own_flag_are_refused() {
    let run = |extra: &'static [&'static str]| -> Vec<&'static str> {
        [&["run", "-q", "-t", "mem:16m", "--time", "100ms", "--ramp", "0"][..], extra].concat()
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (run(&["--dedupe-unit", "4k"]), "--dedupe-unit 4k sets the unit of --dedupe and --compress: add --dedupe PCT or --compress PCT"),
        (run(&["--sweep", "qd=1,4", "--qd", "16"]), "--sweep qd=1,4 and --qd 16 both set qd"),
        (run(&["--sweep", "bs=4k", "--bs", "8k"]), "--sweep bs=4k and --bs 8k both set bs"),
        (run(&["--sweep", "workers=1,2", "--workers", "2"]), "drop one of them"),
        (run(&["--read", "50", "--sweep", "read=0,100"]), "--sweep read=0,100 and --read 50 both set read"),
        (run(&["--sweep", "qd=1,1"]), "qd=1 is given twice"),
        (run(&["--bs", "4k,8k,4096"]), "bs=4096 is given twice"),
    ];
    let cases: Vec<(&[&str], &str)> = cases.iter().map(|(a, s)| (a.as_slice(), *s)).collect();
    assert_refused(&cases);
    // Where they apply, they run.
    let dir = shm_dir();
    for args in [run(&["--dedupe-unit", "8k", "--compress", "50", "--bs", "8k", "--read", "0"]), run(&["--sweep", "qd=1,4", "--bs", "8k"])]
    {
        let (out, stored) = refused(dir.path(), &args);
        assert!(out.status.success() && stored, "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_rounds_profile_refuses_a_sweep_and_names_its_own_time() {
    assert_refused(&[
        // 112 points, and the rounds' 'read=0 bs=4k' would match two of them.
        // Dry runs: were it accepted, 112 points of rounds would run for minutes.
        (
            &["run", "pts-iops", "-t", "{dir}/lun", "--size", "16m", "--sweep", "qd=1,2", "--dry-run"],
            "profile 'pts-iops' runs rounds judged by the point 'read=0 bs=4k', and 2 points",
        ),
        (
            &["run", "pts-iops", "-t", "{dir}/lun", "--size", "16m", "--sweep", "workers=1,2", "--dry-run"],
            "set workers with one value (--workers N)",
        ),
        // The 1 s is the profile's time per point, not a --time the user gave.
        (
            &["run", "pts-iops", "-t", "{dir}/lun", "--size", "16m", "--steady", "iops", "--dry-run"],
            "but the profile's time per point is 1s: give a longer --time",
        ),
    ]);
    // One value of the key, a sweep of the profile's own keys that keeps the
    // judged point, and a longer --time, are taken.
    let dir = shm_dir();
    let lun = format!("{}/lun", dir.path().display());
    for extra in [&["--qd", "4"][..], &["--sweep", "read=0,100", "--sweep", "bs=4k,64k"][..], &["--steady", "iops", "--time", "10s"][..]] {
        let out = lunmark()
            .env_remove("LUNMARK_STORE")
            .args(["run", "pts-iops", "-t", &lun, "--size", "16m", "--dry-run"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
    }
}
