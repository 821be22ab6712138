//! Files a run creates or grows to hold its region. When the target then
//! cannot be made ready (the filesystem fills up while lunmark fills the file,
//! the filesystem refuses direct I/O, another target of the run is refused),
//! what lunmark did is undone: a file it created is removed, a file it grew is
//! cut back to its old length. A file lunmark did not create is never removed.

use std::path::{Path, PathBuf};

enum Undo {
    /// lunmark created the file: remove it.
    Remove,
    /// The file existed with this length and lunmark grew it: cut it back.
    Truncate(u64),
}

/// Undoes a file's creation or growth when dropped, unless `keep` was called.
pub struct Pending {
    path: PathBuf,
    undo: Undo,
    armed: bool,
}

impl Pending {
    /// lunmark is about to create `path`.
    pub fn created(path: &Path) -> Pending {
        Pending { path: path.to_path_buf(), undo: Undo::Remove, armed: true }
    }

    /// lunmark is about to grow `path` from `old_len` bytes.
    pub fn grown(path: &Path, old_len: u64) -> Pending {
        Pending { path: path.to_path_buf(), undo: Undo::Truncate(old_len), armed: true }
    }

    /// The target is ready: leave the file as it is now.
    pub fn keep(mut self) {
        self.armed = false;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        // Best effort: the error that made the target fail is what the user
        // needs to see, and it is already on its way.
        match self.undo {
            Undo::Remove => {
                let _ = std::fs::remove_file(&self.path);
            }
            Undo::Truncate(len) => {
                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&self.path) {
                    let _ = f.set_len(len);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_file_is_removed_and_a_grown_one_cut_back_unless_kept() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("made");
        std::fs::write(&made, b"partial").unwrap();
        drop(Pending::created(&made));
        assert!(!made.exists());

        let grown = dir.path().join("grown");
        std::fs::write(&grown, b"user data").unwrap();
        let p = Pending::grown(&grown, 9);
        std::fs::OpenOptions::new().write(true).open(&grown).unwrap().set_len(4096).unwrap();
        drop(p);
        assert_eq!(std::fs::read(&grown).unwrap(), b"user data");

        let kept = dir.path().join("kept");
        std::fs::write(&kept, b"x").unwrap();
        Pending::created(&kept).keep();
        assert!(kept.exists());
    }
}
