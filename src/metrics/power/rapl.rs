//! RAPL energy counters through the kernel's powercap sysfs
//! (/sys/class/powercap/intel-rapl:N, used by Intel and AMD). Package domains
//! and their DRAM sub-domains are summed (core and uncore sub-domains are inside
//! the package; psys, the whole platform, would double count and is skipped).
//! Counters wrap at max_energy_range_uj. `LUNMARK_SYSFS_ROOT` points the reader
//! at another tree (tests use one laid out like the kernel's).

use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct Domain {
    pub name: String,
    pub energy: PathBuf,
    pub max_range_uj: u64,
}

#[derive(Clone, Debug)]
pub struct Rapl {
    pub domains: Vec<Domain>,
}

fn root() -> PathBuf {
    PathBuf::from(std::env::var_os("LUNMARK_SYSFS_ROOT").unwrap_or_else(|| "/sys".into())).join("class/powercap")
}

impl Rapl {
    pub fn discover() -> Result<Rapl, String> {
        let base = root();
        let entries = std::fs::read_dir(&base).map_err(|_| format!("no RAPL: {} does not exist", base.display()))?;
        let mut zones: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        zones.sort();
        let mut domains = Vec::new();
        for z in zones {
            let file = z.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let Some(rest) = file.strip_prefix("intel-rapl:") else { continue };
            let name = std::fs::read_to_string(z.join("name")).unwrap_or_default().trim().to_string();
            let top = !rest.contains(':');
            let wanted = (top && name != "psys") || (!top && name == "dram");
            if !wanted {
                continue;
            }
            let max_range_uj =
                std::fs::read_to_string(z.join("max_energy_range_uj")).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(u64::MAX);
            domains.push(Domain { name, energy: z.join("energy_uj"), max_range_uj });
        }
        if domains.is_empty() {
            return Err(format!("no RAPL: no package domains under {}", base.display()));
        }
        let rapl = Rapl { domains };
        rapl.read_uj().map_err(|e| e.to_string())?;
        Ok(rapl)
    }

    pub fn domain_names(&self) -> Vec<String> {
        self.domains.iter().map(|d| d.name.clone()).collect()
    }

    /// The raw counter of every domain, microjoules.
    pub fn read_uj(&self) -> Result<Vec<u64>, String> {
        self.domains
            .iter()
            .map(|d| {
                let text = std::fs::read_to_string(&d.energy).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::PermissionDenied {
                        format!(
                            "{} is readable only by root (Linux restricts RAPL counters since 5.10): run as root, or `sudo chmod o+r {}`",
                            d.energy.display(),
                            d.energy.display()
                        )
                    } else {
                        format!("{}: {e}", d.energy.display())
                    }
                })?;
                text.trim().parse::<u64>().map_err(|_| format!("{}: '{}' is not a counter", d.energy.display(), text.trim()))
            })
            .collect()
    }

    /// Microjoules between two readings of one domain, across at most one wrap.
    pub fn delta_uj(&self, domain: usize, before: u64, after: u64) -> u64 {
        if after >= before {
            after - before
        } else {
            self.domains[domain].max_range_uj.saturating_sub(before) + after
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_the_max_range() {
        let r = Rapl { domains: vec![Domain { name: "package-0".into(), energy: "/x".into(), max_range_uj: 1000 }] };
        assert_eq!(r.delta_uj(0, 900, 100), 200);
        assert_eq!(r.delta_uj(0, 100, 900), 800);
    }
}
