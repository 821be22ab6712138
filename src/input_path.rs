//! The one rule for every file lunmark reads as input (a profile, a fio job
//! file, a trace to replay or size a cache from, a verify journal, a power
//! log, a result to import): it must be a regular file no larger than its
//! kind's limit. A device such as /dev/zero or /dev/urandom, a FIFO or a huge
//! sparse file would otherwise be read until memory runs out, or forever;
//! each is refused before a byte is read, with what the input should be.
//! The file is opened without blocking (a FIFO blocks on open until a writer
//! comes) and checked again from its own descriptor, and a read never takes
//! more than the limit even when the file grows meanwhile.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// A kind of input and what it may be.
#[derive(Clone, Copy, Debug)]
pub struct InputKind {
    /// What the file is, in a sentence: "a profile".
    pub what: &'static str,
    /// The largest file of this kind lunmark reads.
    pub limit: u64,
    /// Why the limit is where it is, in a few words.
    pub why: &'static str,
}

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// A TOML profile (`--profile-file`, `profiles show FILE`): the longest
/// built-in is a few KiB; a generated one of thousands of phases stays far below.
pub const PROFILE: InputKind = InputKind { what: "a profile (TOML)", limit: 16 * MIB, why: "a profile is text of a few KiB" };
/// A fio job file (`--fio`, `profiles import-fio`).
pub const FIO_JOB: InputKind = InputKind { what: "a fio job file", limit: 16 * MIB, why: "a job file is text of a few KiB" };
/// lunmark's binary trace: read record by record, but every record is kept
/// in memory (24 bytes each) for the replay or the curve.
pub const BINARY_TRACE: InputKind =
    InputKind { what: "a lunmark binary trace", limit: 8 * GIB, why: "its records are held in memory, about as many bytes as the file" };
/// blkparse text or MSR Cambridge CSV: read line by line (`trace::lines`),
/// its records kept in memory (24 bytes for a line of about 70).
pub const TEXT_TRACE: InputKind = InputKind {
    what: "a trace (blkparse text or MSR Cambridge CSV)",
    limit: 2 * GIB,
    why: "its records are held in memory, about a third of the text; split a larger trace or convert it",
};
/// A verify journal (`verify --journal`), read as a stream of lines.
pub const JOURNAL: InputKind = InputKind { what: "a verify journal", limit: 64 * GIB, why: "one line per write generation" };
/// An external power meter's log (`--power-log`), read after each point.
pub const POWER_LOG: InputKind =
    InputKind { what: "a power log (CSV of timestamp,watts)", limit: 256 * MIB, why: "it is read whole after every point" };
/// A result to import (`results import`): a result of many points is a few MB.
pub const RESULT: InputKind = InputKind { what: "a lunmark result (JSON)", limit: GIB, why: "a result of many points is a few MB" };

/// An input refused or unreadable: the message names the file and says what it should be.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    pub message: String,
}

impl InputError {
    /// `path` then `rest` ("is a FIFO ...").
    fn new(path: &Path, rest: String) -> InputError {
        InputError { message: format!("{} {rest}", path.display()) }
    }

    fn io(path: &Path, e: io::Error) -> InputError {
        InputError { message: format!("{}: {}", path.display(), crate::output_path::describe_io(&e)) }
    }
}

/// What a file that is not a regular file is, in words.
fn file_type_words(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Refuses what `meta` says is no regular file of `kind`'s size.
fn judge(path: &Path, meta: &std::fs::Metadata, kind: &InputKind) -> Result<(), InputError> {
    if !meta.file_type().is_file() {
        let words = file_type_words(meta.file_type());
        return Err(InputError::new(path, format!("is {words}, not a regular file: lunmark reads {} from a regular file", kind.what)));
    }
    if meta.len() > kind.limit {
        return Err(InputError::new(
            path,
            format!(
                "is {} bytes, larger than the {} bytes ({}) lunmark reads as {} ({})",
                meta.len(),
                kind.limit,
                crate::units::Bytes(kind.limit),
                kind.what,
                kind.why
            ),
        ));
    }
    Ok(())
}

/// Opens an input after checking it is a regular file within `kind`'s limit.
pub fn open(path: &Path, kind: &InputKind) -> Result<File, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, e))?;
    judge(path, &meta, kind)?;
    // Non-blocking: a FIFO swapped in after the check must not hang the open.
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).map_err(|e| InputError::io(path, e))?;
    judge(path, &file.metadata().map_err(|e| InputError::io(path, e))?, kind)?;
    Ok(file)
}

/// Checks an input as `open` does, without reading it (read later, such as a power log).
pub fn check(path: &Path, kind: &InputKind) -> Result<(), InputError> {
    open(path, kind).map(drop)
}

/// Reads an input whole, at most `kind.limit` bytes (a file grown past it since the check is refused).
pub fn read(path: &Path, kind: &InputKind) -> Result<Vec<u8>, InputError> {
    let file = open(path, kind)?;
    let mut bytes = Vec::new();
    file.take(kind.limit + 1).read_to_end(&mut bytes).map_err(|e| InputError::io(path, e))?;
    if bytes.len() as u64 > kind.limit {
        return Err(InputError::new(path, format!("grew past {} bytes while it was read: is something still writing it?", kind.limit)));
    }
    Ok(bytes)
}

/// `read`, as UTF-8 text.
pub fn read_to_string(path: &Path, kind: &InputKind) -> Result<String, InputError> {
    String::from_utf8(read(path, kind)?).map_err(|e| {
        InputError::new(
            path,
            format!("is not text (invalid UTF-8 at byte {}); lunmark reads {} as text", e.utf8_error().valid_up_to(), kind.what),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_directories_and_oversized_files_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let e = read(Path::new("/dev/zero"), &PROFILE).unwrap_err().to_string();
        assert!(e.contains("/dev/zero is a character device, not a regular file"), "{e}");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path only.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo, &TEXT_TRACE).unwrap_err().to_string().contains("FIFO"));
        assert!(read(dir.path(), &FIO_JOB).unwrap_err().to_string().contains("a directory"));
        let sparse = dir.path().join("sparse");
        std::fs::File::create(&sparse).unwrap().set_len(PROFILE.limit + 1).unwrap();
        let e = read(&sparse, &PROFILE).unwrap_err().to_string();
        assert!(e.contains("larger than the 16777216 bytes (16m)"), "{e}");
        let ok = dir.path().join("ok");
        std::fs::write(&ok, "x = 1\n").unwrap();
        assert_eq!(read_to_string(&ok, &PROFILE).unwrap(), "x = 1\n");
    }
}
