//! Keeping a run's result as it grows, as observers of the run: after every
//! point and at the end, the JSON writer replaces `--json FILE` (through
//! `output_path`: a temporary file renamed over a regular file, so a reader
//! never sees half a file, and never a device node) and the store keeper saves
//! it, so an interrupted sweep keeps the points it finished. A failure to keep
//! it is remembered (once) in the `Problems` both share and reported when the
//! run ends; it never stops the run.

use std::cell::RefCell;

use crate::output_path::OutputFile;
use crate::results::model::RunResult;
use crate::results::store::Store;
use crate::run::RunObserver;

/// What could not be kept, each said once, in the order it first happened.
#[derive(Default)]
pub struct Problems(RefCell<Vec<String>>);

impl Problems {
    pub fn push_once(&self, text: String) {
        let mut list = self.0.borrow_mut();
        if !list.contains(&text) {
            list.push(text);
        }
    }

    pub fn into_list(self) -> Vec<String> {
        self.0.into_inner()
    }
}

/// Writes the result to `--json FILE` after each point and at the end.
pub struct JsonWriter<'p> {
    pub out: OutputFile,
    /// The JSON of a result, in the shape asked for (--output-format).
    pub render: Box<dyn Fn(&RunResult) -> String + 'p>,
    pub problems: &'p Problems,
}

impl JsonWriter<'_> {
    fn write(&mut self, result: &RunResult) {
        if let Err(e) = self.out.replace_with((self.render)(result).as_bytes()) {
            self.problems.push_once(format!("could not write the JSON result: {e}"));
        }
    }
}

impl RunObserver for JsonWriter<'_> {
    fn point_finished(&mut self, result: &RunResult) {
        self.write(result);
    }
    fn finished(&mut self, result: &RunResult) {
        self.write(result);
    }
}

/// Saves the result in the store after each point and at the end. What the
/// store holds at the end is what is reported: a save that failed (a lock held
/// past the busy timeout) and a later one that succeeded leave the whole
/// result, which is said as a note, not as a loss.
pub struct StoreKeeper<'p> {
    pub store: Store,
    pub problems: &'p Problems,
    /// The last save failed: the result is not (wholly) in the store.
    pub failed: bool,
    /// The id of an MPI job's result kept early was said (`announce_kept`).
    pub announced: bool,
    /// The first save that failed, with when ("after point 3") and why.
    missed: Option<String>,
    /// Saved at least once: later saves only update the result's row.
    saved: bool,
    /// The result was deleted from the store during its run (`results
    /// delete`): it is not saved again.
    pub deleted: bool,
    /// What to say beside the outcome (a save that failed and was made good).
    pub notes: Vec<String>,
    reserve: Reserve,
}

/// Room kept beside the store while a run saves into it: a file of
/// `RESERVE_BYTES` removed when a save fails, so that on a full filesystem the
/// run can still mark how it ended (SQLite needs a few pages for any write)
/// instead of leaving its row `running`. Removed at the end in any case.
struct Reserve(Option<std::path::PathBuf>);

const RESERVE_BYTES: usize = 64 << 10;

impl Reserve {
    /// Best effort: a filesystem without even this room fails the first save,
    /// which is then reported as any failed save is.
    fn beside(store: &std::path::Path) -> Reserve {
        let name = store.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        remove_stale(store, &format!(".{name}.reserve-"));
        let path = store.with_file_name(format!(".{name}.reserve-{}", std::process::id()));
        // Written, not sized: a sparse file would hold no room at all.
        match std::fs::write(&path, vec![0u8; RESERVE_BYTES]) {
            Ok(()) => Reserve(Some(path)),
            Err(_) => {
                let _ = std::fs::remove_file(&path);
                Reserve(None)
            }
        }
    }

    fn release(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Reserves left by runs that were killed (SIGKILL leaves no chance to
/// remove them): those whose process is gone are removed.
fn remove_stale(store: &std::path::Path, prefix: &str) {
    let dir = store.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(prefix) else { continue };
        if pid.chars().all(|c| c.is_ascii_digit()) && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        self.release();
    }
}

impl<'p> StoreKeeper<'p> {
    pub fn new(store: Store, problems: &'p Problems) -> Self {
        let reserve = Reserve::beside(store.path());
        StoreKeeper {
            store,
            problems,
            failed: false,
            announced: false,
            missed: None,
            saved: false,
            deleted: false,
            notes: Vec::new(),
            reserve,
        }
    }

    /// One save; Err with SQLite's words when it failed.
    fn save(&mut self, result: &RunResult) -> Result<(), String> {
        if self.deleted {
            return Ok(());
        }
        let saved = if self.saved { self.store.save_again(result) } else { self.store.save(result).map(|_| true) };
        match saved {
            Ok(true) => {
                (self.saved, self.failed) = (true, false);
                Ok(())
            }
            Ok(false) => {
                self.deleted = true;
                self.notes.push(format!(
                    "result {} was deleted from the store {} during its run (results delete): the rest of the run was not saved there",
                    result.id,
                    self.store.path().display()
                ));
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(format!("{e:#}"))
            }
        }
    }

    /// At the end: what the store keeps, said exactly. A result that could
    /// not be saved whole is marked with how the run ended (never left
    /// `running`), and the message says how many of its points the store holds.
    fn finish(&mut self, result: &RunResult, error: String) {
        use crate::results::model::Status;
        let path = self.store.path().display().to_string();
        self.reserve.release();
        // A completed run whose points are all kept is marked completed (only
        // the end's own save was lost); one missing points, failed.
        let all_kept = matches!(self.store.kept(&result.id), Ok(Some((_, n))) if n == result.points.len());
        let ended = if result.status == Status::Completed && !all_kept { Status::Failed } else { result.status };
        let marked = self.saved && self.store.mark_ended(&result.id, ended).is_ok();
        let measured = crate::units::counted(result.points.len() as u64, "point");
        let kept = match self.store.kept(&result.id) {
            Ok(None) => "it holds nothing of this run".to_string(),
            Ok(Some((status, n))) if marked => {
                format!("it keeps result {} with {n} of the {measured} measured, marked {status}", result.id)
            }
            Ok(Some((status, n))) => format!("it keeps result {} with {n} of the {measured} measured, still marked {status}", result.id),
            Err(e) => format!("what it keeps could not be read back: {e:#}"),
        };
        self.problems.push_once(format!("could not save the result in the store {path} at the end ({error}); {kept}"));
    }
}

impl RunObserver for StoreKeeper<'_> {
    fn point_finished(&mut self, result: &RunResult) {
        if let Err(e) = self.save(result) {
            self.missed.get_or_insert_with(|| format!("after point {} ({e})", result.points.len()));
        }
        self.announce_kept(result);
    }
    fn finished(&mut self, result: &RunResult) {
        match self.save(result) {
            Err(e) => self.finish(result, e),
            Ok(()) if self.deleted => {}
            Ok(()) => {
                if let Some(missed) = self.missed.take() {
                    self.notes.push(format!(
                        "the save {missed} failed; the saves after it kept the whole result ({}) in the store {}",
                        crate::units::counted(result.points.len() as u64, "point"),
                        self.store.path().display()
                    ));
                }
            }
        }
    }
}

impl StoreKeeper<'_> {
    /// Under MPI, a point ended by a signal is kept before the ranks merge
    /// it (`run::cluster::keep_before_reduction`), and mpirun may SIGKILL
    /// rank 0 a second later: the id is said at once, flushed, so the user
    /// learns it even when no summary follows. Said once.
    fn announce_kept(&mut self, result: &RunResult) {
        use std::io::Write;
        if self.failed || self.announced || result.mpi.is_none() || result.status != crate::results::model::Status::Interrupted {
            return;
        }
        self.announced = true;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "saved as {} in {} (interrupted, {} kept: {})",
            result.id,
            self.store.path().display(),
            crate::units::counted(result.points.len() as u64, "finished point"),
            result.status_reason.as_deref().unwrap_or("the job is ending")
        );
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output_path::{destination, Destination, Mode};

    /// The JSON file holds the result as it stands after each point and at the
    /// end; once its directory is gone, the failure is said once however often
    /// the run tells the writer, and the run is not stopped by it.
    #[test]
    fn the_json_file_follows_the_result_and_a_failure_is_said_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("r.json");
        std::fs::create_dir(path.parent().unwrap()).unwrap();
        let Destination::File(out) = destination("--json", path.to_str().unwrap(), true, Mode::Replace).unwrap() else { panic!("a file") };
        let problems = Problems::default();
        let mut writer =
            JsonWriter { out, render: Box::new(|r: &RunResult| format!("{} {}\n", r.id, r.points.len())), problems: &problems };
        let mut result = crate::report::golden_result("result-a.json");
        let all = std::mem::take(&mut result.points);
        result.points.push(all[0].clone());
        writer.point_finished(&result);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{} 1\n", result.id));
        result.points = all;
        writer.finished(&result);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{} {}\n", result.id, result.points.len()));

        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        writer.point_finished(&result);
        writer.finished(&result);
        drop(writer);
        let said = problems.into_list();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("could not write the JSON result: "), "{said:?}");
    }
}
