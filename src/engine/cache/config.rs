//! The cache tier as the user asks for it (`--cache 25%`, `--cache 256m`,
//! `--cache-mode`, `--cache-dev`, `--cache-block`) and the checks that it can
//! work with the workload, made before anything runs.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Result};

use super::{CacheMode, TargetCache};
use crate::targets::OpenTarget;
use crate::units::parse_size;
use crate::workload::WorkloadSpec;

/// The size of the cache tier as `--cache` asks for it. (A cache size with
/// its hit ratio, for the sizing's predictions, is `sizing::predict::HitRatioPoint`.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CacheSize {
    Bytes(u64),
    /// A share of each target's region, %.
    Percent(f64),
}

impl std::str::FromStr for CacheSize {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<CacheSize> {
        if let Some(p) = s.trim().strip_suffix('%') {
            let v: f64 =
                p.trim().parse().map_err(|_| anyhow::anyhow!("'{s}' is not a percentage: write it as 25% (0% to 100% of the region)"))?;
            if !(0.0..=100.0).contains(&v) {
                bail!("'{s}' is outside 0% to 100% of the region");
            }
            return Ok(CacheSize::Percent(v));
        }
        Ok(CacheSize::Bytes(
            parse_size(s).map_err(|e| anyhow::anyhow!("{e}: give a size (256m, 1g) or a share of the region (25%)"))?.get(),
        ))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CacheConfig {
    pub size: CacheSize,
    pub mode: CacheMode,
    /// Frames in this file or device instead of RAM.
    pub dev: Option<PathBuf>,
    pub block_bytes: u32,
}

/// The cache's size for a region of `region_bytes`, in whole blocks.
pub fn frames_for(cfg: &CacheConfig, region_bytes: u64) -> u32 {
    let bytes = match cfg.size {
        CacheSize::Bytes(b) => b,
        CacheSize::Percent(p) => (region_bytes as f64 * p / 100.0).round() as u64,
    };
    (bytes.min(region_bytes) / cfg.block_bytes as u64).min(u32::MAX as u64 - 1) as u32
}

/// Refuses a workload the cache cannot serve block by block, and a cache
/// device lunmark must not write.
pub fn check(cfg: &CacheConfig, spec: &WorkloadSpec, safety: crate::targets::SafetyFlags) -> Result<()> {
    let bs = cfg.block_bytes as u64;
    if bs == 0 || !bs.is_power_of_two() || bs < 512 {
        bail!("--cache-block {bs}: the cache block must be a power of two of at least 512 bytes (for example 4k)");
    }
    if !spec.offset.get().is_multiple_of(bs) {
        bail!("--offset {} is not a multiple of the {bs}-byte cache block: use a multiple, or a smaller --cache-block", spec.offset.get());
    }
    for line in spec.groups.iter().flat_map(|g| g.access.iter()) {
        if line.bs.get() % bs != 0 || line.alignment() % bs != 0 {
            bail!(
                "with --cache, every transfer must cover whole {bs}-byte cache blocks, but a line has transfer size {} aligned to {}: use multiples of {bs}, or a smaller --cache-block",
                line.bs.get(),
                line.alignment()
            );
        }
    }
    if let Some(dev) = &cfg.dev {
        if spec.targets.len() > 1 {
            bail!(
                "--cache-dev holds the cache of one target; this run has {} targets: run one target, or keep the cache in RAM",
                spec.targets.len()
            );
        }
        if spec.targets.iter().any(|t| std::path::Path::new(t) == dev) {
            bail!("--cache-dev {} is the target itself: name another file or device", dev.display());
        }
        let is_device = std::fs::metadata(dev).map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type())).unwrap_or(false);
        if !dev.exists() && matches!(crate::targets::uri::parse(&dev.to_string_lossy()), Ok(crate::targets::uri::TargetUri::Device(_))) {
            // A mistyped device name must not become a new file in /dev.
            bail!("--cache-dev {} does not exist: there is no such device (`lsblk` lists the block devices)", dev.display());
        }
        if !is_device {
            // Not a block device: a file the cache writes, so the rule of every
            // output holds (a character device would swallow the blocks, a FIFO hang).
            if let Some(m) = std::fs::metadata(dev).ok().filter(|m| !m.is_file()) {
                bail!(
                    "--cache-dev {}: that is {}; the cache lives in a regular file or (with --destructive) a block device",
                    dev.display(),
                    crate::output_path::kind_of(&m)
                );
            }
            crate::output_path::check("--cache-dev", dev, crate::output_path::Mode::Stream)?;
        }
        if is_device {
            if !safety.destructive {
                bail!("--cache-dev {} is a block device and the cache overwrites it: add --destructive if you mean it", dev.display());
            }
            let found = crate::targets::safety::findings(dev);
            if !found.is_empty() && !safety.force {
                bail!(
                    "refusing to use {} as a cache: {}. Use another device, or add --force as well as --destructive",
                    dev.display(),
                    found.join("; ")
                );
            }
        }
    }
    Ok(())
}

/// Puts a fresh (cold) cache in front of every opened target.
pub fn attach(cfg: &CacheConfig, targets: &mut [OpenTarget]) -> Result<()> {
    for t in targets {
        let frames = frames_for(cfg, t.region.len);
        let cache = TargetCache::new(frames, cfg.block_bytes, cfg.dev.as_deref()).map_err(|e| match cfg.dev.as_deref() {
            Some(dev) => anyhow::anyhow!(
                "setting up the cache for {} in --cache-dev {}: {}",
                t.facts.uri,
                dev.display(),
                crate::output_path::describe_io(&e)
            ),
            None => anyhow::anyhow!("setting up the cache for {}: {}", t.facts.uri, crate::output_path::describe_io(&e)),
        })?;
        t.cache = Some((Arc::new(cache), cfg.mode));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_bytes_or_shares() {
        assert_eq!("25%".parse::<CacheSize>().unwrap(), CacheSize::Percent(25.0));
        assert_eq!("256m".parse::<CacheSize>().unwrap(), CacheSize::Bytes(256 << 20));
        assert!("120%".parse::<CacheSize>().unwrap_err().to_string().contains("outside 0% to 100%"));
        assert!("lots".parse::<CacheSize>().unwrap_err().to_string().contains("25%"));
        let cfg = CacheConfig { size: CacheSize::Percent(25.0), mode: CacheMode::Writethrough, dev: None, block_bytes: 4096 };
        assert_eq!(frames_for(&cfg, 64 << 20), 4096);
    }
}
