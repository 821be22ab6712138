//! A lab's scratch directory (sockets, LUN files, traces): in /dev/shm (RAM,
//! like the targets) or under $LUNMARK_LAB_DIR, removed when the lab ends, and
//! also when lunmark is killed (SIGKILL runs no destructor): a watchdog shell
//! waiting on a pipe from lunmark removes it at end-of-file. Without it, every
//! killed lab left its LUN files in RAM (a user trial found 968 MiB after nine
//! kills).

use std::path::{Path, PathBuf};
use std::process::Child;

use anyhow::{Context, Result};

pub struct LabDir {
    dir: Option<tempfile::TempDir>,
    watchdog: Option<Child>,
}

impl LabDir {
    pub fn new() -> Result<LabDir> {
        let parent = std::env::var_os("LUNMARK_LAB_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/dev/shm"));
        let dir = tempfile::Builder::new()
            .prefix("lunmark-lab-")
            .tempdir_in(&parent)
            .with_context(|| format!("creating a lab directory in {}", parent.display()))?;
        // At lunmark's death: removed, and once more a second later, after the
        // servers that die with lunmark have let their files go.
        let watchdog = super::watchdog::start("lunmark-lab-dir-watchdog", r#"rm -rf -- "$1"; sleep 1; rm -rf -- "$1""#, &[dir.path()])?;
        Ok(LabDir { dir: Some(dir), watchdog: Some(watchdog) })
    }

    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("present until dropped").path()
    }
}

impl Drop for LabDir {
    fn drop(&mut self) {
        drop(self.dir.take());
        if let Some(w) = self.watchdog.take() {
            super::watchdog::dismiss(w);
        }
    }
}
