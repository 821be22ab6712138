//! Pins a worker thread to its CPUs (`--cpus`, `--cpus-policy`): one
//! sched_setaffinity call when the thread starts, before it allocates anything,
//! never on the I/O path.

use crate::workload::cpus::Pinning;

/// Restricts the calling thread to `cpus`.
pub fn pin_this_thread(cpus: &[u32]) -> std::io::Result<()> {
    // SAFETY: cpu_set_t is plain data, zeroed here and filled with CPU_SET for
    // numbers below CPU_SETSIZE (larger ones are refused before the call);
    // sched_setaffinity(0, ..) reads it and affects only the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c as usize >= libc::CPU_SETSIZE as usize {
                return Err(std::io::Error::other(format!("CPU {c} is beyond the {} this build can address", libc::CPU_SETSIZE)));
            }
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs worker `index` is pinned to (None without --cpus).
pub fn worker_cpus(pinning: Option<&Pinning>, index: usize) -> Option<Vec<u32>> {
    pinning.map(|p| p.cpus.for_worker(p.policy, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_thread_runs_only_on_its_cpu() {
        let cpus = crate::workload::cpus::online_cpus();
        let last = *cpus.last().expect("at least one CPU");
        let seen = std::thread::spawn(move || {
            pin_this_thread(&[last]).unwrap();
            crate::workload::cpus::online_cpus()
        })
        .join()
        .unwrap();
        assert_eq!(seen, vec![last]);
    }
}
