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
        self.check_as_written(write_sizes, &AsWritten::default())
    }

    /// As `check`, each setting named as `written` says it was given (a flag,
    /// or a key of the profile file's `[data]`).
    pub fn check_as_written(&self, write_sizes: &[u64], written: &AsWritten) -> Result<(), String> {
        let name = |key: &str, value: String| written.subject(key, value);
        if !(0.0..=99.0).contains(&self.compress) {
            return Err(format!(
                "{}: give a share from 0 to 99 percent (each unit keeps an 8-byte stamp that does not compress)",
                name("compress", self.compress.to_string())
            ));
        }
        if !(0.0..=100.0).contains(&self.dedupe) {
            return Err(format!("{}: give a share from 0 to 100 percent", name("dedupe", self.dedupe.to_string())));
        }
        let unit_name = || name("dedupe-unit", self.dedupe_unit.unwrap_or_default().to_string());
        if self.dedupe_unit.is_some_and(|u| u.get() < 2 * STAMP) {
            return Err(format!("{}: the unit must be at least {} bytes", unit_name(), 2 * STAMP));
        }
        if self.is_plain() {
            return Ok(());
        }
        if let Some(unit) = self.dedupe_unit {
            if let Some(bs) = write_sizes.iter().find(|&&bs| bs % unit.get() != 0) {
                return Err(format!(
                    "{}: every write must be made of whole units, but a {} write is not: give a unit that divides every transfer size that writes",
                    unit_name(),
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

/// The text of each data reduction setting as the user wrote it (None: not
/// given): the flags' (`--dedupe 0%` as `0%`), or a profile's `[data]` keys
/// (`dedupe_unit = "4k"` as `"4k"`, quotes kept).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Texts {
    pub compress: Option<String>,
    pub dedupe: Option<String>,
    pub dedupe_unit: Option<String>,
}

/// A profile's `[data]` keys as its file writes them, and the file (as named
/// in errors). How a key was written is not what a profile means: two
/// profiles alike but for it are equal (a profile written back and read
/// again is the same profile).
#[derive(Clone, Debug, Default)]
pub struct DataKeys {
    pub origin: String,
    pub texts: Texts,
}

impl PartialEq for DataKeys {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Where a setting that applies was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag (`--dedupe 30`).
    Flag,
    /// A key of the profile file's `[data]` (`dedupe = 30`).
    DataKey,
}

/// One setting that applies: its text as written, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub text: String,
    pub source: Source,
}

impl Setting {
    /// `--dedupe-unit 4k`, or `dedupe_unit = "4k"` (`key` as the flag spells it).
    fn name(&self, key: &str) -> String {
        match self.source {
            Source::Flag => format!("--{key} {}", self.text),
            Source::DataKey => format!("{} = {}", key.replace('-', "_"), self.text),
        }
    }
}

/// The settings of a data reduction after the flags are applied over the
/// profile's `[data]`: each as written where its value comes from (None:
/// given nowhere), and the profile file, named before a message about its keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AsWritten {
    pub compress: Option<Setting>,
    pub dedupe: Option<Setting>,
    pub dedupe_unit: Option<Setting>,
    pub origin: String,
}

impl AsWritten {
    /// Each setting from its flag when given, else from the profile's `[data]`.
    pub fn merge(flags: &Texts, profile: &DataKeys) -> AsWritten {
        let pick = |flag: &Option<String>, key: &Option<String>| match (flag, key) {
            (Some(t), _) => Some(Setting { text: t.clone(), source: Source::Flag }),
            (None, Some(t)) => Some(Setting { text: t.clone(), source: Source::DataKey }),
            (None, None) => None,
        };
        AsWritten {
            compress: pick(&flags.compress, &profile.texts.compress),
            dedupe: pick(&flags.dedupe, &profile.texts.dedupe),
            dedupe_unit: pick(&flags.dedupe_unit, &profile.texts.dedupe_unit),
            origin: profile.origin.clone(),
        }
    }

    fn setting(&self, key: &str) -> Option<&Setting> {
        match key {
            "compress" => self.compress.as_ref(),
            "dedupe" => self.dedupe.as_ref(),
            _ => self.dedupe_unit.as_ref(),
        }
    }

    /// A setting opening a message: `--dedupe-unit 4k`, or `FILE: [data]
    /// dedupe_unit = "4k"`. Not known as written (a workload from elsewhere):
    /// named by its flag, with the profile key beside a share.
    fn subject(&self, key: &str, value: String) -> String {
        match self.setting(key) {
            Some(s) if s.source == Source::DataKey => format!("{}[data] {}", self.file(), s.name(key)),
            Some(s) => s.name(key),
            None if key == "dedupe-unit" => format!("--{key} {value}"),
            None => format!("--{key} {value} ({key} in a profile's [data])"),
        }
    }

    /// "FILE: " before a message about the profile's keys ("" when unnamed).
    fn file(&self) -> String {
        if self.origin.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.origin)
        }
    }
}

/// The unit of duplication shapes the data only beside a share above 0:
/// alone, or beside `dedupe` and `compress` of 0 (no reduction), it changes
/// nothing, and a setting that changes nothing is refused, not ignored. Run
/// once on the settings that apply (the flags over the profile's `[data]`);
/// the message names each setting where it was written.
pub fn check_unit_applies(data: &DataReduction, written: &AsWritten) -> Result<(), String> {
    let Some(unit) = &written.dedupe_unit else { return Ok(()) };
    if data.dedupe != 0.0 || data.compress != 0.0 {
        return Ok(());
    }
    let in_file = unit.source == Source::DataKey;
    // The shares given as 0, with their values: they are why the unit has nothing to shape.
    let zeros: Vec<&Setting> = [&written.dedupe, &written.compress].into_iter().flatten().collect();
    let named: Vec<String> = [("dedupe", &written.dedupe), ("compress", &written.compress)]
        .into_iter()
        .filter_map(|(key, s)| s.as_ref().map(|s| (key, s)))
        .map(|(key, s)| match (s.source, in_file) {
            // Beside a flag, a key says it is the file's.
            (Source::DataKey, false) => format!("{}'s [data] {}", written.origin, s.name(key)),
            _ => s.name(key),
        })
        .collect();
    let verb = if named.len() == 1 { "reduces" } else { "reduce" };
    let zeros_from_flags = zeros.iter().any(|s| s.source == Source::Flag);
    Err(match (in_file, named.is_empty()) {
        (false, true) => {
            format!("{} sets the unit of --dedupe and --compress: add --dedupe PCT or --compress PCT as well, or drop it", unit.name("dedupe-unit"))
        }
        (false, false) => format!(
            "{} sets the unit of --dedupe and --compress, and {} {verb} no data: add --dedupe PCT or --compress PCT above 0, or drop --dedupe-unit",
            unit.name("dedupe-unit"),
            named.join(" and ")
        ),
        (true, true) => format!(
            "{}[data] {} sets the unit of dedupe and compress: add dedupe = PCT or compress = PCT (above 0) to [data] as well, or remove dedupe_unit",
            written.file(),
            unit.name("dedupe-unit")
        ),
        (true, false) if zeros_from_flags => format!(
            "{}[data] {} sets the unit of dedupe and compress, and {} {verb} no data: give --dedupe PCT or --compress PCT above 0, or remove dedupe_unit from [data]",
            written.file(),
            unit.name("dedupe-unit"),
            named.join(" and ")
        ),
        (true, false) => format!(
            "{}[data] {} sets the unit of dedupe and compress, and {} {verb} no data: set dedupe or compress above 0 in [data], or remove dedupe_unit",
            written.file(),
            unit.name("dedupe-unit"),
            named.join(" and ")
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

    /// Settings as written: `(text, from a flag?)` for dedupe, compress and the unit.
    fn written(dedupe: Option<(&str, bool)>, compress: Option<(&str, bool)>, unit: Option<(&str, bool)>) -> AsWritten {
        let s = |w: Option<(&str, bool)>| {
            w.map(|(t, flag)| Setting { text: t.into(), source: if flag { Source::Flag } else { Source::DataKey } })
        };
        AsWritten { dedupe: s(dedupe), compress: s(compress), dedupe_unit: s(unit), origin: "my.toml".into() }
    }

    fn shares(dedupe: f64, compress: f64) -> DataReduction {
        DataReduction { dedupe, compress, dedupe_unit: Some(Bytes(4096)) }
    }

    #[test]
    fn a_unit_beside_no_reduction_is_refused_in_the_words_it_was_written() {
        let (flag, key) = (true, false);
        assert!(check_unit_applies(&shares(30.0, 0.0), &written(Some(("30", flag)), None, Some(("4k", flag)))).is_ok());
        assert!(check_unit_applies(&shares(0.0, 50.0), &written(Some(("0", key)), None, Some(("\"4k\"", key)))).is_ok());
        // No unit given: nothing to refuse.
        assert!(check_unit_applies(&shares(0.0, 0.0), &written(Some(("0", flag)), None, None)).is_ok());
        let refusal = |d, c, u| check_unit_applies(&shares(0.0, 0.0), &written(d, c, u)).unwrap_err();
        assert_eq!(
            refusal(Some(("0", flag)), None, Some(("4k", flag))),
            "--dedupe-unit 4k sets the unit of --dedupe and --compress, and --dedupe 0 reduces no data: add --dedupe PCT or --compress PCT above 0, or drop --dedupe-unit"
        );
        assert!(refusal(Some(("0%", flag)), Some(("0", flag)), Some(("8k", flag))).contains("--dedupe 0% and --compress 0 reduce no data"));
        assert_eq!(
            refusal(Some(("0", key)), None, Some(("\"4k\"", key))),
            "my.toml: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and dedupe = 0 reduces no data: set dedupe or compress above 0 in [data], or remove dedupe_unit"
        );
        assert!(refusal(None, None, Some(("\"4k\"", key)))
            .starts_with("my.toml: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress: add dedupe = PCT or compress = PCT"));
        // Mixed: each setting named where it was written.
        assert_eq!(
            refusal(Some(("0", flag)), None, Some(("\"4k\"", key))),
            "my.toml: [data] dedupe_unit = \"4k\" sets the unit of dedupe and compress, and --dedupe 0 reduces no data: give --dedupe PCT or --compress PCT above 0, or remove dedupe_unit from [data]"
        );
        assert!(refusal(Some(("0", key)), None, Some(("4k", flag)))
            .starts_with("--dedupe-unit 4k sets the unit of --dedupe and --compress, and my.toml's [data] dedupe = 0 reduces no data"));
    }

    #[test]
    fn the_flags_replace_the_profile_keys_one_by_one() {
        let flags = Texts { dedupe: Some("0".into()), ..Default::default() };
        let keys = DataKeys {
            origin: "p.toml".into(),
            texts: Texts { dedupe: Some("30".into()), dedupe_unit: Some("\"3k\"".into()), ..Default::default() },
        };
        let w = AsWritten::merge(&flags, &keys);
        assert_eq!(w.dedupe, Some(Setting { text: "0".into(), source: Source::Flag }));
        assert_eq!(w.dedupe_unit, Some(Setting { text: "\"3k\"".into(), source: Source::DataKey }));
        assert_eq!(w.compress, None);
        // A value check names the unit as the file writes it, with the file.
        let d = DataReduction { dedupe: 30.0, dedupe_unit: Some(Bytes(3072)), ..Default::default() };
        assert_eq!(
            d.check_as_written(&[4096], &w).unwrap_err(),
            "p.toml: [data] dedupe_unit = \"3k\": every write must be made of whole units, but a 4k write is not: give a unit that divides every transfer size that writes"
        );
        assert!(d.check(&[4096]).unwrap_err().starts_with("--dedupe-unit 3k: every write"));
    }

    #[test]
    fn the_incompressible_part_keeps_the_stamp() {
        let d = DataReduction { compress: 50.0, ..Default::default() };
        assert_eq!(d.random_len(4096), 2048);
        let d = DataReduction { compress: 99.0, ..Default::default() };
        assert_eq!(d.random_len(512), STAMP);
    }
}
