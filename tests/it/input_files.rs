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
