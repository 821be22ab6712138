//! A job's settings in force, one per key (aliases folded), and their values
//! read as fio reads them (numbers, sizes, times, switches).

use std::collections::HashMap;

use super::*;

/// The settings in force for a job, one per key, with alias keys folded.
pub(super) struct Settings<'a>(pub(super) HashMap<&'static str, &'a Setting>);

impl<'a> Settings<'a> {
    pub(super) fn of(section: &'a JobSection, problems: &mut Problems) -> Self {
        let mut map = HashMap::new();
        for s in &section.settings {
            let key = match s.key.as_str() {
                "readwrite" => "rw",
                "blocksize" => "bs",
                "blocksize_range" => "bsrange",
                "io_limit" => "io_size",
                "timeout" => "runtime",
                "wait_for_previous" => "stonewall",
                "ba" => "blockalign",
                "steadystate" => "ss",
                "steadystate_duration" => "ss_dur",
                "steadystate_ramp_time" => "ss_ramp",
                k => match KNOWN.iter().chain(HARMLESS).find(|n| **n == k) {
                    Some(n) => *n,
                    None if NO_FIGURE.contains(&k) => {
                        problems.push(s, "not an option lunmark applies (it changes no figure lunmark reports)", true);
                        continue;
                    }
                    None => {
                        problems.push(
                            s,
                            "not an option lunmark applies, and it may change the workload, so --fio-lenient cannot skip it either",
                            false,
                        );
                        continue;
                    }
                },
            };
            map.insert(key, s);
        }
        Settings(map)
    }

    pub(super) fn get(&self, key: &str) -> Option<&'a Setting> {
        self.0.get(key).copied()
    }

    /// The value; a trailing `,` (an empty part fio drops) is left out except
    /// where the parts are per direction.
    pub(super) fn value(&self, key: &str) -> Option<(&'a Setting, &'a str)> {
        let trim = !PER_DIRECTION.contains(&key);
        self.get(key).map(|s| {
            let v = s.value.as_deref().unwrap_or("");
            (s, if trim { v.trim_end().trim_end_matches(',') } else { v })
        })
    }

    pub(super) fn switch(&self, key: &str, problems: &mut Problems) -> bool {
        match self.value(key) {
            None => false,
            Some((s, v)) => parse_bool(s.value.as_ref().map(|_| v)).unwrap_or_else(|m| {
                problems.push(s, m, false);
                false
            }),
        }
    }

    pub(super) fn number<T: std::str::FromStr>(&self, key: &str, problems: &mut Problems) -> Option<T> {
        let (s, v) = self.value(key)?;
        v.trim().parse().map_err(|_| problems.push(s, format!("'{v}' is not a whole number"), false)).ok()
    }

    pub(super) fn size(&self, key: &str, kb_base: u64, problems: &mut Problems) -> Option<u64> {
        let (s, v) = self.value(key)?;
        parse_size(v, kb_base).map_err(|m| problems.push(s, m, false)).ok()
    }

    pub(super) fn time(&self, key: &str, problems: &mut Problems) -> Option<Duration> {
        let (s, v) = self.value(key)?;
        parse_time(v, Duration::from_secs(1)).map_err(|m| problems.push(s, m, false)).ok()
    }
}
