//! `run --hdr-log FILE`: the HdrHistogram interval log, replaced after each
//! point and at the end from the result as it stands (through `output_path`:
//! a reader never sees half a file), so a long sweep's log is readable while
//! it runs. The log is the result's per-second histograms as they are stored
//! (`report::export::hdr_log`); a failure to write it is said once, at the end, and
//! never stops the run.

use crate::output_path::OutputFile;
use crate::results::model::RunResult;
use crate::run::RunObserver;

pub struct HdrLogWriter {
    out: OutputFile,
    /// The first failure to write the log, said when the run ends.
    pub failed: Option<String>,
}

impl HdrLogWriter {
    pub fn new(out: OutputFile) -> Self {
        HdrLogWriter { out, failed: None }
    }

    fn write(&mut self, result: &RunResult) {
        // A later write that succeeds leaves the whole log: only the last failure matters.
        self.failed = self
            .out
            .replace_with(crate::report::export::hdr_log::render(result).as_bytes())
            .err()
            .map(|e| format!("could not write the HDR histogram log: {e}"));
    }
}

impl RunObserver for HdrLogWriter {
    fn point_finished(&mut self, result: &RunResult) {
        self.write(result);
    }
    fn finished(&mut self, result: &RunResult) {
        self.write(result);
    }
}
