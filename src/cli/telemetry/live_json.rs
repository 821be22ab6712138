//! `--live-json FILE|-`: one JSON line a second per point (and per worker with
//! `--detail`), from the same figures the result stores for that second
//! (docs/telemetry.md). An observer of the run: the run thread only formats a
//! line and offers it to a bounded queue; a writer thread of its own writes
//! it. A reader that falls behind (a full pipe) or goes away makes lines drop
//! and be counted, and the run never waits for it: the counts go into the
//! result (`live_json`).

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::output_path::{Destination, OutputError};
use crate::run::live::{LiveFigures, StreamCounts};
use crate::run::RunObserver;

/// Lines the queue holds for a reader that has fallen behind: about a minute
/// of a single point's lines, a few seconds of a --detail run of many workers.
pub const QUEUE_LINES: usize = 64;

/// How long the end of the run waits for the queued lines to be written.
const FINAL_WAIT: Duration = Duration::from_secs(2);

/// The writer of a --live-json stream: an observer of the run.
pub struct LiveJson {
    tx: Option<SyncSender<String>>,
    counts: Arc<StreamCounts>,
    written: Arc<AtomicU64>,
    done: Receiver<()>,
    detail: bool,
}

impl LiveJson {
    /// Opens the stream (stdout with `-`, else the checked file) and
    /// starts its writer; `counts` is the run's (RunContext::live_json).
    pub fn open(to: &Destination, detail: bool, counts: Arc<StreamCounts>) -> Result<LiveJson, OutputError> {
        // A file is truncated by the writer at the first line, not here: a
        // run that fails before its first second leaves an earlier stream as it was.
        let out = match to {
            Destination::File(f) => f.open_stream()?,
            Destination::Stdout => stdout_copy().map_err(|e| OutputError {
                flag: "--live-json".into(),
                path: "-".into(),
                problem: format!("cannot write to stdout: {e}"),
            })?,
        };
        let truncate_first = matches!(to, Destination::File(_));
        Ok(Self::start(out, truncate_first, detail, counts, QUEUE_LINES))
    }

    /// `truncate_first`: the file is truncated at the first line (a file
    /// named by the user; never stdout, which may append to the user's file).
    fn start(out: File, truncate_first: bool, detail: bool, counts: Arc<StreamCounts>, queue: usize) -> LiveJson {
        let (tx, rx) = mpsc::sync_channel::<String>(queue);
        let (done_tx, done) = mpsc::channel();
        let written = Arc::new(AtomicU64::new(0));
        let (c, w) = (counts.clone(), written.clone());
        // Not joined: a writer blocked on a reader that never reads must not hold the process.
        std::thread::Builder::new()
            .name("lunmark-live-json".into())
            .spawn(move || {
                write_lines(out, truncate_first, rx, &c, &w);
                let _ = done_tx.send(());
            })
            .map(|_| ())
            .unwrap_or_else(|e| crate::ewriteln!("warning: --live-json: could not start its writer ({e}); every line is dropped"));
        LiveJson { tx: Some(tx), counts, written, done, detail }
    }

    /// Offers a line to the writer without waiting: a full queue or a writer gone drops it.
    fn offer(&self, line: String) {
        self.counts.lines.fetch_add(1, Ordering::Relaxed);
        let Some(tx) = &self.tx else { return };
        match tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// After the run: lets the writer finish the queued lines for up to
    /// FINAL_WAIT, and says how many it could not write after the result was
    /// stored (the result's count is as of the run's end).
    pub fn close(mut self) {
        self.tx = None;
        let finished = self.done.recv_timeout(FINAL_WAIT).is_ok();
        let lines = self.counts.lines.load(Ordering::Relaxed);
        let dropped = self.counts.dropped.load(Ordering::Relaxed);
        let unwritten = lines.saturating_sub(dropped).saturating_sub(self.written.load(Ordering::Relaxed));
        if !finished && unwritten > 0 {
            crate::ewriteln!(
                "note: --live-json: {} still queued when the run ended were not taken by the reader within {} s",
                crate::units::counted(unwritten, "line"),
                FINAL_WAIT.as_secs()
            );
        }
    }
}

impl RunObserver for LiveJson {
    fn tick(&mut self, f: &LiveFigures<'_>) {
        for line in lines(f, self.detail) {
            self.offer(line);
        }
    }
}

/// A descriptor of its own for stdout, so the writer never takes Rust's
/// stdout lock (a writer blocked on a full pipe would hold it at exit).
fn stdout_copy() -> std::io::Result<File> {
    use std::os::fd::FromRawFd;
    // SAFETY: dup of descriptor 1 returns a new descriptor we own (or -1, checked).
    let fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh, valid descriptor owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The writer thread: each line in one write; after the first failure (the
/// reader gone) the rest are counted as dropped.
fn write_lines(mut out: File, truncate_first: bool, rx: Receiver<String>, counts: &StreamCounts, written: &AtomicU64) {
    block_sigpipe();
    let mut broken = false;
    let mut truncate = truncate_first;
    for line in rx {
        if std::mem::take(&mut truncate) {
            broken = out.set_len(0).is_err();
        }
        broken = broken || out.write_all(line.as_bytes()).is_err();
        if broken {
            counts.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            written.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `lunmark run` ignores SIGPIPE today (only the commands that just print end
/// on it); blocked on this thread too, so that a --live-json reader that goes
/// away can never end the run should that change: the write fails with EPIPE.
fn block_sigpipe() {
    // SAFETY: sigset_t is plain data initialised by sigemptyset; pthread_sigmask changes only this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// The lines of one update: the point's, then with `detail` each rank's (under
/// MPI), each worker's (one process) and each target's.
pub fn lines(f: &LiveFigures<'_>, detail: bool) -> Vec<String> {
    let secs = |d: Duration| (d.as_secs_f64() * 1e3).round() / 1e3;
    let mut progress = Map::new();
    progress.insert("point".into(), json!(f.point));
    progress.insert("points".into(), json!(f.points));
    progress.insert("label".into(), json!(f.label));
    progress.insert("phase".into(), json!(f.phase));
    progress.insert("elapsed_s".into(), json!(secs(f.elapsed)));
    progress.insert("total_s".into(), json!(f.total.map(secs)));
    progress.insert("remaining_s".into(), json!(f.total.map(|t| secs(t.saturating_sub(f.elapsed)))));
    progress.insert("unix_time".into(), json!(unix_now()));
    if let Some(s) = &f.stall {
        progress.insert("stall".into(), json!(s));
    }
    let Some(m) = f.measured else {
        return vec![line("point", None, &progress, None)];
    };
    let mut figures = with_counts(&m.interval, &m.slice);
    figures.insert("in_flight".into(), json!(m.in_flight));
    if !m.ranks.is_empty() || !m.ranks_missing.is_empty() {
        // Under MPI: the job's second, and the ranks whose share it lacks (not come in time).
        figures.insert("ranks".into(), json!(m.ranks.len()));
        figures.insert("ranks_missing".into(), json!(m.ranks_missing));
    }
    let mut out = vec![line("point", None, &progress, Some(figures))];
    if detail {
        out.extend(m.ranks.iter().map(|(r, i)| line("rank", Some(json!(r)), &progress, Some(as_map(i)))));
        out.extend(m.workers.iter().map(|(w, i)| line("worker", Some(json!(w)), &progress, Some(as_map(i)))));
        out.extend(m.per_target.iter().enumerate().map(|(t, (uri, i, s))| {
            let mut figures = with_counts(i, s);
            // The URI alone does not tell apart a target given twice.
            figures.insert("target_index".into(), json!(t));
            line("target", Some(json!(uri)), &progress, Some(figures))
        }));
    }
    out
}

/// An interval's figures with the second's counts.
fn with_counts(i: &crate::results::model::Interval, s: &crate::metrics::IntervalSlice) -> Map<String, Value> {
    let mut figures = as_map(i);
    for (k, v) in [
        ("ios_read", s.ios_read),
        ("ios_written", s.ios_written),
        ("ios_trimmed", s.ios_trimmed),
        ("bytes_read", s.bytes_read),
        ("bytes_written", s.bytes_written),
    ] {
        figures.insert(k.into(), json!(v));
    }
    figures
}

/// A line: `kind`, then whose (the worker's index, the target's URI), the progress, the figures.
fn line(kind: &str, whose: Option<Value>, progress: &Map<String, Value>, figures: Option<Map<String, Value>>) -> String {
    let mut o = Map::new();
    o.insert("kind".into(), json!(kind));
    if let Some(w) = whose {
        o.insert(kind.into(), w);
    }
    o.extend(progress.clone());
    o.extend(figures.unwrap_or_default());
    let mut text = Value::Object(o).to_string();
    text.push('\n');
    text
}

fn as_map(i: &crate::results::model::Interval) -> Map<String, Value> {
    match serde_json::to_value(i) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn unix_now() -> f64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    (t.as_secs_f64() * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp_tick() -> LiveFigures<'static> {
        LiveFigures {
            point: 1,
            points: 2,
            label: "bs=\"4k\"\n",
            phase: "ramp",
            elapsed: Duration::from_secs(1),
            total: Some(Duration::from_secs(3)),
            second: None,
            stall: None,
            measured: None,
        }
    }

    /// A writer whose queue holds 2 lines and whose reader never reads (a pipe
    /// filled beforehand): ticks return at once, and every line the queue could
    /// not take is counted as dropped; a label's quote and newline stay inside its JSON string.
    #[test]
    fn a_reader_that_never_reads_drops_lines_without_blocking_the_run() {
        let (r, w) = pipe();
        // Fill the pipe so that the writer's first write blocks.
        set_nonblocking(&w);
        let mut wf = w.try_clone().unwrap();
        while wf.write(&[b'x'; 4096]).is_ok() {}
        clear_nonblocking(&w);
        let counts = Arc::new(StreamCounts::default());
        let mut live = LiveJson::start(w, false, false, counts.clone(), 2);
        let t = std::time::Instant::now();
        for _ in 0..20 {
            live.tick(&ramp_tick());
        }
        assert!(t.elapsed() < Duration::from_millis(500), "ticks waited for the reader: {:?}", t.elapsed());
        assert_eq!(counts.lines.load(Ordering::Relaxed), 20);
        // One line taken by the blocked writer, two queued: the rest dropped.
        let dropped = counts.dropped.load(Ordering::Relaxed);
        assert!((17..=18).contains(&dropped), "dropped {dropped}");
        drop(r);
        let l = lines(&ramp_tick(), false);
        let v: Value = serde_json::from_str(l[0].trim_end()).unwrap();
        assert_eq!(v["label"], "bs=\"4k\"\n");
        assert_eq!(v["remaining_s"], 2.0);
        assert_eq!(l[0].matches('\n').count(), 1, "one line: {}", l[0]);
    }

    fn pipe() -> (File, File) {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two fresh descriptors we then own.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both descriptors are fresh and owned by nothing else.
        unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
    }

    fn set_nonblocking(f: &File) {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl with integer arguments on a descriptor we own.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    }

    fn clear_nonblocking(f: &File) {
        use std::os::fd::AsRawFd;
        // SAFETY: as above.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, 0) };
    }
}
