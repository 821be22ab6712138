//! Data reduction settings: how compressible (`compress`, percent) and how
//! duplicated (`dedupe`, percent of dedupe units) the data lunmark writes is,
//! as fio's `buffer_compress_percentage`/`dedupe_percentage` and vdbench's
//! `compratio`/`dedupratio`. Plain data here; the fill itself is
//! `run::data_fill`.
//!
//! The content of every dedupe unit (default: the smallest transfer size that
//! writes) is an 8-byte stamp and incompressible bytes for (100 - compress)% of
//! the unit, zeros for the rest. With `dedupe` D, each unit repeats an earlier
//! unit of the same worker with probability D/100; otherwise its stamp is new.
//! Deflate (zlib) at level 1 shrinks such a block by about `compress` percent.

use serde::{Deserialize, Serialize};

use crate::units::Bytes;

/// The smallest incompressible part of a unit: its stamp, which makes a unit
/// that is not a duplicate unique.
pub const STAMP: u64 = 8;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataReduction {
    /// Share of each written unit a compressor can remove, percent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compress: f64,
    /// Share of written units that repeat the content of an earlier unit, percent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dedupe: f64,
    /// The unit of duplication (and of the compressible layout); default: the
    /// smallest transfer size of the lines that write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe_unit: Option<Bytes>,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl DataReduction {
    /// True when the settings change nothing (every field at its default).
    pub fn is_plain(&self) -> bool {
        self.compress == 0.0 && self.dedupe == 0.0 && self.dedupe_unit.is_none()
    }

    /// The unit for a workload whose writing transfer sizes are `write_sizes`.
    pub fn unit(&self, write_sizes: impl Iterator<Item = u64>) -> Option<u64> {
        self.dedupe_unit.map(|u| u.get()).or_else(|| write_sizes.min())
    }

    /// Bytes of a unit of `unit` bytes that are incompressible (the stamp included).
    pub fn random_len(&self, unit: u64) -> u64 {
        let keep = (unit as f64 * (100.0 - self.compress) / 100.0).round() as u64;
        keep.max(STAMP).min(unit)
    }

    /// Checks the values, and the unit against the sizes that write. The error
    /// names the flag (and profile key) and what is allowed.
    pub fn check(&self, write_sizes: &[u64]) -> Result<(), String> {
        if !(0.0..=99.0).contains(&self.compress) {
            return Err(format!(
                "--compress {} (compress in a profile's [data]): give a share from 0 to 99 percent (each unit keeps an 8-byte stamp that does not compress)",
                self.compress
            ));
        }
        if !(0.0..=100.0).contains(&self.dedupe) {
            return Err(format!("--dedupe {} (dedupe in a profile's [data]): give a share from 0 to 100 percent", self.dedupe));
        }
        if self.dedupe_unit.is_some_and(|u| u.get() < 2 * STAMP) {
            return Err(format!("--dedupe-unit {}: the unit must be at least {} bytes", self.dedupe_unit.unwrap_or_default(), 2 * STAMP));
        }
        if self.is_plain() {
            return Ok(());
        }
        if let Some(unit) = self.dedupe_unit {
            if let Some(bs) = write_sizes.iter().find(|&&bs| bs % unit.get() != 0) {
                return Err(format!(
                    "--dedupe-unit {unit}: every write must be made of whole units, but a {} write is not: give a unit that divides every transfer size that writes",
                    Bytes(*bs)
                ));
            }
        } else if let Some(&min) = write_sizes.iter().min() {
            if let Some(bs) = write_sizes.iter().find(|&&bs| bs % min != 0) {
                return Err(format!(
                    "--dedupe/--compress: the unit defaults to the smallest transfer size that writes ({}), which does not divide {}: give --dedupe-unit",
                    Bytes(min),
                    Bytes(*bs)
                ));
            }
        }
        Ok(())
    }

    /// The refusal when no point of a run writes (a point that only reads, in a
    /// run whose other points write, is fine: the settings apply where it writes).
    pub fn writes_nothing() -> String {
        "--compress, --dedupe and --dedupe-unit shape the data lunmark writes, but this workload writes nothing: \
         give a --read share below 100 or drop them"
            .into()
    }

    /// One line for `--dry-run`.
    pub fn describe(&self, unit: Option<u64>) -> String {
        let unit = unit.map(|u| Bytes(u).to_string()).unwrap_or_else(|| "-".into());
        format!(
            "data: written units of {unit}: {}% compressible (zeros after the incompressible part; deflate/zlib level 1 removes about that share), {}% repeat an earlier unit",
            self.compress, self.dedupe
        )
    }
}

/// How the settings of a data reduction were written, so that a refusal
/// names them as the user wrote them: as flags (`--dedupe 0`) or as the keys
/// of a profile's `[data]` (`dedupe = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    Flags,
    DataKeys,
}

/// A share (`dedupe` or `compress`): the value that applies, and its text
/// when the user wrote it (a share left out applies as 0 and is not named).
#[derive(Clone, Copy, Debug)]
pub struct Share<'a> {
    pub value: f64,
    pub written: Option<&'a str>,
}

/// The unit of duplication shapes the data only beside a share above 0:
/// alone, or beside `dedupe` and `compress` of 0 (no reduction), it changes
/// nothing, and a setting that changes nothing is refused, not ignored. `unit`
/// is the unit as written. The one check of the flags and of a profile's
/// `[data]`; the message names the settings the way they were written.
pub fn check_unit_applies(written: Written, unit: &str, dedupe: Share, compress: Share) -> Result<(), String> {
    if dedupe.value != 0.0 || compress.value != 0.0 {
        return Ok(());
    }
    let setting = |key: &str, value: &str| match written {
        Written::Flags => format!("--{key} {value}"),
        Written::DataKeys => format!("{} = {value}", key.replace('-', "_")),
    };
    // The shares written as 0, named with their values: they are why the unit has nothing to shape.
    let zeros: Vec<String> =
        [("dedupe", dedupe.written), ("compress", compress.written)].into_iter().filter_map(|(k, v)| v.map(|v| setting(k, v))).collect();
    let verb = if zeros.len() == 1 { "reduces" } else { "reduce" };
    Err(match (written, zeros.is_empty()) {
        (Written::Flags, true) => {
            format!("{} sets the unit of --dedupe and --compress: add --dedupe PCT or --compress PCT as well, or drop it", setting("dedupe-unit", unit))
        }
        (Written::Flags, false) => format!(
            "{} sets the unit of --dedupe and --compress, and {} {verb} no data: add --dedupe PCT or --compress PCT above 0, or drop --dedupe-unit",
            setting("dedupe-unit", unit),
            zeros.join(" and ")
        ),
        (Written::DataKeys, true) => format!(
            "[data] {} sets the unit of dedupe and compress: add dedupe = PCT or compress = PCT (above 0) to [data] as well, or remove dedupe_unit",
            setting("dedupe-unit", unit)
        ),
        (Written::DataKeys, false) => format!(
            "[data] {} sets the unit of dedupe and compress, and {} {verb} no data: set dedupe or compress above 0 in [data], or remove dedupe_unit",
            setting("dedupe-unit", unit),
            zeros.join(" and ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_the_flag() {
        let d = DataReduction { compress: 100.0, ..Default::default() };
        assert!(d.check(&[4096]).unwrap_err().contains("--compress 100"));
        let d = DataReduction { dedupe: 101.0, ..Default::default() };
        assert!(d.check(&[4096]).unwrap_err().contains("--dedupe 101"));
        let d = DataReduction { dedupe: 10.0, dedupe_unit: Some(Bytes(3000)), ..Default::default() };
        assert!(d.check(&[4096]).unwrap_err().contains("--dedupe-unit"));
        let d = DataReduction { dedupe: 10.0, ..Default::default() };
        assert!(d.check(&[]).is_ok());
        assert!(d.check(&[4096, 6144]).unwrap_err().contains("give --dedupe-unit"));
        assert!(d.check(&[4096, 65536]).is_ok());
    }

    #[test]
    fn a_unit_beside_no_reduction_is_refused_in_the_words_it_was_written() {
        let (zero, none) = (|t| Share { value: 0.0, written: Some(t) }, Share { value: 0.0, written: None });
        let on = Share { value: 30.0, written: Some("30") };
        assert!(check_unit_applies(Written::Flags, "4k", on, none).is_ok());
        assert!(check_unit_applies(Written::DataKeys, "\"4k\"", zero("0"), Share { value: 50.0, written: None }).is_ok());
        assert_eq!(
            check_unit_applies(Written::Flags, "4k", zero("0"), none).unwrap_err(),
            "--dedupe-unit 4k sets the unit of --dedupe and --compress, and --dedupe 0 reduces no data: add --dedupe PCT or --compress PCT above 0, or drop --dedupe-unit"
        );
        assert!(check_unit_applies(Written::Flags, "8k", zero("0%"), zero("0"))
            .unwrap_err()
            .contains("--dedupe 0% and --compress 0 reduce no data"));
        assert_eq!(
            check_unit_applies(Written::DataKeys, "\"4k\"", zero("0"), none).unwrap_err(),
            "[data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and dedupe = 0 reduces no data: set dedupe or compress above 0 in [data], or remove dedupe_unit"
        );
        assert!(check_unit_applies(Written::DataKeys, "\"4k\"", none, none)
            .unwrap_err()
            .starts_with("[data] dedupe_unit = \"4k\" sets the unit of dedupe and compress: add dedupe = PCT or compress = PCT"));
    }

    #[test]
    fn the_incompressible_part_keeps_the_stamp() {
        let d = DataReduction { compress: 50.0, ..Default::default() };
        assert_eq!(d.random_len(4096), 2048);
        let d = DataReduction { compress: 99.0, ..Default::default() };
        assert_eq!(d.random_len(512), STAMP);
    }
}
