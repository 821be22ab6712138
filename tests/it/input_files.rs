//! Input files: every file lunmark reads as input (a profile, a fio job file,
//! a trace to replay or to size a cache from, a profile's replay file, a power
//! log, a result to import) is a regular file within its kind's size limit.
//! A device that never ends, a FIFO or a huge sparse file is refused at once
//! with a message naming it, never read until memory runs out or forever.

use std::path::{Path, PathBuf};

use crate::common::*;

/// /dev/zero, a FIFO and a sparse file of 20 GiB (no space on tmpfs), in `dir`.
fn bad_inputs(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let huge = dir.join("huge");
    std::fs::File::create(&huge).unwrap().set_len(20 << 30).unwrap();
    vec![
        (PathBuf::from("/dev/zero"), "is a character device, not a regular file"),
        (fifo, "is a FIFO (named pipe), not a regular file"),
        (huge, "is 21474836480 bytes, larger than the"),
    ]
}

#[test]
fn every_input_refuses_devices_fifos_and_huge_files_at_once() {
    let dir = shm_dir();
    for (input, says) in bad_inputs(dir.path()) {
        let f = input.to_str().unwrap();
        let profile = dir.path().join("replay.toml");
        std::fs::write(&profile, format!("name = \"r\"\ndescription = \"d\"\n[[phases]]\nname = \"r\"\n[[phases.groups]]\nname = \"g\"\nworkers = 1\nqd = 1\naccess = [{{ share = 100, bs = \"4k\", read = 100, random = 100 }}]\n[replay]\nfile = \"{f}\"\n")).unwrap();
        let p = profile.to_str().unwrap();
        let cases: Vec<Vec<&str>> = vec![
            vec!["run", "--no-store", "-t", "mem:16m", "--profile-file", f],
            vec!["run", "--no-store", "-t", "mem:16m", "--fio", f],
            vec!["run", "--no-store", "-t", "mem:16m", "--replay", f],
            vec!["run", "--no-store", "-t", "mem:16m", "--profile-file", p],
            vec!["run", "--no-store", "-t", "mem:16m", "--time", "1s", "--power-log", f],
            vec!["cache-curve", f],
            vec!["profiles", "import-fio", f],
            vec!["profiles", "show", f],
            vec!["results", "import", f],
        ];
        for args in cases {
            let out = output_within(lunmark().args(&args).env("LUNMARK_STORE", dir.path().join("s.db")), 20);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains(f) && err.contains(says), "{args:?}: {err}");
        }
    }
}

/// Peak resident memory (KiB) of `lunmark args`, measured by GNU time around
/// it (the child's own peak, whatever other tests run beside it).
fn peak_rss_kib(args: &[&str]) -> (std::process::Output, u64) {
    let report = tempfile::NamedTempFile::new().unwrap();
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o", report.path().to_str().unwrap(), env!("CARGO_BIN_EXE_lunmark")])
        .args(args)
        .env("LUNMARK_STORE", "/nonexistent/not-used.db")
        .output()
        .unwrap();
    let kib = std::fs::read_to_string(report.path()).unwrap().trim().lines().last().unwrap().parse().unwrap();
    (out, kib)
}

/// A blkparse capture of 96 MiB whose lines are mostly completions (C): a
/// thousand queued reads, then 1.5 M completion lines. Read line by line,
/// the trace's records and one line are held, not the text: cache-curve
/// peaks under 64 MiB (reading it whole peaked at 213 MiB for 192 MiB). An
/// MSR CSV of long lines peaks under a quarter of its text (reading it
/// whole: 1.9 times its text).
#[test]
fn text_traces_are_read_in_bounded_memory() {
    use std::io::Write;
    let dir = shm_dir();
    let trace = dir.path().join("big.blkparse");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&trace).unwrap());
    for i in 0..1000u64 {
        writeln!(w, "  8,0    0 {:>8}     0.{:09}  4162  Q   R {} + 8 [fio]", i + 1, i * 1000, i * 8).unwrap();
    }
    let completion = "  8,0    0     9999     1.000000000     0  C   R 223490 + 8 [0]\n".repeat(1024);
    while w.get_ref().metadata().unwrap().len() < 96 << 20 {
        w.write_all(completion.as_bytes()).unwrap();
    }
    drop(w);
    let t = trace.to_str().unwrap();
    let (out, kib) = peak_rss_kib(&["cache-curve", t, "--sizes", "50,100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("1,000 I/Os, 1,000 reads"), "{}", stdout(&out));
    assert!(kib < 64 * 1024, "cache-curve of a 96 MiB blkparse text peaked at {kib} KiB");

    // MSR CSV: 150 K lines of 1 KiB (a long host name); the records kept take 3.5 MiB of the 150 MiB.
    let msr = dir.path().join("big.csv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&msr).unwrap());
    let host = "h".repeat(1000);
    for i in 0..150_000u64 {
        writeln!(w, "{},{host},0,Read,{},4096,41286", 128166372003061629u64 + i * 1000, (i % 4096) * 4096).unwrap();
    }
    drop(w);
    let text = std::fs::metadata(&msr).unwrap().len() / 1024;
    let (out, kib) = peak_rss_kib(&["cache-curve", msr.to_str().unwrap(), "--sizes", "50,100"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(kib < text / 4, "cache-curve of a {text} KiB MSR trace peaked at {kib} KiB");
}
