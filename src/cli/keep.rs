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

/// Saves the result in the store after each point and at the end.
pub struct StoreKeeper<'p> {
    pub store: Store,
    pub problems: &'p Problems,
    /// A save failed at least once: the result is not (wholly) in the store.
    pub failed: bool,
    /// The id of an MPI job's result kept early was said (`announce_kept`).
    pub announced: bool,
}

impl StoreKeeper<'_> {
    fn save(&mut self, result: &RunResult) {
        if let Err(e) = self.store.save(result) {
            self.failed = true;
            self.problems.push_once(format!("could not save the result in the store {}: {e:#}", self.store.path().display()));
        }
    }
}

impl RunObserver for StoreKeeper<'_> {
    fn point_finished(&mut self, result: &RunResult) {
        self.save(result);
        self.announce_kept(result);
    }
    fn finished(&mut self, result: &RunResult) {
        self.save(result);
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
