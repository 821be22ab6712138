//! Reads the default text output of `blkparse` (blktrace), so that a trace
//! captured from a real application can be fed to the cache models without
//! converting it first. A line of interest looks like
//!
//! ```text
//!   8,0    3        1     0.000000000  1234  Q   R 223490 + 8 [fio]
//!   dev   cpu     seq     time (s)      pid act rwbs sector + sectors [process]
//! ```
//!
//! The queued (Q) events are taken: one per I/O the application issued, before
//! merging or splitting. A capture filtered to dispatches only has no Q events;
//! then the D (dispatched) events are taken. RWBS containing R is a read,
//! containing W a write; everything else (discards, bare flushes, zero-length
//! events) is skipped. Lines that are not events (plug/unplug, the per-CPU and
//! total summary blocks at the end) are ignored. Each device ("8,0") becomes a
//! target, numbered in order of first appearance.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Result};

use super::lines::Next;
use super::record::TraceRecord;
use crate::workload::Op;

const SECTOR: u64 = 512;

/// One parsed event line.
#[derive(Clone, Debug, PartialEq)]
struct Event<'a> {
    device: &'a str,
    /// None when the time is not one (NaN, negative, beyond `MAX_TIME_NS`):
    /// such an event is counted as skipped, never dropped unsaid.
    t_ns: Option<u64>,
    action: &'a str,
    rwbs: &'a str,
    sector: u64,
    sectors: u64,
}

/// Parses one line, or None when it is not an event with a sector range.
/// True when `line` has the shape of a blkparse event line (used to tell
/// which format a file looks like when the one given does not fit).
pub fn looks_like_blkparse(line: &str) -> bool {
    parse_line(line).is_some()
}

fn parse_line(line: &str) -> Option<Event<'_>> {
    let f: Vec<&str> = line.split_whitespace().take(10).collect();
    if f.len() < 10 || f[8] != "+" {
        return None;
    }
    let (major, minor) = f[0].split_once(',')?;
    major.parse::<u32>().ok()?;
    minor.parse::<u32>().ok()?;
    f[1].parse::<u32>().ok()?;
    f[2].parse::<u64>().ok()?;
    Some(Event {
        device: f[0],
        t_ns: parse_seconds(f[3]).filter(|&t| t <= MAX_TIME_NS),
        action: f[5],
        rwbs: f[6],
        sector: f[7].parse().ok()?,
        sectors: f[9].parse().ok()?,
    })
}

/// The latest time an event of a capture can have: blkparse counts from the
/// start of the capture, and no capture runs for a year.
const MAX_TIME_NS: u64 = 365 * 24 * 3600 * 1_000_000_000;

/// "12.000345678" -> 12_000_345_678 ns, exactly (no float rounding).
fn parse_seconds(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_ns: u64 = if frac.is_empty() { 0 } else { frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32) };
    whole.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

fn op_of(rwbs: &str) -> Option<Op> {
    if rwbs.contains('R') {
        Some(Op::Read)
    } else if rwbs.contains('W') {
        Some(Op::Write)
    } else {
        None
    }
}

/// Parses `blkparse` text (see the module doc); `name` is used in errors.
pub fn parse_blkparse(text: &str, name: &str) -> Result<Vec<TraceRecord>> {
    Ok(parse_blkparse_full(text, name)?.records)
}

/// A parsed `blkparse` capture: its I/Os, the devices by target index, and
/// the events of the chosen action that are not reads or writes with data.
#[derive(Clone, Debug, PartialEq)]
pub struct BlkparseTrace {
    pub records: Vec<TraceRecord>,
    /// `major:minor` of each target index of `records` (as `lsblk` names them).
    pub devices: Vec<String>,
    /// Queued (or dispatched) events skipped: discards, flushes, zero-length
    /// events, and those whose time is not one (`bad_times` of them).
    pub skipped: u64,
    /// Events skipped for a time that is not one: NaN, negative, absurd.
    pub bad_times: u64,
}

/// The error for a file with no event line at all.
fn no_events(name: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{name} is neither a lunmark binary trace (no LMTRACE1 magic), MSR Cambridge CSV nor blkparse output: no line has the shape \
         \"  8,0    3        1     0.000000000  1234  Q   R 223490 + 8 [fio]\" \
         (device, cpu, sequence, seconds, pid, action, RWBS, sector + sectors). \
         Produce it with `blkparse -i TRACE` (default format) or record with lunmark's trace writer"
    )
}

/// The records of one action (Q, else D), built one event line at a time.
struct Collect {
    action: &'static str,
    events: u64,
    targets: HashMap<String, u16>,
    trace: BlkparseTrace,
}

impl Collect {
    fn new(any_queued: bool) -> Collect {
        let trace = BlkparseTrace { records: Vec::new(), devices: Vec::new(), skipped: 0, bad_times: 0 };
        Collect { action: if any_queued { "Q" } else { "D" }, events: 0, targets: HashMap::new(), trace }
    }

    fn line(&mut self, line: &str) {
        let Some(e) = parse_line(line) else { return };
        self.events += 1;
        if e.action != self.action {
            return;
        }
        let t = &mut self.trace;
        let Some(op) = op_of(e.rwbs).filter(|_| e.sectors > 0) else {
            t.skipped += 1;
            return;
        };
        let Some(t_ns) = e.t_ns else {
            (t.skipped, t.bad_times) = (t.skipped + 1, t.bad_times + 1);
            return;
        };
        let target = match self.targets.get(e.device) {
            Some(&target) => target,
            None => {
                let next = self.targets.len() as u16;
                t.devices.push(e.device.replace(',', ":"));
                self.targets.insert(e.device.to_string(), next);
                next
            }
        };
        let len = e.sectors.saturating_mul(SECTOR).min(u32::MAX as u64) as u32;
        t.records.push(TraceRecord { t_ns, op, target, offset: e.sector.saturating_mul(SECTOR), len });
    }

    fn finish(self, name: &str) -> Result<BlkparseTrace> {
        if self.events == 0 {
            return Err(no_events(name));
        }
        if self.trace.records.is_empty() {
            bail!(
                "{name}: {} blkparse event lines, but no queued (Q) or dispatched (D) read or write with a length; \
                 capture with `blktrace -d DEV` without an action filter that drops Q and D",
                self.events
            );
        }
        Ok(self.trace)
    }
}

fn is_queued(line: &str) -> bool {
    parse_line(line).is_some_and(|e| e.action == "Q")
}

/// `parse_blkparse` with device names and the count of skipped events.
pub fn parse_blkparse_full(text: &str, name: &str) -> Result<BlkparseTrace> {
    let mut c = Collect::new(text.lines().any(is_queued));
    text.lines().for_each(|l| c.line(l));
    c.finish(name)
}

/// `parse_blkparse_full` of the file at `path`, read line by line twice (is
/// there a Q event; then the events of the action taken), so memory holds
/// the records and one line, never the text.
pub fn read_blkparse_full(path: &Path, name: &str) -> Result<BlkparseTrace> {
    let mut any_queued = false;
    super::lines::for_each_in(path, |_, line| {
        any_queued = line.is_some_and(is_queued);
        Ok(if any_queued { Next::Stop } else { Next::More })
    })?;
    let mut c = Collect::new(any_queued);
    super::lines::for_each_in(path, |_, line| {
        line.inspect(|l| c.line(l));
        Ok(Next::More)
    })?;
    c.finish(name)
}

/// Reads a `blkparse` text file (see the module doc).
pub fn read_blkparse(path: &Path) -> Result<Vec<TraceRecord>> {
    Ok(read_blkparse_full(path, &path.display().to_string())?.records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/blkparse/sample.txt")
    }

    #[test]
    fn the_fixture_gives_its_queued_reads_and_writes() {
        let records = read_blkparse(&fixture()).unwrap();
        let r = |t_ns, op, target, sector: u64, sectors: u64| TraceRecord {
            t_ns,
            op,
            target,
            offset: sector * 512,
            len: (sectors * 512) as u32,
        };
        assert_eq!(records.len(), 13, "{records:#?}");
        assert_eq!(records[0], r(0, Op::Read, 0, 223490, 8));
        assert_eq!(records[1], r(160_004, Op::Write, 0, 1048576, 16));
        assert!(records.iter().all(|x| x.len > 0), "the flush with no data is skipped");
        assert_eq!(records.iter().filter(|x| x.op == Op::Write).count(), 4);
        assert_eq!(records.iter().filter(|x| x.target == 1).count(), 1, "the second device is the second target");
        assert!(records.windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        let full = parse_blkparse_full(&std::fs::read_to_string(fixture()).unwrap(), "f").unwrap();
        assert_eq!(full.devices, vec!["8:0".to_string(), "8:16".to_string()]);
        assert!(full.skipped >= 1, "the bare flush is counted as skipped");
    }

    #[test]
    fn dispatches_are_used_when_there_are_no_queue_events() {
        let text = "  8,16   0        1     1.5  77  D  RA 100 + 8 [kworker]\n  8,16   0        2     1.6  0  C  RA 100 + 8 [0]\n";
        let records = parse_blkparse(text, "d.txt").unwrap();
        assert_eq!(records, vec![TraceRecord { t_ns: 1_500_000_000, op: Op::Read, target: 0, offset: 51200, len: 4096 }]);
    }

    #[test]
    fn text_that_is_not_blkparse_is_rejected_with_the_expected_shape() {
        let err = parse_blkparse("hello\nworld 1 2 3\n", "notes.txt").unwrap_err().to_string();
        assert!(err.contains("notes.txt") && err.contains("Q   R 223490 + 8 [fio]"), "{err}");
        let err = parse_blkparse("  8,0 0 1 0.1 5 C R 8 + 8 [0]\n", "c.txt").unwrap_err().to_string();
        assert!(err.contains("no queued (Q) or dispatched (D)"), "{err}");
    }

    #[test]
    fn seconds_parse_exactly() {
        assert_eq!(parse_seconds("0.000000001"), Some(1));
        assert_eq!(parse_seconds("12.5"), Some(12_500_000_000));
        assert_eq!(parse_seconds("3"), Some(3_000_000_000));
        assert_eq!(parse_seconds("1.0000000001"), None);
        assert_eq!(parse_seconds("x.1"), None);
    }
}
