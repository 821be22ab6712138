//! The CPU set workers are pinned to (`--cpus 0-3,8`) and how they share it
//! (`--cpus-policy shared|split`, fio's `cpus_allowed_policy`). Parsed once,
//! where the flag enters; checked against the CPUs this host has before the run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// CPUs by number, ascending, each once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuList(pub Vec<u32>);

/// How pinned workers use the listed CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpuPolicy {
    /// Every worker may run on every listed CPU.
    #[default]
    Shared,
    /// Worker i runs on the (i mod n)th listed CPU only.
    Split,
}

impl std::str::FromStr for CpuPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "shared" => Ok(CpuPolicy::Shared),
            "split" => Ok(CpuPolicy::Split),
            _ => Err(format!(
                "--cpus-policy {s}: use shared (every worker on all listed CPUs) or split (worker i on the i-th listed CPU, round robin)"
            )),
        }
    }
}

impl fmt::Display for CpuPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuPolicy::Shared => "shared",
            CpuPolicy::Split => "split",
        })
    }
}

impl CpuList {
    /// Parses "0-3,8". `online` is the CPUs this host can run on: a CPU
    /// outside it is refused here, before anything runs.
    pub fn parse(text: &str, online: &[u32]) -> Result<CpuList, String> {
        let fix = "write CPU numbers and ranges such as 0-3,8";
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            let number = |s: &str| s.trim().parse::<u32>().map_err(|_| format!("--cpus {text}: '{s}' is not a CPU number ({fix})"));
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => {
                    let n = number(part)?;
                    (n, n)
                }
            };
            if lo > hi {
                return Err(format!("--cpus {text}: the range {part} runs backwards; write it low to high, {hi}-{lo}"));
            }
            cpus.extend(lo..=hi);
        }
        cpus.sort_unstable();
        cpus.dedup();
        let missing: Vec<String> = cpus.iter().filter(|c| !online.contains(c)).map(u32::to_string).collect();
        if !missing.is_empty() {
            return Err(format!(
                "--cpus {text}: CPU {} is not online on this host (online: {}); pick CPUs from that list",
                missing.join(", "),
                CpuList(online.to_vec())
            ));
        }
        Ok(CpuList(cpus))
    }

    /// The CPUs worker `index` may run on under `policy`.
    pub fn for_worker(&self, policy: CpuPolicy, index: usize) -> Vec<u32> {
        match policy {
            CpuPolicy::Shared => self.0.clone(),
            CpuPolicy::Split => vec![self.0[index % self.0.len()]],
        }
    }
}

/// "0-3,8": the kernel's list format (as in /proc/PID/status Cpus_allowed_list).
impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            let mut end = start;
            while i + 1 < self.0.len() && self.0[i + 1] == end + 1 {
                i += 1;
                end = self.0[i];
            }
            parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
            i += 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// The CPUs this process may run on now (its affinity mask), ascending.
pub fn online_cpus() -> Vec<u32> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into the zeroed local we pass.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        set
    };
    // SAFETY: CPU_ISSET reads the set we own, with an index below CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).map(|c| c as u32).collect()
}

/// `--cpus` with its policy: what the result records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pinning {
    pub cpus: CpuList,
    pub policy: CpuPolicy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_ranges_and_refuse_what_is_wrong() {
        let online: Vec<u32> = (0..16).collect();
        assert_eq!(CpuList::parse("0-3,8", &online).unwrap().0, vec![0, 1, 2, 3, 8]);
        assert_eq!(CpuList::parse("3,1,1", &online).unwrap().0, vec![1, 3]);
        assert!(CpuList::parse("3-1", &online).unwrap_err().contains("runs backwards"));
        assert!(CpuList::parse("x", &online).unwrap_err().contains("'x' is not a CPU number"));
        assert!(CpuList::parse("99", &online).unwrap_err().contains("CPU 99 is not online"));
        assert_eq!(CpuList(vec![0, 1, 2, 5, 7, 8]).to_string(), "0-2,5,7-8");
    }

    #[test]
    fn split_gives_each_worker_one_cpu_round_robin() {
        let l = CpuList(vec![2, 5]);
        assert_eq!(l.for_worker(CpuPolicy::Split, 3), vec![5]);
        assert_eq!(l.for_worker(CpuPolicy::Shared, 3), vec![2, 5]);
    }
}
