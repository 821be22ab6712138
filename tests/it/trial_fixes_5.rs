//! Trial fixes (helper FX5): the dry run refuses what the run would refuse
//! about a target's region and alignment, where that is known without opening
//! the target (mem:, null:, a file's size from its metadata).

use crate::common::{run, shm_dir, stderr};

/// Runs `args` as a dry run and as a run: both refuse, once, with `said`, and run nothing.
fn both_refuse(args: &[&str], said: &[&str]) {
    for dry in [true, false] {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--time", "1s", "--ramp", "0s", "--no-store", "-q"]);
        if dry {
            all.push("--dry-run");
        }
        let out = run(&all);
        let err = stderr(&out);
        assert!(!out.status.success(), "dry={dry} {args:?} passed: {err}{}", crate::common::stdout(&out));
        assert!(said.iter().all(|s| err.contains(s)), "dry={dry} {args:?}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "said once: {err}");
        if dry {
            assert!(crate::common::stdout(&out).is_empty(), "refused before the plan is printed");
        }
    }
}

#[test]
fn a_region_past_the_end_of_a_mem_or_null_target_or_a_file_is_refused_by_the_dry_run() {
    both_refuse(&["-t", "mem:64m", "--offset", "1m", "--size", "64m"], &["mem:64m", "does not fit", "--offset 1048576"]);
    both_refuse(&["-t", "null:64m", "--offset", "1m", "--size", "64m"], &["null:64m", "does not fit"]);
    // An existing file's size is read from its metadata, without opening it.
    let dir = shm_dir();
    let file = dir.path().join("lun");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let f = file.display().to_string();
    both_refuse(&["-t", &f, "--offset", "2m"], &[&f, "at or beyond the end"]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20, "the file is left as it was");
    // What fits passes the dry run.
    let ok = run(&["run", "-t", "mem:64m", "--offset", "1m", "--size", "63m", "--dry-run"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

#[test]
fn a_misaligned_offset_on_a_direct_io_file_is_refused_by_the_dry_run() {
    let dir = shm_dir();
    let file = dir.path().join("lun");
    let f = file.display().to_string();
    both_refuse(&["-t", &f, "--offset", "3", "--size", "8m"], &[&f, "offset 3 is not a multiple of the 512-byte", "--buffered"]);
    assert!(!file.exists(), "refused before the file was created");
    // Buffered I/O has no alignment rule: the dry run passes it.
    let ok = run(&["run", "-t", &f, "--offset", "3", "--size", "8m", "--buffered", "--dry-run"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}
