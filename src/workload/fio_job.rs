//! fio job files, the syntax: fio's INI dialect read with fio's own rules, and
//! fio's units. A file is a list of sections; `[global]` sections set defaults
//! for the job sections after them (a later `[global]` changes the defaults of
//! the jobs that follow it, as in fio); a line is `key=value` or a bare `key`
//! (a switch); lines whose first non-blank character is `;` or `#` are comments;
//! `${VAR}` is replaced by the environment variable VAR. What the options mean
//! to lunmark is `fio_map`'s job; this module only reads them.

use std::time::Duration;

use thiserror::Error;

/// One `key[=value]` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting {
    pub key: String,
    /// None for a bare switch (`direct`, `time_based`, `stonewall`).
    pub value: Option<String>,
    /// 1-based line in the job file.
    pub line: usize,
}

/// A job section with every setting that applies to it: the `[global]`
/// settings in force where it starts, then its own, in file order (a later
/// setting of the same key wins, as in fio).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSection {
    /// The section name (`[name]`).
    pub name: String,
    pub line: usize,
    pub settings: Vec<Setting>,
}

impl JobSection {
    /// The setting in force for `key` (the last one given).
    pub fn get(&self, key: &str) -> Option<&Setting> {
        self.settings.iter().rev().find(|s| s.key == key)
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("{origin}, line {line}: {message}")]
pub struct SyntaxError {
    pub origin: String,
    pub line: usize,
    pub message: String,
}

/// Reads a job file. `env` looks up `${VAR}` (the process environment in use).
pub fn parse(text: &str, origin: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<JobSection>, SyntaxError> {
    let err = |line: usize, message: String| SyntaxError { origin: origin.to_string(), line, message };
    let mut globals: Vec<Setting> = Vec::new();
    let mut jobs: Vec<JobSection> = Vec::new();
    // Where the lines go: None before the first section.
    let mut in_global: Option<bool> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(err(line, format!("'{t}' opens a section but does not close it: write [name]")));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(err(line, "a section needs a name: [global] or [jobname]".into()));
            }
            if name == "global" {
                in_global = Some(true);
            } else {
                in_global = Some(false);
                jobs.push(JobSection { name: name.to_string(), line, settings: globals.clone() });
            }
            continue;
        }
        if t.starts_with("include ") || t.starts_with("include\t") {
            return Err(err(line, format!("'{t}': include is not supported yet: put the other file's sections in this one")));
        }
        let (key, value) = match t.split_once('=') {
            Some((k, v)) => (k.trim(), Some(substitute(v.trim(), env).map_err(|m| err(line, m))?)),
            None => (t, None),
        };
        if key.is_empty() {
            return Err(err(line, format!("'{t}' has no option name before '='")));
        }
        let setting = Setting { key: key.to_string(), value, line };
        match in_global {
            None => return Err(err(line, format!("'{t}' comes before any section: put options under [global] or a [job] section"))),
            Some(true) => globals.push(setting),
            Some(false) => jobs.last_mut().expect("a job section is open").settings.push(setting),
        }
    }
    Ok(jobs)
}

/// Replaces every `${VAR}` with the environment variable VAR.
fn substitute(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("'{value}' opens ${{ without a closing }}"));
        };
        let name = &after[..end];
        match env(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!("'{value}' uses ${{{name}}}, which is not set in the environment: export {name}=... before running"))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Splits a `filename` list on `:` the way fio does: `\:` is a colon inside a
/// name (`iscsi\://host/...`), the other colons separate names.
pub fn split_filenames(value: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                names.last_mut().expect("never empty").push(':');
            }
            ':' => names.push(String::new()),
            c => names.last_mut().expect("never empty").push(c),
        }
    }
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// A size in fio's units. With `kb_base=1024` (fio's default) k, kb, m, mb, g,
/// gb, t, tb and p are powers of 1024 and kib, mib, gib, tib are powers of
/// 1000 (fio keeps old job files working this way round); with `kb_base=1000`
/// it is the other way round. Case does not matter; a bare number is bytes.
pub fn parse_size(text: &str, kb_base: u64) -> Result<u64, String> {
    let bad = || {
        format!(
            "'{text}' is not a size: use a number with an optional k, m, g or t suffix (fio's units: 4k = 4096 bytes with kb_base=1024)"
        )
    };
    let t = text.trim();
    if t.ends_with('%') {
        return Err(format!("'{text}' is a share of the file: lunmark needs a size in bytes here (for example 1g)"));
    }
    let (num, suffix) = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let v = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
        return Ok(v);
    } else {
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
        t.split_at(split)
    };
    if num.is_empty() {
        return Err(bad());
    }
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, base) = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => (0, kb_base),
        "k" | "kb" => (1, kb_base),
        "m" | "mb" => (2, kb_base),
        "g" | "gb" => (3, kb_base),
        "t" | "tb" => (4, kb_base),
        "p" | "pb" => (5, kb_base),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        _ => return Err(bad()),
    };
    let mult = base.checked_pow(pow).ok_or_else(bad)?;
    if let Ok(whole) = num.parse::<u64>() {
        return whole.checked_mul(mult).ok_or_else(bad);
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let bytes = v * mult as f64;
    if !bytes.is_finite() || bytes.fract() != 0.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// A time in fio's units: us/usec, ms/msec, s/sec, m/min, h/hr, d/day; a bare
/// number is in `default_unit` (seconds for runtime, ramp_time, startdelay).
pub fn parse_time(text: &str, default_unit: Duration) -> Result<Duration, String> {
    let bad = || format!("'{text}' is not a time: use a number with an optional us, ms, s, m, h or d suffix (a bare number is seconds)");
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| bad())?;
    let unit = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => default_unit.as_secs_f64(),
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" | "hr" => 3600.0,
        "d" | "day" => 86400.0,
        _ => return Err(bad()),
    };
    let secs = v * unit;
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A switch: a bare key is on; otherwise 1/0 (fio also takes true/false, yes/no, on/off).
pub fn parse_bool(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(true),
        Some(v) => match v.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!("'{v}' is not a switch value: use 1 or 0")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn global_sections_apply_to_the_jobs_after_them() {
        let text = "; a comment\n[global]\nbs=4k\n  # another\n[a]\nrw=read\n[global]\nbs=8k\n[b]\nbs=16k\ndirect\n";
        let jobs = parse(text, "t.fio", &no_env).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].get("bs").unwrap().value.as_deref(), Some("4k"));
        assert_eq!(jobs[0].get("rw").unwrap().line, 6);
        // The second [global] changes the default; the job's own value wins over it.
        assert_eq!(jobs[1].settings.iter().filter(|s| s.key == "bs").count(), 3);
        assert_eq!(jobs[1].get("bs").unwrap().value.as_deref(), Some("16k"));
        assert_eq!(jobs[1].get("direct").unwrap().value, None);
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = parse("bs=4k\n[a]\n", "t.fio", &no_env).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("before any section"), "{e}");
        let e = parse("[a]\ninclude other.fio\n", "t.fio", &no_env).unwrap_err();
        assert!(e.line == 2 && e.message.contains("include is not supported yet"), "{e}");
        let e = parse("[a]\nrw=read\n[b\n", "t.fio", &no_env).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().contains("t.fio, line 3"), "{e}");
    }

    #[test]
    fn environment_variables_are_substituted() {
        let env = |k: &str| (k == "DEV").then(|| "/dev/shm/x".to_string());
        let jobs = parse("[a]\nfilename=${DEV}\nsize=${DEV}-${DEV}\n", "t.fio", &env).unwrap();
        assert_eq!(jobs[0].get("filename").unwrap().value.as_deref(), Some("/dev/shm/x"));
        assert_eq!(jobs[0].get("size").unwrap().value.as_deref(), Some("/dev/shm/x-/dev/shm/x"));
        let e = parse("[a]\n\nfilename=${NOPE}\n", "t.fio", &env).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("${NOPE}") && e.message.contains("not set"), "{e}");
    }

    #[test]
    fn filenames_split_on_colons_but_not_escaped_ones() {
        assert_eq!(split_filenames("/a:/b"), vec!["/a", "/b"]);
        assert_eq!(
            split_filenames("iscsi\\://127.0.0.1/iqn.2016-02.com.fio\\:system\\:fio/1"),
            vec!["iscsi://127.0.0.1/iqn.2016-02.com.fio:system:fio/1"]
        );
        assert_eq!(split_filenames("/a::/b:"), vec!["/a", "/b"]);
    }

    #[test]
    fn sizes_follow_fio_and_kb_base() {
        // Checked against fio 3.33: with the default kb_base, 4k = 4096 but 4kib = 4000.
        assert_eq!(parse_size("4k", 1024), Ok(4096));
        assert_eq!(parse_size("4K", 1024), Ok(4096));
        assert_eq!(parse_size("4KB", 1024), Ok(4096));
        assert_eq!(parse_size("4kib", 1024), Ok(4000));
        assert_eq!(parse_size("1m", 1024), Ok(1 << 20));
        assert_eq!(parse_size("2g", 1024), Ok(2 << 30));
        assert_eq!(parse_size("4k", 1000), Ok(4000));
        assert_eq!(parse_size("4kib", 1000), Ok(4096));
        assert_eq!(parse_size("512", 1024), Ok(512));
        assert_eq!(parse_size("0x1000", 1024), Ok(4096));
        assert_eq!(parse_size("1.5k", 1024), Ok(1536));
        assert!(parse_size("50%", 1024).unwrap_err().contains("share of the file"));
        assert!(parse_size("4q", 1024).is_err());
        assert!(parse_size("k", 1024).is_err());
    }

    #[test]
    fn times_default_to_seconds() {
        let s = Duration::from_secs(1);
        assert_eq!(parse_time("30", s), Ok(Duration::from_secs(30)));
        assert_eq!(parse_time("500ms", s), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("250us", s), Ok(Duration::from_micros(250)));
        assert_eq!(parse_time("2m", s), Ok(Duration::from_secs(120)));
        assert_eq!(parse_time("1h", s), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_time("1d", s), Ok(Duration::from_secs(86400)));
        assert!(parse_time("soon", s).is_err());
        assert_eq!(parse_bool(None), Ok(true));
        assert_eq!(parse_bool(Some("0")), Ok(false));
        assert!(parse_bool(Some("maybe")).is_err());
    }
}
