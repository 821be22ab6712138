use super::*;

fn env(k: &str) -> Option<String> {
    (k == "DIR").then(|| "/dev/shm/d".to_string())
}

fn map(text: &str) -> Imported {
    import(text, "t.fio", "t", &env, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(text: &str) -> String {
    import(text, "t.fio", "t", &env, &ImportOptions::default()).unwrap_err().to_string()
}

fn group(p: &Profile, phase: usize, g: usize) -> &WorkerGroup {
    &p.phases[phase].groups[g]
}

#[test]
fn rw_and_rwmix_become_read_and_random_shares() {
    for (rw, read, random) in [
        ("read", 100.0, 0.0),
        ("write", 0.0, 0.0),
        ("randread", 100.0, 100.0),
        ("randwrite", 0.0, 100.0),
        ("rw", 50.0, 0.0),
        ("readwrite", 50.0, 0.0),
        ("randrw", 50.0, 100.0),
    ] {
        let p = map(&format!("[j]\nrw={rw}\nsize=1m\nruntime=1\ntime_based\n")).profile;
        let l = &group(&p, 0, 0).access;
        assert_eq!(l.len(), 1, "{rw}");
        assert_eq!((l[0].read, l[0].random, l[0].bs), (read, random, Bytes(4096)), "{rw}");
    }
    let p = map("[j]\nrw=randrw\nrwmixread=70\nsize=1m\n").profile;
    assert_eq!(group(&p, 0, 0).access[0].read, 70.0);
    let p = map("[j]\nrw=randrw\nrwmixwrite=20\nsize=1m\n").profile;
    assert_eq!(group(&p, 0, 0).access[0].read, 80.0);
    let e = refused("[j]\nrw=randtrimwrite\nsize=1m\n");
    assert!(e.contains("line 2: rw=randtrimwrite: trims each block and then writes it"), "{e}");
    let e = refused("[j]\nrw=randrw\nrwmixread=70\nrwmixwrite=40\nsize=1m\n");
    assert!(e.contains("line 4") && e.contains("do not add up to 100"), "{e}");
}

#[test]
fn bssplit_becomes_share_lines_per_direction() {
    let p = map("[j]\nrw=randrw\nrwmixread=70\nbssplit=8k/50:4k/50\nsize=1m\n").profile;
    let lines = &group(&p, 0, 0).access;
    let got: Vec<(f64, u64, f64)> = lines.iter().map(|l| (l.share, l.bs.get(), l.read)).collect();
    assert_eq!(got, vec![(35.0, 4096, 100.0), (35.0, 8192, 100.0), (15.0, 4096, 0.0), (15.0, 8192, 0.0)]);
    assert!(lines.iter().all(|l| l.align == Some(Bytes(4096))), "fio aligns to the smallest size");
    // Sizes without a share split the rest; reads and writes apart after a comma.
    let p = map("[j]\nrw=randrw\nbssplit=4k/40:16k:64k,128k\nsize=1m\n").profile;
    let got: Vec<(f64, u64, f64)> = group(&p, 0, 0).access.iter().map(|l| (l.share, l.bs.get(), l.read)).collect();
    assert_eq!(got, vec![(20.0, 4096, 100.0), (15.0, 16384, 100.0), (15.0, 65536, 100.0), (50.0, 131072, 0.0)]);
    // Short of 100%: the largest size takes the rest, as in fio, and the user is told.
    let imported = map("[j]\nrw=randread\nbssplit=4k/50:8k/40\nsize=1m\n");
    let got: Vec<f64> = group(&imported.profile, 0, 0).access.iter().map(|l| l.share).collect();
    assert_eq!(got, vec![50.0, 50.0]);
    assert!(imported.notes.iter().any(|n| n.contains("takes the other 10%")), "{:?}", imported.notes);
    assert!(refused("[j]\nbssplit=4k/80:8k/40\nsize=1m\n").contains("add up to 120%"));
}

#[test]
fn bs_with_two_values_gives_read_and_write_lines() {
    let p = map("[j]\nrw=randrw\nrwmixread=60\nbs=4k,64k\nsize=1m\n").profile;
    let got: Vec<(f64, u64, f64)> = group(&p, 0, 0).access.iter().map(|l| (l.share, l.bs.get(), l.read)).collect();
    assert_eq!(got, vec![(60.0, 4096, 100.0), (40.0, 65536, 0.0)]);
    let p = map("[j]\nrw=read\nbs=128k\nsize=1m\n").profile;
    assert_eq!(group(&p, 0, 0).access[0].bs, Bytes(128 << 10));
}

#[test]
fn bsrange_becomes_the_sizes_fio_draws() {
    // fio: MIN + MAX x u, rounded down to a multiple of MIN: 4k-16k gives 4k, 8k, 12k, 16k, a quarter each.
    let p = map("[j]\nrw=randread\nbsrange=4k-16k\nsize=1m\n").profile;
    let got: Vec<(f64, u64)> = group(&p, 0, 0).access.iter().map(|l| (l.share, l.bs.get())).collect();
    assert_eq!(got, vec![(25.0, 4096), (25.0, 8192), (25.0, 12288), (25.0, 16384)]);
    // 4k-10k: 4k for u < 0.4, 8k for 0.4..0.8, and the rest capped at 10k.
    let p = map("[j]\nrw=randread\nbsrange=4k-10k\nsize=1m\n").profile;
    let got: Vec<(u64, f64)> = group(&p, 0, 0).access.iter().map(|l| (l.bs.get(), (l.share * 1e6).round() / 1e6)).collect();
    assert_eq!(got, vec![(4096, 40.0), (8192, 40.0), (10240, 20.0)]);
    assert!(refused("[j]\nbsrange=512-1m\nsize=1m\n").contains("at most 256 lines"));
}

#[test]
fn jobs_run_together_until_a_stonewall_or_wait_for() {
    let text = "[global]\nsize=1m\nfilename=/dev/shm/a\n[a]\nrw=read\n[b]\nrw=write\nnew_group\n[c]\nstonewall\nrw=randread\n[d]\nwait_for=c\nrw=randwrite\n";
    let p = map(text).profile;
    let names: Vec<Vec<&str>> = p.phases.iter().map(|ph| ph.groups.iter().map(|g| g.name.as_str()).collect()).collect();
    assert_eq!(names, vec![vec!["a", "b"], vec!["c"], vec!["d"]]);
    assert_eq!(p.phases[0].name, "a+b");
    // wait_for on one job while another of its phase keeps running cannot be phases.
    let e = refused("[global]\nsize=1m\n[a]\n[b]\n[c]\nwait_for=a\n");
    assert!(e.contains("line 6: wait_for=a: waits for 'a' only, while 'b' keep running"), "{e}");
    assert!(refused("[a]\nsize=1m\nwait_for=zz\n").contains("no job 'zz' comes before this one"));
}

#[test]
fn numjobs_iodepth_and_files() {
    // A shared file: numjobs workers on it.
    let p = map("[j]\nnumjobs=4\niodepth=16\nfilename=/dev/shm/x\nsize=1m\n").profile;
    let g = group(&p, 0, 0);
    assert_eq!((g.workers, g.qd, g.worker_per_target), (4, 16, false));
    assert_eq!(p.targets, vec!["/dev/shm/x"]);
    // No filename: fio's jobname.clone.0 in the directory, one file per clone.
    let p = map("[j]\nnumjobs=2\ndirectory=${DIR}\nsize=1m\n").profile;
    assert_eq!(p.targets, vec!["/dev/shm/d/j.0.0", "/dev/shm/d/j.1.0"]);
    assert!(group(&p, 0, 0).worker_per_target);
    // Several files: fio's iodepth spans them, lunmark's is per file; size is split among them.
    let p = map("[j]\nfilename=/a\\:b:/c\niodepth=8\nsize=2m\n").profile;
    assert_eq!(p.targets, vec!["/a:b", "/c"]);
    assert_eq!((group(&p, 0, 0).qd, p.size), (4, Some(Bytes(1 << 20))));
    assert!(refused("[j]\nfilename=/a:/b:/c\niodepth=8\nsize=3m\n").contains("iodepth 8 over 3 files"));
    let p = map("[j]\nfilename=/a:/b\nfilesize=3m\nsize=2m\noffset=1m\n").profile;
    assert_eq!((p.size, p.offset), (Some(Bytes(3 << 20)), Some(Bytes(1 << 20))));
}

#[test]
fn engines_and_direct() {
    let p = map("[j]\nsize=1m\n").profile;
    assert_eq!((p.engine, p.buffered), (Some(EngineChoice::Psync), true), "fio's defaults: psync, buffered");
    let p = map("[j]\nsize=1m\nioengine=io_uring\ndirect=1\n").profile;
    assert_eq!((p.engine, p.buffered), (Some(EngineChoice::IoUring), false));
    let i = map("[j]\nsize=1m\nioengine=libaio\nbuffered=0\n");
    assert_eq!((i.profile.engine, i.profile.buffered), (Some(EngineChoice::IoUring), false));
    assert!(i.notes.iter().any(|n| n.contains("libaio runs on io_uring")));
    for e in ["sync", "pvsync", "psync"] {
        assert_eq!(map(&format!("[j]\nsize=1m\nioengine={e}\n")).profile.engine, Some(EngineChoice::Psync));
    }
    let p = map("[j]\nioengine=null\nsize=1g\nrw=randread\n").profile;
    assert_eq!((p.targets.clone(), p.engine, p.size), (vec!["null:1g".to_string()], None, None));
    let p = map("[j]\nioengine=nbd\nuri=nbd://127.0.0.1:10809/e\nruntime=1\ntime_based\n").profile;
    assert_eq!(p.targets, vec!["nbd://127.0.0.1:10809/e"]);
    let p = map("[j]\nioengine=libiscsi\nfilename=iscsi\\://127.0.0.1/iqn.2016-02.com.fio\\:t/1\nruntime=1\ntime_based\n").profile;
    assert_eq!(p.targets, vec!["iscsi://127.0.0.1/iqn.2016-02.com.fio:t/1"]);
    assert!(refused("[j]\nioengine=posixaio\nsize=1m\n").contains("engine 'posixaio' is not one lunmark has"));
    assert!(refused("[j]\nioengine=nbd\n").contains("needs uri="));
    assert!(refused("[a]\nsize=1m\ndirect=1\n[b]\nsize=1m\n").contains("differs from job 'a' in ioengine or direct"));
}

#[test]
fn run_length_follows_fio() {
    let p = map("[j]\nsize=1m\nruntime=30\ntime_based\nramp_time=2s\n").profile;
    assert_eq!((p.time, p.ios, p.ramp), (Some(Duration::from_secs(30)), None, Some(Duration::from_secs(2))));
    // fio's default: one pass over size; fio has no ramp unless asked.
    let p = map("[j]\nsize=1m\nbs=4k\n").profile;
    assert_eq!((p.time, p.ios, p.ramp), (None, Some(256), Some(Duration::ZERO)));
    let p = map("[j]\nsize=1m\nio_size=8m\nbs=64k\n").profile;
    assert_eq!(p.ios, Some(128));
    let p = map("[j]\nsize=1m\nnumber_ios=1000\n").profile;
    assert_eq!(p.ios, Some(1000));
    let i = map("[j]\nsize=1g\nruntime=1m\n");
    assert_eq!(i.profile.time, Some(Duration::from_secs(60)));
    assert!(i.notes.iter().any(|n| n.contains("whichever comes first")), "{:?}", i.notes);
    assert!(refused("[j]\nsize=1m\ntime_based\n").contains("time_based without runtime"));
    let differ = "[a]\nsize=1m\nbs=128k\n[b]\nstonewall\nsize=1m\n";
    assert!(refused(differ).contains("how long it runs"));
    // --time or --ios on the command line decides it instead.
    let given = ImportOptions { run_length_given: true, ..Default::default() };
    assert_eq!(import(differ, "t.fio", "t", &env, &given).unwrap().profile.phases.len(), 2);
}

#[test]
fn rate_seed_verify_and_no_effect_options() {
    let i = map("[j]\nsize=1m\nrw=randread\nnumjobs=2\nrate_iops=500\nrandseed=42\nverify=crc32c\nname=renamed\ndescription=x\ngroup_reporting\nthread\nnorandommap\nrandom_distribution=random\nstartdelay=0\n");
    let g = group(&i.profile, 0, 0);
    assert_eq!((g.name.as_str(), g.rate), ("renamed", Some(1000.0)), "rate_iops is per job: x numjobs");
    assert_eq!((i.profile.seed, i.profile.verify), (Some(42), true));
    assert!(i.notes.iter().any(|n| n.contains("CRC-32C")));
    let e = refused("[j]\nsize=1m\nrw=randrw\nrate_iops=500\n");
    assert!(e.contains("caps each direction apart"), "{e}");
}

#[test]
fn every_unsupported_option_is_named_with_its_line_or_skipped_when_lenient() {
    let text =
        "[global]\nsize=1m\nzonemode=zbd\n[a]\nthinktime_spin=10\nexec_prerun=x\n[b]\nrandom_distribution=zoned_abs:1/1\nstartdelay=5\n";
    let e = refused(text);
    for want in [
        "line 3: zonemode=zbd",
        "line 5: thinktime_spin=10",
        "line 6: exec_prerun=x",
        "line 8: random_distribution=zoned_abs:1/1",
        "line 9: startdelay=5",
    ] {
        assert!(e.contains(want), "{want} missing from: {e}");
    }
    assert_eq!(e.matches("zonemode").count(), 1, "a [global] option is named once: {e}");
    let lenient = ImportOptions { lenient: true, ..Default::default() };
    // Each of these changes the workload: --fio-lenient refuses them too (a user's
    // trial found offset_increment dropped with a warning: four workers on the same blocks).
    let e = import(text, "t.fio", "t", &env, &lenient).unwrap_err().to_string();
    assert!(e.contains("line 9: startdelay=5") && e.contains("cannot skip"), "{e}");
    let e = import("[a]\nsize=1m\nnumjobs=4\noffset_increment=1m\n", "t.fio", "t", &env, &lenient).unwrap_err().to_string();
    assert!(e.contains("line 4: offset_increment=1m: job 'a' gives each clone a file of its own"), "{e}");
    // Options that change no figure are skipped, a warning each.
    let text = "[global]\nsize=1m\nunlink=1\n[a]\nstats=0\n";
    assert!(refused(text).contains("line 3: unlink=1"));
    let i = import(text, "t.fio", "t", &env, &lenient).unwrap();
    assert_eq!(i.skipped.len(), 2, "{:?}", i.skipped);
    assert!(i.skipped[0].contains("line 3: unlink=1") && i.skipped[0].contains("skipped"));
    // A value that would change the workload cannot be skipped.
    let e = import("[a]\nsize=1m\nrw=trimwrite\nfsync=x\n", "t.fio", "t", &env, &lenient).unwrap_err().to_string();
    assert!(e.contains("line 3: rw=trimwrite") && e.contains("line 4: fsync=x"), "{e}");
    // offset_increment of one clone, or of 0, moves nothing.
    let p = map("[a]\nsize=1m\noffset_increment=1m\n").profile;
    assert_eq!((p.offset, p.phases[0].groups[0].offset_increment), (None, None));
    // On a shared file each clone gets its own part; the region holds them all.
    let i = map("[a]\nfilename=/dev/shm/x\nsize=1m\noffset=64k\nnumjobs=4\noffset_increment=1m\n");
    let g = group(&i.profile, 0, 0);
    assert_eq!((i.profile.size, i.profile.offset, g.offset_increment), (Some(Bytes(4 << 20)), Some(Bytes(65536)), Some(Bytes(1 << 20))));
    assert_eq!(i.profile.ios, Some(256), "one pass over each clone's own 1m");
    assert!(i.notes.iter().any(|n| n.contains("each of the 4 workers of job 'a' does its I/O on its own 1m")), "{:?}", i.notes);
    let e = refused("[a]\nfilename=/dev/shm/x\nnumjobs=2\noffset_increment=1m\nruntime=1\ntime_based\n");
    assert!(e.contains("line 4: offset_increment=1m") && e.contains("give size="), "{e}");
}

#[test]
fn loops_rate_and_blockalign_map_to_ios_rate_and_alignment() {
    let i = map("[j]\nsize=1m\nbs=4k\nrw=read\nloops=3\n");
    assert_eq!(i.profile.ios, Some(768));
    assert!(i.notes.iter().any(|n| n.contains("loops=3: 3 passes of 256 I/Os per worker")), "{:?}", i.notes);
    assert_eq!(map("[j]\nsize=1m\nloops=3\nruntime=2\ntime_based\n").profile.time, Some(Duration::from_secs(2)));
    // rate is bytes a second per clone: at 4k, 4m is 1,024 I/Os; READ,WRITE parts by direction.
    let g = |t: &str| group(&map(t).profile, 0, 0).rate;
    assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randread\nrate=4m\nnumjobs=2\n"), Some(2048.0));
    assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randwrite\nrate=,1m\n"), Some(256.0));
    assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randread\nrate_iops=500,\n"), Some(500.0));
    assert_eq!(g("[j]\nsize=1m\nbs=4k\nrw=randwrite\nrate_iops=500,\n"), None, "no cap on writes");
    let i = map("[j]\nsize=1m\nrw=randread\nbssplit=4k/50:12k/50\nrate=8m\n");
    assert_eq!(group(&i.profile, 0, 0).rate, Some(1024.0));
    assert!(i.notes.iter().any(|n| n.contains("mean transfer size (8192 bytes)")), "{:?}", i.notes);
    for (job, says) in [
        ("rw=randrw\nrate=4m\n", "caps each direction apart"),
        ("rw=randrw\nrate=4m,1m\n", "separate read and write rates"),
        ("rw=read\nrate=4m\nrate_iops=10\n", "give one of rate and rate_iops"),
        ("rw=read\nrate=x\n", "not a size"),
        ("rw=read\nloops=0\n", "at least 1"),
        ("rw=read\nblockalign=4k,4k,4k\n", "trim alignment"),
    ] {
        let e = refused(&format!("[j]\nsize=1m\n{job}"));
        assert!(e.contains(says), "{job}: {e}");
    }
    let p = map("[j]\nsize=1m\nrw=randrw\nbs=4k\nblockalign=512,1k\n").profile;
    let aligns: Vec<Option<Bytes>> = group(&p, 0, 0).access.iter().map(|l| l.align).collect();
    assert_eq!(aligns, vec![Some(Bytes(512)), Some(Bytes(1024))]);
    assert_eq!(group(&map("[j]\nsize=1m\nrw=randread\nba=512\n").profile, 0, 0).access[0].align, Some(Bytes(512)));
    // rate_process=poisson takes the bandwidth cap's rate too.
    let g = map("[j]\nsize=1m\nbs=4k\nrw=randread\nrate=1m\nrate_process=poisson\n").profile.phases[0].groups[0].clone();
    assert_eq!((g.rate, g.arrivals), (Some(256.0), crate::workload::timing::Arrivals::Poisson));
}

/// Time-based jobs with their own runtime keep it (a group's own time); jobs
/// that run sizes or counts must still agree, and a latency_target search
/// judges every step over one window, so its jobs must agree too.
#[test]
fn jobs_of_one_point_keep_their_own_runtime_when_time_based() {
    let text = "[global]\nsize=1m\ntime_based\n[a]\nruntime=10\n[b]\nruntime=20\n";
    let i = map(text);
    let times: Vec<Option<Duration>> = i.profile.phases[0].groups.iter().map(|g| g.time).collect();
    assert_eq!((i.profile.time, times), (Some(Duration::from_secs(10)), vec![None, Some(Duration::from_secs(20))]));
    assert!(
        i.notes.iter().any(|n| n.starts_with(
            "runtime=20s (job 'b'): it runs 20s from its own start, as fio runs it, where the profile's time is 10s (job 'a''s)"
        )),
        "{:?}",
        i.notes
    );
    let e = refused("[global]\nsize=1m\n[a]\nruntime=10\ntime_based\n[b]\nio_size=2m\n");
    assert!(
        e.contains("line 7: io_size=2m: job 'b' differs from job 'a' in how long it runs") && e.contains("give --time or --ios"),
        "{e}"
    );
    let e = refused("[global]\nsize=1m\ntime_based\nlatency_target=5ms\nlatency_window=2s\n[a]\nruntime=10\n[b]\nruntime=20\n");
    assert!(e.contains("job 'b' differs from job 'a' in how long it runs"), "{e}");
    let given = ImportOptions { run_length_given: true, ..Default::default() };
    let groups = import(text, "t.fio", "t", &env, &given).unwrap().profile.phases[0].groups.clone();
    assert!(groups.iter().all(|g| g.time.is_none()), "--time or --ios is every job's");
}

/// numa_cpu_nodes pins to the nodes' CPUs, as cpus_allowed does (read from sysfs).
#[test]
fn numa_cpu_nodes_pin_to_the_nodes_cpus() {
    let dir = tempfile::tempdir().unwrap();
    for (node, list) in [("node0", "0-1,4\n"), ("node1", "2-3\n")] {
        std::fs::create_dir_all(dir.path().join(node)).unwrap();
        std::fs::write(dir.path().join(node).join("cpulist"), list).unwrap();
    }
    std::fs::write(dir.path().join("online"), "0-1\n").unwrap();
    let cpus = |l: &str| numa_cpus(l, dir.path()).map(|c| c.0);
    assert_eq!(cpus("1"), Ok(vec![2, 3]));
    assert_eq!(cpus("0,1"), Ok(vec![0, 1, 2, 3, 4]));
    assert_eq!(cpus("all"), Ok(vec![0, 1, 2, 3, 4]));
    assert!(cpus("7").unwrap_err().contains("NUMA node 7 does not exist"));
    // This host's node 0, through the job file.
    let here = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    let p = map("[j]\nsize=1m\nnuma_cpu_nodes=0\n").profile;
    assert_eq!(p.cpus, Some(crate::workload::cpus::CpuList::parse_syntax(here.trim()).unwrap()));
    assert!(refused("[j]\nsize=1m\nnuma_cpu_nodes=0\ncpus_allowed=0\n").contains("give one of cpus_allowed and numa_cpu_nodes"));
}

/// fio's slope criterion is |slope a second| < X% of the mean; lunmark's
/// slope excursion is that slope x (window - 1): the limits match, and the
/// range limit cannot bind. The deviation criterion maps onto a range of 2X%.
#[test]
fn fio_steady_state_maps_onto_lunmarks() {
    use crate::workload::steady::{judge, SteadyMetric};
    let i = map("[j]\nsize=1m\nruntime=60\ntime_based\nss=iops_slope:1%\nss_dur=5\n");
    let s = i.profile.steady.clone().expect("steady");
    assert_eq!((s.metric, s.window, s.round.as_secs(), s.slope, s.range), (SteadyMetric::Iops, 5, 1, 4.0, 500.0));
    assert!(
        i.notes.iter().any(|n| n
            .starts_with("ss=iops_slope:1% (line 5), ss_dur=5s: job 'j' -> --steady iops, window 5 x 1 s, slope excursion 4% of the mean")),
        "{:?}",
        i.notes
    );
    // fio: slope 0.9 a second on a mean of 100 is steady (< 1%), 1.1 is not; lunmark the same.
    for (step, steady) in [(0.9, true), (1.1, false)] {
        let w: Vec<f64> = (0..5).map(|k| 98.2 + step * k as f64).collect();
        assert_eq!(judge(&w, s.range, s.slope).steady, steady, "step {step}: {w:?}");
    }
    // Wildly spread figures with no slope: fio's slope test passes, and lunmark's range does not stop it.
    assert!(judge(&[10.0, 190.0, 100.0, 190.0, 10.0], s.range, s.slope).steady);
    let s = map("[j]\nsize=1m\nruntime=60\ntime_based\nsteadystate=bw:10%\nsteadystate_duration=6s\n").profile.steady.unwrap();
    assert_eq!((s.metric, s.window, s.range, s.slope), (SteadyMetric::Bw, 6, 20.0, 30.0));
    // No ss_dur: fio does not watch (a note); ss_dur alone: fio's default iops_slope:0.01%.
    assert!(map("[j]\nsize=1m\nss=iops:10%\n").profile.steady.is_none());
    assert_eq!(map("[j]\nsize=1m\nruntime=9\ntime_based\nss_dur=3\n").profile.steady.unwrap().slope, 0.02);
    let e = refused("[j]\nsize=1m\nruntime=60\ntime_based\nss=iops:10%\nss_dur=30\nsteadystate_ramp_time=5\n");
    assert!(e.contains("line 7: steadystate_ramp_time=5: fio waits 5 after its ramp") && e.contains("--steady iops|bw"), "{e}");
    assert!(refused("[j]\nsize=1m\nss=iops:200\nss_dur=10\n")
        .contains("line 3: ss=iops:200: '200': lunmark's --steady takes limits in percent"));
    assert!(refused("[j]\nsize=1m\nss=lat:1%\nss_dur=10\n").contains("'lat' is not a steady-state criterion"));
    assert!(refused("[j]\nsize=1m\nss=iops:1%\nss_dur=1500ms\n").contains("line 4: ss_dur=1500ms: fio takes a sample a second"));
    assert!(refused("[a]\nsize=1m\nss=iops:1%\nss_dur=10\n[b]\nsize=1m\n").contains("differs from job 'a' in ss and ss_dur"));
}

/// fio's log options name fio's files (`PREFIX_bw.N.log`, N the job's
/// thread number in the file); what lunmark cannot log is named, and
/// --fio-lenient may skip it (a log changes no figure).
#[test]
fn fio_logs_are_named_as_fio_names_them() {
    let text = "[global]\nsize=1m\nruntime=3\ntime_based\n[a]\nnumjobs=2\n[b]\nstonewall\nrw=randread\nwrite_bw_log=x\nwrite_lat_log\nlog_avg_msec=2000\n";
    let i = map(text);
    let names: Vec<(&str, LogKind, usize, u32)> = i.logs.iter().map(|l| (l.path.as_str(), l.kind, l.point, l.avg_secs)).collect();
    assert_eq!(names, vec![("x_bw.3.log", LogKind::Bw, 1, 2), ("b_lat.3.log", LogKind::Lat, 1, 2), ("b_clat.3.log", LogKind::Clat, 1, 2)]);
    assert_eq!(i.logs[0].directions, vec![0]);
    assert!(i.notes.iter().any(|n| n.contains("no b_slat")), "{:?}", i.notes);
    let lenient = ImportOptions { lenient: true, ..Default::default() };
    for (job, says) in [
        ("[a]\nsize=1m\nwrite_iops_log=x\n[b]\nsize=1m\n", "only a job that runs alone in its phase with numjobs=1"),
        ("[a]\nsize=1m\nnumjobs=2\nwrite_iops_log=x\n", "only a job that runs alone"),
        ("[a]\nsize=1m\nrw=randrw\nwrite_lat_log=x\n", "reads and writes"),
        ("[a]\nsize=1m\nrw=read\nrate_iops=10\nwrite_lat_log=x\n", "has a rate"),
        ("[a]\nsize=1m\nwrite_iops_log=x\nlog_avg_msec=500\n", "multiple of 1000"),
    ] {
        let e = refused(job);
        assert!(e.contains(says), "{job}: {e}");
        let i = import(job, "t.fio", "t", &env, &lenient).unwrap_or_else(|e| panic!("{job}: {e}"));
        assert!(i.logs.is_empty() && i.skipped.len() == 1, "{job}: {:?}", i.skipped);
    }
}

/// Options that change nothing lunmark measures run without --fio-lenient,
/// each with a note that says why; invalidate on a buffered job does change
/// what is cached, and is refused.
#[test]
fn harmless_options_are_accepted_with_a_note_each() {
    let keys = [
        "thread",
        "randrepeat=0",
        "gtod_reduce=1",
        "invalidate=1",
        "refill_buffers",
        "scramble_buffers=0",
        "group_reporting=1",
        "lat_percentiles=1",
        "clat_percentiles=0",
        "significant_figures=4",
        "disk_util=0",
        "write_hist_log=h",
        "per_job_logs=0",
    ];
    let i = map(&format!("[j]\nsize=1m\ndirect=1\nrw=randread\nnorandommap\n{}\n", keys.join("\n")));
    for (n, k) in keys.iter().enumerate() {
        let want = format!("{k} (line {}): accepted, it changes nothing lunmark measures", n + 6);
        assert!(i.notes.iter().any(|x| x.starts_with(&want)), "{want} missing: {:#?}", i.notes);
    }
    let e = refused("[j]\nsize=1m\ninvalidate=1\n");
    assert!(e.contains("line 3: invalidate=1: job 'j' goes through the page cache") && e.contains("invalidate=0"), "{e}");
    assert!(map("[j]\nsize=1m\ninvalidate=0\n").notes.iter().any(|n| n.starts_with("invalidate=0 (line 3)")));
}

/// fio drops an empty trailing part (`rw=randread,`, `numjobs=2,`) and an
/// empty list entry (`bssplit=4k/50:8k/50:`), as fio 3.33 runs them.
#[test]
fn empty_trailing_separators_are_what_fio_tolerates() {
    let p = map("[j]\nsize=1m\nrw=randread,\nnumjobs=2,\niodepth=4,\nbssplit=4k/50:8k/50:\ndirect=1,\n").profile;
    let g = group(&p, 0, 0);
    assert_eq!((g.workers, g.qd, g.access.len(), g.access[0].random, p.buffered), (2, 4, 2, 100.0, false));
    // bs=8k, is 8k for reads and fio's default for writes: the parts stay per direction.
    let p = map("[j]\nsize=1m\nrw=randrw\nbs=8k,\n").profile;
    let sizes: Vec<u64> = group(&p, 0, 0).access.iter().map(|l| l.bs.get()).collect();
    assert_eq!(sizes, vec![8192, 4096]);
}

/// size=P% and offset=P% of an existing file, as fio 3.33 takes them (its
/// iolog: size=25% offset=10% of 64 MiB reads 16 MiB from 6,713,344).
#[test]
fn shares_of_the_file_become_bytes_of_the_file() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = dir.path().join("f.dat");
    std::fs::File::create(&f).unwrap().set_len(64 << 20).unwrap();
    let job = |extra: &str| format!("[j]\nfilename={}\nrw=read\nbs=4k\n{extra}", f.display());
    let i = map(&job("size=25%\noffset=10%\n"));
    assert_eq!((i.profile.size, i.profile.offset), (Some(Bytes(16 << 20)), Some(Bytes(6_713_344))));
    assert_eq!(i.profile.ios, Some(4096), "one pass over the region");
    assert!(i.notes.iter().any(|n| n.contains("size=25% (line 5): 25% of") && n.contains("16777216 bytes on each file")), "{:?}", i.notes);
    // The size stops where the file ends.
    let p = map(&job("size=100%\noffset=75%\n")).profile;
    assert_eq!((p.size, p.offset), (Some(Bytes(16 << 20)), Some(Bytes(48 << 20))));
    let e = refused(&job("size=50%\n").replace("f.dat", "missing.dat"));
    assert!(e.contains("line 5: size=50%: a share of the file needs the file's size") && e.contains("missing.dat"), "{e}");
    assert!(refused(&job("size=150%\n")).contains("from 0 to 100"));
}

#[test]
fn trims_and_syncs_map_to_trim_shares_and_the_profile_sync() {
    let i = import("[j]\nrw=randtrim\nbs=64k\nsize=1m\nfdatasync=8\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
    let l = &group(&i.profile, 0, 0).access[0];
    assert_eq!((l.read, l.trim, l.random, l.bs), (0.0, 100.0, 100.0, Bytes(65536)));
    assert_eq!((i.profile.fsync, i.profile.fdatasync), (None, Some(8)));
    let i = import("[j]\nrw=trim\nsize=1m\nfsync=4\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
    let l = &group(&i.profile, 0, 0).access[0];
    assert_eq!((l.read, l.trim, l.random), (0.0, 100.0, 0.0));
    assert_eq!(i.profile.fsync, Some(4));
    // fsync=0 is fio's default: no syncs.
    let i = import("[j]\nrw=write\nsize=1m\nfsync=0\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
    assert_eq!(i.profile.fsync, None);
    let e = refused("[a]\nrw=write\nsize=1m\nfsync=4\n[b]\nrw=write\nsize=1m\n");
    assert!(e.contains("fsync"), "{e}");
    let i = import("[j]\nrw=write\nfilename=/dev/sdz\nfsync=16\n", "t.fio", "t", &env, &ImportOptions::default()).unwrap();
    assert_eq!((i.profile.fsync, i.profile.flush), (None, Some(16)), "fsync of a device is its flush");
    assert!(i.notes.iter().any(|n| n.contains("flush = 16")), "{:?}", i.notes);
    let e = refused("[a]\nrw=write\nsize=1m\nfsync=4\nfdatasync=2\n");
    assert!(e.contains("only one of fsync and fdatasync"), "{e}");
}

#[test]
fn distributions_thinktime_and_poisson_map_where_fio_means_the_same() {
    let i = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=zipf:1.2\nthinktime=500\nthinktime_blocks=4\n");
    let g = group(&i.profile, 0, 0);
    assert_eq!(g.access[0].dist.as_ref().map(|d| d.to_string()).as_deref(), Some("zipf:1.2"));
    assert_eq!((g.thinktime, g.thinktime_blocks), (Some(Duration::from_micros(500)), Some(4)), "a bare thinktime is µs");
    let i = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=zoned:60/10:30/20:10/70\n");
    let d = group(&i.profile, 0, 0).access[0].dist.clone().unwrap();
    assert_eq!((d.to_string().as_str(), d.layout), ("zoned:60/10:30/20:10/70", crate::workload::dist::Layout::Contiguous));
    let i = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=pareto:0.9\nrate_iops=100\nrate_process=poisson\n");
    let g = group(&i.profile, 0, 0);
    assert_eq!((g.arrivals, g.rate), (crate::workload::timing::Arrivals::Poisson, Some(100.0)));
    assert_eq!(g.access[0].dist.as_ref().unwrap().to_string(), "pareto:0.9");
    // Where the meaning differs, the line is named with the reason.
    for (job, says) in [
        ("random_distribution=normal:10", "true bell curve"),
        ("random_distribution=zipf:1.2:0.3", "centre"),
        ("random_distribution=zoned:50/50:50/50,100/100", "apart for reads"),
        ("random_distribution=pareto:0.3", "between 0.5"),
        ("rate_process=poisson", "needs rate_iops or rate"),
    ] {
        let e = refused(&format!("[j]\nsize=1m\nrw=randread\n{job}\n"));
        assert!(e.contains("line 4") && e.contains(says), "{job}: {e}");
    }
    let p = map("[j]\nsize=1m\nrw=randread\nrandom_distribution=zipf:0.9\nthinktime=1ms\n").profile;
    assert_eq!(profile::parse(&profile::to_toml(&p), "round trip").unwrap(), p);
}

/// Polling, pinning and data reduction map to --sqpoll/--poll, --cpus/--cpus-policy
/// and --compress/--dedupe (a user's trial found them refused as unknown options).
#[test]
fn polling_pinning_and_data_reduction_map_to_the_flags() {
    use crate::workload::cpus::{CpuList, CpuPolicy};
    use crate::workload::polling::SqPoll;
    let uring = "[j]\nioengine=io_uring\ndirect=1\nsize=1m\nrw=randwrite\nbs=4k\n";
    let p = map(&format!("{uring}sqthread_poll=1\nsqthread_poll_cpu=1\nhipri\ncpus_allowed=0-1\ncpus_allowed_policy=split\nbuffer_compress_percentage=50\ndedupe_percentage=30\n")).profile;
    assert_eq!((p.sqpoll, p.poll), (Some(SqPoll::Cpu(1)), true));
    assert_eq!((p.cpus.clone(), p.cpus_policy), (Some(CpuList(vec![0, 1])), Some(CpuPolicy::Split)));
    let d = p.data.clone().unwrap();
    assert_eq!((d.compress, d.dedupe, d.dedupe_unit), (50.0, 30.0, None));
    let back = profile::parse(&profile::to_toml(&p), "round trip").unwrap();
    assert_eq!(back, p, "{}", profile::to_toml(&p));
    assert!(profile::to_toml(&p).contains("cpus = \"0-1\""), "{}", profile::to_toml(&p));
    // A bare sqthread_poll polls on any CPU; none of them is the default.
    assert_eq!(map(&format!("{uring}sqthread_poll\n")).profile.sqpoll, Some(SqPoll::AnyCpu));
    let p = map(uring).profile;
    assert_eq!((p.sqpoll, p.poll, p.cpus, p.data), (None, false, None, None));
    // What cannot map is named with its line and why.
    for (job, line, says) in [
        ("ioengine=libaio\nsqthread_poll=1\n", "line 3: sqthread_poll=1", "an option of ioengine=io_uring only"),
        ("ioengine=pvsync2\nhipri\n", "line 3: hipri", "polls completions on io_uring only"),
        ("ioengine=io_uring\nsqthread_poll_cpu=1\n", "line 3: sqthread_poll_cpu=1", "sqthread_poll is not set"),
        // hipri on a buffered job names the job and its options, not --poll and --buffered the user never gave.
        (
            "ioengine=io_uring\ndirect=0\nhipri=1\n",
            "line 4: hipri=1",
            "job 'j' polls for completions of direct I/O, but its I/O goes through the page cache (direct=0): set direct=1, or drop hipri",
        ),
        ("ioengine=io_uring\nhipri\n", "line 3: hipri", "(no direct=1: fio's default)"),
        ("cpus_allowed=3-1\n", "line 2: cpus_allowed=3-1", "the range 3-1 runs backwards"),
        ("cpus_allowed=0,,1\n", "line 2: cpus_allowed=0,,1", "an entry between two commas"),
        ("cpus_allowed=0\ncpus_allowed_policy=spread\n", "line 3: cpus_allowed_policy=spread", "use shared"),
        ("cpus_allowed_policy=split\n", "line 2: cpus_allowed_policy=split", "cpus_allowed, which is not set"),
        ("rw=write\nbuffer_compress_percentage=100\n", "line 3: buffer_compress_percentage=100", "from 0 to 99 percent"),
        ("rw=write\ndedupe_percentage=x\n", "line 3: dedupe_percentage=x", "from 0 to 100 percent"),
    ] {
        let e = refused(&format!("[j]\n{job}size=1m\n"));
        assert!(e.contains(line) && e.contains(says), "{job}: {e}");
    }
    // Held once per run: jobs must agree; a job that only reads has no data to shape.
    let e = refused("[a]\nsize=1m\ncpus_allowed=0\n[b]\nsize=1m\ncpus_allowed=1\n");
    assert!(e.contains("job 'b' differs from job 'a' in cpus_allowed"), "{e}");
    let e = refused("[a]\nrw=write\nsize=1m\nbuffer_compress_percentage=50\n[b]\nrw=write\nsize=1m\n");
    assert!(e.contains("differs from job 'a' in buffer_compress_percentage"), "{e}");
    let i = map("[w]\nrw=write\nsize=1m\ndedupe_percentage=20\n[r]\nrw=read\nsize=1m\ndedupe_percentage=50\n");
    assert_eq!(i.profile.data.as_ref().map(|d| d.dedupe), Some(20.0));
    assert!(i.notes.iter().any(|n| n.contains("job 'r' only reads")), "{:?}", i.notes);
}

#[test]
fn sections_choose_jobs() {
    let text = "[global]\nsize=1m\n[a]\nrw=read\n[b]\nrw=write\n";
    let i = import(text, "t.fio", "t", &env, &ImportOptions { sections: vec!["b".into()], ..Default::default() }).unwrap();
    assert_eq!(i.profile.phases[0].groups[0].name, "b");
    let e = import(text, "t.fio", "t", &env, &ImportOptions { sections: vec!["zz".into()], ..Default::default() }).unwrap_err().to_string();
    assert!(e.contains("--section names none of a, b"), "{e}");
}

#[test]
fn the_profile_round_trips_through_toml() {
    let text = "[global]\nioengine=io_uring\ndirect=1\nsize=8m\nruntime=3\ntime_based\nrandseed=7\nfilename=/dev/shm/x:/dev/shm/y\n[a]\nrw=randrw\nbssplit=4k/50:8k/50\niodepth=8\nrate_iops=\n[b]\nstonewall\nrw=read\nbs=1m\noffset=4k\n";
    let text = text.replace("rate_iops=\n", "");
    let e = refused(&text);
    assert!(e.contains("offset"), "offset differs between jobs: {e}");
    let text = text.replace("offset=4k\n", "");
    let p = map(&text).profile;
    let back = profile::parse(&profile::to_toml(&p), "round trip").unwrap();
    assert_eq!(p, back);
    assert_eq!(p.phases.len(), 2);
    assert_eq!(p.targets.len(), 2);
}

#[test]
fn lenient_refusal_names_only_what_blocks() {
    // unlink changes no figure (lenient would skip it); jobs of a phase starting apart block.
    let text = "[a]\nsize=1m\nunlink=1\n[b]\nsize=1m\nstartdelay=5\n";
    let lenient = ImportOptions { lenient: true, ..Default::default() };
    let e = import(text, "t.fio", "t", &env, &lenient).unwrap_err().to_string();
    assert!(e.contains("line 6: startdelay=5: job 'b' starts 5s after job 'a', and fio counts a job's run from its own start"), "{e}");
    assert!(e.contains("make the jobs time_based with a runtime (or give --time)"), "{e}");
    assert!(!e.contains("unlink"), "lenient names only what blocks: {e}");
    assert!(e.contains("--fio-lenient cannot skip them"), "{e}");
    // Without --fio-lenient both are named, and the hint says what lenient would skip.
    let e = refused(text);
    assert!(e.contains("line 3: unlink=1") && e.contains("line 6: startdelay=5"), "{e}");
    // A delay every job of the phase shares starts the phase later in fio: a note, nothing refused.
    let i = map("[global]\nstartdelay=2\nsize=1m\n[a]\n[b]\nstonewall\nstartdelay=1\n");
    assert!(
        i.notes.iter().any(|n| n.starts_with("startdelay=2s (job 'a'): every job of phase a waits at least that long")),
        "{:?}",
        i.notes
    );
    assert!(
        i.notes
            .iter()
            .any(|n| n.starts_with("startdelay=1s (job 'b'): every job of phase b waits until at least that long after the run's start")),
        "{:?}",
        i.notes
    );
    assert!(i.profile.phases.iter().flat_map(|p| &p.groups).all(|g| g.start_delay.is_none()), "a shared delay changes nothing");
}

/// Jobs of one time-based phase that start apart: each waits its delay past
/// the phase's first job (a group's start delay), the delay they share only
/// starts the phase later; both said in notes.
#[test]
fn startdelays_within_a_time_based_phase_become_group_start_delays() {
    let i = map("[global]\nsize=1m\nruntime=3\ntime_based\nstartdelay=1\n[a]\n[b]\nstartdelay=3\n[c]\nstartdelay=4s\n");
    let delays: Vec<Option<Duration>> = i.profile.phases[0].groups.iter().map(|g| g.start_delay).collect();
    assert_eq!(delays, [None, Some(Duration::from_secs(2)), Some(Duration::from_secs(3))]);
    assert!(
        i.notes.iter().any(|n| n.starts_with("startdelay=1s (job 'a'): every job of phase a+b+c waits at least that long")),
        "{:?}",
        i.notes
    );
    assert!(i.notes.iter().any(|n| n.starts_with("startdelay=4s (job 'c'): it starts 3s after job 'a' in phase a+b+c")), "{:?}", i.notes);
    // With --time given the jobs' own run length does not matter.
    let given = ImportOptions { run_length_given: true, ..Default::default() };
    let i = import("[a]\nsize=1m\n[b]\nsize=1m\nstartdelay=2\n", "t.fio", "t", &env, &given).unwrap();
    assert_eq!(i.profile.phases[0].groups[1].start_delay, Some(Duration::from_secs(2)));
}

/// fio counts startdelay from the start of the whole run (a trial: fio 3.33
/// started two jobs of a second phase, startdelay=1 and 4, together after a
/// first phase of 5 s). A later phase's jobs wait what is left of their
/// delays when it starts; where that start cannot be told (a job before it is
/// not time based), differing delays are refused.
#[test]
fn a_later_phases_startdelays_count_from_the_runs_start_as_fios() {
    let phase_2 = |text: &str| map(text).profile.phases[1].groups.iter().map(|g| g.start_delay).collect::<Vec<_>>();
    let first = "[global]\nsize=1m\ntime_based\n[x]\nruntime=5\n";
    assert_eq!(phase_2(&format!("{first}[b]\nstonewall\nruntime=2\nstartdelay=1\n[c]\nruntime=2\nstartdelay=4\n")), [None, None]);
    let i = map(&format!("{first}[b]\nstonewall\nruntime=2\nstartdelay=6\n[c]\nruntime=2\nstartdelay=9\n"));
    let delays: Vec<Option<Duration>> = i.profile.phases[1].groups.iter().map(|g| g.start_delay).collect();
    assert_eq!(delays, [None, Some(Duration::from_secs(3))], "b waits 1 s more, c 4 s: c starts 3 s after b");
    assert!(
        i.notes.iter().any(|n| n.contains("waits at least 1s more (fio counts startdelay from the run's start; the phase starts 5s in)")),
        "{:?}",
        i.notes
    );
    // With --time the earlier phases' lengths are not fio's.
    let given = ImportOptions { run_length_given: true, ..Default::default() };
    let text = format!("{first}[b]\nstonewall\nstartdelay=1\n[c]\nstartdelay=4\n");
    let e = import(&text, "t.fio", "t", &env, &given).unwrap_err().to_string();
    assert!(e.contains("line 10: startdelay=4: job 'c' and job 'b' of phase b+c wait different times, and fio counts startdelay from the start of the whole run"), "{e}");
}

#[test]
fn options_of_the_corpus_that_lunmark_runs_as_fio_does() {
    // cpumask is cpus_allowed as a bit mask.
    let p = map("[a]\nfilename=/dev/shm/x\nsize=1m\ncpumask=0x0a\n").profile;
    assert_eq!(p.cpus.map(|c| c.0), Some(vec![1, 3]));
    assert_eq!(map("[a]\nfilename=/dev/shm/x\nsize=1m\ncpumask=1\n").profile.cpus.map(|c| c.0), Some(vec![0]));
    assert!(refused("[a]\nsize=1m\ncpumask=0\n").contains("line 3: cpumask=0: '0' is not a CPU mask"));
    assert!(refused("[a]\nsize=1m\ncpumask=1\ncpus_allowed=0\n").contains("give one of cpus_allowed and cpumask"));
    // Output switches and fio's defaults are accepted with a note each.
    let i = map("[a]\nsize=1m\nrw=randwrite\ndisable_slat=1\ndisable_bw=1\nsync=0\noverwrite=1\nverify_fatal=0\n");
    for key in ["disable_slat=1", "disable_bw=1", "sync=0", "overwrite=1", "verify_fatal=0"] {
        assert!(i.notes.iter().any(|n| n.starts_with(key)), "no note for {key}: {:?}", i.notes);
    }
    // What lunmark lacks is refused, naming what to use.
    assert!(refused("[a]\nsize=1m\nsync=1\n").contains("line 3: sync=1: lunmark does not open files with O_SYNC"));
    let i = map("[a]\nsize=1m\nrw=write\noverwrite=0\nfallocate=none\n");
    assert!(i.notes.iter().any(|n| n.starts_with("overwrite=0 (line 4): fio's default")), "{:?}", i.notes);
    assert!(i.notes.iter().any(|n| n.starts_with("fallocate=none (line 5)")), "{:?}", i.notes);
    map("[a]\nsize=1m\nrw=read\noverwrite=0\n");
    // buffer_compress_chunk: 0 or the write size is lunmark's layout; another is refused naming them.
    let i = map("[a]\nsize=1m\nrw=write\nbs=4k\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4k\n");
    assert!(i.profile.data.is_some() && i.notes.iter().any(|n| n.starts_with("buffer_compress_chunk=4k")), "{:?}", i.notes);
    map("[a]\nsize=1m\nrw=write\nbs=4k\nbuffer_compress_percentage=50\nbuffer_compress_chunk=0\n");
    let e = refused("[a]\nsize=1m\nrw=write\nbs=128k\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4096\n");
    assert!(
        e.contains("line 6: buffer_compress_chunk=4096: fio repeats its random and compressible parts every 4096 bytes")
            && e.contains("buffer_compress_chunk=0 (or 131072)"),
        "{e}"
    );
    // filename_format names each clone's file as fio does.
    let p = map("[j]\nfilename_format=file$jobnum.$filenum\ndirectory=/dev/shm/d\nsize=1m\nnumjobs=2\n").profile;
    assert_eq!(p.targets, vec!["/dev/shm/d/file0.0".to_string(), "/dev/shm/d/file1.0".to_string()]);
    assert!(refused("[j]\nfilename_format=f$clientuid\nsize=1m\n").contains("line 2: filename_format=f$clientuid: lunmark fills in"));
    // buffer_pattern: the compressible part's content, with buffer_compress_percentage; alone refused.
    let i = map("[a]\nsize=1m\nrw=write\nbuffer_compress_percentage=66\nbuffer_pattern=0xdeadbeef\n");
    assert!(i.notes.iter().any(|n| n.starts_with("buffer_pattern=0xdeadbeef")), "{:?}", i.notes);
    assert!(refused("[a]\nsize=1m\nrw=write\nbuffer_pattern=0xdeadbeef\n")
        .contains("line 4: buffer_pattern=0xdeadbeef: fio writes this pattern in every write"));
    // rw=read:N skips and rw=randread:N runs, onto the access line (fio 3.33's write_iolog).
    let i = map("[a]\nsize=1m\nbs=4k\nrw=read:8k\n");
    let l = &i.profile.phases[0].groups[0].access[0];
    assert_eq!((l.skip, l.random_run), (Some(Bytes(8192)), None));
    assert!(
        i.notes.iter().any(|n| n.starts_with("rw=read:8k (line 4): each sequential I/O leaves a hole of 8k after it")),
        "{:?}",
        i.notes
    );
    assert_eq!(i.profile.ios, Some(86), "fio reads 86 blocks of a 1m file with rw=read:8k bs=4k");
    let l = map("[a]\nsize=1m\nrw=randread:8\nrw_sequencer=identical\n").profile.phases[0].groups[0].access[0].clone();
    assert_eq!((l.skip, l.random_run, l.random_run_same), (None, Some(8), true));
}

/// `rw=...:N` as profile keys: they read back the same, and bad values are refused naming the field.
#[test]
fn skips_and_random_runs_round_trip_through_the_profile() {
    let p = map("[a]\nsize=1m\nrw=randread:8\nrw_sequencer=identical\n").profile;
    let back = profile::parse(&profile::to_toml(&p), "t").unwrap();
    assert_eq!(back.phases[0].groups[0].access[0], p.phases[0].groups[0].access[0]);
    let toml = profile::to_toml(&p);
    assert!(toml.contains("random_run = 8") && toml.contains("random_run_same = true"), "{toml}");
    let e = profile::parse(&toml.replace("random_run = 8", "random_run = 0"), "t").unwrap_err().to_string();
    assert!(e.contains("access line 1 random_run"), "{e}");
    let e = profile::parse(&toml.replace("random_run = 8\n", ""), "t").unwrap_err().to_string();
    assert!(e.contains("random_run_same is set without random_run"), "{e}");
    assert!(refused("[a]\nsize=1m\nrw=read:-8k\n").contains("line 3: rw=read:-8k: '-8k' moves fio backwards"));
    assert!(refused("[a]\nsize=1m\nrw=randread:x\n").contains("'x' is not a number of I/Os per random offset"));
    assert!(refused("[a]\nsize=1m\nrw=randread:2\nrw_sequencer=odd\n").contains("line 4: rw_sequencer=odd: 'odd' is not an rw_sequencer"));
    // percentile_list: the percentiles reported; refused when fio would refuse it.
    let p = map("[a]\nsize=1m\npercentile_list=1:50:99.5\n").profile;
    assert_eq!(p.percentiles, vec![1.0, 50.0, 99.5]);
    assert!(map("[a]\nsize=1m\npercentile_list=1:50:99.5\n")
        .notes
        .iter()
        .any(|n| n.starts_with("percentile_list=1:50:99.5 (line 3): the result reports")));
    assert_eq!(profile::parse(&profile::to_toml(&p), "t").unwrap().percentiles, vec![1.0, 50.0, 99.5]);
    assert!(refused("[a]\nsize=1m\npercentile_list=50:101\n").contains("line 3: percentile_list=50:101: '101' is not a percentile"));
    let many = (1..=21).map(|i| i.to_string()).collect::<Vec<_>>().join(":");
    assert!(refused(&format!("[a]\nsize=1m\npercentile_list={many}\n")).contains("21 percentiles: fio and lunmark take at most 20"));
    assert!(refused("[a]\nsize=1m\npercentile_list=99\n[b]\nsize=1m\n").contains("percentile_list"));
    // offset=0% is the start of the file, as in fio.
    assert_eq!(fio_job::parse_percent("0%"), Some(Ok(0.0)));
    assert!(refused("[a]\nsize=1m\nserialize_overlap=1\n").contains("add verify=crc32c"));
    let i = map("[a]\nsize=1m\nrw=randrw\nverify=md5\nserialize_overlap=1\n");
    assert!(i.profile.verify && i.notes.iter().any(|n| n.starts_with("serialize_overlap=1")), "{:?}", i.notes);
    // do_verify=0: fio checks nothing, and neither does lunmark.
    assert!(!map("[a]\nsize=1m\nrw=randrw\nverify=md5\ndo_verify=0\n").profile.verify);
    assert!(map("[a]\nsize=1m\nrw=randrw\nverify=md5\ndo_verify=1\n").profile.verify);
    // A job that only writes checks nothing in lunmark (fio reads it back): refused, or with --journal a note.
    let e = refused("[w]\nsize=1m\nrw=write\nverify=crc32c\n");
    assert!(
        e.contains("line 4: verify=crc32c: job 'w' only writes")
            && e.contains("--journal FILE, then `lunmark verify TARGET --journal FILE`"),
        "{e}"
    );
    assert!(!map("[w]\nsize=1m\nrw=write\nverify=crc32c\ndo_verify=0\n").profile.verify);
    let journal = ImportOptions { journal: true, ..Default::default() };
    let i = import("[w]\nsize=1m\nrw=randwrite\nverify=md5\n", "t.fio", "t", &env, &journal).unwrap();
    assert!(i.profile.verify && i.notes.iter().any(|n| n.contains("lunmark records every write in the --journal")), "{:?}", i.notes);
    // fio reads `100%%` (a template's escaped sign) as 100%.
    assert_eq!(fio_job::parse_percent("100%%"), Some(Ok(100.0)));
    // fio 3.33 reads bs=4k-512k as 4k; lunmark says so and names bsrange.
    let e = refused("[a]\nsize=1m\nblocksize=4k-512k\n");
    assert!(
        e.contains("line 3: blocksize=4k-512k: '4k-512k' is not one size: fio 3.33 reads it as 4k") && e.contains("bsrange=4k-512k"),
        "{e}"
    );
}

/// Values fio refuses or reads as "not set" are refused (or read) as fio does,
/// on the job file's own line, not on a line of the generated profile.
#[test]
fn zero_values_are_refused_on_their_own_line_in_fios_words() {
    let e = refused("[j]\nbs=0\nfilename=/dev/shm/x\nrw=randread\nruntime=1\ntime_based\n");
    assert!(e.contains("line 2: bs=0: min value out of range: 0 (1 min)"), "{e}");
    assert!(!e.contains("line 21") && !e.contains("does not check"), "{e}");
    let e = refused("[j]\nsize=1m\niodepth=0\n");
    assert!(e.contains("line 3: iodepth=0: min value out of range: 0 (1 min), as fio says: job 'j'"), "{e}");
    // fio parses numjobs=0 and then fails to start the job.
    let e = refused("[j]\nsize=1m\nnumjobs=0\n");
    assert!(e.contains("line 3: numjobs=0: job 'j' would run no clone") && e.contains("give numjobs=1 or more"), "{e}");
    // runtime=0 is fio's "no limit": with time_based, a job that never ends.
    let e = refused("[j]\nsize=1m\nruntime=0\ntime_based\n");
    assert!(e.contains("line 3: runtime=0: runtime=0 is fio's \"no limit\""), "{e}");
    // Without time_based it ends after its pass, as with no runtime.
    let p = map("[j]\nsize=1m\nruntime=0\n").profile;
    assert_eq!(p.ios, Some(256), "one pass of 1m at 4k");
    let e = refused("[j]\nsize=1m\nbssplit=4k/50:0/50\n");
    assert!(e.contains("line 3: bssplit=4k/50:0/50: '0': min value out of range: 0 (1 min)"), "{e}");
    // number_ios=0 and filesize=0 are fio's defaults (no limit; the size), as if not given.
    let p = map("[j]\nsize=1m\nnumber_ios=0\nfilesize=0\n").profile;
    assert_eq!((p.ios, p.size), (Some(256), Some(Bytes(1 << 20))));
    // size=0 is fio's "not set": the whole file.
    let i = map("[j]\nfilename=/dev/shm/x\nsize=0\nruntime=1\ntime_based\n");
    assert_eq!(i.profile.size, None);
    assert!(i.notes.iter().any(|n| n.starts_with("size=0 (line 3): job 'j': fio reads size=0 as not set")), "{:?}", i.notes);
}

/// A runtime that is not a time is refused once, for what it is.
#[test]
fn a_runtime_that_is_not_a_time_is_named_alone() {
    let e = refused("[j]\nsize=1m\nruntime=-1\ntime_based\n");
    assert!(e.contains("line 3: runtime=-1: '-1' is not a time"), "{e}");
    assert!(!e.contains("time_based without runtime"), "{e}");
}

/// A refusal of jobs that differ names the line that set the value, or the
/// job's section with fio's default when the job does not set it.
#[test]
fn disagreements_name_the_line_that_set_the_value_or_fios_default() {
    let e = refused("[global]\nfilename=/dev/shm/x\nsize=1m\n[j]\n[k]\noffset=4k\n[m]\nstartdelay=2\n");
    assert!(e.contains("line 6: offset=4k: job 'k' differs from job 'j' in offset"), "{e}");
    assert!(e.contains("line 8: startdelay=2: job 'm' starts 2s"), "{e}");
    let e = refused("[global]\nfilename=/dev/shm/x\nsize=1m\n[j]\noffset=4k\nstartdelay=2\n[k]\nstartdelay=1\n");
    assert!(e.contains("line 7: offset (not set: fio's default 0): job 'k' differs from job 'j' in offset"), "{e}");
    assert!(e.contains("line 6: startdelay=2: job 'j' starts 1s after job 'k'"), "{e}");
}

/// offset_increment grows a job's region; when that is what differs, the
/// refusal names it, not a size both jobs share.
#[test]
fn a_region_grown_by_offset_increment_is_blamed_on_it() {
    let text = "[global]\nfilename=/dev/shm/x\nsize=16m\nruntime=1\ntime_based\n[rr]\nrw=randread\n[seqw]\nstonewall\nrw=write\nnumjobs=2\noffset_increment=16m\n";
    let e = refused(text);
    assert!(e.contains("line 12: offset_increment=16m: job 'seqw' spreads its 2 clones apart, which grows its region on each target to 32m where job 'rr' has 16m"), "{e}");
    assert!(!e.contains("size:"), "{e}");
}

/// fio's default invalidate=1 empties a buffered job's cached pages before
/// it; lunmark does not (a trial: 500k IOPS from the cache where fio read
/// 18k from the device): a note says so when the job leaves it to the
/// default, and invalidate=0 is said to match.
#[test]
fn a_buffered_job_leaving_invalidate_to_fios_default_is_told_the_cache_differs() {
    let i = map("[j]\nfilename=/dev/shm/x\nsize=1m\nrw=randread\n");
    assert!(i.notes.iter().any(|n| n.contains("leaves invalidate to fio's default (1)")), "{:?}", i.notes);
    let i = map("[j]\nfilename=/dev/shm/x\nsize=1m\nrw=randread\ninvalidate=0\n");
    assert!(i.notes.iter().any(|n| n.contains("invalidate=0 (line 5): accepted: fio keeps the file's cached pages")), "{:?}", i.notes);
    assert!(!i.notes.iter().any(|n| n.contains("leaves invalidate")), "{:?}", i.notes);
    let i = map("[j]\nfilename=/dev/shm/x\nsize=1m\nrw=randread\ndirect=1\n");
    assert!(!i.notes.iter().any(|n| n.contains("invalidate")), "direct I/O reads no cache: {:?}", i.notes);
}
