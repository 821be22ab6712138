//! The one gate every output path passes: whether lunmark may write a path the
//! user named, and the only two ways it then writes one.
//!
//! The rule: an output path that exists must be a regular file; one that does
//! not exist must be in an existing directory. A symbolic link is followed and
//! its target judged by the same rule. A block or character device, a FIFO, a
//! socket or a directory is refused, with a message naming the flag and what
//! the path is. `-` means stdout only where the flag offers it.
//!
//! The check runs twice: at the command line before anything runs
//! (`cli::paths` walks every output flag of every subcommand through `check`),
//! and again at the moment of writing (`OutputFile::replace_with`,
//! `OutputFile::create_stream`), because a path can change during a long run.
//! Whole files (a JSON result, a report) are written to a temporary file in the
//! same directory and renamed over the path; streams (a trace, a journal) are
//! opened without truncation, checked on the open descriptor, and only then
//! truncated. Either way a device node is never opened for writing by mistake
//! and never replaced by a regular file.
//!
//! This module sits at the bottom of the layers: it imports only std, libc and
//! thiserror, so every layer may use it.

use std::ffi::CString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How lunmark writes an output, which decides what must be writable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The whole file at once: a temporary file in the same directory, renamed
    /// over the path (a reader never sees half a file). The directory must be writable.
    Replace,
    /// Records appended while the run goes (a trace, a journal): the file is
    /// opened, checked and then truncated. The file (or, when new, its directory) must be writable.
    Stream,
    /// The SQLite result store: SQLite writes it and the files beside it
    /// (`-wal`, `-shm`, `-journal`); missing directories are created on open.
    Store,
}

/// Where an output that offers stdout goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File(OutputFile),
}

/// An output path that passed the check. Writing re-checks it first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    flag: String,
    path: PathBuf,
    write: Mode,
}

/// Why a path may not be written (or could not be): names the flag and the path once.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{flag} {path}: {problem}")]
pub struct OutputError {
    pub flag: String,
    pub path: String,
    pub problem: String,
}

/// The end of every refusal of a path that is not a regular file.
const ONLY_REGULAR: &str = "lunmark writes outputs only to regular files";

/// Symbolic links followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Checks that `path` may be written by `flag` the way `write` says.
pub fn check(flag: &str, path: &Path, write: Mode) -> Result<OutputFile, OutputError> {
    judge(flag, path, write)?;
    Ok(OutputFile { flag: flag.to_string(), path: path.to_path_buf(), write })
}

/// `-` (stdout, when `stdout_offered`) or a path checked as `check` does.
pub fn destination(flag: &str, text: &str, stdout_offered: bool, write: Mode) -> Result<Destination, OutputError> {
    if text == "-" {
        if stdout_offered {
            return Ok(Destination::Stdout);
        }
        return Err(OutputError {
            flag: flag.to_string(),
            path: text.to_string(),
            problem: "this flag does not write to stdout; name a file (./- for a file named '-')".into(),
        });
    }
    check(flag, Path::new(text), write).map(Destination::File)
}

impl OutputFile {
    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The flag that named it, for messages.
    pub fn flag(&self) -> &str {
        &self.flag
    }

    fn error(&self, problem: String) -> OutputError {
        OutputError { flag: self.flag.clone(), path: self.path.display().to_string(), problem }
    }

    /// Replaces the file with `bytes` atomically: a temporary file in the same
    /// directory (the permissions of the file it replaces, or the umask's for a
    /// new one), synced, then renamed over the path (over a symlink's target,
    /// not the link). The path is judged again now, and once more just before
    /// the rename.
    pub fn replace_with(&self, bytes: &[u8]) -> Result<(), OutputError> {
        let judged = judge(&self.flag, &self.path, Mode::Replace)?;
        let dir = parent_dir(&judged.resolved);
        let name = judged.resolved.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let tmp = dir.join(format!(".{name}.lunmark-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .map_err(|e| self.error(format!("creating the temporary file {}: {}", tmp.display(), describe_io(&e))))?;
        let written = (|| -> io::Result<()> {
            file.write_all(bytes)?;
            if let Some(old) = &judged.existing {
                file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))?;
                // Keep the owner too when allowed (root replacing another user's file); not being allowed is fine.
                // SAFETY: fchown on a descriptor we own; no memory is passed.
                let _ = unsafe { libc::fchown(file.as_raw_fd(), old.uid(), old.gid()) };
            }
            file.sync_all()
        })();
        drop(file);
        let discard = |e: OutputError| {
            let _ = std::fs::remove_file(&tmp);
            e
        };
        written.map_err(|e| discard(self.error(format!("writing failed: {}", describe_io(&e)))))?;
        // A device node put at the path while the bytes were written is refused, not replaced.
        match std::fs::symlink_metadata(&judged.resolved) {
            Ok(m) if !m.is_file() => return Err(discard(self.error(not_regular(&self.path, &judged.resolved, &m)))),
            _ => {}
        }
        std::fs::rename(&tmp, &judged.resolved).map_err(|e| discard(self.error(format!("replacing the file failed: {}", describe_io(&e)))))
    }

    /// Opens the file for a stream of records: created when missing; when it
    /// exists it is opened without truncation, checked on the open descriptor
    /// (a FIFO does not block: the open does not wait for a reader), and only
    /// then truncated.
    pub fn create_stream(&self) -> Result<File, OutputError> {
        let file = self.open_stream()?;
        file.set_len(0).map_err(|e| self.error(format!("truncating it failed: {}", describe_io(&e))))?;
        Ok(file)
    }

    /// As `create_stream`, but the file is not truncated yet: a stream that
    /// may never get its first line (a run that fails before its first
    /// second) leaves an existing file as it was; the writer truncates it at
    /// its first line.
    pub fn open_stream(&self) -> Result<File, OutputError> {
        let judged = judge(&self.flag, &self.path, Mode::Stream)?;
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o666)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(&judged.resolved)
            .map_err(|e| self.error(format!("opening it for writing failed: {}", describe_io(&e))))?;
        let meta = file.metadata().map_err(|e| self.error(describe_io(&e)))?;
        if !meta.is_file() {
            return Err(self.error(not_regular(&self.path, &judged.resolved, &meta)));
        }
        // Back to blocking writes (O_NONBLOCK only kept the open from waiting on a FIFO).
        // SAFETY: fcntl on a descriptor we own, with integer arguments only.
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
        Ok(file)
    }
}

/// What the path leads to, once its symbolic links are followed.
struct Judged {
    resolved: PathBuf,
    /// None: nothing there yet (it will be created).
    existing: Option<Metadata>,
}

fn judge(flag: &str, path: &Path, write: Mode) -> Result<Judged, OutputError> {
    let fail = |problem: String| OutputError { flag: flag.to_string(), path: path.display().to_string(), problem };
    if path.as_os_str().is_empty() {
        return Err(fail("the path is empty: name a file".into()));
    }
    if path.as_os_str().as_bytes().ends_with(b"/") {
        return Err(fail("the path ends in '/', so it names a directory: name a file".into()));
    }
    let (resolved, existing) = resolve(path).map_err(fail)?;
    match &existing {
        Some(m) if !m.is_file() => return Err(fail(not_regular(path, &resolved, m))),
        Some(_) => {}
        None => {
            let dir = parent_dir(&resolved);
            match std::fs::metadata(&dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(fail(format!("{} is not a directory", dir.display()))),
                Err(e) if e.kind() == io::ErrorKind::NotFound && write == Mode::Store => {
                    // The store creates its directories; what exists of the way there must be directories.
                    if let Some(blocker) = dir.ancestors().find(|a| a.exists() && !a.is_dir()) {
                        return Err(fail(format!("{} is not a directory", blocker.display())));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(fail(no_such_directory(&dir))),
                Err(e) => return Err(fail(format!("{}: {}", dir.display(), describe_io(&e)))),
            }
        }
    }
    if write == Mode::Store {
        // SQLite writes files beside the database: they are outputs too.
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut side = resolved.clone().into_os_string();
            side.push(suffix);
            let side = PathBuf::from(side);
            if let (real, Some(m)) = resolve(&side).map_err(&fail)? {
                if !m.is_file() {
                    return Err(fail(format!("SQLite writes {} beside it, and {}", side.display(), not_regular(&side, &real, &m))));
                }
            }
        }
        return Ok(Judged { resolved, existing });
    }
    // What the write needs must be writable: refused now rather than after the run.
    let needs = match (write, &existing) {
        (Mode::Stream, Some(_)) => resolved.clone(),
        _ => parent_dir(&resolved),
    };
    if needs == resolved {
        if let Err(e) = writable(&needs) {
            return Err(fail(format!("the file is not writable: {}", describe_io(&e))));
        }
    } else if let Err(e) = can_create_in(&needs) {
        // A real probe, not only permission bits: root passes those even where
        // the filesystem (read-only, /proc, full) takes no new file.
        let why = if write == Mode::Replace && existing.is_some() {
            " (lunmark replaces the file through a temporary file in that directory)"
        } else {
            ""
        };
        let words = if e.raw_os_error() == Some(libc::ENOENT) { "the filesystem does not allow it".into() } else { describe_io(&e) };
        return Err(fail(format!("files cannot be created in the directory {}: {words}{why}", needs.display())));
    }
    Ok(Judged { resolved, existing })
}

/// Creates and removes an empty file in `dir`: whether a file can be made there now.
fn can_create_in(dir: &Path) -> io::Result<()> {
    static PROBES: AtomicU64 = AtomicU64::new(0);
    let probe = dir.join(format!(".lunmark-probe-{}-{}", std::process::id(), PROBES.fetch_add(1, Ordering::Relaxed)));
    OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(&probe)?;
    std::fs::remove_file(&probe)
}

/// Follows the symbolic links of the last component: the path they lead to and
/// what is there (None when nothing is).
fn resolve(path: &Path) -> Result<(PathBuf, Option<Metadata>), String> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let link =
                    std::fs::read_link(&current).map_err(|e| format!("reading the link {}: {}", current.display(), describe_io(&e)))?;
                current = if link.is_absolute() { link } else { parent_dir(&current).join(link) };
            }
            Ok(m) => return Ok((current, Some(m))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((current, None)),
            Err(e) => return Err(describe_io(&e)),
        }
    }
    Err(format!("more than {MAX_LINKS} symbolic links in a row (a loop?)"))
}

/// The directory a path is in ("." for a bare name).
/// Why an output in a directory that does not exist is refused (lunmark makes
/// no directories a user named).
pub fn no_such_directory(dir: &Path) -> String {
    format!("the directory {} does not exist: create it first, or name a file in an existing directory", dir.display())
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// "that is a block device, not a regular file; ..." (or the same of a link's target).
fn not_regular(given: &Path, resolved: &Path, meta: &Metadata) -> String {
    let kind = kind_of(meta);
    let subject =
        if resolved == given { "that is".to_string() } else { format!("that is a symbolic link to {}, which is", resolved.display()) };
    if meta.is_dir() {
        format!("{subject} {kind}, not a regular file; {ONLY_REGULAR}: name a file inside it")
    } else {
        format!("{subject} {kind}, not a regular file; {ONLY_REGULAR}")
    }
}

/// What a path that is not a regular file is, in words.
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// Whether this process may write `path` (a file, or a directory to create files in).
fn writable(path: &Path) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: faccessat reads the NUL-terminated path `c` owns and nothing else.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// An I/O error in words, without repeating a path (the caller names it once).
pub fn describe_io(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "does not exist".into(),
        Some(libc::EACCES) | Some(libc::EPERM) => "permission denied".into(),
        Some(libc::EROFS) => "the filesystem is read-only".into(),
        Some(libc::ENOSPC) => "no space left on the filesystem".into(),
        Some(libc::EDQUOT) => "the disk quota is exceeded".into(),
        Some(libc::ENOTDIR) => "a component of the path is not a directory".into(),
        Some(libc::EISDIR) => "that is a directory".into(),
        Some(libc::ELOOP) => "too many symbolic links (or a link where none may be)".into(),
        Some(libc::ENAMETOOLONG) => "the name is too long".into(),
        Some(code) => {
            // std's text with " (os error N)" dropped: the words are enough.
            let text = e.to_string();
            text.strip_suffix(&format!(" (os error {code})")).map(str::to_string).unwrap_or(text)
        }
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path only.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn a_new_file_in_an_existing_directory_is_written_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        let out = check("--json", &p, Mode::Replace).unwrap();
        out.replace_with(b"first").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let inode = std::fs::metadata(&p).unwrap().ino();
        out.replace_with(b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let m = std::fs::metadata(&p).unwrap();
        assert_ne!(m.ino(), inode, "replaced by a rename, not rewritten in place");
        assert_eq!(m.mode() & 0o777, 0o640, "the replaced file's permissions are kept");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 1, "no temporary file left: {left:?}");
    }

    #[test]
    fn a_fifo_a_directory_and_a_missing_directory_are_refused_with_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let e = check("--trace", &fifo, Mode::Stream).unwrap_err();
        assert_eq!(e.to_string(), format!("--trace {}: that is a FIFO (named pipe), not a regular file; {ONLY_REGULAR}", fifo.display()));
        let e = check("-o", dir.path(), Mode::Replace).unwrap_err();
        assert!(e.problem.starts_with("that is a directory"), "{e}");
        let e = check("--json", &dir.path().join("nope/out.json"), Mode::Replace).unwrap_err();
        assert!(e.problem.contains("does not exist"), "{e}");
        assert!(check("--json", Path::new(""), Mode::Replace).is_err());
        assert!(check("--json", Path::new("somewhere/"), Mode::Replace).is_err());
    }

    #[test]
    fn a_symlink_is_followed_and_its_target_replaced_not_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.json");
        symlink("real.json", &link).unwrap();
        check("--json", &link, Mode::Replace).unwrap().replace_with(b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling");
        symlink(dir.path().join("made.json"), &dangling).unwrap();
        check("--json", &dangling, Mode::Replace).unwrap().replace_with(b"x").unwrap();
        assert_eq!(std::fs::read(dir.path().join("made.json")).unwrap(), b"x");
        // A link to a FIFO is refused, and says so.
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let to_fifo = dir.path().join("to-fifo");
        symlink(&fifo, &to_fifo).unwrap();
        let e = check("--json", &to_fifo, Mode::Replace).unwrap_err();
        assert!(e.problem.starts_with(&format!("that is a symbolic link to {}, which is a FIFO", fifo.display())), "{e}");
        // A loop of links ends.
        symlink("b", dir.path().join("a")).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        assert!(check("--json", &dir.path().join("a"), Mode::Replace).unwrap_err().problem.contains("symbolic links"));
    }

    #[test]
    fn a_stream_is_truncated_only_after_the_check_and_a_path_changed_meanwhile_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trace");
        std::fs::write(&p, "old content").unwrap();
        let out = check("--trace", &p, Mode::Stream).unwrap();
        let mut f = out.create_stream().unwrap();
        f.write_all(b"new").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        // Checked at the command line, then replaced by a FIFO before the run opens it.
        std::fs::remove_file(&p).unwrap();
        mkfifo(&p);
        assert!(out.create_stream().unwrap_err().problem.contains("FIFO"));
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo(), "the FIFO is left as it was");
        assert!(out.replace_with(b"x").unwrap_err().problem.contains("FIFO"));
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
    }

    #[test]
    fn a_directory_that_takes_no_new_file_is_refused_at_the_check() {
        // /proc: root passes the permission bits, but no file can be made there.
        let e = check("--json", Path::new("/proc/lunmark-result.json"), Mode::Replace).unwrap_err();
        assert!(e.problem.starts_with("files cannot be created in the directory /proc"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        check("--json", &dir.path().join("r.json"), Mode::Replace).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe is removed");
    }

    #[test]
    fn a_socket_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        for mode in [Mode::Replace, Mode::Stream, Mode::Store] {
            let e = check("--json", &sock, mode).unwrap_err();
            assert!(e.problem.starts_with("that is a socket, not a regular file"), "{e}");
        }
        assert!(std::fs::symlink_metadata(&sock).unwrap().file_type().is_socket());
    }

    #[test]
    fn stdout_only_where_offered() {
        assert_eq!(destination("--json", "-", true, Mode::Replace).unwrap(), Destination::Stdout);
        let e = destination("--trace", "-", false, Mode::Stream).unwrap_err();
        assert!(e.to_string().starts_with("--trace -: this flag does not write to stdout"), "{e}");
    }

    #[test]
    fn the_store_may_be_in_a_directory_not_yet_made_but_not_beside_a_device() {
        let dir = tempfile::tempdir().unwrap();
        check("--store", &dir.path().join("a/b/results.db"), Mode::Store).unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        assert!(check("--store", &dir.path().join("file/results.db"), Mode::Store).unwrap_err().problem.contains("is not a directory"));
        let db = dir.path().join("r.db");
        mkfifo(&dir.path().join("r.db-wal"));
        let e = check("--store", &db, Mode::Store).unwrap_err();
        assert!(e.problem.contains("r.db-wal") && e.problem.contains("FIFO"), "{e}");
    }

    /// Files that may create or replace files without this module, and why. A
    /// new write anywhere else fails this test: route it through `check` and
    /// `OutputFile`, or add it here with its reason.
    const WRITERS_OUTSIDE_THE_GUARD: &[(&str, &str)] = &[
        ("src/output_path.rs", "the guard itself"),
        ("src/targets/mod.rs", "creates and fills benchmark target files; the target safety rules govern them"),
        ("src/targets/cache_store.rs", "the --cache-dev file or device, a target under the same rules"),
        ("src/lab/protocols.rs", "a LUN file inside the lab's own fresh directory"),
        ("src/cli/keep.rs", "a 64 KiB reserve file beside the store, named after it and this process, freed when a save fails so the status can still be written"),
        ("src/results/store.rs", "the result store and a write-test probe beside it; the store path itself is judged by this guard at the command line first (cli/paths.rs)"),
    ];

    #[test]
    fn nothing_writes_a_file_around_the_guard() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![root.join("src")];
        let mut bypasses = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                // A test module in a file of its own (`tests.rs`, `*_tests.rs`) writes its own scratch files.
                let test_file = path.file_stem().is_some_and(|s| s == "tests" || s.to_string_lossy().ends_with("_tests"));
                if test_file || WRITERS_OUTSIDE_THE_GUARD.iter().any(|(f, _)| *f == rel) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Test modules (at the end of a file) write their own scratch files.
                for (n, line) in text.lines().enumerate().take_while(|(_, l)| !l.contains("#[cfg(test)]")) {
                    let writes = ["fs::write(", "File::create(", "create(true)", "create_new(true)", "fs::rename(", "fs::copy("]
                        .iter()
                        .any(|w| line.contains(w));
                    if writes && !line.trim_start().starts_with("//") {
                        bypasses.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            bypasses.is_empty(),
            "files written around crate::output_path (use it, or list the file with a reason):\n{}",
            bypasses.join("\n")
        );
    }

    #[test]
    fn io_errors_in_words_once() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(describe_io(&e), "does not exist");
        let e = io::Error::from_raw_os_error(libc::EIO);
        assert!(!describe_io(&e).contains("os error"), "{}", describe_io(&e));
    }
}
