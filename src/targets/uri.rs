//! Target URIs as users type them, parsed without touching the system.

use std::path::PathBuf;

use thiserror::Error;

use crate::units::{parse_size, Bytes};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetUri {
    /// A regular file (created and filled if missing).
    File(PathBuf),
    /// A block device under /dev.
    Device(PathBuf),
    /// An in-process RAM LUN of this size.
    Mem(Bytes),
    /// An in-process sink of this size that moves no data: lunmark's own per-I/O
    /// cost, the exact peer of fio's null engine.
    Null(Bytes),
    /// An NBD export: `nbd://host[:port]/export` or `nbd+unix:///export?socket=PATH`
    /// (libnbd's URI forms).
    Nbd(String),
    /// An iSCSI LUN: `iscsi://[user@]host[:port]/IQN/LUN` (libiscsi's URI form;
    /// a CHAP secret was already taken out by `credentials::hide`).
    Iscsi(String),
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum UriError {
    #[error("target '{uri}': {why}. Targets are /path/file, file:/path, /dev/NAME, mem:SIZE (for example mem:1G), null:SIZE, nbd://host[:port]/export or iscsi://host[:port]/IQN/LUN")]
    Bad { uri: String, why: String },
}

impl TargetUri {
    /// What kind of target this is: what the plan, the engines and the result go by.
    pub fn kind(&self) -> super::TargetKind {
        use super::TargetKind;
        match self {
            TargetUri::File(_) => TargetKind::File,
            TargetUri::Device(_) => TargetKind::BlockDevice,
            TargetUri::Mem(_) => TargetKind::Mem,
            TargetUri::Null(_) => TargetKind::Null,
            TargetUri::Nbd(_) => TargetKind::Nbd,
            TargetUri::Iscsi(_) => TargetKind::Iscsi,
        }
    }

    /// True for the targets whose I/O crosses the network (NBD, iSCSI).
    pub fn is_network(&self) -> bool {
        matches!(self, TargetUri::Nbd(_) | TargetUri::Iscsi(_))
    }
}

/// A target as a request names it: the text as given (CHAP secrets already
/// hidden), which the result records, and what it parses to. Parsed once,
/// where the request is read; the plan and the run then match on `uri`, never
/// on the text again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub text: String,
    pub uri: TargetUri,
}

impl Target {
    pub fn parse(text: &str) -> Result<Target, UriError> {
        Ok(Target { uri: parse(text)?, text: text.to_string() })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

pub fn parse(uri: &str) -> Result<TargetUri, UriError> {
    let bad = |why: &str| UriError::Bad { uri: uri.to_string(), why: why.to_string() };
    if uri.trim().is_empty() {
        return Err(bad("the target is empty"));
    }
    for (prefix, make) in [("mem:", TargetUri::Mem as fn(Bytes) -> TargetUri), ("null:", TargetUri::Null)] {
        if let Some(size) = uri.strip_prefix(prefix) {
            let size = parse_size(size).map_err(|e| bad(&e.to_string()))?;
            if size.get() == 0 {
                return Err(bad(&format!("a {prefix} target needs a size above 0, for example {prefix}1G")));
            }
            return Ok(make(size));
        }
    }
    if uri.starts_with("nbd://") || uri.starts_with("nbd+unix://") {
        if uri.starts_with("nbd+unix://") && !uri.contains("socket=") {
            return Err(bad("an nbd+unix:// URI needs ?socket=PATH, for example nbd+unix:///?socket=/tmp/nbd.sock"));
        }
        if uri.starts_with("nbd://") && uri["nbd://".len()..].split('/').next().unwrap_or("").is_empty() {
            return Err(bad("an nbd:// URI needs a host, for example nbd://127.0.0.1:10809/export"));
        }
        return Ok(TargetUri::Nbd(uri.to_string()));
    }
    if let Some(rest) = uri.strip_prefix("iscsi://") {
        let parts: Vec<&str> = rest.splitn(3, '/').collect();
        let lun_ok = parts.get(2).is_some_and(|l| !l.is_empty() && l.parse::<u16>().is_ok());
        if parts.len() < 3 || parts[0].is_empty() || parts[1].is_empty() || !lun_ok {
            return Err(bad("an iscsi:// URI is iscsi://[user[%secret]@]host[:port]/IQN/LUN, for example iscsi://127.0.0.1:3260/iqn.2026-11.org.example:lun0/1"));
        }
        return Ok(TargetUri::Iscsi(uri.to_string()));
    }
    let path = if let Some(p) = uri.strip_prefix("file://") {
        p
    } else if let Some(p) = uri.strip_prefix("file:") {
        p
    } else if uri.contains("://") {
        let scheme = uri.split("://").next().unwrap_or("");
        return Err(bad(&format!("unknown scheme '{scheme}'")));
    } else {
        uri
    };
    if path.is_empty() {
        return Err(bad("the path is empty"));
    }
    let path = PathBuf::from(path);
    if path.starts_with("/dev/") && !path.starts_with("/dev/shm/") {
        Ok(TargetUri::Device(path))
    } else {
        Ok(TargetUri::File(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_form() {
        assert_eq!(parse("mem:1G"), Ok(TargetUri::Mem(Bytes(1 << 30))));
        assert_eq!(parse("null:4k"), Ok(TargetUri::Null(Bytes(4096))));
        assert_eq!(parse("/tmp/x"), Ok(TargetUri::File("/tmp/x".into())));
        assert_eq!(parse("file:/tmp/x"), Ok(TargetUri::File("/tmp/x".into())));
        assert_eq!(parse("/dev/shm/x"), Ok(TargetUri::File("/dev/shm/x".into())));
        assert_eq!(parse("/dev/loop3"), Ok(TargetUri::Device("/dev/loop3".into())));
        assert!(parse("mem:0").is_err());
        assert!(parse("mem:lots").unwrap_err().to_string().contains("mem:lots"));
        assert!(parse("ftp://x/y").unwrap_err().to_string().contains("unknown scheme 'ftp'"));
        assert!(parse("").is_err());
        assert_eq!(parse("nbd://127.0.0.1:10809/x"), Ok(TargetUri::Nbd("nbd://127.0.0.1:10809/x".into())));
        assert!(parse("nbd+unix:///x").unwrap_err().to_string().contains("socket=PATH"));
        assert!(parse("nbd:///x").unwrap_err().to_string().contains("needs a host"));
        let iscsi = "iscsi://127.0.0.1:3261/iqn.2026-11.org.lunmark:t/1";
        assert_eq!(parse(iscsi), Ok(TargetUri::Iscsi(iscsi.into())));
        for bad in ["iscsi://127.0.0.1/iqn.x", "iscsi:///iqn.x/1", "iscsi://h/iqn.x/lun", "iscsi://h//1"] {
            assert!(parse(bad).unwrap_err().to_string().contains("iscsi://[user[%secret]@]host[:port]/IQN/LUN"), "{bad}");
        }
    }

    #[test]
    fn a_target_keeps_its_text_and_its_kind() {
        use crate::targets::TargetKind;
        let t = Target::parse("file:/tmp/x").unwrap();
        assert_eq!((t.text.as_str(), t.uri.kind()), ("file:/tmp/x", TargetKind::File));
        assert_eq!(t.to_string(), "file:/tmp/x");
        assert_eq!(Target::parse("/dev/loop3").unwrap().uri.kind(), TargetKind::BlockDevice);
        let iscsi = Target::parse("iscsi://h:3260/iqn.x/1").unwrap();
        assert!(iscsi.uri.kind() == TargetKind::Iscsi && iscsi.uri.is_network());
        assert!(!Target::parse("mem:1m").unwrap().uri.is_network());
        assert!(Target::parse("ftp://x/y").is_err());
    }
}
