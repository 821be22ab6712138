//! Bad input refused before anything runs: one clear error naming the flag
//! (or the profile's key) the user gave, the value and what is allowed, said
//! once, with a non-zero exit and nothing run or kept; the values that apply
//! still run. Labels, run lengths, negative values, CPU lists, layout
//! suffixes, sweeps beside their own flag, rounds profiles, and the data
//! settings (`--dedupe-unit` and a profile's `[data]`) checked as they apply.

use std::path::Path;

use crate::common::*;

/// `--label ''` was accepted and labelled lab rows ": lab cache: ...".
#[test]
fn an_empty_label_is_refused_before_anything_runs() {
    for label in ["", "  "] {
        let o = run(&["run", "-t", "mem:16m", "--time", "1s", "--label", label]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{err}");
        assert!(err.contains("--label") && err.contains("a label cannot be empty"), "{err}");
        assert!(stdout(&o).is_empty(), "nothing ran: {}", stdout(&o));
    }
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
        let (out, stored) = run_in_store(dir.path(), &args);
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

/// The message of a refused dry run: a non-zero exit (2 from a flag's own parser), no plan printed.
fn refused_dry_run(args: &[&str]) -> String {
    let out = lunmark().args(["run", "--target", "mem:1m", "--dry-run"]).args(args).output().unwrap();
    assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?} was accepted: {}", stdout(&out));
    assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    stderr(&out)
}

#[test]
fn zero_run_lengths_and_sweeps_name_the_flag_and_the_range() {
    for (args, says) in [
        (&["--ios", "0"][..], "--ios 0: give at least 1 I/O"),
        (&["--time", "0s"], "--time 0s: the measured time must be above 0"),
        (&["--sweep", "bs=1t"], "--sweep bs=1t: '1t' is not a valid bs: a transfer size must lie between 1 byte and 64m"),
        (&["--bs", "4k,1t"], "--bs 4k,1t: '1t' is not a valid bs"),
        (&["--qd", "70000"], "--qd 70000: the queue depth may be at most 65536"),
    ] {
        let e = refused_dry_run(args);
        assert!(e.contains(says) && !e.contains("run.") && !e.contains("access line"), "{args:?}: {e}");
    }
}

#[test]
fn negative_values_reach_the_flag_s_own_message() {
    let dir = shm_dir();
    let trace = dir.path().join("t.csv");
    std::fs::write(&trace, "").unwrap();
    let trace = trace.to_str().unwrap();
    for (args, says) in [
        (&["--cpus", "-1"][..], "--cpus -1: '-1' is not a CPU number"),
        (&["--replay", trace, "--replay-speed", "-1"], "--replay-speed: '-1' is not a replay speed"),
        (&["--ramp", "-1s"], "--ramp: '-1s' is not a duration"),
        (&["--time", "-1s"], "--time: '-1s' is not a duration"),
        (&["--size", "-1g"], "--size: '-1g' is not a size"),
        (&["--read", "-5"], "--read: '-5' is not a percentage: use a number from 0 to 100"),
        (&["--workers", "-1"], "'-1' for '--workers <N|MIN-MAX>': a negative number is not allowed here: give a whole number from 0"),
        (&["--ios", "-1"], "'-1' for '--ios <N>': a negative number"),
        (&["--rate", "-1"], "--rate -1: give a positive number of I/Os per second (for example 5000)"),
        (&["--iops-per-mailbox", "0"], "--iops-per-mailbox 0: give a positive number of I/Os per second (for example 0.1)"),
    ] {
        let e = refused_dry_run(args);
        assert!(e.contains(says) && !e.contains("unexpected argument"), "{args:?}: {e}");
    }
}

/// Runs `args` (a run that must be refused) and returns its error text, checked
/// to be said once, with exit code 1, before anything was created.
fn refused_creating_nothing(args: &[&str], says: &str, never: &Path) -> String {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: wanted '{says}' in: {err}");
    assert_eq!(err.matches(says).count(), 1, "said once: {err}");
    assert!(!never.exists(), "{args:?}: nothing runs, no file is created");
    err
}

#[test]
fn odd_cpu_lists_name_the_flag_the_value_and_what_is_allowed() {
    let dir = shm_dir();
    let file = dir.path().join("never-created.dat");
    let f = file.to_str().unwrap();
    let allowed = "write CPU numbers from 0 and ranges LOW-HIGH";
    for (flag, says) in [
        // A user's trial: this said "'' is not a CPU number".
        ("--cpus=-1", "--cpus -1: '-1' is not a CPU number: CPUs are numbered from 0"),
        ("--cpus=0,,1", "--cpus 0,,1: an entry between two commas (or at either end) is empty"),
        ("--cpus=2-", "--cpus 2-: the range '2-' has no end"),
        ("--cpus=3-1", "--cpus 3-1: the range 3-1 runs backwards; write it low to high, 1-3"),
    ] {
        let err = refused_creating_nothing(&["run", "-q", "--no-store", "-t", f, "--size", "1m", "--time", "1s", flag], says, &file);
        assert!(err.contains(allowed) || flag == "--cpus=3-1", "{flag}: {err}");
    }
    // Beyond the host: what is allowed is the online list; a long range is shown as one.
    let err = refused_creating_nothing(
        &["run", "-q", "--no-store", "-t", f, "--size", "1m", "--cpus", "99999"],
        "--cpus 99999: CPU 99999 is not online",
        &file,
    );
    assert!(err.contains("(online: "), "{err}");
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    if online.trim() == "0-1" {
        refused_creating_nothing(
            &["run", "-q", "--no-store", "-t", f, "--size", "1m", "--cpus", "0-63"],
            "CPU 2-63 is not online on this host (online: 0-1)",
            &file,
        );
    }
}

#[test]
fn a_bad_dist_layout_suffix_names_the_two_that_fit() {
    let dir = shm_dir();
    let file = dir.path().join("never-created.dat");
    let f = file.to_str().unwrap();
    for (dist, default) in [
        ("zipf:0.9:foo", "zipf's default is scattered"),
        ("pareto:0.8:foo", "pareto's default is scattered"),
        ("normal:10%:foo", "normal's default is contiguous"),
        ("zoned:80/20:20/80:foo", "zoned's default is contiguous"),
        ("hotband:10%/80%/60s:foo", "hotband's default is contiguous"),
    ] {
        // --dist is read where clap reads the command line: a usage error (2) naming the flag.
        let says = format!("'{dist}': the layout suffix ':foo' is not one");
        let out = run(&["run", "-q", "--no-store", "-t", f, "--size", "1m", "--time", "1s", "--dist", dist]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{dist}: {err}");
        assert!(err.contains("--dist") && err.matches(&says).count() == 1, "{dist}: wanted '{says}' once in: {err}");
        assert!(!file.exists(), "{dist}: nothing runs, no file is created");
        assert!(err.contains("end with :scattered") && err.contains("or :contiguous") && err.contains(default), "{dist}: {err}");
    }
}

#[test]
fn dedupe_unit_beside_no_reduction_is_refused_naming_the_flags() {
    let dir = shm_dir();
    let base = ["run", "-q", "-t", "mem:64m", "--time", "200ms", "--ramp", "0", "--read", "0"];
    let cases: [(&[&str], &str); 4] = [
        (&["--dedupe-unit", "4k"], "--dedupe-unit 4k sets the unit of --dedupe and --compress: add --dedupe PCT or --compress PCT as well, or drop it"),
        (
            &["--dedupe", "0", "--dedupe-unit", "4k"],
            "--dedupe-unit 4k sets the unit of --dedupe and --compress, and --dedupe 0 reduces no data: add --dedupe PCT or --compress PCT above 0, or drop --dedupe-unit",
        ),
        (&["--dedupe", "0%", "--compress", "0", "--dedupe-unit", "8k"], "--dedupe-unit 8k sets the unit of --dedupe and --compress, and --dedupe 0% and --compress 0 reduce no data"),
        (&["--compress", "0", "--dedupe-unit", "4k"], "and --compress 0 reduces no data"),
    ];
    for (extra, says) in cases {
        let args = [&base[..], extra].concat();
        let (out, stored) = run_in_store(dir.path(), &args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{extra:?} was accepted: {err}");
        assert!(err.contains(says) && err.matches("error:").count() == 1, "{extra:?}: {err}");
        assert!(!stored, "{extra:?}: nothing runs before the refusal");
    }
    // Beside a reduction that is on, the unit applies and the run goes.
    for extra in [&["--dedupe", "0", "--compress", "50", "--dedupe-unit", "8k"][..], &["--dedupe", "30", "--dedupe-unit", "8k"]] {
        let (out, stored) = run_in_store(dir.path(), &[&base[..], extra, &["--bs", "8k"]].concat());
        assert!(out.status.success() && stored, "{extra:?}: {}", stderr(&out));
    }
}

/// A profile whose `[data]` sets `dedupe_unit` beside `dedupe = 0` (or no
/// dedupe) was run as if the unit applied; it is refused as `--dedupe 0
/// --dedupe-unit 4k` is, naming the file and the keys with their values,
/// before anything runs. Beside a share above 0 the same file runs.
#[test]
fn a_profile_data_unit_beside_no_reduction_is_refused_like_the_flags() {
    let dir = shm_dir();
    let profile = dir.path().join("reduce.toml");
    let store = dir.path().join("s.db");
    let write_profile = |data: &str| {
        let text = "name = \"reduce\"\ndescription = \"4k random writes\"\n\n[data]\n".to_string()
            + data
            + "\n\n[[phases]]\nname = \"w\"\n\n[[phases.groups]]\nname = \"main\"\nworkers = 1\nqd = 4\n\n\
               [[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 0.0\nrandom = 100.0\n";
        std::fs::write(&profile, text).unwrap();
    };
    let run_it = || {
        lunmark()
            .arg("--store")
            .arg(&store)
            .args(["run", "-q", "-t", "mem:16m", "--profile-file", profile.to_str().unwrap(), "--time", "300ms", "--ramp", "0"])
            .output()
            .unwrap()
    };
    let p = profile.display();
    for (data, says) in [
        (
            "dedupe = 0\ndedupe_unit = \"4k\"",
            format!("{p}: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and dedupe = 0 reduces no data: set dedupe or compress above 0 in [data], or remove dedupe_unit"),
        ),
        ("dedupe_unit = \"4k\"", format!("{p}: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress: add dedupe = PCT or compress = PCT")),
    ] {
        write_profile(data);
        let out = run_it();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{data}: {err}");
        assert!(err.contains(&says) && err.matches("error:").count() == 1, "{data}: {err}");
        assert!(!store.exists(), "{data}: refused before anything ran, yet a result was stored");
    }
    // The flags are refused in the same words, as flags.
    let out = run(&["run", "-q", "--no-store", "-t", "mem:16m", "--dedupe", "0", "--dedupe-unit", "4k", "--time", "300ms"]);
    assert!(
        stderr(&out).contains("--dedupe-unit 4k sets the unit of --dedupe and --compress, and --dedupe 0 reduces no data"),
        "{}",
        stderr(&out)
    );
    // With a share above 0 the unit applies and the run goes.
    write_profile("dedupe = 30\ndedupe_unit = \"4k\"");
    let out = run_it();
    assert!(out.status.success() && store.exists(), "{}", stderr(&out));
}

/// A profile file of 4 KiB random writes with this `[data]`, in `dir`.
fn data_profile(dir: &std::path::Path, data: &str) -> std::path::PathBuf {
    let path = dir.join(format!("data-{}.toml", rand_suffix()));
    let text = format!(
        "name = \"reduce\"\ndescription = \"4k random writes\"\n\n[data]\n{data}\n\n[[phases]]\nname = \"w\"\n\n[[phases.groups]]\n\
         name = \"main\"\nworkers = 1\nqd = 4\n\n[[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 0.0\nrandom = 100.0\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// The data settings are checked once, on what applies: the flags over the
/// profile's `[data]`. A flag that gives the profile's unit a share makes it
/// apply (it was refused); a flag that takes the share away leaves it idle
/// (it ran); a bad unit in the file is named as the file's key, not as a flag.
#[test]
fn the_data_settings_are_checked_as_they_apply_flags_over_the_profile() {
    let dir = shm_dir();
    let dry = |profile: &std::path::Path, flags: &[&str]| {
        run(&[&["run", "--no-store", "-t", "mem:16m", "--profile-file", profile.to_str().unwrap()][..], flags, &["--dry-run"]].concat())
    };
    let data_line = |out: &std::process::Output| stdout(out).lines().find(|l| l.starts_with("data: ")).unwrap_or_default().to_string();

    // The profile's unit beside a share given by a flag applies.
    let unit_only = data_profile(dir.path(), "dedupe_unit = \"4k\"");
    for (flags, says) in [(&["--dedupe", "30"], "0% compressible"), (&["--compress", "40"], "40% compressible")] {
        let out = dry(&unit_only, flags);
        assert!(out.status.success(), "{flags:?}: {}", stderr(&out));
        assert!(
            data_line(&out).starts_with("data: written units of 4k: ") && data_line(&out).contains(says),
            "{flags:?}: {}",
            data_line(&out)
        );
    }
    assert!(data_line(&dry(&unit_only, &["--dedupe", "30"])).contains("30% repeat"));

    // The profile's share taken away by --dedupe 0: refused as --dedupe 0 --dedupe-unit 4k is, each named where written.
    let with_share = data_profile(dir.path(), "dedupe = 30\ndedupe_unit = \"4k\"");
    let out = dry(&with_share, &["--dedupe", "0"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "error: {}: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and --dedupe 0 reduces no data: \
             give --dedupe PCT or --compress PCT above 0, or remove dedupe_unit from [data]",
            with_share.display()
        )
    );
    assert!(stdout(&out).is_empty(), "refused before the plan: {}", stdout(&out));
    assert!(dry(&with_share, &[]).status.success());

    // A unit that does not divide the writes, written in the file: named as the file's key.
    let odd = data_profile(dir.path(), "dedupe = 30\ndedupe_unit = \"3k\"");
    let out = dry(&odd, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("--dedupe-unit"), "no flag was given: {err}");
    assert!(
        err.contains(&format!(
            "{}: [data] dedupe_unit = \"3k\": every write must be made of whole units, but a 4k write is not",
            odd.display()
        )),
        "{err}"
    );
    // A flag over it is the flag's, and named as one.
    assert!(dry(&odd, &["--dedupe-unit", "4k"]).status.success());
    let out = dry(&with_share, &["--dedupe-unit", "3k"]);
    assert!(stderr(&out).contains("error: --dedupe-unit 3k: every write must be made of whole units"), "{}", stderr(&out));
}

/// `--size 0` named no flag ("size must be greater than 0"); `--idle` with
/// `--power none` was accepted and its baseline never taken.
#[test]
fn a_zero_size_and_an_idle_baseline_without_a_power_source_are_refused() {
    assert_refused(&[
        (&["run", "-t", "{dir}/lun", "--size", "0", "--time", "200ms"], "--size 0: the region must hold at least one transfer"),
        (&["run", "-t", "{dir}/lun", "--size", "0", "--dry-run"], "--size 0"),
        (
            &["run", "-t", "mem:16m", "--idle", "1s", "--power", "none", "--time", "200ms"],
            "--idle 1s: the idle baseline is measured by the power source, and --power none measures none",
        ),
        (&["run", "-t", "mem:16m", "--idle", "1s", "--power", "none", "--dry-run"], "--power none measures none"),
    ]);
}

/// `--journal` on a run that only reads was accepted and left an empty journal.
#[test]
fn a_journal_on_a_run_that_writes_nothing_is_refused() {
    assert_refused(&[
        (
            &["run", "-t", "mem:16m", "--read", "100", "--journal", "{dir}/j", "--time", "200ms"],
            "/j: the journal records each block's write generation",
        ),
        (&["run", "-t", "mem:16m", "--read", "100", "--sweep", "bs=4k,8k", "--journal", "{dir}/j", "--dry-run"], "this run writes nothing"),
    ]);
    // A sweep whose one point writes keeps its journal.
    let dir = shm_dir();
    let (out, _) = run_in_store(
        dir.path(),
        &["run", "-t", "mem:16m", "--sweep", "read=100,50", "--journal", "{dir}/j", "--time", "200ms", "--ramp", "0"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.path().join("j").metadata().unwrap().len() > 0);
}
