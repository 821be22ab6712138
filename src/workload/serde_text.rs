//! Serde for durations written as the text users type ("10s", "500ms"),
//! plain or optional: shared by the workload's settings (`spec`, `steady`,
//! `profile`), so none of them needs another for it.

use std::time::Duration;

use serde::Deserialize;

use crate::units::{format_duration, parse_duration};

/// Serde for optional durations as text.
pub mod opt_duration_text {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map(Some).map_err(serde::de::Error::custom)
    }
}

/// Serde for optional durations as text that must carry a unit (think time:
/// fio's is in µs, so a bare number is refused rather than read as seconds).
pub mod opt_duration_unit_text {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        super::opt_duration_text::serialize(d, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = String::deserialize(d)?;
        crate::units::parse_duration_with_unit(&text).map(Some).map_err(serde::de::Error::custom)
    }
}

/// Serde for durations as the text users type ("10s", "500ms").
pub mod duration_text {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }
}
