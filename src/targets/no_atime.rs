//! Opening a file lunmark reads without moving its access time (O_NOATIME):
//! the run's targets, the file `lunmark verify` checks and a cache tier's
//! `--cache-dev` are files the user benchmarks, so reading them should write
//! no metadata to the file system (and a backup or tiering tool that reads
//! access times should not see them as used). Only the file's owner (or root)
//! may ask for it; for anyone else the file is opened with access times as usual.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` with `options` and the open(2) `flags` (O_DIRECT or 0), plus
/// O_NOATIME where the kernel allows it: EPERM (a file of another user)
/// retries without it.
pub fn open(mut options: OpenOptions, flags: i32, path: &Path) -> io::Result<File> {
    options.custom_flags(flags | libc::O_NOATIME);
    match options.open(path) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => options.custom_flags(flags).open(path),
        opened => opened,
    }
}
