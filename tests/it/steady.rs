//! Data reduction (--compress, --dedupe) measured on what was really written,
//! steady state (--steady) reached and not reached, and the `pts-iops` profile
//! run end to end on a /dev/shm file.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use crate::common::{read_json, run, shm_dir, stderr};

/// Writes a 32 MiB file once, sequentially in 4 KiB blocks, with the extra flags.
fn write_once(file: &Path, json: &Path, extra: &[&str]) {
    let file = file.to_str().unwrap();
    let json = json.to_str().unwrap();
    let mut args = vec![
        "run",
        "-t",
        file,
        "--size",
        "32m",
        "--bs",
        "4k",
        "--read",
        "0",
        "--random",
        "0",
        "--qd",
        "4",
        "--ramp",
        "0s",
        "--ios",
        "8192",
        "--no-store",
        "-q",
        "--json",
        json,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Share of a file's bytes that deflate at level 1 removes, percent: `gzip -1`,
/// zlib's own deflate at its fastest level (a debug build of a Rust deflate
/// takes a minute over 32 MiB).
fn gzip_saving(file: &Path) -> f64 {
    let o = std::process::Command::new("gzip").args(["-1", "-c"]).arg(file).output().expect("gzip");
    assert!(o.status.success());
    let len = std::fs::metadata(file).unwrap().len();
    (1.0 - o.stdout.len() as f64 / len as f64) * 100.0
}

/// The mean saving of deflate level 1 (flate2's `Compression::fast`) over
/// every 16th 4 KiB block, compressed one by one as an array compresses them, percent.
fn per_block_saving(data: &[u8]) -> f64 {
    let blocks: Vec<&[u8]> = data.chunks(4096).step_by(16).collect();
    blocks.iter().map(|b| deflate_saving(b)).sum::<f64>() / blocks.len() as f64
}

/// Share of bytes deflate level 1 removes from `data`, percent.
fn deflate_saving(data: &[u8]) -> f64 {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(data).unwrap();
    let out = z.finish().unwrap();
    (1.0 - out.len() as f64 / data.len() as f64) * 100.0
}

/// Share of 4 KiB blocks whose content an earlier block already had, percent.
fn duplicate_share(data: &[u8]) -> f64 {
    let mut seen = HashSet::new();
    let blocks = data.chunks(4096).count();
    let dups = data.chunks(4096).filter(|b| !seen.insert(b.to_vec())).count();
    dups as f64 / blocks as f64 * 100.0
}

#[test]
fn compress_50_writes_data_deflate_shrinks_by_about_half() {
    let dir = shm_dir();
    let (file, json) = (dir.path().join("c.dat"), dir.path().join("c.json"));
    write_once(&file, &json, &["--compress", "50"]);
    let data = std::fs::read(&file).unwrap();
    let saving = gzip_saving(&file);
    eprintln!("--compress 50: gzip -1 saved {saving:.2}%");
    assert!((saving - 50.0).abs() <= 5.0, "deflate level 1 saved {saving:.1}% of what --compress 50 wrote");
    // Units are all different (no --dedupe).
    assert!(duplicate_share(&data) < 0.1, "{}", duplicate_share(&data));
    // Block by block, as an array compresses, the same: the zeros are in every block.
    let per_block = per_block_saving(&data);
    assert!((per_block - 50.0).abs() <= 5.0, "{per_block:.1}%");
    // Without the flag each block is incompressible (the stream is not: without
    // --dedupe, every write repeats one of the QD slot buffers).
    write_once(&file, &json, &[]);
    let plain = std::fs::read(&file).unwrap();
    let per_block = per_block_saving(&plain);
    assert!(per_block < 1.0, "plain blocks compressed by {per_block:.1}%");
}

#[test]
fn dedupe_30_repeats_earlier_blocks_in_30_percent_of_writes() {
    let dir = shm_dir();
    let (file, json) = (dir.path().join("d.dat"), dir.path().join("d.json"));
    write_once(&file, &json, &["--dedupe", "30", "--compress", "25"]);
    let share = duplicate_share(&std::fs::read(&file).unwrap());
    eprintln!("--dedupe 30: {share:.2}% duplicate blocks");
    assert!((share - 30.0).abs() <= 2.0, "{share:.2}% of the blocks repeat an earlier one, asked 30%");
    // Both at once: deflate's 32 KiB window finds few of the repeats, so the saving stays near 25%.
    let saving = gzip_saving(&file);
    assert!((saving - 25.0).abs() <= 5.0, "{saving:.1}%");
    let r = read_json(&json);
    assert_eq!(r["workload"]["data"]["dedupe"], 30.0, "the setting is kept in the result's workload");
}

#[test]
fn verify_is_refused_with_dedupe_and_compress_and_bad_values_name_the_flag() {
    let dir = shm_dir();
    let file = dir.path().join("v.dat");
    let f = file.to_str().unwrap();
    for (extra, want) in [
        (vec!["--verify", "--dedupe", "30"], "--verify cannot be combined with --dedupe 30"),
        (vec!["--verify", "--compress", "40"], "--verify cannot be combined with --compress 40"),
        (vec!["--compress", "100"], "--compress 100"),
        (vec!["--dedupe", "20", "--dedupe-unit", "3000"], "--dedupe-unit"),
        (vec!["--compress", "20", "--read", "100"], "writes nothing"),
        (vec!["--steady", "iops", "--ios", "100"], "use --time instead of --ios"),
        (vec!["--steady", "iops", "--time", "3s"], "at least 5s of --time"),
        (vec!["--steady", "speed"], "choose iops, bw or lat"),
        (vec!["--steady-range", "5"], "add --steady iops|bw|lat"),
    ] {
        let mut args = vec!["run", "-t", f, "--size", "1m", "--bs", "4k", "--no-store", "-q"];
        if !extra.contains(&"--ios") && !extra.contains(&"--time") {
            args.extend(["--time", "10s"]);
        }
        args.extend(extra.iter().copied());
        let o = run(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{extra:?} was accepted");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert_eq!(err.matches("error").count(), 1, "said once: {err}");
    }
    assert!(!file.exists(), "nothing was created");
}

#[test]
fn a_paced_point_on_mem_ends_once_steady() {
    let dir = shm_dir();
    let json = dir.path().join("s.json");
    let o = run(&[
        "run",
        "-t",
        "mem:16m",
        "--bs",
        "4k",
        "--rate",
        "2000",
        "--steady",
        "iops",
        "--time",
        "40s",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&json);
    let s = &r["points"][0]["summary"];
    let st = &s["steady"];
    assert_eq!(st["reached"], true, "{st}");
    let at = st["reached_at_s"].as_f64().unwrap();
    assert!((5.0..40.0).contains(&at), "{st}");
    // The point ended there, well before its maximum --time.
    let d = s["duration_s"].as_f64().unwrap();
    assert!(d >= at - 0.01 && d < at + 2.0, "duration {d} vs steady at {at}");
    let window: Vec<f64> = st["window"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(window.len(), 5);
    let mean = st["mean"].as_f64().unwrap();
    assert!((mean - 2000.0).abs() < 200.0, "{mean}");
    assert!(st["range"].as_f64().unwrap() <= 0.2 * mean && st["slope"].as_f64().unwrap() <= 0.1 * mean);
}

#[test]
fn a_range_too_tight_to_meet_runs_to_the_maximum_and_says_not_reached() {
    let dir = shm_dir();
    let json = dir.path().join("n.json");
    let o = run(&[
        "run",
        "-t",
        "mem:16m",
        "--bs",
        "4k",
        "--steady",
        "bw",
        "--steady-range",
        "0.0001",
        "--steady-window",
        "3",
        "--time",
        "4s",
        "--ramp",
        "0s",
        "--no-store",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&json);
    let s = &r["points"][0]["summary"];
    let st = &s["steady"];
    assert_eq!(st["reached"], false, "{st}");
    assert!(st["reached_at_s"].is_null());
    assert_eq!(st["metric"], "bw");
    assert_eq!(st["window"].as_array().unwrap().len(), 3, "{st}");
    assert!(s["duration_s"].as_f64().unwrap() >= 3.99);
    assert!(crate::common::stdout(&o).contains("steady state (bw): NOT reached"), "{}", crate::common::stdout(&o));
}

/// The points of a `pts-iops` result in one round, by (read %, bs).
fn round_point<'a>(r: &'a serde_json::Value, round: u64, read: f64, bs: &str) -> &'a serde_json::Value {
    r["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["params"]["round"] == round && p["params"]["read"] == read && p["params"]["bs"] == bs)
        .unwrap_or_else(|| panic!("no point round={round} read={read} bs={bs}"))
}

/// A reduced `pts-iops` on a /dev/shm file: purge, precondition of twice the
/// region, then rounds of a 2 x 2 sweep until 4K random write IOPS is steady.
/// Paced at 800 IOPS so the rounds are steady whatever else the machine does.
#[test]
fn pts_iops_runs_rounds_until_4k_random_writes_are_steady_and_the_report_draws_them() {
    let dir = shm_dir();
    let (file, json, html) = (dir.path().join("pts.dat"), dir.path().join("pts.json"), dir.path().join("pts.html"));
    // A file that exists: the purge punches its region out.
    std::fs::write(&file, vec![0xA5u8; 8 << 20]).unwrap();
    let o = run(&[
        "run",
        "pts-iops",
        "-t",
        file.to_str().unwrap(),
        "--size",
        "8m",
        "--time",
        "200ms",
        "--sweep",
        "read=0,100",
        "--sweep",
        "bs=4k,64k",
        "--rate",
        "800",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&json);
    let rounds = &r["rounds"];
    assert_eq!(rounds["reached"], true, "{rounds}");
    let watched: Vec<f64> = rounds["watched_iops"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let n = watched.len() as u64;
    assert!((5..=25).contains(&n), "{rounds}");
    assert_eq!(rounds["reached_at_round"], n);
    assert!(rounds["purge"][0].as_str().unwrap().contains("FALLOC_FL_PUNCH_HOLE"), "{rounds}");
    assert_eq!(rounds["precondition_bytes"], 16u64 << 20);
    // The precondition point, then 4 points per round; the watched figure is the 4K write point's IOPS.
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len() as u64, 1 + 4 * n);
    assert_eq!(points[0]["params"]["phase"], "precondition");
    assert!(points[0]["summary"]["bytes_written"].as_u64().unwrap() >= 16 << 20);
    for k in 1..=n {
        assert_eq!(round_point(&r, k, 0.0, "4k")["summary"]["iops"].as_f64().unwrap(), watched[k as usize - 1]);
    }
    let mean = rounds["mean"].as_f64().unwrap();
    assert!(rounds["range"].as_f64().unwrap() <= 0.2 * mean && rounds["slope"].as_f64().unwrap() <= 0.1 * mean);

    let id = r["id"].as_str().unwrap();
    let rep = run(&["report", id, "-o", html.to_str().unwrap()]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Steady-state convergence: read=0 bs=4k"), "the convergence plot is drawn");
    let table_at = page.find("id=\"pts-iops\"").expect("the IOPS table is there");
    let table = &page[table_at..page[table_at..].find("</table>").unwrap() + table_at];
    assert!(table.contains("<th>64k</th><th>4k</th>"), "{table}");
    for mix in ["100/0", "0/100"] {
        assert!(table.contains(&format!("<td class=\"l\">{mix}</td>")), "{table}");
    }
    let md = dir.path().join("pts.md");
    let rep = run(&["report", id, "--format", "md", "-o", md.to_str().unwrap()]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("| read/write | 64k | 4k |") && text.contains("| 0/100 |"), "{text}");
    // The 0/100 row holds the mean of the window's 4K write IOPS.
    let window_mean = watched[watched.len() - 5..].iter().sum::<f64>() / 5.0;
    assert!((window_mean - mean).abs() < 1e-6);
}

/// A profile file with an impossible range: the rounds end at its `max` and say not steady.
#[test]
fn pts_iops_that_cannot_become_steady_stops_at_its_last_round_and_says_so() {
    let dir = shm_dir();
    let (file, json, profile) = (dir.path().join("pts.dat"), dir.path().join("n.json"), dir.path().join("pts.toml"));
    let shown = run(&["profiles", "show", "pts-iops"]);
    assert!(shown.status.success());
    let text = crate::common::stdout(&shown).replace("max = 25", "max = 5").replace("range = 20.0", "range = 0.0001");
    assert!(text.contains("max = 5") && text.contains("range = 0.0001"), "{text}");
    std::fs::write(&profile, text).unwrap();
    let o = run(&[
        "run",
        "--profile-file",
        profile.to_str().unwrap(),
        "-t",
        file.to_str().unwrap(),
        "--size",
        "4m",
        "--time",
        "200ms",
        "--sweep",
        "read=0",
        "--sweep",
        "bs=4k",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&json);
    let rounds = &r["rounds"];
    assert_eq!(rounds["reached"], false, "{rounds}");
    assert!(rounds["reached_at_round"].is_null());
    assert_eq!(rounds["watched_iops"].as_array().unwrap().len(), 5);
    assert_eq!(rounds["purge"][0], format!("{}: a new file, nothing to purge", file.display()));
    assert!(crate::common::stdout(&o).contains("NOT steady in 5 rounds"), "{}", crate::common::stdout(&o));
}

/// On a device, the purge is refused without --destructive, before anything is touched.
#[test]
fn pts_iops_on_a_device_without_destructive_is_refused_and_leaves_it_untouched() {
    crate::require_root!();
    let dir = shm_dir();
    let dev = crate::common::LoopDevice::new(dir.path(), 4 << 20);
    std::fs::write(dev.backing(), vec![0x5Au8; 4 << 20]).unwrap();
    let o = run(&["run", "pts-iops", "-t", dev.path.to_str().unwrap(), "--time", "200ms", "--no-store", "-q"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--destructive"), "{}", stderr(&o));
    assert!(std::fs::read(dev.backing()).unwrap().iter().all(|&b| b == 0x5A), "the device was not touched");
    let x = dir.path().join("x");
    let x = x.to_str().unwrap();
    // The dry run refuses them too, as the run would (a plan printed with exit 0 misled).
    for (refused, dry) in [&["-t", "mem:16m"][..], &["-t", x, "--size", "1m", "--verify"][..]]
        .into_iter()
        .chain([&["-t", "mem:64m"][..], &["-t", x, "--size", "1m", "--repeat", "2"][..], &["-t", x, "--size", "1m", "--trace", "t"][..]])
        .zip([false, false, true, true, true])
        .chain([(&["-t", x, "--size", "1m", "--verify"][..], true)])
    {
        let dry: &[&str] = if dry { &["--dry-run"] } else { &[] };
        let o = run(&[&["run", "pts-iops", "--time", "200ms", "--no-store", "-q"][..], refused, dry].concat());
        assert!(!o.status.success(), "{refused:?} {dry:?}");
        assert!(!stderr(&o).is_empty() && !crate::common::stdout(&o).contains("total:"), "{refused:?} {dry:?}: no plan printed");
        assert!(
            stderr(&o).contains("mem: and null: start empty")
                || stderr(&o).contains("not supported with a run of rounds")
                || stderr(&o).contains("drop --repeat"),
            "{}",
            stderr(&o)
        );
    }
}

/// `[data]` and `[steady]` in a profile file show in `--dry-run`, flags replace
/// each value, and the run applies them (the result's workload keeps them).
#[test]
fn profile_keys_show_in_the_dry_run_and_flags_override_them() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    let shown = run(&["profiles", "show", "quick"]);
    let tables = "[data]\ncompress = 50.0\ndedupe = 10.0\n\n[steady]\nmetric = \"iops\"\nwindow = 3\n\n[[phases]]";
    std::fs::write(&profile, crate::common::stdout(&shown).replacen("[[phases]]", tables, 1)).unwrap();
    let p = profile.to_str().unwrap();
    let o = run(&["run", "--profile-file", p, "-t", "mem:16m", "--time", "5s", "--dry-run"]);
    let out = crate::common::stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("data: written units of 4k: 50% compressible") && out.contains("10% repeat an earlier unit"), "{out}");
    assert!(out.contains("steady: the point ends when the last 3 rounds of 1s are steady in iops (range within 20%"), "{out}");
    let o = run(&[
        "run",
        "--profile-file",
        p,
        "-t",
        "mem:16m",
        "--time",
        "5s",
        "--compress",
        "20",
        "--steady",
        "lat",
        "--steady-slope",
        "5",
        "--dry-run",
    ]);
    let out = crate::common::stdout(&o);
    assert!(out.contains("20% compressible") && out.contains("10% repeat"), "{out}");
    assert!(out.contains("last 3 rounds of 1s are steady in lat") && out.contains("slope excursion within 5%"), "{out}");
    // A profile that only reads cannot apply [data]: refused, as the flag is.
    let reads = crate::common::stdout(&shown).replacen("[[phases]]", "[data]\ncompress = 50.0\n\n[[phases]]", 1);
    std::fs::write(&profile, reads).unwrap();
    let o = run(&["run", "--profile-file", p, "-t", "mem:16m", "--read", "100", "--dry-run"]);
    assert!(!o.status.success() && stderr(&o).contains("writes nothing"), "{}", stderr(&o));
}
