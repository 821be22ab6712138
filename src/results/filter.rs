//! Which stored results `results list` shows: `--label GLOB`, `--profile NAME`,
//! `--target GLOB`, `--since DATE`, `--last N`. Typed when parsed (a bad date
//! is refused there, with an example), then applied to the store's listing.

use anyhow::{bail, Result};
use chrono::{DateTime, NaiveDate, Utc};

use super::store::Listing;

/// The filters of one `results list`; all given ones must hold.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Shell-style pattern (`*`, `?`) the whole label must match.
    pub label: Option<String>,
    /// Exact profile name.
    pub profile: Option<String>,
    /// Shell-style pattern at least one of the run's targets must match.
    pub target: Option<String>,
    /// Results started at or after this instant.
    pub since: Option<DateTime<Utc>>,
    /// Only the N most recent of those that match.
    pub last: Option<usize>,
}

/// `2026-11-23` (midnight UTC) or an RFC 3339 date-time `2026-11-23T14:00:00Z`.
pub fn parse_since(text: &str) -> Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc());
    }
    bail!("--since '{text}' is not an RFC 3339 date or date-time: write 2026-11-23 (midnight UTC) or 2026-11-23T14:00:00Z (or with an offset, +02:00)")
}

/// Shell-style match of the whole text: `*` any run of characters, `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // Iterative matching with one backtrack point (the last `*`): linear in practice.
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

impl ListFilter {
    fn keeps(&self, l: &Listing) -> bool {
        let label_ok = self.label.as_ref().is_none_or(|g| glob_match(g, l.label.as_deref().unwrap_or("")));
        let profile_ok = self.profile.as_ref().is_none_or(|p| l.profile.as_deref() == Some(p.as_str()));
        let target_ok = self.target.as_ref().is_none_or(|g| l.targets.split(", ").any(|t| glob_match(g, t)));
        let since_ok =
            self.since.is_none_or(|since| DateTime::parse_from_rfc3339(&l.started_at).is_ok_and(|at| at.with_timezone(&Utc) >= since));
        label_ok && profile_ok && target_ok && since_ok
    }

    /// The listings that pass, oldest first (as the store gives them).
    pub fn apply(&self, listings: Vec<Listing>) -> Vec<Listing> {
        let mut kept: Vec<Listing> = listings.into_iter().filter(|l| self.keeps(l)).collect();
        if let Some(n) = self.last {
            let skip = kept.len().saturating_sub(n);
            kept.drain(..skip);
        }
        kept
    }

    /// "label 'fc*', since 2026-11-23 00:00:00 UTC" for the message when nothing matches.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(g) = &self.label {
            parts.push(format!("--label '{g}'"));
        }
        if let Some(p) = &self.profile {
            parts.push(format!("--profile '{p}'"));
        }
        if let Some(g) = &self.target {
            parts.push(format!("--target '{g}'"));
        }
        if let Some(s) = &self.since {
            parts.push(format!("--since {}", s.to_rfc3339()));
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(id: &str, at: &str, label: Option<&str>, profile: Option<&str>, targets: &str) -> Listing {
        Listing {
            id: id.into(),
            started_at: at.into(),
            status: "completed".into(),
            label: label.map(String::from),
            profile: profile.map(String::from),
            targets: targets.into(),
            points: 1,
            headline_point: 1,
            headline_params: String::new(),
            iops: 1.0,
            mbps: 1.0,
            p99_us: 1.0,
        }
    }

    #[test]
    fn globs_match_whole_texts() {
        assert!(glob_match("fc*", "fc port 1"));
        assert!(glob_match("*port ?", "fc port 1"));
        assert!(!glob_match("port*", "fc port 1"));
        assert!(glob_match("nbd://*/lun", "nbd://127.0.0.1:10809/lun"));
        assert!(!glob_match("a?c", "abbc"));
        assert!(glob_match("*", ""));
    }

    #[test]
    fn since_takes_a_date_or_a_date_time_and_refuses_the_rest() {
        assert_eq!(parse_since("2026-11-23").unwrap().to_rfc3339(), "2026-11-23T00:00:00+00:00");
        assert_eq!(parse_since("2026-11-23T14:00:00+02:00").unwrap().to_rfc3339(), "2026-11-23T12:00:00+00:00");
        for bad in ["yesterday", "23/11/2026", "2026-11-23 14:00"] {
            let e = parse_since(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("--since '{bad}'")) && e.contains("2026-11-23T14:00:00Z"), "{e}");
        }
    }

    #[test]
    fn filters_combine_and_last_keeps_the_most_recent() {
        let all = vec![
            listing("a1", "2026-11-20T10:00:00.000Z", Some("fc port 1"), Some("oltp-db"), "/dev/sdb"),
            listing("b2", "2026-11-22T10:00:00.000Z", Some("fc port 2"), None, "mem:1g, nbd://h/x"),
            listing("c3", "2026-11-23T10:00:00.000Z", None, Some("oltp-db"), "nbd://h/y"),
            listing("d4", "2026-11-23T11:00:00.000Z", Some("fc port 3"), Some("oltp-db"), "/dev/sdc"),
        ];
        let ids = |f: ListFilter| f.apply(all.clone()).into_iter().map(|l| l.id).collect::<Vec<_>>();
        assert_eq!(ids(ListFilter { label: Some("fc*".into()), ..Default::default() }), ["a1", "b2", "d4"]);
        assert_eq!(ids(ListFilter { profile: Some("oltp-db".into()), ..Default::default() }), ["a1", "c3", "d4"]);
        assert_eq!(ids(ListFilter { target: Some("nbd://*".into()), ..Default::default() }), ["b2", "c3"]);
        assert_eq!(ids(ListFilter { since: Some(parse_since("2026-11-22").unwrap()), ..Default::default() }), ["b2", "c3", "d4"]);
        assert_eq!(ids(ListFilter { profile: Some("oltp-db".into()), last: Some(2), ..Default::default() }), ["c3", "d4"]);
    }
}
