//! Targets: parsing URIs, opening files, block devices and RAM LUNs, making sure
//! reads never hit holes, and refusing writes that could destroy data the user
//! did not mean to give up. This is the "high" half of configuration: it makes
//! syscalls, after the spec was validated.

use std::collections::hash_map::{Entry, HashMap};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::transport::nbd::pool::FillError;
use crate::workload::rng::Rng;
use crate::workload::{Region, WorkloadSpec};
use mem_lun::MemLun;

pub mod cache_store;
pub mod created;
pub mod existing;
pub use crate::transport::credentials;
pub mod host_memory;
pub mod mem_lun;
pub mod no_atime;
pub mod ops_support;
pub mod region;
pub mod safety;
pub mod uri;

pub use uri::{parse, Target, TargetUri, UriError};

/// Flags that allow writes to block devices.
#[derive(Clone, Copy, Debug, Default)]
pub struct SafetyFlags {
    /// Allow writes to block devices at all.
    pub destructive: bool,
    /// Allow writes even to devices that are mounted or hold a signature.
    pub force: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
    Mem,
    Null,
    Nbd,
    Iscsi,
}

/// What the result records about a target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TargetFacts {
    pub uri: String,
    pub kind: TargetKind,
    pub size_bytes: u64,
    pub region_offset: u64,
    pub region_bytes: u64,
    /// Device model, or the backing file of a loop device, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Filesystem type holding a file target, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
}

pub enum Handle {
    Fd(OwnedFd),
    Mem(Arc<MemLun>),
    /// No storage at all (null: targets).
    Null,
    /// A network export: each worker's engine opens its own connections to this URI.
    Remote(String),
}

pub struct OpenTarget {
    pub facts: TargetFacts,
    pub region: Region,
    pub handle: Handle,
    /// Created by lunmark for this run (removed afterwards when it was a scratch file).
    pub created: Option<PathBuf>,
    /// The host-side cache tier in front of it (--cache), shared by all workers.
    pub cache: Option<(Arc<cache_store::TargetCache>, cache_store::CacheMode)>,
    /// An NBD export's connections, opened before the point for its engines.
    pub nbd: Option<Arc<crate::transport::nbd::pool::ConnectionPool>>,
}

impl OpenTarget {
    pub fn raw_fd(&self) -> Option<RawFd> {
        match &self.handle {
            Handle::Fd(fd) => Some(fd.as_raw_fd()),
            Handle::Mem(_) | Handle::Null | Handle::Remote(_) => None,
        }
    }
}

#[derive(Debug, Error)]
pub enum TargetError {
    #[error(transparent)]
    Uri(#[from] UriError),
    #[error("{path}: the file does not exist. {hint}")]
    Missing { path: String, hint: String },
    #[error("{path} does not exist: there is no such device (`lsblk` lists the block devices)")]
    NoDevice { path: String },
    #[error("{path} is a directory: name a file inside it, for example {path}/lunmark.dat")]
    Directory { path: String },
    #[error("{path} is neither a regular file nor a block device (a FIFO, a socket or a character device): a target is a file, a block device, or a URI such as mem:1g")]
    NotAFile { path: String },
    #[error("{path}: the filesystem refuses O_DIRECT (direct I/O). Add --buffered to go through the page cache (the results then measure the cache, not the device)")]
    NoDirect { path: String },
    #[error("{path} is a block device and this workload writes to it, which destroys its data. Add --destructive if you mean it, or use --read 100 for a read-only run")]
    DeviceNeedsDestructive { path: String },
    #[error("refusing to write to {path}: {findings}. Writing would destroy it. Use another device, or add --force as well as --destructive if you are sure")]
    DeviceInUse { path: String, findings: String },
    #[error("{uri}: the region (--offset {offset}, --size {len}) does not fit in the target's {size} bytes: lower --offset or --size")]
    RegionTooLarge { uri: String, offset: u64, len: u64, size: u64 },
    #[error("{uri}: --offset {offset} plus --size {len} lies beyond 2^64 bytes, past the end of any target: lower --offset or --size")]
    RegionOverflows { uri: String, offset: u64, len: u64 },
    #[error("{uri}: --offset {offset} is at or beyond the end of the target ({size} bytes), so no region is left: lower --offset")]
    OffsetBeyondEnd { uri: String, offset: u64, size: u64 },
    #[error("{path}: --offset {offset} plus --size {len} needs a file of {end} bytes, but the filesystem holding it has only {fs_bytes} bytes in all: lower --offset or --size")]
    FileBeyondFilesystem { path: String, offset: u64, len: u64, end: u64, fs_bytes: u64 },
    #[error("{uri}: the region ({len} bytes) is smaller than the largest transfer ({bs} bytes): raise --size or lower --bs")]
    RegionTooSmall { uri: String, len: u64, bs: u64 },
    #[error("{uri}: {what} {value} is not a multiple of the {sector}-byte logical block size, which {needs}")]
    Misaligned { uri: String, what: String, value: u64, sector: u64, needs: &'static str },
    /// The io::Error is in the message, in words, and deliberately not a `source`:
    /// `{:#}` would print it a second time ("X: No such file...: No such file...").
    #[error("{path}: {}", crate::output_path::describe_io(.error))]
    Io { path: String, error: io::Error },
    #[error("{message}. Is the server running, and the address, port, socket and export name right?")]
    Remote { message: String },
    /// A trim or sync the target cannot take (ops_support).
    #[error("{message}")]
    Ops { message: String },
    /// The server took some of the run's connections but not all.
    #[error("{message}")]
    TooFewClients { message: String },
    /// A read-only workload's region on an existing file ends past the file's end.
    #[error("{path}: the region (--offset plus --size) ends at byte {end}, past the end of this existing file ({len} bytes). A workload that only reads never grows or writes a file lunmark did not create: lower --offset or --size, or name a new file for lunmark to create and fill")]
    ReadPastFile { path: String, end: u64, len: u64 },
    /// A read-only workload's region on an existing file holds holes (see `existing`).
    #[error("{path}: the region to read (bytes {start} to {end}) holds {bytes} bytes of holes (sparse ranges never written; the first at byte {first}). A hole reads as zeros without touching the storage, so the result would flatter it, and a workload that only reads never writes into a file lunmark did not create. Write data into the file first, narrow --offset/--size to a part that holds data, or name a new file with --size for lunmark to create and fill")]
    HolesInRead { path: String, start: u64, end: u64, bytes: u64, first: u64 },
    /// The run was asked to stop while lunmark filled a file.
    #[error("{path}: stopped while lunmark filled the file, before anything was measured")]
    Stopped { path: String },
    /// A file target's path no longer names the file an earlier point of the run opened.
    #[error("{uri}: {what}; lunmark stops rather than measure the remaining points on another file. The points measured so far are kept; keep the file in place for the whole run")]
    FileReplaced { uri: String, what: String },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> TargetError + '_ {
    move |error| TargetError::Io { path: path.display().to_string(), error }
}

/// Checks, before anything runs or is created, what would make any point of a
/// run fail to open its targets: bad URIs, directories, missing files without a
/// size, and block devices that must not be written. A run of several points is
/// refused up front rather than at the point that first writes.
pub fn preflight(specs: &[&WorkloadSpec], flags: SafetyFlags) -> Result<(), TargetError> {
    let mut checked: Vec<(String, bool)> = Vec::new();
    for spec in specs {
        let writes = spec.has_writes();
        for uri in &spec.targets {
            if checked.contains(&(uri.clone(), writes)) {
                continue;
            }
            checked.push((uri.clone(), writes));
            match parse(uri)? {
                // A device that is not there is named as such, before any other rule about devices.
                TargetUri::Device(path) if matches!(std::fs::metadata(&path), Err(e) if e.kind() == io::ErrorKind::NotFound) => {
                    return Err(TargetError::NoDevice { path: path.display().to_string() });
                }
                TargetUri::Device(path) if writes => {
                    if !flags.destructive {
                        return Err(TargetError::DeviceNeedsDestructive { path: path.display().to_string() });
                    }
                    let found = safety::findings(&path);
                    if !found.is_empty() && !flags.force {
                        return Err(TargetError::DeviceInUse { path: path.display().to_string(), findings: found.join("; ") });
                    }
                }
                TargetUri::File(path) => match std::fs::metadata(&path) {
                    Ok(m) if m.is_dir() => return Err(TargetError::Directory { path: path.display().to_string() }),
                    Ok(m) if !m.is_file() && !m.file_type().is_block_device() => {
                        return Err(TargetError::NotAFile { path: path.display().to_string() })
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound && spec.size.is_none() => {
                        let hint = "Give --size (for example --size 1G) and lunmark creates and fills it".to_string();
                        return Err(TargetError::Missing { path: path.display().to_string(), hint });
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }
    check_regions(specs)
}

/// Refuses, without opening any target, a region that cannot fit (`check_region`)
/// and a direct-I/O file whose offset or transfers are not 512-byte multiples:
/// what the run would refuse when it opens the target. The dry run calls it
/// too, so it does not pass what the run then refuses.
pub fn check_regions(specs: &[&WorkloadSpec]) -> Result<(), TargetError> {
    // A file some point of the run writes gets its region's holes filled when
    // that point opens it; a point that only reads is checked when it opens it.
    let written: Vec<&String> = specs.iter().filter(|s| s.has_writes()).flat_map(|s| s.targets.iter()).collect();
    for spec in specs {
        for uri in &spec.targets {
            check_region(uri, spec)?;
            if let TargetUri::File(path) = parse(uri)? {
                if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                    if !spec.has_writes() && !written.contains(&uri) {
                        existing::preflight_read(uri, &path, spec)?;
                    } else if spec.has_writes() {
                        // Opened for writing as the run will (nothing is written):
                        // a file the user may not write is refused by the dry run too.
                        OpenOptions::new().read(true).write(true).open(&path).map_err(io_err(&path))?;
                    }
                }
            }
            if let (false, TargetUri::File(path)) = (spec.buffered, parse(uri)?) {
                // A block device named by path learns its sector size when opened: checked then.
                if !std::fs::metadata(&path).is_ok_and(|m| m.file_type().is_block_device()) {
                    check_alignment(spec, uri, TargetKind::File, 512)?;
                }
            }
        }
    }
    Ok(())
}

/// Refuses, before anything is opened or created, a region that cannot fit:
/// `--offset` + `--size` beyond 2^64, beyond a `mem:`/`null:` target or a
/// device, beyond an existing file when no `--size` is given, or beyond the
/// whole filesystem that would have to hold a file lunmark creates or grows.
/// Network targets are checked when they are opened (their size comes from
/// the server).
fn check_region(uri: &str, spec: &WorkloadSpec) -> Result<(), TargetError> {
    let end = region::requested_end(uri, spec)?;
    let max_bs = spec.max_block_size();
    if let Some(len) = spec.size.map(|s| s.get()) {
        if len < max_bs {
            return Err(TargetError::RegionTooSmall { uri: uri.into(), len, bs: max_bs });
        }
    }
    // A target of known size: the region must fit, and hold the largest transfer.
    let fits = |size: u64| -> Result<(), TargetError> {
        let r = region::resolve(uri, spec, size)?;
        if r.len < max_bs {
            return Err(TargetError::RegionTooSmall { uri: uri.into(), len: r.len, bs: max_bs });
        }
        Ok(())
    };
    match parse(uri)? {
        TargetUri::Mem(size) | TargetUri::Null(size) => fits(size.get())?,
        TargetUri::Device(path) => {
            if let Some(size) = region::device_size(&path) {
                fits(size)?;
            }
        }
        TargetUri::File(path) => match std::fs::metadata(&path) {
            Ok(m) if m.file_type().is_block_device() => {
                if let Some(size) = region::device_size(&path) {
                    fits(size)?;
                }
            }
            Ok(m) if !m.is_file() && !m.is_dir() => return Err(TargetError::NotAFile { path: path.display().to_string() }),
            Ok(m) if end.is_none_or(|e| e <= m.len()) => fits(m.len())?,
            _ => {
                // lunmark creates the file or grows it to `end`.
                let Some(end) = end else { return Ok(()) };
                let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                if let Some(fs_bytes) = region::filesystem_bytes(dir) {
                    if end > fs_bytes {
                        let (offset, len) = (spec.offset.get(), spec.size.map(|s| s.get()).unwrap_or(0));
                        return Err(TargetError::FileBeyondFilesystem { path: path.display().to_string(), offset, len, end, fs_bytes });
                    }
                }
            }
        },
        TargetUri::Nbd(_) | TargetUri::Iscsi(_) => {}
    }
    Ok(())
}

/// Opens every target of a workload (files created and filled where needed).
/// NBD exports get every connection the point will use, and `mem:` targets
/// their RAM, from what the run keeps across points (`run`).
pub fn open_all(spec: &WorkloadSpec, flags: SafetyFlags, run: &mut RunTargets) -> Result<Vec<OpenTarget>, TargetError> {
    let targets: Vec<Target> = spec.targets.iter().map(|t| Target::parse(t)).collect::<Result<_, _>>()?;
    open_targets(spec, &targets, flags, run)
}

/// `open_all` for targets parsed already (`targets` are `spec.targets`, in
/// order, as a planned point carries them): each is opened by its kind.
pub fn open_targets(
    spec: &WorkloadSpec,
    targets: &[Target],
    flags: SafetyFlags,
    run: &mut RunTargets,
) -> Result<Vec<OpenTarget>, TargetError> {
    let writes = spec.has_writes();
    let max_bs = spec.max_block_size();
    let mut opened: Vec<OpenTarget> = Vec::new();
    // Files created or grown for this call: undone (dropped armed) if any
    // target of the call fails, since nothing will run on them.
    let mut pending: Vec<created::Pending> = Vec::new();
    for (index, t) in targets.iter().enumerate() {
        let uri = &t.text;
        let target = match t.uri.clone() {
            TargetUri::Mem(size) => {
                // The same URI given twice in one point is two LUNs, as before;
                // each keeps its data for the whole run, as a file does.
                let nth = spec.targets[..index].iter().filter(|t| *t == uri).count();
                let lun = match run.mem.entry((uri.clone(), nth)) {
                    Entry::Occupied(e) => e.get().clone(),
                    Entry::Vacant(e) => e.insert(Arc::new(MemLun::new(size.get()).map_err(io_err(Path::new(uri)))?)).clone(),
                };
                finish(uri, TargetKind::Mem, size.get(), spec, Handle::Mem(lun), None, None, None)?
            }
            TargetUri::Null(size) => finish(uri, TargetKind::Null, size.get(), spec, Handle::Null, None, None, None)?,
            TargetUri::Nbd(u) => {
                // Every connection the point uses is opened now, and the size is
                // asked on one of them: a refused connection, an unknown export or a
                // server that serves fewer clients is a clear error before any load
                // starts, and a server that serves one client is not used up by a probe.
                let pool = run.nbd.get(&u);
                let (wanted, why) = connections_wanted(spec, index);
                let remote = |message| TargetError::Remote { message };
                pool.fill(wanted, &why).map_err(|e| match e {
                    FillError::NoConnection(message) => TargetError::Remote { message },
                    FillError::TooFewClients(message) => TargetError::TooFewClients { message },
                })?;
                let size = pool.size().map_err(remote)?;
                if spec.has_trims() || spec.sync.is_some() {
                    let (trim, flush) = pool.can_trim_and_flush().map_err(remote)?;
                    ops_support::check_nbd(spec, uri, trim, flush).map_err(|message| TargetError::Ops { message })?;
                }
                let mut t = finish(uri, TargetKind::Nbd, size, spec, Handle::Remote(u), None, Some("NBD export".into()), None)?;
                t.nbd = Some(pool);
                t
            }
            TargetUri::Iscsi(u) => {
                // Log in once now, for the same reason, and to learn the LUN's
                // size and block size (every I/O must be a whole number of blocks).
                let session = crate::transport::iscsi::Session::open(&u).map_err(|message| TargetError::Remote { message })?;
                check_alignment(spec, uri, TargetKind::Iscsi, session.block_size as u64)?;
                ops_support::check_iscsi(spec, uri, session.thin).map_err(|message| TargetError::Ops { message })?;
                let model = Some(format!("iSCSI LUN, {}-byte blocks", session.block_size));
                finish(uri, TargetKind::Iscsi, session.size, spec, Handle::Remote(u), None, model, None)?
            }
            TargetUri::File(path) => open_file(uri, &path, spec, writes, &mut pending, run)?,
            TargetUri::Device(path) => open_device(uri, &path, spec, writes, flags)?,
        };
        if target.region.len < max_bs {
            return Err(TargetError::RegionTooSmall { uri: uri.clone(), len: target.region.len, bs: max_bs });
        }
        opened.push(target);
    }
    pending.into_iter().for_each(created::Pending::keep);
    Ok(opened)
}

/// The NBD connections of a run, one pool per export (see `transport::nbd::pool`).
pub type NbdPools = crate::transport::nbd::pool::Pools;

/// What a run keeps open from one point to the next: its NBD connections and
/// its RAM LUNs. A `mem:` LUN must keep its data for the whole run, as a file
/// does (verification checks at one point what an earlier point wrote).
#[derive(Default)]
pub struct RunTargets {
    pub nbd: NbdPools,
    /// Keyed by URI and by which occurrence of that URI in a point's target list.
    mem: HashMap<(String, usize), Arc<MemLun>>,
    /// Each file target's identity when the run first opened it.
    files: FileIdentities,
    /// The run's stop flag (Ctrl-C, SIGTERM): a file being filled stops within
    /// a 1 MiB chunk of it, rather than after the whole fill.
    pub stop: Option<Arc<std::sync::atomic::AtomicBool>>,
}

/// The (device, inode) of each file target the run has opened, by path: a
/// later point opens the same file or stops. A file deleted mid-run would
/// otherwise be created and filled anew, and the rest of the run measured on
/// another file than the one it started with.
/// Each also says whether this run created it (its holes are lunmark's to fill).
#[derive(Default)]
struct FileIdentities(HashMap<PathBuf, (u64, u64, bool)>);

impl FileIdentities {
    /// Err when an earlier point opened another file at `path`: the file is
    /// gone (`now` is None) or another one took its place.
    fn check(&self, uri: &str, path: &Path, now: Option<&std::fs::Metadata>) -> Result<(), TargetError> {
        use std::os::unix::fs::MetadataExt;
        let Some(&(dev, ino, _)) = self.0.get(path) else { return Ok(()) };
        let what = match now {
            None => format!("the file this run opened before, at an earlier point or repeat (device {dev}, inode {ino}), was deleted or renamed"),
            Some(m) if (m.dev(), m.ino()) != (dev, ino) => format!(
                "the path now names another file (device {}, inode {}) than the one this run opened before, at an earlier point or repeat (device {dev}, inode {ino})",
                m.dev(),
                m.ino()
            ),
            Some(_) => return Ok(()),
        };
        Err(TargetError::FileReplaced { uri: uri.into(), what })
    }

    /// Remembers the file `path` names now, the first time it is opened, and
    /// whether this run `created` it.
    fn remember(&mut self, path: &Path, file: &File, created: bool) -> io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        if !self.0.contains_key(path) {
            let m = file.metadata()?;
            self.0.insert(path.to_path_buf(), (m.dev(), m.ino(), created));
        }
        Ok(())
    }

    /// True when this run created the file at `path` (at an earlier point).
    fn made(&self, path: &Path) -> bool {
        self.0.get(path).is_some_and(|e| e.2)
    }
}

/// Connections a point opens to the target at `index` at once (every worker
/// that drives it opens --connections of its own), and how that adds up.
fn connections_wanted(spec: &WorkloadSpec, index: usize) -> (usize, String) {
    let per = spec.connections.max(1) as usize;
    let workers: usize = spec
        .groups
        .iter()
        .filter(|g| spec.group_targets(g).contains(&index))
        .map(|g| if g.worker_per_target { 1 } else { spec.group_workers(g) as usize })
        .sum();
    let plural = |n: usize, what: &str| if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") };
    (workers * per, format!("{} x {} each", plural(workers, "worker"), plural(per, "connection")))
}

/// What is known of a target that was never opened (a stop while its file
/// was being created and filled): its URI, its kind and the region the run
/// would use where that is known without opening it (its size then the
/// region's end, as lunmark makes a new file). None for a URI that does not parse.
pub fn unopened_facts(uri: &str, spec: &WorkloadSpec) -> Option<TargetFacts> {
    let kind = parse(uri).ok()?.kind();
    let (offset, len) = (spec.offset.get(), region::known_len(uri, spec).unwrap_or(0));
    Some(TargetFacts {
        uri: uri.into(),
        kind,
        size_bytes: offset + len,
        region_offset: offset,
        region_bytes: len,
        model: None,
        filesystem: None,
    })
}

/// Closes targets that will not be run after all (a later check refused the
/// run) and removes the files lunmark created for them: nothing ran on them.
pub fn discard_created(targets: Vec<OpenTarget>) {
    let created: Vec<PathBuf> = targets.iter().filter_map(|t| t.created.clone()).collect();
    drop(targets);
    for path in created {
        let _ = std::fs::remove_file(path);
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    uri: &str,
    kind: TargetKind,
    size: u64,
    spec: &WorkloadSpec,
    handle: Handle,
    created: Option<PathBuf>,
    model: Option<String>,
    filesystem: Option<String>,
) -> Result<OpenTarget, TargetError> {
    let region = region::resolve(uri, spec, size)?;
    let facts =
        TargetFacts { uri: uri.into(), kind, size_bytes: size, region_offset: region.start, region_bytes: region.len, model, filesystem };
    Ok(OpenTarget { facts, region, handle, created, cache: None, nbd: None })
}

fn open_file(
    uri: &str,
    path: &Path,
    spec: &WorkloadSpec,
    writes: bool,
    pending: &mut Vec<created::Pending>,
    run: &mut RunTargets,
) -> Result<OpenTarget, TargetError> {
    let stop = run.stop.clone();
    let identities = &mut run.files;
    let display = path.display().to_string();
    if !spec.buffered {
        // Checked before anything is created: a rejected run leaves no file behind.
        check_alignment(spec, uri, TargetKind::File, 512)?;
    }
    let wanted = region::requested_end(uri, spec)?;
    let meta = std::fs::metadata(path);
    // Before anything is created: a file an earlier point opened is not made anew.
    match &meta {
        Ok(m) => identities.check(uri, path, Some(m))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => identities.check(uri, path, None)?,
        Err(_) => {}
    }
    let created = match meta {
        Ok(m) if m.is_dir() => return Err(TargetError::Directory { path: display }),
        Ok(m) if m.file_type().is_block_device() => return open_device(uri, path, spec, writes, SafetyFlags::default()),
        // A FIFO would block the open; a character device or socket holds no region to measure.
        Ok(m) if !m.is_file() => return Err(TargetError::NotAFile { path: display }),
        Ok(_) => None,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if wanted.is_none() {
                let hint = if writes {
                    "Give --size (for example --size 1G) and lunmark creates and fills it".to_string()
                } else {
                    "A read-only run needs data to read: give --size (for example --size 1G) and lunmark creates and fills it first, or name an existing file".to_string()
                };
                return Err(TargetError::Missing { path: display, hint });
            }
            Some(path.to_path_buf())
        }
        Err(e) => return Err(TargetError::Io { path: display, error: e }),
    };
    if created.is_some() {
        pending.push(created::Pending::created(path));
    }
    let size = if created.is_some() || identities.made(path) || writes {
        prepare(uri, path, spec, created.is_some() || identities.made(path), pending, stop.as_deref())?
    } else {
        // The user's file, only read: opened read-only, never grown or filled.
        let file = File::open(path).map_err(io_err(path))?;
        let len = file.metadata().map_err(io_err(path))?.len();
        existing::check_read_region(uri, path, &file, spec, len)?;
        len
    };

    let file = open_for_io(path, writes, spec.buffered).map_err(|e| {
        if e.raw_os_error() == Some(libc::EINVAL) && !spec.buffered {
            TargetError::NoDirect { path: display.clone() }
        } else {
            TargetError::Io { path: display.clone(), error: e }
        }
    })?;
    // The file the I/O goes to, checked again and remembered from its own
    // descriptor: a swap between the check above and the open is caught too.
    identities.check(uri, path, Some(&file.metadata().map_err(io_err(path))?))?;
    identities.remember(path, &file, created.is_some()).map_err(io_err(path))?;
    finish(uri, TargetKind::File, size, spec, Handle::Fd(file.into()), created, None, filesystem_of(path))
}

/// Makes a file target ready for a workload that writes, or for a file lunmark
/// created (`own`): grows it to the region's end and fills its holes, all of
/// them in a file of lunmark's own, only the region's in the user's file (the
/// workload writes there anyway). Returns the file's size.
fn prepare(
    uri: &str,
    path: &Path,
    spec: &WorkloadSpec,
    own: bool,
    pending: &mut Vec<created::Pending>,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Result<u64, TargetError> {
    let fill = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io_err(path))?;
    let current = fill.metadata().map_err(io_err(path))?.len();
    let size = region::requested_end(uri, spec)?.unwrap_or(current).max(current);
    if size > current {
        // (A file created just now has its removal pending already: cutting it back then finds nothing.)
        pending.push(created::Pending::grown(path, current));
        fill.set_len(size).map_err(io_err(path))?;
    }
    let range = if own { 0..size } else { region::resolve(uri, spec, size).map(|r| r.start..r.start + r.len)? };
    fill_holes_in(&fill, range, spec.seed, stop).map_err(|e| match e.kind() {
        io::ErrorKind::Interrupted => TargetError::Stopped { path: path.display().to_string() },
        _ => io_err(path)(e),
    })?;
    Ok(size)
}

/// Opens a file target for the run's I/O: direct unless buffered, and without
/// access-time updates (O_NOATIME), so a read test writes no metadata to the
/// file system and pays no atime check per read (on a tmpfs file 3-4% of the
/// kernel's cycles per 4 KiB read, from `perf record`; 2026-11-24, psync 4 KiB
/// random reads, 5 alternating 3 s runs: 572K IOPS at 1.78 CPU-s per million
/// I/Os with atime, 605K at 1.68 without). Only the file's owner (or root) may
/// ask for it; for anyone else the file is opened with access times as usual
/// (`no_atime`, which `lunmark verify` and `--cache-dev` open through too).
fn open_for_io(path: &Path, writes: bool, buffered: bool) -> io::Result<File> {
    let direct = if buffered { 0 } else { libc::O_DIRECT };
    let mut options = OpenOptions::new();
    options.read(true).write(writes);
    no_atime::open(options, direct, path)
}

/// Writes incompressible data over every hole (and any missing tail) of the first
/// `size` bytes, so that no read in the run ever hits a hole: reading a hole costs
/// the filesystem nothing and would flatter the result.
pub fn fill_holes(file: &File, size: u64, seed: u64) -> io::Result<()> {
    if file.metadata()?.len() < size {
        file.set_len(size)?;
    }
    fill_holes_in(file, 0..size, seed, None)
}

/// Writes incompressible data over every hole of `range` (which lies inside the
/// file). Ends with `ErrorKind::Interrupted` when `stop` is set (checked every MiB).
fn fill_holes_in(file: &File, range: std::ops::Range<u64>, seed: u64, stop: Option<&std::sync::atomic::AtomicBool>) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let fd = file.as_raw_fd();
    let mut chunk = vec![0u8; 1 << 20];
    let mut rng = Rng::for_stream(seed, 0xF111);
    let mut wrote = false;
    let (mut pos, size) = (range.start, range.end);
    while pos < size {
        // SAFETY: lseek on an open fd with valid whence values has no memory effects.
        let hole = unsafe { libc::lseek(fd, pos as libc::off_t, libc::SEEK_HOLE) };
        if hole < 0 || hole as u64 >= size {
            break;
        }
        let hole = hole as u64;
        // SAFETY: as above.
        let data = unsafe { libc::lseek(fd, hole as libc::off_t, libc::SEEK_DATA) };
        let hole_end = if data < 0 { size } else { (data as u64).min(size) };
        let mut at = hole;
        while at < hole_end {
            if stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = ((hole_end - at) as usize).min(chunk.len());
            rng.fill(&mut chunk[..n]);
            file.write_all_at(&chunk[..n], at)?;
            at += n as u64;
        }
        wrote = true;
        pos = hole_end;
    }
    if wrote {
        file.sync_data()?;
    }
    Ok(())
}

fn open_device(uri: &str, path: &Path, spec: &WorkloadSpec, writes: bool, flags: SafetyFlags) -> Result<OpenTarget, TargetError> {
    let display = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => TargetError::NoDevice { path: display.clone() },
        _ => io_err(path)(e),
    })?;
    if !meta.file_type().is_block_device() {
        if meta.is_dir() {
            return Err(TargetError::Directory { path: display });
        }
        return Err(TargetError::Io {
            path: display,
            error: io::Error::other("not a block device (lunmark writes only to block devices under /dev)"),
        });
    }
    if writes {
        if !flags.destructive {
            return Err(TargetError::DeviceNeedsDestructive { path: display });
        }
        let found = safety::findings(path);
        if !found.is_empty() && !flags.force {
            return Err(TargetError::DeviceInUse { path: display, findings: found.join("; ") });
        }
    }
    let mut options = OpenOptions::new();
    options.read(true).write(writes);
    if !spec.buffered {
        options.custom_flags(libc::O_DIRECT);
    }
    let file = options.open(path).map_err(io_err(path))?;
    let (size, sector) = device_geometry(&file).map_err(io_err(path))?;
    let model = device_model(path);
    let target = finish(uri, TargetKind::BlockDevice, size, spec, Handle::Fd(file.into()), None, model, None)?;
    if !spec.buffered {
        check_alignment(spec, uri, TargetKind::BlockDevice, sector)?;
    }
    Ok(target)
}

fn check_alignment(spec: &WorkloadSpec, uri: &str, kind: TargetKind, sector: u64) -> Result<(), TargetError> {
    let needs = if kind == TargetKind::Iscsi {
        "SCSI commands address in: use a multiple"
    } else {
        "direct I/O requires: use a multiple, or --buffered"
    };
    let mis = |what: &str, value: u64| TargetError::Misaligned { uri: uri.into(), what: what.into(), value, sector, needs };
    if !spec.offset.get().is_multiple_of(sector) {
        return Err(mis("offset", spec.offset.get()));
    }
    for line in spec.groups.iter().flat_map(|g| g.access.iter()) {
        if line.bs.get() % sector != 0 {
            return Err(mis("transfer size", line.bs.get()));
        }
        if line.alignment() % sector != 0 {
            return Err(mis("alignment", line.alignment()));
        }
    }
    Ok(())
}

/// (size in bytes, logical block size) of a block device.
pub(crate) fn device_geometry(file: &File) -> io::Result<(u64, u64)> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    const BLKSSZGET: libc::c_ulong = 0x1268;
    let mut size: u64 = 0;
    let mut sector: libc::c_int = 0;
    // SAFETY: both ioctls write one integer of the given type through the pointer,
    // which points at a live local of that type.
    unsafe {
        if libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::ioctl(file.as_raw_fd(), BLKSSZGET, &mut sector) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((size, sector.max(512) as u64))
}

fn device_model(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let sys = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
    let read = |p: &str| std::fs::read_to_string(format!("{sys}/{p}")).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    read("device/model").or_else(|| read("loop/backing_file").map(|b| format!("loop device backed by {b}")))
}

/// The filesystem type of the mount holding `path`, from /proc/self/mountinfo.
fn filesystem_of(path: &Path) -> Option<String> {
    let canon = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, String)> = None;
    for line in info.lines() {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = left.split(' ').nth(4)?;
        let fstype = right.split(' ').next()?;
        if canon.starts_with(mount_point) && best.as_ref().is_none_or(|(len, _)| mount_point.len() >= *len) {
            best = Some((mount_point.len(), fstype.to_string()));
        }
    }
    best.map(|(_, t)| t)
}
