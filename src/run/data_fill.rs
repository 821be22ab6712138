//! Fills write buffers for data reduction (`--compress`, `--dedupe`; the
//! layout is described in `workload::reduction`). Each dedupe unit gets an
//! 8-byte stamp, a copy of incompressible bytes from a shared random source
//! (made once per point, before the run), and zeros for the compressible part.
//! A unit's content is a function of its id alone: a duplicate reuses an
//! earlier id of the same worker, a new unit takes the next one. The cost per
//! write is a small memcpy and a memset, and only when the settings are on:
//! without them the worker never calls this.

use std::sync::Arc;

use crate::workload::reduction::{DataReduction, STAMP};
use crate::workload::rng::Rng;
use crate::workload::WorkloadSpec;

/// Bytes of the shared random source: far beyond deflate's 32 KiB window and
/// zstd level 1's 512 KiB, so that copies of it rarely meet inside one window.
pub const SOURCE: usize = 16 << 20;

/// What every worker of a point shares: the settings and the random source.
#[derive(Debug)]
pub struct DataSource {
    unit: usize,
    random_len: usize,
    dedupe: f64,
    bytes: Vec<u8>,
}

impl DataSource {
    /// The source of a point, None when its workload does not ask for data reduction.
    pub fn for_spec(spec: &WorkloadSpec) -> Option<Arc<DataSource>> {
        let d = spec.data.as_ref()?;
        let unit = spec.data_unit()?;
        Some(Arc::new(DataSource::new(d, unit, spec.seed)))
    }

    fn new(d: &DataReduction, unit: u64, seed: u64) -> Self {
        let mut bytes = vec![0u8; SOURCE];
        Rng::for_stream(seed, 0xDA7A).fill(&mut bytes);
        DataSource { unit: unit as usize, random_len: d.random_len(unit) as usize, dedupe: d.dedupe / 100.0, bytes }
    }
}

/// One worker's filler.
pub struct DataFill {
    source: Arc<DataSource>,
    rng: Rng,
    /// Units this worker has made new so far (ids 0..next).
    next: u64,
    /// Sets this worker's ids apart from every other worker's.
    worker: u64,
}

impl DataFill {
    pub fn new(source: Arc<DataSource>, seed: u64, worker: u32) -> Self {
        DataFill { source, rng: Rng::for_stream(seed, 0xDED0_0000 + worker as u64), next: 0, worker: worker as u64 }
    }

    /// Fills a buffer about to be written (its length is whole units, or one part unit at the end).
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) {
        let unit = self.source.unit;
        for chunk in buf.chunks_mut(unit) {
            let id = if self.next > 0 && self.source.dedupe > 0.0 && self.rng.unit() < self.source.dedupe {
                self.rng.below(self.next)
            } else {
                self.next += 1;
                self.next - 1
            };
            self.fill_unit(chunk, id);
        }
    }

    fn fill_unit(&self, chunk: &mut [u8], id: u64) {
        let key = mix(id ^ (self.worker << 48));
        let stamp = STAMP as usize;
        let keep = self.source.random_len.min(chunk.len());
        if keep >= stamp {
            chunk[..stamp].copy_from_slice(&key.to_le_bytes());
            let n = keep - stamp;
            let start = (key % (SOURCE - n) as u64) as usize;
            chunk[stamp..keep].copy_from_slice(&self.source.bytes[start..start + n]);
        } else {
            chunk[..keep].copy_from_slice(&key.to_le_bytes()[..keep]);
        }
        chunk[keep..].fill(0);
    }
}

/// A 64-bit mix (splitmix64's finaliser): ids to stamps and source offsets.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Refuses --verify with data reduction: a verified block is its own header
/// and pattern, which would replace the compressible and duplicate fill.
pub fn refuse_with_verify(plan: &super::RunPlan) -> Result<(), String> {
    let Some(d) = plan.points.iter().find_map(|p| p.spec.data.as_ref()) else { return Ok(()) };
    if d.dedupe > 0.0 {
        return Err(format!(
            "--verify cannot be combined with --dedupe {}: every verified block carries a header with its offset and write generation, \
             so no two written blocks are ever the same. Drop --verify to measure data reduction, or --dedupe to check data",
            d.dedupe
        ));
    }
    Err(format!(
        "--verify cannot be combined with --compress {}{}: verify writes its own header and an incompressible pattern into every block, \
         which would replace the compressible fill. Drop --verify to measure data reduction, or --compress to check data",
        d.compress,
        d.dedupe_unit.map(|u| format!(" / --dedupe-unit {u}")).unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filler(compress: f64, dedupe: f64) -> DataFill {
        let d = DataReduction { compress, dedupe, dedupe_unit: None };
        DataFill::new(Arc::new(DataSource::new(&d, 4096, 7)), 7, 0)
    }

    #[test]
    fn duplicates_are_the_asked_share_of_units() {
        let mut f = filler(0.0, 30.0);
        let mut seen = std::collections::HashSet::new();
        let mut buf = vec![0u8; 4096 * 4];
        let mut dup = 0;
        let n = 20_000;
        for _ in 0..n / 4 {
            f.fill(&mut buf);
            for c in buf.chunks(4096) {
                if !seen.insert(c.to_vec()) {
                    dup += 1;
                }
            }
        }
        let share = dup as f64 / n as f64 * 100.0;
        assert!((share - 30.0).abs() < 1.5, "{share}");
    }

    #[test]
    fn the_compressible_part_is_zero_and_the_rest_is_not() {
        let mut f = filler(75.0, 0.0);
        let mut buf = vec![0xFFu8; 8192];
        f.fill(&mut buf);
        for c in buf.chunks(4096) {
            assert!(c[1024..].iter().all(|&b| b == 0));
            assert!(c[..1024].iter().filter(|&&b| b == 0).count() < 40);
        }
    }
}
