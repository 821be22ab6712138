//! An error as one line that says each thing once. `{:#}` prints every cause
//! of an error after its own text, and many errors already carry their cause's
//! text in their own (a path plus the io::Error, SQLite's message plus its
//! "Error code 14: ..." twin), which printed "X: No such file or directory: No
//! such file or directory". Here a cause is left out when what it says is
//! already said.

/// The error and those of its causes that add something, joined by ": ".
pub fn once(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if !text.is_empty() && already_said(&text, &part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// True when every word of `part` (once the "(os error 2)" and "Error code 14:"
/// tags are dropped) is already in `said`.
fn already_said(said: &str, part: &str) -> bool {
    let said_words = words(said);
    let part_words = words(&strip_tags(part));
    !part_words.is_empty() && part_words.iter().all(|w| said_words.contains(w))
}

/// Drops the error-number tags that std and SQLite add to the same message.
fn strip_tags(text: &str) -> String {
    let mut t = text.trim().to_string();
    if let Some(i) = t.rfind(" (os error ") {
        if t.ends_with(')') {
            t.truncate(i);
        }
    }
    if let Some(rest) = t.strip_prefix("Error code ") {
        if let Some((code, message)) = rest.split_once(": ") {
            if code.chars().all(|c| c.is_ascii_digit()) {
                t = message.to_string();
            }
        }
    }
    t
}

/// Lower-case words, without the articles ("the database file" = "database file").
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !matches!(w.as_str(), "a" | "an" | "the"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct Carries {
        path: String,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_repeated() {
        let io = std::io::Error::from_raw_os_error(libc::ENOENT);
        let e = anyhow::Error::new(Carries { path: "/x".into(), source: io });
        assert_eq!(once(&e), "/x: No such file or directory (os error 2)");
        let e: anyhow::Error =
            Err::<(), _>(std::io::Error::from_raw_os_error(libc::EISDIR)).context("reading /d: Is a directory (os error 21)").unwrap_err();
        assert_eq!(once(&e), "reading /d: Is a directory (os error 21)");
    }

    #[test]
    fn sqlites_twin_message_is_said_once() {
        let e = anyhow::anyhow!("Error code 14: Unable to open the database file").context("unable to open database file");
        let e = e.context("/proc/version: setting WAL mode");
        assert_eq!(once(&e), "/proc/version: setting WAL mode: unable to open database file");
    }

    #[test]
    fn causes_that_add_something_are_kept() {
        let e = anyhow::anyhow!("'4 KB x' is not a size").context("--bs");
        assert_eq!(once(&e), "--bs: '4 KB x' is not a size");
        let e = anyhow::anyhow!("No space left on device (os error 28)").context("writing /r.json");
        assert_eq!(once(&e), "writing /r.json: No space left on device (os error 28)");
    }
}
