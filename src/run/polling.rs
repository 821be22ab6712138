//! Checks a workload's io_uring polling (`--sqpoll[=CPU]`, `--poll`) against its
//! engines and targets before anything runs, so a setting that cannot apply is
//! refused with the reason and what to use instead, never accepted and ignored.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::engine::EngineKind;
use crate::targets::TargetUri;
use crate::workload::polling::SqPoll;
use crate::workload::WorkloadSpec;

/// Refuses polling that cannot apply to `spec`. `engines[i]` is the engine
/// of target `i`; only an engine whose capabilities say so polls.
pub fn check(spec: &WorkloadSpec, uris: &[TargetUri], engines: &[EngineKind]) -> Result<(), String> {
    let p = spec.polling;
    if p.is_off() {
        return Ok(());
    }
    let flags = p.flags();
    if let Some((t, (e, uri))) = spec.targets.iter().zip(engines.iter().zip(uris)).find(|(_, (e, _))| !e.capabilities().polling) {
        let instead = match uri {
            // Files and devices have an engine that polls: the user chose another.
            TargetUri::File(_) | TargetUri::Device(_) => "use --engine io_uring (or auto) for files and block devices".to_string(),
            _ => format!("{}: targets have no io_uring ring; run files or block devices to poll", e.name()),
        };
        return Err(format!(
            "{flags}: polling is a setting of io_uring rings, but {t} runs through the {} engine: {instead}, or drop {flags}",
            e.name()
        ));
    }
    if let Some(SqPoll::Cpu(cpu)) = p.sqpoll {
        let allowed = allowed_cpus();
        if !allowed.contains(&cpu) {
            return Err(format!(
                "--sqpoll={cpu}: CPU {cpu} is not one this process may run on (allowed: {}): give one of those, or --sqpoll alone to let the poller run anywhere",
                cpu_list(&allowed)
            ));
        }
    }
    if p.poll {
        if spec.buffered {
            return Err(
                "--poll polls the device for direct I/O completions, but --buffered goes through the page cache: drop one of them".into()
            );
        }
        for (t, uri) in spec.targets.iter().zip(uris) {
            let path = match uri {
                TargetUri::File(p) | TargetUri::Device(p) => p,
                _ => unreachable!("io_uring targets are files or devices"),
            };
            poll_queues(path).map_err(|why| {
                format!("--poll: {t} cannot be polled for completions: {why}. Drop --poll (interrupt-driven completions); --sqpoll polls the submission side on any target")
            })?;
        }
    }
    Ok(())
}

/// Ok when `path` is a block device whose queue polls (`queue/io_poll` is 1);
/// otherwise why not.
pub fn poll_queues(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            "it does not exist yet (lunmark would create a file), and only block devices with poll queues can poll".to_string()
        }
        _ => crate::output_path::describe_io(&e),
    })?;
    if !meta.file_type().is_block_device() {
        return Err("it is not a block device, and only block devices with poll queues (NVMe with poll_queues set) can poll".into());
    }
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let dev = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    // A partition's queue is its disk's.
    let queue = if dev.join("partition").exists() { dev.join("../queue/io_poll") } else { dev.join("queue/io_poll") };
    let value = std::fs::read_to_string(&queue).map_err(|e| format!("{} cannot be read ({e})", queue.display()))?;
    let name = std::fs::canonicalize(&dev).ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    match value.trim() {
        "1" => Ok(()),
        v => Err(format!(
            "/sys/block/{}/queue/io_poll is {v}: its driver has no poll queues (loop devices never do; NVMe has them when the nvme module is loaded with poll_queues=N)",
            name.unwrap_or_else(|| format!("{major}:{minor}"))
        )),
    }
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: `set` is a plain bitmask the kernel fills; its size is passed with it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as u32).filter(|&c| libc::CPU_ISSET(c as usize, &set)).collect()
    }
}

/// "0-3,8" for [0, 1, 2, 3, 8].
fn cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_like_taskset() {
        assert_eq!(cpu_list(&[0, 1, 2, 3, 8]), "0-3,8");
        assert_eq!(cpu_list(&[1]), "1");
        assert!(allowed_cpus().contains(&0) || !allowed_cpus().is_empty());
    }

    #[test]
    fn a_regular_file_cannot_poll() {
        let e = poll_queues(Path::new("/proc/self/status")).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
    }
}
