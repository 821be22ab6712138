//! CHAP secrets in iSCSI URIs. A user may write `iscsi://user%secret@host/IQN/LUN`
//! (libiscsi's form) or set LIBISCSI_CHAP_USERNAME and LIBISCSI_CHAP_PASSWORD.
//! The secret must never reach a result, the store, a log or an error message,
//! so it is taken out of the URI the moment the command line is read: the rest
//! of lunmark only ever sees `iscsi://user@host/IQN/LUN`, and the engine asks
//! this module for the full URI when it logs in.

use std::collections::HashMap;
use std::sync::Mutex;

/// Redacted URI -> the URI as the user typed it (with the secret).
static SECRETS: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

/// Returns the URI without its CHAP secret, remembering the secret for
/// [`reveal`]. URIs without a secret come back unchanged.
pub fn hide(uri: &str) -> String {
    let Some((redacted, _secret)) = split_secret(uri) else { return uri.to_string() };
    let mut map = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    map.get_or_insert_with(HashMap::new).insert(redacted.clone(), uri.to_string());
    redacted
}

/// A command-line argument without any CHAP secret (`-t URI`, `--target=URI`).
pub fn hide_in_arg(arg: &str) -> String {
    match arg.find("iscsi://") {
        Some(at) => format!("{}{}", &arg[..at], hide(&arg[at..])),
        None => arg.to_string(),
    }
}

/// The URI to log in with: the one the user typed, secret included.
pub fn reveal(uri: &str) -> String {
    let map = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    map.as_ref().and_then(|m| m.get(uri).cloned()).unwrap_or_else(|| uri.to_string())
}

/// Replaces every secret lunmark knows of in `text` (an error from libiscsi may
/// quote the URL it was given).
pub fn scrub(text: &str) -> String {
    let map = SECRETS.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = text.to_string();
    for full in map.iter().flat_map(|m| m.values()) {
        if let Some((_, secret)) = split_secret(full) {
            out = out.replace(&secret, "***");
        }
    }
    if let Ok(secret) = std::env::var("LIBISCSI_CHAP_PASSWORD") {
        if !secret.is_empty() {
            out = out.replace(&secret, "***");
        }
    }
    out
}

/// `iscsi://user%secret@rest` -> (`iscsi://user@rest`, `secret`).
fn split_secret(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix("iscsi://")?;
    let at = rest.find('@')?;
    // The authority ends at the first '/', so an '@' in the IQN is not userinfo.
    if rest.find('/').is_some_and(|slash| slash < at) {
        return None;
    }
    let (user, secret) = rest[..at].split_once('%')?;
    Some((format!("iscsi://{user}@{}", &rest[at + 1..]), secret.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_taken_out_and_given_back_only_to_the_engine() {
        let typed = "iscsi://alice%s3cr3t-pw@127.0.0.1:3260/iqn.2026-11.org.lunmark:t/1";
        let shown = hide(typed);
        assert_eq!(shown, "iscsi://alice@127.0.0.1:3260/iqn.2026-11.org.lunmark:t/1");
        assert_eq!(reveal(&shown), typed);
        assert_eq!(scrub(&format!("login failed for {typed}")), format!("login failed for {}", typed.replace("s3cr3t-pw", "***")));
        assert_eq!(hide("iscsi://127.0.0.1/iqn.x:y/1"), "iscsi://127.0.0.1/iqn.x:y/1");
        assert_eq!(hide("/dev/shm/a%b@c"), "/dev/shm/a%b@c");
        assert_eq!(hide_in_arg("--target=iscsi://bob%pw@h/iqn.x:y/0"), "--target=iscsi://bob@h/iqn.x:y/0");
    }
}
