//! Sweeps (IOmeter's test cycling): `qd=2,4,8`, `bs=4k,8k`, `workers=1,2,4`,
//! `targets=1,2` (the first N targets: the papers' 1-port vs 2-port scaling),
//! `read=0,35,70,100`, `random=0,50,100`. A sweep sets the value in every group
//! (and every access line) of the workload; several sweeps give their cartesian
//! product, the first one outermost.

use serde_json::Value;
use thiserror::Error;

use super::profile::nearest;
use super::spec::WorkloadSpec;
use crate::units::{parse_percent, parse_size};

pub const KEYS: &[&str] = &["qd", "bs", "workers", "targets", "read", "random"];

#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    pub key: &'static str,
    pub values: Vec<Value>,
}

#[derive(Debug, Error, PartialEq)]
pub enum SweepError {
    #[error("sweep '{text}': write KEY=V1,V2,... with KEY one of {}, for example qd=2,4,8,16", KEYS.join(", "))]
    Shape { text: String },
    #[error("sweep '{text}': unknown key '{key}'{}; the keys are {}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default(), KEYS.join(", "))]
    UnknownKey { text: String, key: String, suggestion: Option<String> },
    #[error("sweep '{text}': '{value}' is not a valid {key}: {why}")]
    BadValue { text: String, key: String, value: String, why: String },
    #[error("sweep targets={count}: the workload has only {have} targets; add more --target or sweep up to {have}")]
    TooFewTargets { count: usize, have: usize },
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
                if b.get() == 0 {
                    return Err(bad("a transfer size must be above 0".into()));
                }
                Value::String(b.to_string())
            }
            "read" | "random" => serde_json::json!(parse_percent(raw).map_err(|e| bad(e.to_string()))?),
            _ => match raw.parse::<u32>() {
                Ok(n) if n > 0 => Value::from(n),
                _ => return Err(bad("use a whole number above 0".into())),
            },
        };
        values.push(value);
    }
    if values.is_empty() {
        return Err(shape());
    }
    Ok(Sweep { key, values })
}

/// Sets one sweep value in a workload.
pub fn apply(spec: &mut WorkloadSpec, key: &str, value: &Value) -> Result<(), SweepError> {
    let num = || value.as_f64().unwrap_or(0.0);
    match key {
        "qd" => spec.groups.iter_mut().for_each(|g| g.qd = num() as u32),
        "workers" => spec.groups.iter_mut().for_each(|g| g.workers = num() as u32),
        "bs" => {
            let bs = parse_size(value.as_str().unwrap_or_default()).expect("validated when parsed");
            spec.groups.iter_mut().flat_map(|g| g.access.iter_mut()).for_each(|l| l.bs = bs);
        }
        "read" => spec.groups.iter_mut().flat_map(|g| g.access.iter_mut()).for_each(|l| l.read = num()),
        "random" => spec.groups.iter_mut().flat_map(|g| g.access.iter_mut()).for_each(|l| l.random = num()),
        "targets" => {
            let n = num() as usize;
            if n > spec.targets.len() {
                return Err(SweepError::TooFewTargets { count: n, have: spec.targets.len() });
            }
            spec.targets.truncate(n);
            for g in &mut spec.groups {
                g.targets.retain(|&t| t < n);
            }
        }
        _ => unreachable!("keys are checked when parsed"),
    }
    Ok(())
}

/// Every combination of the sweeps' values, first sweep outermost: a list of (key, value) lists.
pub fn product(sweeps: &[Sweep]) -> Result<Vec<Vec<(&'static str, Value)>>, SweepError> {
    for (i, s) in sweeps.iter().enumerate() {
        if sweeps[..i].iter().any(|o| o.key == s.key) {
            return Err(SweepError::Twice { key: s.key.into() });
        }
    }
    let mut combos: Vec<Vec<(&'static str, Value)>> = vec![vec![]];
    for s in sweeps {
        combos = combos.into_iter().flat_map(|c| s.values.iter().map(move |v| [c.clone(), vec![(s.key, v.clone())]].concat())).collect();
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
        assert_eq!(b.values, vec![Value::from("4k"), Value::from("8k"), Value::from("16k")]);
        let p = product(&[a, b]).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[1], vec![("qd", Value::from(2)), ("bs", Value::from("8k"))]);
        assert_eq!(p[3][0], ("qd", Value::from(4)));
    }

    #[test]
    fn bad_sweeps_say_what_is_wrong() {
        assert!(parse("qd").unwrap_err().to_string().contains("KEY=V1,V2"));
        assert!(parse("depth=1,2").unwrap_err().to_string().contains("unknown key 'depth'"));
        assert!(parse("wrokers=1").unwrap_err().to_string().contains("did you mean 'workers'"));
        assert!(parse("qd=2,x").unwrap_err().to_string().contains("'x' is not a valid qd"));
        assert!(parse("qd=0").unwrap_err().to_string().contains("above 0"));
        assert!(parse("read=150").unwrap_err().to_string().contains("'150' is not a valid read"));
        assert!(parse("bs=4q").unwrap_err().to_string().contains("'4q' is not a size"));
        assert!(product(&[parse("qd=1").unwrap(), parse("qd=2").unwrap()]).unwrap_err().to_string().contains("swept twice"));
    }
}
