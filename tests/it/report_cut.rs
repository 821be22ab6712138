//! Reports of what really ran: a point cut short by Ctrl-C says so beside its
//! figures in the HTML and Markdown reports (a real run, a real SIGINT, the
//! page read back from headless Chromium); a transfer-size sweep of a profile
//! whose phases differ only in transfer size labels each point by the size it
//! ran, with no phase that names another. `compare` and the CSV export say
//! which points were cut short.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

const NOTE: &str = "cut short: interrupted by Ctrl-C (SIGINT) after ";

/// `lunmark` with the store in `dir` (where `stops::interrupted` keeps its results).
fn in_store(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(dir.join("s.db")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    out
}

/// The text of each row of the page's summary table as the browser shows it
/// (`innerText`: what is rendered, a `<br>` as a line break), read back with
/// --dump-dom from a copy of the page with a script that writes it out.
fn summary_rows_as_shown(html: &Path) -> Vec<String> {
    let probe = html.with_file_name("probe.html");
    let script = "<script>window.addEventListener('load',()=>{const t=document.querySelectorAll('table')[1];\
        const p=document.createElement('pre');p.id='shown';\
        p.textContent=[...t.querySelectorAll('tbody tr')].map(r=>r.innerText.replace(/\\s+/g,' ')).join('\\n');\
        document.body.appendChild(p);});</script>";
    let text = std::fs::read_to_string(html).unwrap().replace("</body>", &format!("{script}</body>"));
    std::fs::write(&probe, text).unwrap();
    let out = chromium(&["--window-size=1240,900", "--virtual-time-budget=3000", "--dump-dom", &format!("file://{}", probe.display())]);
    let dom = stdout(&out);
    let shown = dom.split("<pre id=\"shown\">").nth(1).and_then(|m| m.split("</pre>").next());
    shown.unwrap_or_else(|| panic!("nothing read back: {}", stderr(&out))).lines().map(str::to_string).collect()
}

/// Ctrl-C in point 2 of a `qd` sweep: both reports give point 2 the note
/// beside its figures (the summary row of that point) and point 1, which ran
/// its whole time, none; a plain run stopped the same way says it alike.
#[test]
fn reports_say_which_point_was_cut_short() {
    let dir = shm_dir();
    let (_, r) = crate::stops::interrupted(dir.path(), &["--sweep", "qd=1,2,4", "--time", "3s"], Duration::from_millis(4500));
    assert_eq!(r["points"].as_array().map(Vec::len), Some(2), "{}", r["points"]);
    let id = r["id"].as_str().unwrap();

    let md = dir.path().join("r.md");
    in_store(dir.path(), &["report", id, "--format", "md", "-o", md.to_str().unwrap()]);
    let text = std::fs::read_to_string(&md).unwrap();
    let section = text.split("## Summary").nth(1).unwrap().split("\n## ").next().unwrap();
    let summary: Vec<&str> = section.lines().filter(|l| l.contains(", QD ")).collect();
    assert_eq!(summary.len(), 2, "{text}");
    assert!(!summary[0].contains("cut short"), "point 1 ran whole: {}", summary[0]);
    assert!(summary[1].contains(&format!("QD 2, 1 worker, 1 target<br>{NOTE}")), "{}", summary[1]);
    assert!(summary[1].contains(" s of the 3s planned: the figures cover that part only | "), "{}", summary[1]);
    assert_eq!(text.matches(NOTE).count(), 1, "{text}");
    // The per-target and per-worker rows of point 2 are marked; point 1's are not.
    assert!(text.contains("| 2 (cut short) |") && !text.contains("| 1 (cut short) |"), "{text}");

    let html = dir.path().join("r.html");
    in_store(dir.path(), &["report", id, "-o", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches(NOTE).count(), 1, "{page}");
    let rows = summary_rows_as_shown(&html);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(!rows[0].contains("cut short"), "{}", rows[0]);
    assert!(rows[1].contains("QD 2, 1 worker, 1 target cut short: interrupted by Ctrl-C (SIGINT) after "), "{}", rows[1]);

    // A plain run: its one point is the one cut short.
    let dir = shm_dir();
    let (_, r) = crate::stops::interrupted(dir.path(), &["--time", "10s"], Duration::from_millis(2000));
    let md = dir.path().join("r.md");
    in_store(dir.path(), &["report", r["id"].as_str().unwrap(), "--format", "md", "-o", md.to_str().unwrap()]);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains(" s of the 10s planned: the figures cover that part only | ") && text.matches(NOTE).count() == 1, "{text}");
}

/// `database` runs its phases 4k and 8k; a `bs` sweep sets the size of both,
/// so each swept size is one point labelled by it alone: in the live lines,
/// the summary, the stored result and compare.
#[test]
fn a_bs_sweep_of_database_labels_each_point_by_its_size() {
    let dir = shm_dir();
    let run = |json: &str| {
        let json = dir.path().join(json);
        let args = ["run", "database", "-t", "mem:64m", "--sweep", "bs=8k,4k", "--time", "200ms", "--ramp", "0", "--json"];
        let out = in_store(dir.path(), &[&args[..], &[json.to_str().unwrap()]].concat());
        (stdout(&out) + &stderr(&out), read_json(&json))
    };
    let (text, r) = run("a.json");
    assert!(!text.contains("phase="), "{text}");
    for (n, bs) in [(1, "8k"), (2, "4k")] {
        assert!(text.contains(&format!("\npoint {n}: bs={bs}\nworkload: bs {bs}, 66.7% read")), "point {n}: {text}");
    }
    let points = r["points"].as_array().unwrap();
    let params: Vec<&Value> = points.iter().map(|p| &p["params"]).collect();
    assert_eq!(params, [&serde_json::json!({"bs": "8k"}), &serde_json::json!({"bs": "4k"})]);
    for (p, bs) in points.iter().zip(["8k", "4k"]) {
        assert_eq!(p["workload"]["groups"][0]["access"][0]["bs"], bs, "{}", p["workload"]);
    }

    let (_, b) = run("b.json");
    let out = in_store(dir.path(), &["compare", r["id"].as_str().unwrap(), b["id"].as_str().unwrap()]);
    let shown = stdout(&out) + &stderr(&out);
    assert!(shown.contains("point bs=8k · values: single run in each result\n") && shown.contains("point bs=4k · values"), "{shown}");
    assert!(!shown.contains("not compared") && !shown.contains("phase"), "{shown}");
}

/// Where phases stay apart (reads and writes of `line-rate`), each keeps its
/// phase, named without the size the sweep replaced.
#[test]
fn phases_apart_in_a_bs_sweep_are_named_without_the_replaced_size() {
    let out = run(&["run", "line-rate", "-t", "mem:64m", "--sweep", "bs=4k,8k", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let points: Vec<String> = stdout(&out).lines().filter(|l| l.starts_with("point ")).map(str::to_string).collect();
    assert_eq!(
        points,
        [
            "point 1/4: bs=4k phase=randread",
            "point 2/4: bs=8k phase=randread",
            "point 3/4: bs=4k phase=randwrite",
            "point 4/4: bs=8k phase=randwrite"
        ]
    );
}

/// Phases written alike (a warm-up, then the same workload measured) are the
/// user's choice: they run each as written, a sweep or not.
#[test]
fn phases_written_alike_run_each_with_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("twice.toml");
    std::fs::write(
        &profile,
        format!("name = \"twice\"\ndescription = \"warm, then measure\"\n{}{}", phase_toml("warm", "4k"), phase_toml("measure", "4k")),
    )
    .unwrap();
    for extra in [&[][..], &["--sweep", "bs=4k,8k"][..]] {
        let mut args = vec!["run", "--profile-file", profile.to_str().unwrap(), "-t", "mem:64m", "--dry-run"];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let points: Vec<String> = stdout(&out).lines().filter(|l| l.starts_with("point ")).map(str::to_string).collect();
        let phases: Vec<bool> = ["warm", "measure"].iter().map(|n| points.iter().any(|p| p.contains(&format!("phase={n}")))).collect();
        assert_eq!(phases, [true, true], "{extra:?}: {points:?}");
        assert_eq!(points.len(), if extra.is_empty() { 2 } else { 4 }, "{extra:?}: {points:?}");
    }
}

/// The point lines of a dry run.
fn planned_points(args: &[&str]) -> Vec<String> {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out).lines().filter(|l| l.starts_with("point ")).map(str::to_string).collect()
}

/// A flag that sets the direction or the order of every phase takes those
/// words out of the phases' names: no label says "randwrite" of a point that
/// reads, or "rand" of one that runs in order.
#[test]
fn labels_name_no_direction_or_order_a_flag_replaced() {
    let points = planned_points(&["run", "quick", "-t", "mem:64m", "--read", "100", "--dry-run"]);
    assert_eq!(points, ["point 1/2: phase=4k-rand", "point 2/2: phase=128k-seq"]);
    let points = planned_points(&["run", "quick", "-t", "mem:64m", "--random", "0", "--dry-run"]);
    assert_eq!(
        points,
        ["point 1/4: phase=4k-read", "point 2/4: phase=4k-write", "point 3/4: phase=128k-read", "point 4/4: phase=128k-write"]
    );
    let points = planned_points(&["run", "oltp-db", "-t", "mem:64m", "--read", "100", "--dry-run"]);
    assert!(!points.is_empty() && points.iter().all(|p| !p.contains("read") && !p.contains("write")), "{points:?}");
}

/// Phases written alike stay apart; a phase a flag made like them joins the first.
#[test]
fn a_phase_made_like_two_written_alike_joins_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("three.toml");
    let text = format!(
        "name = \"three\"\ndescription = \"t\"\n{}{}{}",
        phase_toml("warmup", "4k"),
        phase_toml("measure", "4k"),
        phase_toml("big-8k", "8k")
    );
    std::fs::write(&profile, text).unwrap();
    let file = profile.to_str().unwrap();
    let as_written = planned_points(&["run", "--profile-file", file, "-t", "mem:64m", "--dry-run"]);
    assert_eq!(as_written, ["point 1/3: phase=warmup", "point 2/3: phase=measure", "point 3/3: phase=big-8k"]);
    let one_size = planned_points(&["run", "--profile-file", file, "-t", "mem:64m", "--bs", "16k", "--dry-run"]);
    assert_eq!(one_size, ["point 1/2: phase=warmup+big", "point 2/2: phase=measure"]);
}

/// A profile phase of one worker at QD 4, 100% random reads of `bs`.
fn phase_toml(name: &str, bs: &str) -> String {
    format!(
        "[[phases]]\nname = \"{name}\"\n[[phases.groups]]\nname = \"main\"\nworkers = 1\nqd = 4\n\
         [[phases.groups.access]]\nshare = 100\nbs = \"{bs}\"\nread = 100\nrandom = 100\n"
    )
}

/// Two sweeps of the same sizes in another order are one comparison: points
/// pair by their swept values. A difference outside the sweep is still refused.
#[test]
fn sweeps_in_another_order_compare_point_by_point() {
    let dir = shm_dir();
    let run = |json: &str, extra: &[&str]| {
        let json = dir.path().join(json);
        let args = ["run", "-q", "-t", "mem:16m", "--time", "200ms", "--ramp", "0", "--json", json.to_str().unwrap()];
        in_store(dir.path(), &[&args[..], extra].concat());
        read_json(&json)["id"].as_str().unwrap().to_string()
    };
    let a = run("a.json", &["--sweep", "bs=4k,8k"]);
    let b = run("b.json", &["--sweep", "bs=8k,4k"]);
    let out = in_store(dir.path(), &["compare", &a, &b]);
    let shown = stdout(&out) + &stderr(&out);
    assert!(shown.contains("point bs=4k · values: single run in each result\n") && shown.contains("point bs=8k · values"), "{shown}");
    let c = run("c.json", &["--sweep", "bs=8k,4k", "--read", "50"]);
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(dir.path().join("s.db")).args(["compare", &a, &c]).output().unwrap();
    assert!(!out.status.success() && stderr(&out).contains("read: 70.0 vs 50.0"), "{}", stderr(&out));
}

/// A difference in a later phase of a profile (the result's own workload is
/// its first point's) is a workload difference too: compare refuses it and
/// names the point.
#[test]
fn compare_refuses_a_difference_in_a_later_phase() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    let b = phase_toml("b", "32k").replace("read = 100", "read = 50");
    std::fs::write(&profile, format!("name = \"p\"\ndescription = \"t\"\n{}{b}", phase_toml("a", "4k"))).unwrap();
    let run = |json: &str, extra: &[&str]| {
        let json = dir.path().join(json);
        let args = ["run", "-q", "--profile-file", profile.to_str().unwrap(), "-t", "mem:16m", "--time", "200ms", "--ramp", "0", "--json"];
        in_store(dir.path(), &[&args[..], &[json.to_str().unwrap()], extra].concat());
        read_json(&json)["id"].as_str().unwrap().to_string()
    };
    let (plain, small) = (run("a.json", &[]), run("b.json", &["--bs", "4k"]));
    let out = lunmark()
        .env_remove("LUNMARK_STORE")
        .arg("--store")
        .arg(dir.path().join("s.db"))
        .args(["compare", &plain, &small])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{}{err}", stdout(&out));
    assert!(err.contains("point phase=b: groups[0].access[0].bs: 32k vs 4k"), "{err}");
    assert!(!err.contains("point phase=a"), "phase a is the same: {err}");
}

/// `lunmark` on the store in `dir`, which must succeed.
fn stdout_in_store(dir: &Path, args: &[&str]) -> String {
    let out = lunmark().env_remove("LUNMARK_STORE").arg("--store").arg(dir.join("s.db")).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The fields of one CSV line (quoted fields may hold commas).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// A (3 s planned, Ctrl-C after about 1.5 s) against B (1 s, whole): compare
/// notes A's point as cut short with its measured time against the plan, in
/// its text and JSON, naming A as the baseline or not; B gets no note. The CSV
/// export ends each row with `cut_short`: A's note, empty for B.
#[test]
fn compare_and_the_csv_export_say_which_point_was_cut_short() {
    let dir = shm_dir();
    let child = crate::stops::start(dir.path(), &["--time", "3s", "--label", "A"]);
    let t = worker_started(&child);
    sleep_until(t + Duration::from_millis(1500));
    signal(&child, libc::SIGINT);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let a = read_json(&dir.path().join("r.json"));
    let note = a["points"][0]["cut_short"].as_str().unwrap().to_string();
    let child = crate::stops::start(dir.path(), &["--time", "1s", "--label", "B"]);
    assert!(child.wait_with_output().unwrap().status.success());
    let b = read_json(&dir.path().join("r.json"));
    let (ida, idb) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());

    let want = format!("the baseline A, point 1, was cut short: {note}");
    assert!(note.contains(" s of the 3s planned"), "{note}");
    let text = stdout_in_store(dir.path(), &["compare", ida, idb]);
    assert!(text.contains(&format!("note: {want}\n")), "{text}");
    assert_eq!(text.matches("cut short").count(), 1, "{text}");
    let json: Value = serde_json::from_str(&stdout_in_store(dir.path(), &["compare", ida, idb, "--format", "json"])).unwrap();
    let notes: Vec<&str> = json["notes"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(notes.iter().copied().filter(|n| n.contains("cut short")).collect::<Vec<_>>(), vec![want.as_str()], "{notes:?}");
    let md = stdout_in_store(dir.path(), &["compare", idb, ida, "--format", "md"]);
    assert!(md.contains(&format!("note: A, point 1, was cut short: {note}")), "{md}");

    let csv = stdout_in_store(dir.path(), &["results", "export", ida, idb, "--format", "csv"]);
    let lines: Vec<Vec<String>> = csv.lines().map(csv_fields).collect();
    assert_eq!(lines.len(), 3, "{csv}");
    let at = lines[0].iter().position(|c| c == "cut_short").unwrap_or_else(|| panic!("no cut_short column: {:?}", lines[0]));
    assert_eq!(lines[0][at + 1], "repeats", "the columns after cut_short are the ones added later");
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{csv}");
    assert_eq!(lines[1][0], ida);
    assert_eq!(lines[1][at], note);
    assert_eq!(lines[2][at], "");
}
