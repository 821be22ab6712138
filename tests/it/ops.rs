//! Trims, syncs and flushes (issue 15 item 5): a trim really discards (holes in
//! a file, a loop device's backing file emptied, an NBD server's own count),
//! syncs come every N writes and are counted apart, each op has its counts and
//! latency, and what a target cannot take is refused before anything runs.

use std::path::Path;
use std::process::Command;

use crate::common::{read_json, run, shm_dir, signal, stderr, LoopDevice, Nbdkit};
use crate::require_root;

/// 512-byte blocks a file holds (`stat -c %b`): its allocated space.
fn blocks(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks()
}

/// Fills `path` (a file or device) with `mib` MiB of random data, direct.
fn fill(path: &Path, mib: u32) {
    let ok = Command::new("dd")
        .arg("if=/dev/urandom")
        .arg(format!("of={}", path.display()))
        .args(["bs=1M", &format!("count={mib}"), "oflag=direct", "conv=notrunc", "status=none"])
        .status()
        .unwrap()
        .success();
    assert!(ok, "dd into {}", path.display());
}

fn summary(json: &Path) -> serde_json::Value {
    read_json(json)["points"][0]["summary"].clone()
}

fn u(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

#[test]
fn a_trim_on_a_file_punches_holes_and_keeps_its_size() {
    let dir = shm_dir();
    for engine in ["io_uring", "psync"] {
        let file = dir.path().join(format!("trim-{engine}.dat"));
        std::fs::File::create(&file).unwrap();
        fill(&file, 16);
        assert_eq!(blocks(&file), 16 << 11, "16 MiB allocated before the trims");
        let json = dir.path().join(format!("{engine}.json"));
        // 16 sequential 1 MiB trims cover the whole file once.
        let o = run(&[
            "run",
            "-t",
            file.to_str().unwrap(),
            "--engine",
            engine,
            "--read",
            "0",
            "--trim",
            "100",
            "--random",
            "0",
            "--bs",
            "1m",
            "--qd",
            "1",
            "--ios",
            "16",
            "--ramp",
            "0s",
            "--no-store",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 16 << 20, "{engine}: the file keeps its size (KEEP_SIZE)");
        assert_eq!(blocks(&file), 0, "{engine}: every block was punched out");
        let s = summary(&json);
        assert_eq!((u(&s, "ios_trimmed"), u(&s, "bytes_trimmed"), u(&s, "ios_written")), (16, 16 << 20, 0), "{engine}: {s}");
        assert_eq!(s["latency_us"]["trim"]["count"].as_u64(), Some(16), "{engine}");
    }
}

#[test]
fn a_trim_on_a_loop_device_discards_it_through_both_engines() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 16 << 20);
    for engine in ["io_uring", "psync"] {
        fill(&dev.path, 16);
        // The loop driver punches a discarded range out of its backing file.
        assert_eq!(blocks(dev.backing()), 16 << 11, "{engine}: the backing file is full before the trims");
        let o = run(&[
            "run",
            "-t",
            dev.path.to_str().unwrap(),
            "--engine",
            engine,
            "--read",
            "0",
            "--trim",
            "100",
            "--random",
            "0",
            "--bs",
            "1m",
            "--qd",
            "2",
            "--ios",
            "16",
            "--ramp",
            "0s",
            "--destructive",
            "--no-store",
            "-q",
        ]);
        assert!(o.status.success(), "{engine}: {}", stderr(&o));
        assert_eq!(blocks(dev.backing()), 0, "{engine}: the device discarded every block");
    }
}

#[test]
fn fsync_and_fdatasync_come_every_n_writes_and_are_counted_apart() {
    let dir = shm_dir();
    let file = dir.path().join("sync.dat");
    // Queue depth 1: writes and syncs alternate exactly (4 writes, 1 sync), so
    // 400 measured I/Os are 320 writes and 80 syncs.
    let json = dir.path().join("fsync.json");
    let o = run(&[
        "run",
        "-t",
        file.to_str().unwrap(),
        "--size",
        "8m",
        "--read",
        "0",
        "--fsync",
        "4",
        "--qd",
        "1",
        "--ios",
        "400",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&json);
    assert_eq!((u(&s, "ios_written"), u(&s, "ios_synced")), (320, 80), "{s}");
    assert_eq!(s["latency_us"]["sync"]["count"].as_u64(), Some(80));
    assert_eq!(s["latency_us"]["all"]["count"].as_u64(), Some(320), "syncs are no I/Os of `all`");
    let iops_ios = (s["iops"].as_f64().unwrap() * s["duration_s"].as_f64().unwrap()).round() as u64;
    assert_eq!(iops_ios, 320, "syncs are not counted in IOPS");
    // Deeper queues on io_uring, fdatasync, reads beside: syncs = writes / N,
    // give or take the I/Os in flight when the run ended.
    let json = dir.path().join("fdatasync.json");
    let o = run(&[
        "run",
        "-t",
        file.to_str().unwrap(),
        "--read",
        "50",
        "--fdatasync",
        "8",
        "--qd",
        "8",
        "--time",
        "1s",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&json);
    let (writes, syncs) = (u(&s, "ios_written"), u(&s, "ios_synced"));
    assert!(writes > 100, "{s}");
    assert!((syncs as i64 - (writes / 8) as i64).abs() <= 8, "{syncs} syncs for {writes} writes at --fdatasync 8");
    let w = &read_json(&json)["points"][0]["workload"];
    assert_eq!(w["sync"]["kind"], "fdatasync", "the point's workload records the sync: {w}");
    // Syncs take no blocks: a verified run with syncs checks its reads as ever.
    let json = dir.path().join("verify.json");
    let o = run(&[
        "run",
        "-t",
        file.to_str().unwrap(),
        "--read",
        "50",
        "--fsync",
        "4",
        "--verify",
        "--time",
        "1s",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&json);
    assert!(u(&s, "ios_synced") > 0 && s["verify"]["blocks_checked"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["verify"]["mismatches"].as_u64(), Some(0), "{}", s["verify"]);
}

#[test]
fn fsync_on_a_block_device_is_refused_before_any_io_and_flush_is_counted() {
    require_root!();
    let dir = shm_dir();
    let dev = LoopDevice::new(dir.path(), 16 << 20);
    let before = dev.stat();
    let o = run(&["run", "-t", dev.path.to_str().unwrap(), "--read", "0", "--fsync", "8", "--time", "1s", "--destructive", "--no-store"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("is a block device") && e.contains("--flush 8"), "{e}");
    assert_eq!(e.matches("--flush 8").count(), 1, "said once: {e}");
    assert_eq!(dev.stat().2, before.2, "nothing was written");
    // The dry run refuses it the same way.
    let o = run(&["run", "-t", dev.path.to_str().unwrap(), "--read", "0", "--fdatasync", "8", "--dry-run", "--destructive"]);
    assert!(!o.status.success() && stderr(&o).contains("--flush 8"), "{}", stderr(&o));
    // --flush on a file is refused the other way round.
    let file = dir.path().join("f.dat");
    let o = run(&["run", "-t", file.to_str().unwrap(), "--size", "1m", "--read", "0", "--flush", "2", "--no-store"]);
    assert!(!o.status.success() && stderr(&o).contains("--fsync 2"), "{}", stderr(&o));
    assert!(!file.exists(), "refused before the file was created");
    // --flush on the device: a flush every 4 writes.
    let json = dir.path().join("flush.json");
    let o = run(&[
        "run",
        "-t",
        dev.path.to_str().unwrap(),
        "--read",
        "0",
        "--flush",
        "4",
        "--qd",
        "1",
        "--ios",
        "200",
        "--ramp",
        "0s",
        "--destructive",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = summary(&json);
    assert_eq!((u(&s, "ios_written"), u(&s, "ios_synced")), (160, 40), "{s}");
}

#[test]
fn per_op_counts_add_up_to_the_total_and_each_has_its_latency() {
    let dir = shm_dir();
    let dry = run(&["run", "-t", "mem:64m", "--read", "40", "--trim", "20", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(crate::common::stdout(&dry).contains("40% read / 20% trim / 40% write"), "{}", crate::common::stdout(&dry));
    let json = dir.path().join("mix.json");
    let o = run(&[
        "run",
        "-t",
        "mem:64m",
        "--read",
        "40",
        "--trim",
        "20",
        "--time",
        "1s",
        "--ramp",
        "0s",
        "--no-store",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = crate::common::stdout(&o);
    assert!(out.contains("│ trim") && out.contains("0% read, 20% trim"), "the summary names trims: {out}");
    let s = summary(&json);
    let (r, w, t) = (u(&s, "ios_read"), u(&s, "ios_written"), u(&s, "ios_trimmed"));
    let total = r + w + t;
    assert!(total > 10_000, "{s}");
    let iops_ios = (s["iops"].as_f64().unwrap() * s["duration_s"].as_f64().unwrap()).round() as u64;
    assert!(iops_ios.abs_diff(total) <= 1, "iops x duration {iops_ios} = reads + writes + trims {total}");
    for (n, want) in [(r, 40.0), (w, 40.0), (t, 20.0)] {
        let share = n as f64 * 100.0 / total as f64;
        assert!((share - want).abs() < 2.0, "share {share:.1}% vs {want}%");
    }
    let lat = &s["latency_us"];
    for (op, n) in [("read", r), ("write", w), ("trim", t)] {
        assert_eq!(lat[op]["count"].as_u64(), Some(n), "{op}");
        assert!(lat[op]["p99"].as_f64().unwrap() >= lat[op]["mean"].as_f64().unwrap() * 0.5, "{op}: {}", lat[op]);
    }
    assert_eq!(lat["all"]["count"].as_u64(), Some(total));
    assert!(lat.get("sync").is_none(), "no syncs, no sync figures");
    // --verify cannot check what a trim left behind: refused, and why.
    let o = run(&["run", "-t", "mem:64m", "--read", "40", "--trim", "20", "--verify", "--time", "1s", "--no-store"]);
    assert!(!o.status.success() && stderr(&o).contains("--verify with trims"), "{}", stderr(&o));
    // read + trim above 100% is named with both flags' values.
    let o = run(&["run", "-t", "mem:64m", "--read", "90", "--trim", "20", "--dry-run"]);
    assert!(!o.status.success() && stderr(&o).contains("90% + 20%"), "{}", stderr(&o));
}

/// Asks nbdkit to stop (SIGTERM, so its stats filter writes its file) and waits.
fn stop(mut server: Nbdkit) {
    let mut child = server.child.take().unwrap();
    signal(&child, libc::SIGTERM);
    let _ = child.wait();
}

/// "trim: 39 ops, ..." from nbdkit's stats file: the count of `op`.
fn ops_in_stats(stats: &str, op: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{op}: ")))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn nbd_trims_and_flushes_reach_the_server_and_are_refused_where_not_advertised() {
    let dir = shm_dir();
    let stats = dir.path().join("stats.txt");
    let statsfile = format!("statsfile={}", stats.display());
    let server = Nbdkit::unix(dir.path(), "16M", &["--filter=stats", &statsfile]);
    let json = dir.path().join("nbd.json");
    // Queue depth 1 with --ios: every I/O issued is measured, none left in flight.
    let o = run(&[
        "run",
        "-t",
        &server.uri,
        "--read",
        "20",
        "--trim",
        "40",
        "--flush",
        "2",
        "--qd",
        "1",
        "--ios",
        "300",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    stop(server);
    let text = std::fs::read_to_string(&stats).expect("nbdkit's stats filter wrote its file");
    let s = summary(&json);
    assert!(u(&s, "ios_trimmed") > 50 && u(&s, "ios_synced") > 20, "{s}");
    assert_eq!(ops_in_stats(&text, "trim"), u(&s, "ios_trimmed"), "{text}");
    assert_eq!(ops_in_stats(&text, "flush"), u(&s, "ios_synced"), "{text}");
    assert_eq!(ops_in_stats(&text, "write"), u(&s, "ios_written"), "{text}");

    // A server that does not advertise trims (nbdkit's sh plugin, can_trim says no).
    let script = dir.path().join("notrim.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncase \"$1\" in\n  get_size) echo 16M ;;\n  pread) dd if=/dev/zero count=$3 iflag=count_bytes status=none ;;\n  \
         pwrite) cat >/dev/null ;;\n  can_write|can_flush|flush) exit 0 ;;\n  can_trim) exit 3 ;;\n  *) exit 2 ;;\nesac\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let socket = dir.path().join("notrim.sock");
    let mut child = Command::new("nbdkit")
        .args(["-f", "--exit-with-parent", "-U"])
        .arg(&socket)
        .arg("sh")
        .arg(&script)
        .spawn()
        .expect("nbdkit sh plugin");
    crate::common::wait_for(|| socket.exists());
    let uri = format!("nbd+unix:///?socket={}", socket.display());
    let o = run(&["run", "-t", &uri, "--read", "50", "--trim", "10", "--time", "1s", "--no-store", "-q"]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("does not accept trims") && stderr(&o).contains("NBD_CMD_TRIM"), "{}", stderr(&o));
}

#[test]
fn trims_and_syncs_round_trip_through_a_profile() {
    let dir = shm_dir();
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "name = \"t\"\ndescription = \"trims\"\nfsync = 16\n\n[[phases]]\nname = \"main\"\n\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 4\n\n\
         [[phases.groups.access]]\nshare = 100.0\nbs = \"4k\"\nread = 30.0\ntrim = 10.0\nrandom = 100.0\n",
    )
    .unwrap();
    let file = dir.path().join("p.dat");
    let o = run(&["run", "--profile-file", profile.to_str().unwrap(), "-t", file.to_str().unwrap(), "--size", "4m", "--dry-run"]);
    let out = crate::common::stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("30% read / 10% trim / 60% write") && out.contains("fsync after every 16 writes"), "{out}");
    // Both keys together are refused, naming them.
    let text = std::fs::read_to_string(&profile).unwrap().replace("fsync = 16\n", "fsync = 16\nflush = 2\n");
    std::fs::write(&profile, text).unwrap();
    let o = run(&["run", "--profile-file", profile.to_str().unwrap(), "-t", file.to_str().unwrap(), "--dry-run"]);
    assert!(!o.status.success() && stderr(&o).contains("fsync and flush"), "{}", stderr(&o));
}

#[test]
fn a_trim_drops_the_blocks_a_cache_holds() {
    let dir = shm_dir();
    let hits = |mix: &[&str], mode: &str| {
        let json = dir.path().join(format!("cache-{mode}-{}.json", mix.join("")));
        let mut args = vec!["run", "-t", "mem:4m", "--cache", "100%", "--cache-mode", mode, "--qd", "4", "--time", "1s", "--ramp", "1s"];
        args.extend_from_slice(mix);
        args.extend_from_slice(&["--no-store", "-q", "--json", json.to_str().unwrap()]);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        summary(&json)
    };
    // A cache as large as the region serves every read once warm...
    let s = hits(&["--read", "100"], "readonly");
    assert!(s["cache"]["read_hit_ratio"].as_f64().unwrap() > 0.99, "{}", s["cache"]);
    // ...but a trimmed block leaves it: with half the I/Os trims, a read finds
    // its block only when that block's last access was a read (half the time).
    let s = hits(&["--read", "50", "--trim", "50"], "readonly");
    let ratio = s["cache"]["read_hit_ratio"].as_f64().unwrap();
    assert!((0.4..0.6).contains(&ratio), "read hit ratio {ratio} with trims dropping blocks: {}", s["cache"]);
    // Write-back: trimmed dirty blocks are dropped, not owed to the target.
    let s = hits(&["--read", "40", "--trim", "30"], "writeback");
    assert_eq!(s["errors"]["total"].as_u64(), Some(0), "{s}");
    assert_eq!(s["cache"]["dirty_lost_blocks"].as_u64(), Some(0), "{}", s["cache"]);
    assert!(u(&s, "ios_trimmed") > 1000, "{s}");
}

#[test]
fn iscsi_flushes_always_and_trims_only_a_thin_lun() {
    let dir = shm_dir();
    let backing = dir.path().join("tgt-lun");
    std::fs::File::create(&backing).unwrap().set_len(16 << 20).unwrap();
    let server = lunmark::lab::servers::tgtd(&backing).expect("tgtd (Debian's tgt package; scripts/setup.sh installs it)");
    let json = dir.path().join("iscsi.json");
    let o = run(&[
        "run",
        "-t",
        &server.uri,
        "--read",
        "0",
        "--flush",
        "4",
        "--qd",
        "1",
        "--ios",
        "100",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!((u(&summary(&json), "ios_written"), u(&summary(&json), "ios_synced")), (80, 20), "SYNCHRONIZE CACHE every 4 writes");
    // tgtd's LUNs are thick unless asked: UNMAP is refused before the run.
    let o = run(&["run", "-t", &server.uri, "--read", "50", "--trim", "50", "--ios", "10", "--no-store", "-q"]);
    assert!(!o.status.success() && stderr(&o).contains("LBPME = 0"), "{}", stderr(&o));
    // A thin LUN takes UNMAP, and tgtd punches the range out of its backing file.
    server.tgtadm(&["--op", "update", "--mode", "logicalunit", "--tid", "1", "--lun", "1", "--params", "thin_provisioning=1"]).unwrap();
    fill(&backing, 16);
    let o = run(&[
        "run",
        "-t",
        &server.uri,
        "--read",
        "0",
        "--trim",
        "100",
        "--random",
        "0",
        "--bs",
        "1m",
        "--qd",
        "1",
        "--ios",
        "16",
        "--ramp",
        "0s",
        "--no-store",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(u(&summary(&json), "ios_trimmed"), 16);
    assert_eq!(blocks(&backing), 0, "the LUN's backing file was punched out by UNMAP");
}
