//! Region arithmetic: where on a target a run does its I/O (`--offset`,
//! `--size`), computed with checked arithmetic so that no bound can wrap
//! around 2^64 and let an I/O land at an offset the user never named.
//! Also the sizes a target is known to have before it is opened, so that a
//! region that cannot fit is refused before anything runs.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use super::TargetError;
use crate::workload::{Region, WorkloadSpec};

/// The end of `--offset` + `--size`, or an error naming both when it would
/// not fit in 64 bits (no target is that large).
pub fn requested_end(uri: &str, spec: &WorkloadSpec) -> Result<Option<u64>, TargetError> {
    let offset = spec.offset.get();
    match spec.size {
        None => Ok(None),
        Some(len) => {
            offset.checked_add(len.get()).map(Some).ok_or(TargetError::RegionOverflows { uri: uri.into(), offset, len: len.get() })
        }
    }
}

/// The region of a target of `size` bytes: `--size` bytes from `--offset`, or
/// everything from `--offset` to the end. Refused when it is empty or does not
/// fit.
pub fn resolve(uri: &str, spec: &WorkloadSpec, size: u64) -> Result<Region, TargetError> {
    let offset = spec.offset.get();
    let len = match spec.size {
        Some(len) => len.get(),
        None if offset >= size => return Err(TargetError::OffsetBeyondEnd { uri: uri.into(), offset, size }),
        None => size - offset,
    };
    let end = offset.checked_add(len).ok_or(TargetError::RegionOverflows { uri: uri.into(), offset, len })?;
    if end > size || len == 0 {
        return Err(TargetError::RegionTooLarge { uri: uri.into(), offset, len, size });
    }
    Ok(Region { start: offset, len })
}

/// The length of the region a run would use on `uri`, when it can be known
/// without opening the target: `--size`, or what follows `--offset` on a
/// `mem:`/`null:` target, an existing file or a device. None for network
/// targets without `--size`.
pub fn known_len(uri: &str, spec: &WorkloadSpec) -> Option<u64> {
    if let Some(len) = spec.size {
        return Some(len.get());
    }
    let size = match super::parse(uri).ok()? {
        super::TargetUri::Mem(s) | super::TargetUri::Null(s) => s.get(),
        super::TargetUri::Device(path) => device_size(&path)?,
        super::TargetUri::File(path) => {
            let m = std::fs::metadata(&path).ok()?;
            if m.file_type().is_block_device() {
                device_size(&path)?
            } else {
                m.len()
            }
        }
        super::TargetUri::Nbd(_) | super::TargetUri::Iscsi(_) => return None,
    };
    size.checked_sub(spec.offset.get())
}

/// The size of a block device from sysfs, without opening it (so a check can
/// run before anything touches the device).
pub fn device_size(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(path).ok()?.rdev();
    let sectors: u64 =
        std::fs::read_to_string(format!("/sys/dev/block/{}:{}/size", libc::major(rdev), libc::minor(rdev))).ok()?.trim().parse().ok()?;
    // The sysfs size is always in 512-byte units, whatever the logical block size.
    sectors.checked_mul(512)
}

/// The total size of the filesystem holding `dir` (used and free), from statvfs
/// (None when unknown or unlimited).
pub fn filesystem_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes one struct through the pointer, which points at a
    // zeroed local of that type; the path is a NUL-terminated C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    // ramfs reports no blocks at all: it has no size, so nothing to check against.
    (st.f_blocks as u64).checked_mul(st.f_frsize as u64).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    fn spec(offset: u64, size: Option<u64>) -> WorkloadSpec {
        let mut s = crate::workload::spec::tests::one_line_spec();
        s.offset = Bytes(offset);
        s.size = size.map(Bytes);
        s
    }

    #[test]
    fn an_offset_near_two_to_the_64_is_refused_not_wrapped() {
        let s = spec(18_446_744_073_709_551_104, Some(8192));
        let e = resolve("f", &s, 1 << 20).unwrap_err();
        assert!(matches!(e, TargetError::RegionOverflows { .. }), "{e}");
        assert!(e.to_string().contains("--offset") && e.to_string().contains("--size"), "{e}");
        assert!(requested_end("f", &s).is_err());
    }

    #[test]
    fn regions_that_fit_resolve_and_others_are_refused() {
        assert_eq!(resolve("f", &spec(4096, Some(8192)), 1 << 20).unwrap(), Region { start: 4096, len: 8192 });
        assert_eq!(resolve("f", &spec(4096, None), 1 << 20).unwrap(), Region { start: 4096, len: (1 << 20) - 4096 });
        assert!(matches!(resolve("f", &spec(1 << 20, None), 1 << 20), Err(TargetError::OffsetBeyondEnd { .. })));
        assert!(matches!(resolve("f", &spec(u64::MAX, None), 1 << 20), Err(TargetError::OffsetBeyondEnd { .. })));
        assert!(matches!(resolve("f", &spec((1 << 20) - 4096, Some(8192)), 1 << 20), Err(TargetError::RegionTooLarge { .. })));
    }
}
