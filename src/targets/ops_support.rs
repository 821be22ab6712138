//! Whether each target can take the trims and syncs a workload asks for,
//! decided before anything runs: `--fsync`/`--fdatasync` are for files,
//! `--flush` for devices and network LUNs, and a trim needs a device that
//! discards (its queue's `discard_max_bytes`), an NBD server that advertises
//! NBD_CMD_TRIM, or a thin iSCSI LUN (LBPME, which takes UNMAP).

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::uri::{parse, TargetUri};
use crate::workload::{SyncKind, WorkloadSpec};

/// What a target is, as far as trims and syncs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    File,
    Device,
    /// mem: and null: (in-process).
    InProcess,
    /// nbd:// and iscsi:// (checked once connected: `check_nbd`, `check_iscsi`).
    Network,
}

fn kind_of(uri: &TargetUri) -> Kind {
    match uri {
        TargetUri::File(p) => match std::fs::metadata(p) {
            Ok(m) if m.file_type().is_block_device() => Kind::Device,
            _ => Kind::File,
        },
        TargetUri::Device(_) => Kind::Device,
        TargetUri::Mem(_) | TargetUri::Null(_) => Kind::InProcess,
        TargetUri::Nbd(_) | TargetUri::Iscsi(_) => Kind::Network,
    }
}

/// Refuses trims and syncs the targets cannot take, by URI and local facts.
pub fn check(spec: &WorkloadSpec) -> Result<(), String> {
    let uris: Vec<Option<TargetUri>> = spec.targets.iter().map(|t| parse(t).ok()).collect();
    check_each(spec, &uris)
}

/// `check` for a workload whose targets are parsed already (`uris` are
/// `spec.targets`, in order): what the plan calls.
pub fn check_uris(spec: &WorkloadSpec, uris: &[TargetUri]) -> Result<(), String> {
    check_each(spec, &uris.iter().cloned().map(Some).collect::<Vec<_>>())
}

fn check_each(spec: &WorkloadSpec, uris: &[Option<TargetUri>]) -> Result<(), String> {
    let trims = spec.has_trims();
    if spec.sync.is_none() && !trims {
        return Ok(());
    }
    for (t, uri) in spec.targets.iter().zip(uris) {
        let Some(uri) = uri else { continue };
        let kind = kind_of(uri);
        if let Some(sync) = spec.sync {
            let flag = sync.kind.flag();
            match (sync.kind, kind) {
                (SyncKind::Fsync | SyncKind::Fdatasync, Kind::Device) => {
                    return Err(format!(
                        "{flag} {}: {t} is a block device, and {flag} is for files. Use --flush {} to flush the device's write cache \
                         after every {} write{} (an fsync of a block device is that flush)",
                        sync.every,
                        sync.every,
                        sync.every,
                        crate::units::plural(sync.every)
                    ))
                }
                (SyncKind::Fsync | SyncKind::Fdatasync, Kind::InProcess | Kind::Network) => {
                    return Err(format!(
                        "{flag} {}: {t} is not a file, and {flag} is for files. Use --flush {} to send the target a cache flush \
                         after every {} write{}",
                        sync.every,
                        sync.every,
                        sync.every,
                        crate::units::plural(sync.every)
                    ))
                }
                (SyncKind::Flush, Kind::File) => {
                    return Err(format!(
                        "--flush {}: {t} is a file, and --flush is for devices and network LUNs. Use --fsync {} or --fdatasync {} on files",
                        sync.every, sync.every, sync.every
                    ))
                }
                _ => {}
            }
        }
        if trims && kind == Kind::Device {
            let path = match uri {
                TargetUri::File(p) | TargetUri::Device(p) => p.clone(),
                _ => continue,
            };
            if spec.engine != crate::workload::EngineChoice::Psync && !kernel_at_least(&kernel_release(), 6, 12) {
                return Err(format!(
                    "--trim: {t} is a block device, and io_uring discards block devices only on Linux 6.12 and later (this is {}). \
                     Add --engine psync to trim it with the BLKDISCARD ioctl",
                    kernel_release()
                ));
            }
            if discard_max_bytes(&path) == Some(0) {
                return Err(format!(
                    "--trim: {t} does not discard (its queue's discard_max_bytes is 0): the device takes no trims. \
                     Drop --trim (or the profile's trim shares) for this device"
                ));
            }
        }
    }
    Ok(())
}

/// The running kernel's release ("6.18.44-...").
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// True when `release` is at least `major.minor` (an unreadable one counts as new enough).
fn kernel_at_least(release: &str, major: u32, minor: u32) -> bool {
    let mut parts = release.split(|c: char| !c.is_ascii_digit()).filter_map(|p| p.parse::<u32>().ok());
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => (a, b) >= (major, minor),
        _ => true,
    }
}

/// The device's largest discard, from sysfs (None when it cannot be read).
fn discard_max_bytes(path: &Path) -> Option<u64> {
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    // A partition has no queue of its own: its disk's is one level up.
    ["queue/discard_max_bytes", "../queue/discard_max_bytes"]
        .iter()
        .find_map(|q| std::fs::read_to_string(format!("{base}/{q}")).ok())
        .and_then(|s| s.trim().parse().ok())
}

/// Refuses trims or flushes an NBD server did not advertise in its handshake.
pub fn check_nbd(spec: &WorkloadSpec, uri: &str, can_trim: bool, can_flush: bool) -> Result<(), String> {
    if spec.has_trims() && !can_trim {
        return Err(format!(
            "--trim: the NBD server of {uri} does not accept trims (it did not advertise NBD_CMD_TRIM). \
             Drop --trim, or serve the export with trim enabled (nbdkit's memory and file plugins do; qemu-nbd needs --discard=unmap)"
        ));
    }
    if spec.sync.is_some_and(|s| s.kind == SyncKind::Flush) && !can_flush {
        return Err(format!(
            "--flush: the NBD server of {uri} does not accept flushes (it did not advertise NBD_CMD_FLUSH). Drop --flush for this target"
        ));
    }
    Ok(())
}

/// Refuses trims on an iSCSI LUN that is not thin (READ CAPACITY 16 says LBPME = 0).
pub fn check_iscsi(spec: &WorkloadSpec, uri: &str, thin: bool) -> Result<(), String> {
    if spec.has_trims() && !thin {
        return Err(format!(
            "--trim: the iSCSI LUN {uri} is not thin-provisioned (READ CAPACITY 16 reports LBPME = 0), so it takes no UNMAP. \
             Drop --trim, or export a thin LUN (tgtd: --params thin_provisioning=1)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::SyncEvery;

    fn spec(target: &str, sync: Option<SyncEvery>, trim: f64) -> WorkloadSpec {
        let mut s = crate::workload::spec::tests::one_line_spec();
        s.targets = vec![target.into()];
        s.sync = sync;
        s.groups[0].access[0].trim = trim;
        s
    }

    #[test]
    fn fsync_is_for_files_and_flush_for_everything_else() {
        let every = |kind| Some(SyncEvery { kind, every: 8 });
        assert!(check(&spec("/dev/shm/f.dat", every(SyncKind::Fsync), 0.0)).is_ok());
        assert!(check(&spec("mem:1m", every(SyncKind::Flush), 0.0)).is_ok());
        let e = check(&spec("mem:1m", every(SyncKind::Fdatasync), 0.0)).unwrap_err();
        assert!(e.contains("--fdatasync 8") && e.contains("--flush 8") && e.contains("after every 8 writes"), "{e}");
        // One write: "every 1 write", not "1 writes".
        let e = check(&spec("mem:1m", Some(SyncEvery { kind: SyncKind::Fsync, every: 1 }), 0.0)).unwrap_err();
        assert!(e.contains("after every 1 write") && !e.contains("1 writes"), "{e}");
        let e = check(&spec("/dev/shm/f.dat", every(SyncKind::Flush), 0.0)).unwrap_err();
        assert!(e.contains("is a file") && e.contains("--fsync 8"), "{e}");
        let e = check_nbd(&spec("nbd://x/", None, 10.0), "nbd://x/", false, true).unwrap_err();
        assert!(e.contains("NBD_CMD_TRIM"), "{e}");
        assert!(check_iscsi(&spec("iscsi://h/t/0", None, 10.0), "iscsi://h/t/0", false).unwrap_err().contains("LBPME"));
    }

    #[test]
    fn io_urings_block_discard_needs_linux_6_12() {
        assert!(kernel_at_least("6.18.44-fc-v782", 6, 12));
        assert!(kernel_at_least("6.12.0", 6, 12));
        assert!(!kernel_at_least("6.11.9-amd64", 6, 12));
        assert!(!kernel_at_least("5.15.0-91-generic", 6, 12));
        assert!(kernel_at_least("", 6, 12), "unknown: not refused");
    }
}
