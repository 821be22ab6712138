//! Trial fixes (polish 3): a count of one takes the singular; --dedupe-unit
//! beside --dedupe 0 is refused; a signed --cache-sizes value is refused; the
//! dry run claims direct I/O only where there is a page cache to bypass; a
//! sweep point cut short by Ctrl-C says so, as a plain run does.

use crate::common::*;

/// Runs `args` with the store in `dir`: (output, whether a result was kept).
fn in_store(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, bool) {
    let store = dir.join("s.db");
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(&store).args(args).output().unwrap();
    (out, store.exists())
}

#[test]
fn a_count_of_one_takes_the_singular() {
    // The dry run: one worker, one target, one I/O in flight, one I/O measured.
    let out = run(&["run", "-t", "mem:16m", "--workers", "1", "--qd", "1", "--ios", "1", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for said in
        ["run: 1 I/O per worker measured", "1 worker x 1 target x 1 outstanding = 1 I/O in flight", "total: 1 worker, 1 I/O in flight"]
    {
        assert!(text.contains(said), "{said} in:\n{text}");
    }
    assert!(!text.contains("1 workers") && !text.contains("1 targets") && !text.contains("1 I/Os"), "{text}");

    // A trace of one record: the replay's summary line and the cache curve.
    let dir = shm_dir();
    let csv = dir.path().join("one.csv");
    std::fs::write(&csv, "128166372003061629,usr,0,Read,8192,4096,100\n").unwrap();
    let json = dir.path().join("r.json");
    let (out, _) = in_store(dir.path(), &["run", "-t", "mem:16m", "--replay", csv.to_str().unwrap(), "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("(msr, 1 record, speed 1), QD ") && text.contains(", 1 worker, 1 target"), "{text}");
    assert!(text.contains("replay: 1 of 1 record issued") && text.contains("0 skipped, 0 offsets wrapped"), "{text}");
    let out = run(&["cache-curve", csv.to_str().unwrap(), "--sizes", "0,100", "--region", "1m"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("accesses: 1 block access, 1 distinct block\n"), "{text}");

    // A result of one point, imported into another store.
    let other = dir.path().join("other.db");
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(&other).args(["results", "import"]).arg(&json).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).trim_end().ends_with("(1 point)"), "{}", stdout(&out));
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
        let (out, stored) = in_store(dir.path(), &args);
        let err = stderr(&out);
        assert!(!out.status.success(), "{extra:?} was accepted: {err}");
        assert!(err.contains(says) && err.matches("error:").count() == 1, "{extra:?}: {err}");
        assert!(!stored, "{extra:?}: nothing runs before the refusal");
    }
    // Beside a reduction that is on, the unit applies and the run goes.
    for extra in [&["--dedupe", "0", "--compress", "50", "--dedupe-unit", "8k"][..], &["--dedupe", "30", "--dedupe-unit", "8k"]] {
        let (out, stored) = in_store(dir.path(), &[&base[..], extra, &["--bs", "8k"]].concat());
        assert!(out.status.success() && stored, "{extra:?}: {}", stderr(&out));
    }
}

#[test]
fn a_signed_cache_size_is_refused_like_other_bad_sizes() {
    for (sizes, says) in [
        ("10,-0", "--cache-sizes 10,-0: '-0' is not a percentage between 0 and 100: write it without a sign"),
        ("+25", "--cache-sizes +25: '+25' is not a percentage between 0 and 100: write it without a sign"),
        ("-5", "--cache-sizes -5: '-5' is not a percentage between 0 and 100"),
    ] {
        let out = run(&["lab", "cache", "--cache-sizes", sizes, "--dry-run"]);
        let err = stderr(&out);
        assert!(!out.status.success(), "--cache-sizes {sizes} was accepted:\n{}", stdout(&out));
        assert!(err.contains(says) && err.matches("error:").count() == 1, "{sizes}: {err}");
    }
    let out = run(&["lab", "cache", "--cache-sizes", "0,10", "--lun-size", "8m", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_dry_run_claims_direct_io_only_with_a_page_cache() {
    let region = |target: &str, extra: &[&str]| {
        let out = run(&[&["run", "-t", target, "--size", "16m", "--dry-run"][..], extra].concat());
        assert!(out.status.success(), "{target}: {}", stderr(&out));
        stdout(&out).lines().find(|l| l.starts_with("region on each target:")).unwrap_or_default().to_string()
    };
    for t in ["mem:64m", "null:1g"] {
        let line = region(t, &[]);
        assert_eq!(line, "region on each target: 16m from offset 0", "{t}");
    }
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let file = file.to_str().unwrap();
    assert!(region(file, &[]).ends_with("16m from offset 0   (direct I/O)"));
    assert!(region(file, &["--buffered"]).ends_with("16m from offset 0   (buffered: page cache in the path)"));
}

/// Starts `lunmark run` with `args` (store and JSON in `dir`), sends SIGINT
/// after `after`, and waits: (output, the stored result's JSON).
pub(crate) fn interrupted(dir: &std::path::Path, args: &[&str], after: std::time::Duration) -> (std::process::Output, serde_json::Value) {
    let json = dir.join("r.json");
    let child = lunmark()
        .env_remove("LUNMARK_STORE")
        .arg("--store")
        .arg(dir.join("s.db"))
        .args(["run", "-t", "mem:64m", "--ramp", "0", "--json", json.to_str().unwrap()])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: kill(2) on the PID of the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    (out, read_json(&json))
}

/// Ctrl-C in point 2 of a sweep: its kept part says it was cut short, in the
/// summary, the stored result and `results show`, as the point of a plain run
/// does; the finished point 1 says nothing of the kind.
#[test]
fn an_interrupted_sweep_point_says_it_was_cut_short() {
    let cut = |text: &str| text.matches("cut short: interrupted by Ctrl-C (SIGINT) after ").count();
    let dir = shm_dir();
    let (out, r) = interrupted(dir.path(), &["--sweep", "qd=1,2,4", "--time", "3s"], std::time::Duration::from_millis(4500));
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{}", r["points"]);
    assert!(points[0].get("cut_short").is_none(), "{}", points[0]["cut_short"]);
    let note = points[1]["cut_short"].as_str().unwrap_or_default();
    assert!(note.starts_with("interrupted by Ctrl-C (SIGINT) after ") && note.contains(" s of the 3s planned"), "{note}");
    let text = stdout(&out);
    let point2 = text.split("\npoint 2:").nth(1).unwrap_or_default();
    assert!(cut(&text) == 1 && cut(point2) == 1, "{text}");
    let id = r["id"].as_str().unwrap();
    let (shown, _) = in_store(dir.path(), &["results", "show", id]);
    assert!(shown.status.success() && cut(&stdout(&shown)) == 1, "{}{}", stdout(&shown), stderr(&shown));

    // A plain run stopped the same way says it alike.
    let dir = shm_dir();
    let (out, r) = interrupted(dir.path(), &["--time", "10s"], std::time::Duration::from_millis(2000));
    let note = r["points"][0]["cut_short"].as_str().unwrap_or_default();
    assert!(note.contains(" s of the 10s planned: the figures cover that part only"), "{note}");
    assert_eq!(cut(&stdout(&out)), 1, "{}", stdout(&out));
}

/// The trace line of a one-I/O run says "1 I/O" (a user trial found "1 I/Os").
#[test]
fn a_trace_of_one_io_is_said_in_the_singular() {
    let dir = shm_dir();
    let trace = dir.path().join("t1.bin");
    let out = run(&[
        "run",
        "--no-store",
        "-t",
        "mem:1m",
        "--bs",
        "4k",
        "--read",
        "100",
        "--qd",
        "1",
        "--ios",
        "1",
        "--ramp",
        "0",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(said.contains(&format!("trace: 1 I/O recorded in {}", trace.display())), "{said}");
}
