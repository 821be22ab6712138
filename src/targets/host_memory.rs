//! The host's memory as /proc/meminfo tells it, and the share of it lunmark
//! leaves to everything else. The run's memory check (`run::resources`) and
//! the filling of a `mem:` LUN both measure against it: a check alone is a
//! snapshot, and other processes may take memory between the check and the
//! filling of a LUN of many GiB.

/// MemAvailable and MemTotal, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostMemory {
    pub available: u64,
    pub total: u64,
}

impl HostMemory {
    /// From /proc/meminfo (None when it cannot be read).
    pub fn read() -> Option<HostMemory> {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        Some(HostMemory { available: field(&text, "MemAvailable:")?, total: field(&text, "MemTotal:")? })
    }

    /// What a run leaves to the rest of the system: a sixteenth of the RAM, at
    /// least 256 MiB. A run that takes all of MemAvailable leaves the shells,
    /// the other processes' growth and the page cache of lunmark's own code
    /// nothing, and the kernel's OOM killer then ends the largest process,
    /// lunmark (2026-11-27: a `mem:` LUN just under MemAvailable was killed at
    /// 19.6 GB while compilers on the same host grew by a few GB).
    pub fn reserve(&self) -> u64 {
        (self.total / 16).max(256 << 20)
    }

    /// What a run may use: MemAvailable less the reserve.
    pub fn usable(&self) -> u64 {
        self.available.saturating_sub(self.reserve())
    }
}

fn field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_a_sixteenth_of_the_ram_and_at_least_256_mib() {
        let m = HostMemory { available: 20 << 30, total: 24 << 30 };
        assert_eq!(m.reserve(), 1536 << 20);
        assert_eq!(m.usable(), (20 << 30) - (1536 << 20));
        let small = HostMemory { available: 100 << 20, total: 1 << 30 };
        assert_eq!(small.reserve(), 256 << 20);
        assert_eq!(small.usable(), 0);
        let here = HostMemory::read().expect("/proc/meminfo is readable");
        assert!(here.total >= here.available && here.available > 0, "{here:?}");
    }
}
