//! Units as newtypes and the parsers for what users type: sizes, durations and
//! percentages. Transfer and region sizes are binary (4k = 4096 B), as in IOmeter
//! and fio; throughput is decimal (MB = 10^6 B) as METHODOLOGY.md defines.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A count of bytes. Sizes typed by users are binary multiples (k = 1024).
/// Serialised as the text users type ("4k", "1g"); read from text or a number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Number(u64),
            Text(String),
        }
        match Form::deserialize(d)? {
            Form::Number(n) => Ok(Bytes(n)),
            Form::Text(t) => parse_size(&t).map_err(serde::de::Error::custom),
        }
    }
}

impl Bytes {
    pub const KIB: u64 = 1024;
    pub const MIB: u64 = 1024 * 1024;
    pub const GIB: u64 = 1024 * 1024 * 1024;

    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Bytes {
    /// Prints the shortest exact binary form: 4096 -> "4k", 1048576 -> "1m".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        for (unit, suffix) in [(1u64 << 40, "t"), (Self::GIB, "g"), (Self::MIB, "m"), (Self::KIB, "k")] {
            if v >= unit && v.is_multiple_of(unit) {
                return write!(f, "{}{}", v / unit, suffix);
            }
        }
        write!(f, "{v}")
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{value}' is not a size: use a number with an optional k, m, g or t suffix (binary: 4k = 4096 bytes), for example 4k, 128k, 1m, 1g")]
    BadSize { value: String },
    #[error("'{value}' is not a duration: use a number with s, ms, m or h, for example 10s, 500ms, 2m")]
    BadDuration { value: String },
    #[error("'{value}' is too long: a duration may be at most {MAX_DURATION_SECS}s (about 31 years: 16666666m or 277777h)")]
    DurationTooLong { value: String },
    #[error("'{value}' is not a percentage: use a number from 0 to 100, for example 70 or 70%")]
    BadPercent { value: String },
}

/// The plural ending of a count's noun: "" for 1, "s" otherwise ("1 write", "2 writes").
pub fn plural(n: impl Into<u64>) -> &'static str {
    if n.into() == 1 {
        ""
    } else {
        "s"
    }
}

/// A count with its noun, singular for 1: `counted(1, "worker")` is "1 worker",
/// `counted(4, "I/O")` is "4 I/Os".
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", plural(n))
}

/// Parses "4096", "4k", "4K", "4KiB", "4kb", "1m", "1.5g". Binary multiples.
pub fn parse_size(text: &str) -> Result<Bytes, UnitError> {
    let bad = || UnitError::BadSize { value: text.to_string() };
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(bad());
    }
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => Bytes::KIB,
        "m" | "mb" | "mib" => Bytes::MIB,
        "g" | "gb" | "gib" => Bytes::GIB,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    if let Ok(whole) = num.parse::<u64>() {
        return whole.checked_mul(mult).map(Bytes).ok_or_else(bad);
    }
    let value: f64 = num.parse().map_err(|_| bad())?;
    let bytes = value * mult as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 || bytes.fract() != 0.0 {
        return Err(bad());
    }
    Ok(Bytes(bytes as u64))
}

/// Parses "10s", "500ms", "2m", "1h", "1.5s", "250us"; a bare number is seconds.
/// The longest duration any setting takes, in seconds (about 31 years).
pub const MAX_DURATION_SECS: u64 = 1_000_000_000;

pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let bad = || UnitError::BadDuration { value: text.to_string() };
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| bad())?;
    let secs = match suffix.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    // A number with a unit, but beyond what any run could last: said so, not "not a duration".
    if !secs.is_finite() || secs > MAX_DURATION_SECS as f64 {
        return Err(UnitError::DurationTooLong { value: text.to_string() });
    }
    if secs < 0.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// As parse_duration, but a bare number is refused: for settings whose
/// meaning in other tools has another unit (fio's thinktime is in µs), so "5"
/// is not silently read as 5 seconds.
pub fn parse_duration_with_unit(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!("'{t}' has no unit: give a unit: 5ms, 500us (a bare number is not taken as seconds)"));
    }
    parse_duration(t).map_err(|e| e.to_string())
}

/// Parses "70", "70%", "35.5". Must lie in 0..=100.
pub fn parse_percent(text: &str) -> Result<f64, UnitError> {
    let bad = || UnitError::BadPercent { value: text.to_string() };
    let t = text.trim().trim_end_matches('%');
    let v: f64 = t.trim().parse().map_err(|_| bad())?;
    if !(0.0..=100.0).contains(&v) {
        return Err(bad());
    }
    Ok(v)
}

/// Formats a duration the way users type it back: 10s, 500ms, 1.5s.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if d.as_nanos().is_multiple_of(1_000_000) {
        format!("{ms}ms")
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// The longest label a result may have (`--label`, an import), in characters:
/// room for a sentence, not for a file. Stored texts are bounded so that
/// listing and reporting them stays quick.
pub const MAX_LABEL_CHARS: usize = 1000;

/// The longest name (a profile's, a phase's, a worker group's), in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// `what` is at most `max` characters: Err says how long it is and the limit.
pub fn check_length(what: &str, text: &str, max: usize) -> Result<(), String> {
    let n = text.chars().count();
    if n > max {
        return Err(format!("{what} is {n} characters long; at most {max} are allowed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_their_plural() {
        assert_eq!([0u64, 1, 2].map(|n| format!("{n} write{}", plural(n))), ["0 writes", "1 write", "2 writes"]);
        assert_eq!([1u32, 4].map(|n| counted(n, "I/O")), ["1 I/O", "4 I/Os"]);
    }

    #[test]
    fn a_bare_number_needs_a_unit_where_asked() {
        assert!(parse_duration_with_unit("5").unwrap_err().contains("give a unit: 5ms, 500us"));
        assert_eq!(parse_duration_with_unit("5ms"), Ok(Duration::from_millis(5)));
        assert_eq!(parse_duration_with_unit("500us"), Ok(Duration::from_micros(500)));
    }

    #[test]
    fn sizes_parse_as_binary_multiples() {
        assert_eq!(parse_size("4k"), Ok(Bytes(4096)));
        assert_eq!(parse_size("4KiB"), Ok(Bytes(4096)));
        assert_eq!(parse_size("1M"), Ok(Bytes(1 << 20)));
        assert_eq!(parse_size("1.5g"), Ok(Bytes(3 << 29)));
        assert_eq!(parse_size("512"), Ok(Bytes(512)));
        assert!(parse_size("").is_err());
        assert!(parse_size("4q").is_err());
        assert!(parse_size("-4k").is_err());
        assert!(parse_size("0.3").is_err());
        assert!(parse_size("99999999999999999999t").is_err());
    }

    #[test]
    fn sizes_print_back_in_the_form_they_parse() {
        for s in ["4k", "128k", "1m", "1g", "513"] {
            assert_eq!(parse_size(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn a_duration_too_long_is_said_to_be_too_long_with_the_largest_allowed() {
        for text in ["1000000h", "1000000001s", "17000000m", "99999999999999999999999999999999999999999999s"] {
            let e = parse_duration(text).unwrap_err();
            assert_eq!(e, UnitError::DurationTooLong { value: text.into() });
            assert_eq!(
                e.to_string(),
                format!("'{text}' is too long: a duration may be at most 1000000000s (about 31 years: 16666666m or 277777h)")
            );
        }
        assert_eq!(parse_duration("277777h").unwrap(), Duration::from_secs(277777 * 3600));
        assert_eq!(parse_duration("1000000000s").unwrap(), Duration::from_secs(MAX_DURATION_SECS));
        assert!(matches!(parse_duration("10x"), Err(UnitError::BadDuration { .. })));
    }

    #[test]
    fn durations_and_percentages() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("ten").is_err());
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(2)), "2s");
        assert_eq!(parse_percent("70%"), Ok(70.0));
        assert!(parse_percent("150").is_err());
        assert!(parse_percent("x").is_err());
    }
}
