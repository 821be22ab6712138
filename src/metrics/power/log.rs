//! An external meter's log: CSV lines of `timestamp,watts`, where the timestamp
//! is Unix seconds (possibly fractional) or RFC 3339. A header line and blank
//! or `#` lines are skipped; any other bad line is an error naming its number.

use std::path::Path;

pub fn read(path: &Path) -> Result<Vec<(f64, f64)>, String> {
    let text = crate::input_path::read_to_string(path, &crate::input_path::POWER_LOG).map_err(|e| e.to_string())?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse(text: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((t, w)) = line.split_once([',', ';']) else {
            return Err(format!("line {}: '{line}' is not timestamp,watts", i + 1));
        };
        let (t, w) = (t.trim(), w.trim());
        let watts: Result<f64, _> = w.parse();
        let time =
            t.parse::<f64>().ok().or_else(|| chrono::DateTime::parse_from_rfc3339(t).ok().map(|d| d.timestamp_micros() as f64 / 1e6));
        match (time, watts) {
            (Some(t), Ok(w)) if w.is_finite() && w >= 0.0 => out.push((t, w)),
            _ if i == 0 => continue, // a header
            _ => return Err(format!("line {}: '{line}': want Unix seconds or an RFC 3339 time, a comma, and watts", i + 1)),
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    if out.len() < 2 {
        return Err("fewer than two readings".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_unix_and_rfc3339_and_skips_a_header() {
        let r = parse("time,watts\n1700000000.5,200\n2023-11-14T22:13:21.5Z, 210.5\n").unwrap();
        assert_eq!(r, vec![(1700000000.5, 200.0), (1700000001.5, 210.5)]);
        assert!(parse("time,watts\n1,2\nbad line\n").unwrap_err().contains("line 3"));
    }
}
