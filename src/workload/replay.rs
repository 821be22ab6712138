//! The settings of a replay (`lunmark run --replay FILE`): which trace, in which
//! format, how fast, which device of the trace goes to which target of the run,
//! and what happens to an offset beyond a target's region. Plain data, typed
//! where it enters (the `--replay*` flags or a profile's `[replay]` table); the
//! trace itself is loaded and checked by `run::replay`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Everything a replay is set up with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaySettings {
    /// The trace: a lunmark trace (what `--trace` writes), blkparse text, or MSR Cambridge CSV.
    pub file: PathBuf,
    /// The trace's format; detected from the file when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ReplayFormat>,
    /// 1: the recorded timing; 2: twice as fast; max: as fast as the queue allows.
    #[serde(default, skip_serializing_if = "ReplaySpeed::is_recorded")]
    pub speed: ReplaySpeed,
    /// Trace device to run target; absent: devices in order of first appearance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<ReplayMap>,
    /// Offsets beyond a target's region: refused before the run (the default) or wrapped.
    #[serde(default, skip_serializing_if = "OffsetMode::is_default")]
    pub offsets: OffsetMode,
}

/// What a replayed point ran, kept in its workload so that the result says it
/// was a replay (and which) rather than the unused generated access lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayWorkload {
    /// The trace file, as given.
    pub file: String,
    /// Its format: lunmark, blkparse or msr.
    pub format: String,
    /// The replay speed, as --replay-speed takes it (1, 2, max).
    pub speed: String,
    /// Records replayed.
    pub records: u64,
}

/// The formats a replay reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayFormat {
    /// lunmark's binary trace (docs/trace-format.md).
    Lunmark,
    /// `blkparse` default text output.
    Blkparse,
    /// The MSR Cambridge CSV of SNIA IOTTA.
    Msr,
}

impl FromStr for ReplayFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "lunmark" => Ok(ReplayFormat::Lunmark),
            "blkparse" => Ok(ReplayFormat::Blkparse),
            "msr" => Ok(ReplayFormat::Msr),
            "auto" => Err("'auto' is the default: leave --replay-format out to detect the format".into()),
            other => Err(format!(
                "'{other}' is not a trace format: give lunmark (what --trace writes), blkparse (blkparse text) or msr (MSR Cambridge CSV), or leave it out to detect the format"
            )),
        }
    }
}

/// How fast the recorded timing is replayed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReplaySpeed {
    /// Each I/O is due at its recorded time divided by this factor (1: as recorded).
    Factor(f64),
    /// No timing: each I/O as soon as a slot of the queue is free.
    Max,
}

impl Default for ReplaySpeed {
    fn default() -> Self {
        ReplaySpeed::Factor(1.0)
    }
}

impl ReplaySpeed {
    fn is_recorded(&self) -> bool {
        *self == ReplaySpeed::Factor(1.0)
    }

    /// True when I/Os keep the recorded timing (scaled).
    pub fn timed(&self) -> bool {
        matches!(self, ReplaySpeed::Factor(_))
    }
}

/// The slowest and fastest replay factors: beyond them a record's scaled time
/// leaves what the schedule can hold, or is below a nanosecond for any trace.
pub const MIN_SPEED: f64 = 1e-3;
pub const MAX_SPEED: f64 = 1e6;

impl FromStr for ReplaySpeed {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("max") {
            return Ok(ReplaySpeed::Max);
        }
        // "2x" reads as 2.
        match t.strip_suffix(['x', 'X']).unwrap_or(t).parse::<f64>() {
            Ok(f) if (MIN_SPEED..=MAX_SPEED).contains(&f) => Ok(ReplaySpeed::Factor(f)),
            Ok(f) if f.is_finite() && f > 0.0 => Err(format!(
                "'{s}' is outside the replay speeds lunmark keeps to, {MIN_SPEED} (1000 times slower than recorded) to {MAX_SPEED}: give a factor in that range, or max"
            )),
            _ => Err(format!(
                "'{s}' is not a replay speed: give 1 (the recorded timing), a factor such as 2 (twice as fast) or 0.5, or max (as fast as the queue allows)"
            )),
        }
    }
}

impl fmt::Display for ReplaySpeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplaySpeed::Factor(x) => write!(f, "{x}"),
            ReplaySpeed::Max => f.write_str("max"),
        }
    }
}

impl Serialize for ReplaySpeed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ReplaySpeed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => n.to_string().parse().map_err(serde::de::Error::custom),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// What happens to an I/O that reaches beyond its target's region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OffsetMode {
    /// The run is refused before it starts, naming the first such record.
    #[default]
    Refuse,
    /// The offset is taken modulo the region's length; an I/O that would then
    /// cross the region's end starts at the region's start (as sequential
    /// streams wrap).
    Wrap,
}

impl OffsetMode {
    fn is_default(&self) -> bool {
        *self == OffsetMode::Refuse
    }
}

impl FromStr for OffsetMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "refuse" => Ok(OffsetMode::Refuse),
            "wrap" => Ok(OffsetMode::Wrap),
            other => Err(format!("'{other}' is not an offset mode: give wrap or refuse")),
        }
    }
}

impl fmt::Display for OffsetMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OffsetMode::Refuse => "refuse",
            OffsetMode::Wrap => "wrap",
        })
    }
}

/// A device of the trace: its index in order of first appearance, or its name
/// (`usr/0` in MSR traces, `8:0` in blkparse ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceKey {
    Index(usize),
    Name(String),
}

impl fmt::Display for DeviceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceKey::Index(i) => write!(f, "{i}"),
            DeviceKey::Name(n) => f.write_str(n),
        }
    }
}

/// `--replay-map 0=1,1=0` or `usr/0=0,proj/2=1`: trace device to run target
/// index. Devices not named are not replayed (their records are counted as skipped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayMap(pub Vec<(DeviceKey, usize)>);

impl FromStr for ReplayMap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let how = "give DEVICE=TARGET pairs separated by commas, for example 0=1,1=0 or usr/0=0,proj/2=1 \
                   (DEVICE: a trace device by its order of first appearance from 0, or its name; TARGET: a --target by its position from 0)";
        let mut pairs = Vec::new();
        for part in s.split(',').map(str::trim) {
            let Some((dev, target)) = part.split_once('=') else {
                return Err(format!("'{part}' is not DEVICE=TARGET: {how}"));
            };
            let (dev, target) = (dev.trim(), target.trim());
            let target = target.parse::<usize>().map_err(|_| format!("'{part}': target '{target}' is not a target index: {how}"))?;
            if dev.is_empty() {
                return Err(format!("'{part}' names no device: {how}"));
            }
            let key = match dev.parse::<usize>() {
                Ok(i) => DeviceKey::Index(i),
                Err(_) => DeviceKey::Name(dev.to_string()),
            };
            if pairs.iter().any(|(k, _)| *k == key) {
                return Err(format!("device {dev} is mapped twice: {how}"));
            }
            pairs.push((key, target));
        }
        Ok(ReplayMap(pairs))
    }
}

impl fmt::Display for ReplayMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text: Vec<String> = self.0.iter().map(|(k, t)| format!("{k}={t}")).collect();
        f.write_str(&text.join(","))
    }
}

impl Serialize for ReplayMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for ReplayMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_refuse_with_the_allowed_values() {
        assert_eq!("2".parse::<ReplaySpeed>(), Ok(ReplaySpeed::Factor(2.0)));
        assert_eq!("max".parse::<ReplaySpeed>(), Ok(ReplaySpeed::Max));
        assert_eq!("0.5x".parse::<ReplaySpeed>(), Ok(ReplaySpeed::Factor(0.5)));
        assert!("0".parse::<ReplaySpeed>().unwrap_err().contains("max"));
        assert_eq!("wrap".parse::<OffsetMode>(), Ok(OffsetMode::Wrap));
        assert!("clip".parse::<OffsetMode>().unwrap_err().contains("wrap or refuse"));
        let m: ReplayMap = "0=1, usr/2=0".parse().unwrap();
        assert_eq!(m.0, vec![(DeviceKey::Index(0), 1), (DeviceKey::Name("usr/2".into()), 0)]);
        assert_eq!(m.to_string(), "0=1,usr/2=0");
        assert!("0=1,0=2".parse::<ReplayMap>().unwrap_err().contains("mapped twice"));
        assert!("0:1".parse::<ReplayMap>().unwrap_err().contains("DEVICE=TARGET"));
    }

    #[test]
    fn settings_round_trip_through_toml() {
        let s = ReplaySettings {
            file: "t.csv".into(),
            format: Some(ReplayFormat::Msr),
            speed: ReplaySpeed::Max,
            map: Some("usr/0=0".parse().unwrap()),
            offsets: OffsetMode::Wrap,
        };
        let text = toml::to_string(&s).unwrap();
        assert_eq!(toml::from_str::<ReplaySettings>(&text).unwrap(), s);
        // A profile carries it as a [replay] table, printed and read back unchanged (`profiles show`).
        let mut p = crate::workload::profile::builtin("quick").unwrap();
        p.phases.truncate(1);
        p.replay = Some(s.clone());
        let text = crate::workload::profile::to_toml(&p);
        assert!(text.contains("[replay]") && text.contains("speed = \"max\""), "{text}");
        assert_eq!(crate::workload::profile::parse(&text, "p.toml").unwrap(), p);
        let plain: ReplaySettings = toml::from_str("file = \"t\"\nspeed = 2").unwrap();
        assert_eq!(plain.speed, ReplaySpeed::Factor(2.0));
        assert_eq!(plain.offsets, OffsetMode::Refuse);
    }
}
