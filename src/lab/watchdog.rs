//! Watchdogs: shells that clean up after a lab if lunmark dies without doing
//! it (SIGKILL runs no destructor). Each waits on a pipe from lunmark: told
//! "done", it exits; at end-of-file (lunmark died) it runs its cleanup. In its
//! own process group, so the Ctrl-C that stops lunmark does not stop it first.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result};

/// Starts a watchdog that runs `cleanup` (a shell script, given `args` as $1...)
/// when lunmark dies; `name` is its $0, for `ps`.
pub fn start<I: AsRef<OsStr>>(name: &str, cleanup: &str, args: &[I]) -> Result<Child> {
    use std::os::unix::process::CommandExt;
    Command::new("sh")
        .args(["-c", &format!(r#"read line; [ "$line" = done ] || {{ {cleanup}; }} 2>/dev/null"#), name])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting the {name} (sh)"))
}

/// Tells a watchdog lunmark cleaned up itself, and waits for it to exit.
pub fn dismiss(mut watchdog: Child) {
    if let Some(mut stdin) = watchdog.stdin.take() {
        let _ = stdin.write_all(b"done\n");
    }
    let _ = watchdog.wait();
}
