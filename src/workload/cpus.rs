//! The CPU set workers are pinned to (`--cpus 0-3,8`) and how they share it
//! (`--cpus-policy shared|split`, fio's `cpus_allowed_policy`). Parsed once,
//! where the flag enters; checked against the CPUs this host has before the run.

use std::fmt;

use serde::{Deserialize, Serialize};

/// CPU numbers an affinity mask (`cpu_set_t`) can hold: 0 to 1023.
pub const MAX_CPUS: u32 = libc::CPU_SETSIZE as u32;

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
        CpuList::parse_with(text, Some(online))
    }

    /// Parses "0-3,8" without asking which CPUs this host has (a profile may
    /// be read on one host and run on another); `parse` checks them at the run.
    pub fn parse_syntax(text: &str) -> Result<CpuList, String> {
        CpuList::parse_with(text, None)
    }

    /// Every error names the flag, the value given, what in it is wrong and
    /// what is allowed.
    fn parse_with(text: &str, online: Option<&[u32]>) -> Result<CpuList, String> {
        let fix = "write CPU numbers from 0 and ranges LOW-HIGH, separated by commas, such as 0-3,8";
        let err = |what: String| format!("--cpus {text}: {what} ({fix})");
        let not_online = |cpus: &str, online: &[u32]| {
            format!("--cpus {text}: CPU {cpus} is not online on this host (online: {}); pick CPUs from that list", CpuList(online.to_vec()))
        };
        if text.trim().is_empty() {
            return Err(err("the list is empty".into()));
        }
        let number = |s: &str| -> Result<u32, String> {
            let s = s.trim();
            match s.parse::<u32>() {
                // Above what an affinity mask holds: refused before a range of it is spelt out.
                Ok(n) if n >= MAX_CPUS => Err(match online {
                    Some(online) => not_online(s, online),
                    None => err(format!("CPU {n} is beyond the {MAX_CPUS} CPUs an affinity mask holds")),
                }),
                Ok(n) => Ok(n),
                Err(_) if s.starts_with('-') => Err(err(format!("'{s}' is not a CPU number: CPUs are numbered from 0"))),
                Err(_) if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) => Err(match online {
                    Some(online) => not_online(s, online),
                    None => err(format!("CPU {s} is beyond the {MAX_CPUS} CPUs an affinity mask holds")),
                }),
                Err(_) => Err(err(format!("'{s}' is not a CPU number"))),
            }
        };
        let mut cpus = Vec::new();
        for part in text.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(err("an entry between two commas (or at either end) is empty".into()));
            }
            // "-1" is a negative number, not a range without its start.
            let range = if part.starts_with('-') { None } else { part.split_once('-') };
            let (lo, hi) = match range {
                Some((_, b)) if b.trim().is_empty() => return Err(err(format!("the range '{part}' has no end"))),
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
        if let Some(online) = online {
            let missing: Vec<u32> = cpus.iter().copied().filter(|c| !online.contains(c)).collect();
            if !missing.is_empty() {
                // As a list (2-63), not sixty numbers, when a range runs past the host's CPUs.
                return Err(not_online(&CpuList(missing).to_string(), online));
            }
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

/// A profile's `cpus = "0-3,8"`: the list as the flag takes it, read with its
/// syntax checked (which CPUs the host has is checked at the run).
pub mod opt_list_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::CpuList;

    pub fn serialize<S: Serializer>(list: &Option<CpuList>, s: S) -> Result<S::Ok, S::Error> {
        match list {
            Some(l) => s.serialize_str(&l.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CpuList>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| CpuList::parse_syntax(&t).map_err(|e| serde::de::Error::custom(e.replacen("--cpus", "cpus", 1)))).transpose()
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

    /// Each odd list is refused naming the flag, the value as given, what in it
    /// is wrong and what is allowed (a user's trial: --cpus=-1 said "'' is not a CPU number").
    #[test]
    fn odd_lists_name_the_value_and_what_is_allowed() {
        let online = [0, 1];
        let allowed = "write CPU numbers from 0 and ranges LOW-HIGH";
        for (text, says) in [
            ("-1", "--cpus -1: '-1' is not a CPU number: CPUs are numbered from 0"),
            ("0,-1", "--cpus 0,-1: '-1' is not a CPU number"),
            ("0,,1", "--cpus 0,,1: an entry between two commas (or at either end) is empty"),
            ("0,", "--cpus 0,: an entry between two commas"),
            ("", "--cpus : the list is empty"),
            ("1-", "--cpus 1-: the range '1-' has no end"),
            ("0--1", "--cpus 0--1: '-1' is not a CPU number"),
            ("a-b", "--cpus a-b: 'a' is not a CPU number"),
        ] {
            let e = CpuList::parse(text, &online).unwrap_err();
            assert!(e.contains(says) && e.contains(allowed), "{text:?}: {e}");
        }
        let e = CpuList::parse("3-1", &online).unwrap_err();
        assert!(e.contains("--cpus 3-1: the range 3-1 runs backwards; write it low to high, 1-3"), "{e}");
        // Beyond the host: the online CPUs are what is allowed, a long range shown as one.
        let e = CpuList::parse("99999", &online).unwrap_err();
        assert!(e.contains("--cpus 99999: CPU 99999 is not online on this host (online: 0-1)"), "{e}");
        let e = CpuList::parse("0-63", &online).unwrap_err();
        assert!(e.contains("CPU 2-63 is not online on this host (online: 0-1)"), "{e}");
        let e = CpuList::parse("0-4294967295", &online).unwrap_err();
        assert!(e.contains("CPU 4294967295 is not online"), "refused before the range is spelt out: {e}");
        assert!(CpuList::parse("99999999999", &online).unwrap_err().contains("CPU 99999999999 is not online"));
        // Without a host (a profile): the syntax alone, and the mask's limit.
        assert_eq!(CpuList::parse_syntax("8-9, 2").unwrap().0, vec![2, 8, 9]);
        assert!(CpuList::parse_syntax("5000").unwrap_err().contains("CPU 5000 is beyond the 1024 CPUs an affinity mask holds"));
    }

    #[test]
    fn split_gives_each_worker_one_cpu_round_robin() {
        let l = CpuList(vec![2, 5]);
        assert_eq!(l.for_worker(CpuPolicy::Split, 3), vec![5]);
        assert_eq!(l.for_worker(CpuPolicy::Shared, 3), vec![2, 5]);
    }
}
