//! Sweeps (IOmeter's test cycling): `qd=2,4,8`, `bs=4k,8k`, `workers=1,2,4`,
//! `targets=1,2` (the first N targets: the papers' 1-port vs 2-port scaling),
//! `read=0,35,70,100`, `random=0,50,100`. A sweep sets the value in every group
//! (and every access line) of the workload; several sweeps give their cartesian
//! product, the first one outermost.
//!
//! Values are typed where they are parsed (`SweepValue`) and set in the
//! workload as such; JSON is only the form a result records them in (a point's
//! `params`), read back by `apply` for stored results.

use serde_json::Value;
use thiserror::Error;

use super::profile::nearest;
use super::spec::{WorkloadSpec, MAX_BS, MAX_QD};
use crate::units::{parse_percent, parse_size, Bytes};

pub const KEYS: &[&str] = &["qd", "bs", "workers", "targets", "read", "random"];

/// One value of a sweep, of the kind its key takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SweepValue {
    /// qd, workers, targets: a whole number above 0.
    Count(u32),
    /// bs: a transfer size above 0.
    Size(Bytes),
    /// read, random: a percentage, 0 to 100.
    Percent(f64),
}

impl SweepValue {
    /// The value as a result records it in a point's `params`: a size as its
    /// text ("4k"), numbers as numbers.
    pub fn to_json(self) -> Value {
        match self {
            SweepValue::Count(n) => Value::from(n),
            SweepValue::Size(b) => Value::String(b.to_string()),
            // A whole percentage as given ("read=0", not "read=0.0"), as the rounds' watch names it.
            SweepValue::Percent(p) if p.fract() == 0.0 && (0.0..=100.0).contains(&p) => Value::from(p as u64),
            SweepValue::Percent(p) => serde_json::json!(p),
        }
    }

    /// A value of `key` as a result recorded it (None: not a value of that key).
    pub fn from_json(key: &str, value: &Value) -> Option<SweepValue> {
        match key {
            "bs" => parse_size(value.as_str()?).ok().filter(|b| b.get() > 0).map(SweepValue::Size),
            "read" | "random" => value.as_f64().map(SweepValue::Percent),
            "qd" | "workers" | "targets" => value.as_u64().and_then(|n| u32::try_from(n).ok()).map(SweepValue::Count),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    pub key: &'static str,
    pub values: Vec<SweepValue>,
}

#[derive(Debug, Error, PartialEq)]
pub enum SweepError {
    #[error("sweep '{text}': write KEY=V1,V2,... with KEY one of {}, for example qd=2,4,8,16", KEYS.join(", "))]
    Shape { text: String },
    #[error("sweep '{text}': unknown key '{key}'{}; the keys are {}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default(), KEYS.join(", "))]
    UnknownKey { text: String, key: String, suggestion: Option<String> },
    #[error("sweep '{text}': '{value}' is not a valid {key}: {why}")]
    BadValue { text: String, key: String, value: String, why: String },
    #[error("sweep targets={count}: the workload has only {have} target{}; add more --target or sweep up to {have}", crate::units::plural(*have as u64))]
    TooFewTargets { count: usize, have: usize },
    #[error("sweep '{text}': {key}={value} is given twice, so its point would run twice: give each value once")]
    Repeated { text: String, key: String, value: String },
    #[error("'{key}' is swept twice: give each key in one --sweep")]
    Twice { key: String },
}

pub fn parse(text: &str) -> Result<Sweep, SweepError> {
    let shape = || SweepError::Shape { text: text.to_string() };
    let (key, list) = text.split_once('=').ok_or_else(shape)?;
    let key = key.trim();
    let Some(&key) = KEYS.iter().find(|k| **k == key) else {
        return Err(SweepError::UnknownKey { text: text.into(), key: key.into(), suggestion: nearest(key, KEYS.iter().copied()) });
    };
    let mut values = Vec::new();
    for raw in list.split(',') {
        let raw = raw.trim();
        let bad = |why: String| SweepError::BadValue { text: text.into(), key: key.into(), value: raw.into(), why };
        let value = match key {
            "bs" => {
                let b = parse_size(raw).map_err(|e| bad(e.to_string()))?;
                if b.get() == 0 || b.get() > MAX_BS {
                    return Err(bad(format!("a transfer size must lie between 1 byte and {}", Bytes(MAX_BS))));
                }
                SweepValue::Size(b)
            }
            "read" | "random" => SweepValue::Percent(parse_percent(raw).map_err(|e| bad(e.to_string()))?),
            _ => match raw.parse::<u32>() {
                Ok(n) if key == "qd" && n > MAX_QD => return Err(bad(format!("a queue depth may be at most {MAX_QD}"))),
                Ok(n) if n > 0 => SweepValue::Count(n),
                _ => return Err(bad("use a whole number above 0".into())),
            },
        };
        if values.contains(&value) {
            return Err(SweepError::Repeated { text: text.into(), key: key.into(), value: raw.into() });
        }
        values.push(value);
    }
    if values.is_empty() {
        return Err(shape());
    }
    Ok(Sweep { key, values })
}

/// Sets one sweep value, as a stored result recorded it (a point's `params`),
/// in a workload. A value that is not one of `key`'s is refused.
pub fn apply(spec: &mut WorkloadSpec, key: &str, value: &Value) -> Result<(), SweepError> {
    let typed = SweepValue::from_json(key, value).ok_or_else(|| SweepError::BadValue {
        text: format!("{key}={value}"),
        key: key.into(),
        value: value.to_string(),
        why: "not a value this key takes".into(),
    })?;
    set(spec, key, typed)
}

/// Sets one sweep value in a workload.
pub fn set(spec: &mut WorkloadSpec, key: &str, value: SweepValue) -> Result<(), SweepError> {
    fn lines(spec: &mut WorkloadSpec) -> impl Iterator<Item = &mut super::AccessLine> {
        spec.groups.iter_mut().flat_map(|g| g.access.iter_mut())
    }
    match (key, value) {
        ("qd", SweepValue::Count(n)) => spec.groups.iter_mut().for_each(|g| g.qd = n),
        ("workers", SweepValue::Count(n)) => spec.groups.iter_mut().for_each(|g| g.workers = n),
        ("bs", SweepValue::Size(bs)) => lines(spec).for_each(|l| l.bs = bs),
        ("read", SweepValue::Percent(p)) => lines(spec).for_each(|l| l.read = p),
        ("random", SweepValue::Percent(p)) => lines(spec).for_each(|l| l.random = p),
        ("targets", SweepValue::Count(n)) => {
            let n = n as usize;
            if n > spec.targets.len() {
                return Err(SweepError::TooFewTargets { count: n, have: spec.targets.len() });
            }
            spec.targets.truncate(n);
            for g in &mut spec.groups {
                g.targets.retain(|&t| t < n);
            }
        }
        // `parse` gives each key values of its kind: only a caller of its own gets here.
        (key, value) => {
            return Err(SweepError::BadValue {
                text: format!("{key}={value:?}"),
                key: key.into(),
                value: format!("{value:?}"),
                why: "not a value this key takes".into(),
            })
        }
    }
    Ok(())
}

/// Every combination of the sweeps' values, first sweep outermost: a list of (key, value) lists.
pub fn product(sweeps: &[Sweep]) -> Result<Vec<Vec<(&'static str, SweepValue)>>, SweepError> {
    for (i, s) in sweeps.iter().enumerate() {
        if sweeps[..i].iter().any(|o| o.key == s.key) {
            return Err(SweepError::Twice { key: s.key.into() });
        }
    }
    let mut combos: Vec<Vec<(&'static str, SweepValue)>> = vec![vec![]];
    for s in sweeps {
        combos = combos.into_iter().flat_map(|c| s.values.iter().map(move |v| [c.clone(), vec![(s.key, *v)]].concat())).collect();
    }
    Ok(combos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_parse_and_multiply_in_order() {
        let a = parse("qd=2,4").unwrap();
        let b = parse("bs=4k,8K,16384").unwrap();
        let kib = |k: u64| SweepValue::Size(Bytes(k * 1024));
        assert_eq!(b.values, vec![kib(4), kib(8), kib(16)]);
        // As a result records them: sizes as text, numbers as numbers.
        assert_eq!(
            b.values.iter().map(|v| v.to_json()).collect::<Vec<_>>(),
            vec![Value::from("4k"), Value::from("8k"), Value::from("16k")]
        );
        let p = product(&[a, b]).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[1], vec![("qd", SweepValue::Count(2)), ("bs", kib(8))]);
        assert_eq!(p[3][0], ("qd", SweepValue::Count(4)));
        assert_eq!(p[3][0].1.to_json(), Value::from(4));
    }

    #[test]
    fn bad_sweeps_say_what_is_wrong() {
        assert!(parse("qd").unwrap_err().to_string().contains("KEY=V1,V2"));
        assert!(parse("depth=1,2").unwrap_err().to_string().contains("unknown key 'depth'"));
        assert!(parse("wrokers=1").unwrap_err().to_string().contains("did you mean 'workers'"));
        assert!(parse("qd=2,x").unwrap_err().to_string().contains("'x' is not a valid qd"));
        assert!(parse("qd=0").unwrap_err().to_string().contains("above 0"));
        assert!(parse("read=150").unwrap_err().to_string().contains("'150' is not a valid read"));
        // Above the largest the workload takes: said here, with the range, not later as a group's access line.
        let e = parse("bs=1t").unwrap_err().to_string();
        assert!(e.contains("'1t' is not a valid bs") && e.contains("between 1 byte and 64m"), "{e}");
        assert!(parse("qd=100000").unwrap_err().to_string().contains("at most 65536"));
        assert!(parse("bs=4q").unwrap_err().to_string().contains("'4q' is not a size"));
        assert!(product(&[parse("qd=1").unwrap(), parse("qd=2").unwrap()]).unwrap_err().to_string().contains("swept twice"));
        // A value given twice would run its point twice (4k and 4096 are one size).
        assert!(parse("qd=1,1").unwrap_err().to_string().contains("qd=1 is given twice"));
        assert!(parse("bs=4k,8k,4096").unwrap_err().to_string().contains("bs=4096 is given twice"));
    }

    #[test]
    fn whole_percentages_are_recorded_as_given() {
        let s = parse("read=0,35.5,100").unwrap();
        assert_eq!(s.values.iter().map(|v| v.to_json().to_string()).collect::<Vec<_>>(), ["0", "35.5", "100"]);
    }

    #[test]
    fn recorded_values_read_back_to_the_same_typed_value() {
        for text in ["qd=1,8", "bs=512,4k,1m", "workers=3", "targets=2", "read=0,35.5,100", "random=50"] {
            let s = parse(text).unwrap();
            for v in &s.values {
                assert_eq!(SweepValue::from_json(s.key, &v.to_json()), Some(*v), "{text}");
            }
        }
        // A recorded value of the wrong kind is refused, not set as 0.
        let mut spec =
            WorkloadSpec::plain(vec!["mem:1m".into()], crate::workload::profile::builtin("quick").unwrap().phases[0].groups.clone());
        assert!(apply(&mut spec, "qd", &Value::from("many")).is_err());
        apply(&mut spec, "bs", &Value::from("8k")).unwrap();
        // One target is "only 1 target", not "1 targets".
        let e = set(&mut spec, "targets", SweepValue::Count(2)).unwrap_err().to_string();
        assert!(e.contains("has only 1 target;"), "{e}");
        assert!(spec.groups.iter().flat_map(|g| &g.access).all(|l| l.bs == Bytes(8192)));
    }
}
