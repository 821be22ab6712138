//! A file that existed before the run is the user's data. lunmark writes into
//! it only when the workload writes, and then only inside the region (where
//! it also fills holes, so that the workload's reads do not hit them). A
//! workload that only reads opens it read-only and never changes it: not its
//! length, not its holes. Its region must hold data: a hole reads as zeros
//! without touching the storage, so a read of one would flatter the result,
//! and lunmark refuses such a region rather than fill it or report a figure
//! the storage never earned. Files lunmark created for the run are its own and
//! are filled whole (`super::fill_holes`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

use super::{region, TargetError};
use crate::workload::WorkloadSpec;

/// The holes of `file` inside `start..end`: (bytes of holes, where the first
/// one begins), None when the range holds data throughout. A filesystem that
/// cannot tell (no SEEK_HOLE) reports the whole file as data.
pub fn holes_in(file: &File, start: u64, end: u64) -> io::Result<Option<(u64, u64)>> {
    let fd = file.as_raw_fd();
    let mut total = 0u64;
    let mut first = None;
    let mut pos = start;
    while pos < end {
        // SAFETY: lseek on an open fd with valid whence values has no memory effects.
        let hole = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_HOLE) };
        if hole < 0 {
            // ENXIO: `pos` is at or past the end of the file; the region check
            // refuses a region beyond it, so nothing is left to look at.
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::ENXIO) { Ok(first.map(|f| (total, f))) } else { Err(e) };
        }
        let hole = hole as u64;
        if hole >= end {
            break;
        }
        // SAFETY: as above.
        let data = unsafe { libc::lseek(fd, hole as libc::off_t, libc::SEEK_DATA) };
        let hole_end = if data < 0 { end } else { (data as u64).min(end) };
        total += hole_end - hole;
        first.get_or_insert(hole);
        pos = hole_end;
    }
    Ok(first.map(|f| (total, f)))
}

/// Refuses a read-only workload's region of the existing file `path` (`len`
/// bytes long, open as `file`) that ends past the file's end or holds holes.
pub fn check_read_region(uri: &str, path: &Path, file: &File, spec: &WorkloadSpec, len: u64) -> Result<(), TargetError> {
    let display = path.display().to_string();
    if let Some(end) = region::requested_end(uri, spec)? {
        if end > len {
            return Err(TargetError::ReadPastFile { path: display, end, len });
        }
    }
    let r = region::resolve(uri, spec, len)?;
    let found = holes_in(file, r.start, r.start + r.len).map_err(|error| TargetError::Io { path: display.clone(), error })?;
    match found {
        None => Ok(()),
        Some((bytes, first)) => Err(TargetError::HolesInRead { path: display, start: r.start, end: r.start + r.len, bytes, first }),
    }
}

/// The dry run's and the preflight's view of a read-only workload on an
/// existing regular file: it can be opened for reading, and its region lies
/// inside it and holds data, as the run will find when it opens it.
pub fn preflight_read(uri: &str, path: &Path, spec: &WorkloadSpec) -> Result<(), TargetError> {
    let file = File::open(path).map_err(|error| TargetError::Io { path: path.display().to_string(), error })?;
    let len = file.metadata().map_err(|error| TargetError::Io { path: path.display().to_string(), error })?.len();
    check_read_region(uri, path, &file, spec, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn holes_are_found_and_counted_inside_the_range_only() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let path = dir.path().join("sparse");
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.set_len(1 << 20).unwrap();
        f.write_all_at(&[1u8; 65536], 0).unwrap();
        f.write_all_at(&[1u8; 65536], 512 << 10).unwrap();
        assert_eq!(holes_in(&f, 0, 65536).unwrap(), None);
        let (bytes, first) = holes_in(&f, 0, 1 << 20).unwrap().unwrap();
        assert_eq!(first, 65536);
        assert_eq!(bytes, (1 << 20) - 2 * 65536);
        assert_eq!(holes_in(&f, 512 << 10, (512 << 10) + 65536).unwrap(), None);
    }
}
