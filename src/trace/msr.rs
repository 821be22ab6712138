//! Reads the CSV of the MSR Cambridge block traces (SNIA IOTTA repository,
//! "MSR Cambridge Traces", Narayanan et al., FAST 2008), the traces most
//! caching research replays. One line per I/O, no header in the published
//! files (a header line naming the columns is accepted):
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166372003061629,usr,0,Read,7014609920,24576,41286
//! ```
//!
//! `Timestamp` is a Windows FILETIME: 100 ns ticks since 1601-01-01. Times are
//! kept relative to the earliest line, each line its own: a line listed after
//! a later-timed one keeps its time, and the loader sorts the records by time
//! and counts how many moved (`replay.reordered`), as for blkparse. `Type` is `Read` or `Write`;
//! anything else is refused, naming the line: the format has no other type.
//! `Offset` and `Size` are bytes. `ResponseTime` (the recorded service time, in
//! ticks) is read for checking only. Each `Hostname`/`DiskNumber` pair is a
//! device, named `host/disk` and numbered in order of first appearance.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Result};

use super::record::TraceRecord;
use crate::workload::Op;

/// Nanoseconds per FILETIME tick.
const NS_PER_TICK: u64 = 100;

/// A parsed MSR trace: its I/Os and the name of each device by index.
#[derive(Clone, Debug, PartialEq)]
pub struct MsrTrace {
    pub records: Vec<TraceRecord>,
    /// `host/disk` of each target index of `records`.
    pub devices: Vec<String>,
    /// Lines skipped for an absurd time: more than a year from the trace's
    /// first I/O (a capture covers days at most).
    pub bad_times: u64,
}

/// A year in the format's 100 ns ticks.
const YEAR_TICKS: u64 = 365 * 24 * 3600 * (1_000_000_000 / NS_PER_TICK);

/// True when `line` (the first non-empty line of a file) has the shape of an
/// MSR CSV line or its header: seven comma-separated fields, the first a
/// number and the fourth a word (or the header's `Timestamp`). Any Type word
/// passes, so a line of another Type reaches the parser, which names it
/// precisely ("Type 'Trim' is neither Read nor Write").
pub fn looks_like_msr(line: &str) -> bool {
    let f: Vec<&str> = line.trim().split(',').map(str::trim).collect();
    f.len() == 7
        && (f[0].eq_ignore_ascii_case("timestamp")
            || (f[0].parse::<u64>().is_ok() && !f[3].is_empty() && f[3].chars().all(|c| c.is_ascii_alphabetic())))
}

const SHAPE: &str =
    "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (for example 128166372003061629,usr,0,Read,7014609920,24576,41286)";

/// An MSR trace built one line at a time.
#[derive(Default)]
struct Collect {
    devices: Vec<String>,
    index: HashMap<(String, String), u16>,
    records: Vec<TraceRecord>,
}

impl Collect {
    /// Takes line `line_no` (`None`: longer than any MSR line), or says what is wrong with it.
    fn line(&mut self, name: &str, line_no: usize, raw: Option<&str>) -> Result<()> {
        let Some(raw) = raw else {
            bail!("{name}, line {line_no}: longer than {} KiB, which no MSR Cambridge line is: {SHAPE}", super::lines::MAX_LINE / 1024);
        };
        let line = raw.trim();
        if line.is_empty() {
            return Ok(());
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if self.records.is_empty() && f.first().is_some_and(|h| h.eq_ignore_ascii_case("timestamp")) {
            return Ok(());
        }
        if f.len() != 7 {
            bail!("{name}, line {line_no}: {} fields where an MSR Cambridge line has 7: {SHAPE}", f.len());
        }
        let number = |k: usize, what: &str| -> Result<u64> {
            f[k].parse::<u64>()
                .map_err(|_| anyhow::anyhow!("{name}, line {line_no}: {what} '{}' is not a whole number; the line must read {SHAPE}", f[k]))
        };
        let ticks = number(0, "Timestamp")?;
        let op = if f[3].eq_ignore_ascii_case("read") {
            Op::Read
        } else if f[3].eq_ignore_ascii_case("write") {
            Op::Write
        } else {
            bail!("{name}, line {line_no}: Type '{}' is neither Read nor Write, the only types of the MSR Cambridge format", f[3]);
        };
        let offset = number(4, "Offset")?;
        let size = number(5, "Size")?;
        number(6, "ResponseTime")?;
        let len = u32::try_from(size)
            .map_err(|_| anyhow::anyhow!("{name}, line {line_no}: Size {size} is above the largest transfer lunmark issues (4 GiB)"))?;
        let target = match self.index.get(&(f[1].to_string(), f[2].to_string())) {
            Some(&t) => t,
            None => {
                let t =
                    u16::try_from(self.devices.len()).map_err(|_| anyhow::anyhow!("{name}, line {line_no}: more than 65536 devices"))?;
                self.devices.push(format!("{}/{}", f[1], f[2]));
                self.index.insert((f[1].to_string(), f[2].to_string()), t);
                t
            }
        };
        // The ticks for now: `times_from_ticks` makes them times once all are read.
        self.records.push(TraceRecord { t_ns: ticks, op, target, offset, len });
        Ok(())
    }

    fn finish(mut self, name: &str) -> Result<MsrTrace> {
        if self.records.is_empty() {
            bail!("{name}: no I/O lines; an MSR Cambridge trace has one line per I/O: {SHAPE}");
        }
        let bad_times = times_from_ticks(&mut self.records);
        Ok(MsrTrace { records: self.records, devices: self.devices, bad_times })
    }
}

/// Parses MSR Cambridge CSV text (see the module doc); `name` is used in errors.
pub fn parse_msr(text: &str, name: &str) -> Result<MsrTrace> {
    let mut c = Collect::default();
    for (i, line) in text.lines().enumerate() {
        c.line(name, i + 1, Some(line))?;
    }
    c.finish(name)
}

/// `parse_msr` of the file at `path`, read line by line (memory holds the
/// records and one line, never the text).
pub fn read_msr(path: &Path, name: &str) -> Result<MsrTrace> {
    let mut c = Collect::default();
    super::lines::for_each_in(path, |no, line| c.line(name, no, line).map(|_| super::lines::Next::More))?;
    c.finish(name)
}

/// Turns the records' ticks (in `t_ns` until now) into nanoseconds from the
/// earliest record, each record keeping its own time: one listed after a
/// later-timed one is not moved to the time before it (that made a replay
/// issue it early, and a cache curve see a span that never was); the loader
/// sorts records by time and counts those that moved (`reordered`). A record
/// more than a year from the trace's median time is an absurd time, not an
/// I/O of the capture: skipped, and the count returned.
fn times_from_ticks(records: &mut Vec<TraceRecord>) -> u64 {
    let mut ticks: Vec<u64> = records.iter().map(|r| r.t_ns).collect();
    ticks.sort_unstable();
    let median = ticks.get(ticks.len() / 2).copied().unwrap_or(0);
    drop(ticks);
    let before = records.len();
    records.retain(|r| r.t_ns.abs_diff(median) <= YEAR_TICKS);
    let first = records.iter().map(|r| r.t_ns).min().unwrap_or(0);
    for r in records.iter_mut() {
        r.t_ns = (r.t_ns - first).saturating_mul(NS_PER_TICK);
    }
    (before - records.len()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
128166372003061629,usr,0,Read,7014609920,24576,41286
128166372003061629,usr,0,Write,4096,4096,1000
128166372016382155,proj,2,Write,1048576,65536,3000
128166372016392155,usr,0,read,8192,512,200
";

    #[test]
    fn lines_become_records_with_times_from_the_first() {
        let t = parse_msr(SAMPLE, "s.csv").unwrap();
        assert_eq!(t.devices, vec!["usr/0".to_string(), "proj/2".to_string()]);
        assert_eq!(t.records.len(), 4);
        assert_eq!(t.records[0], TraceRecord { t_ns: 0, op: Op::Read, target: 0, offset: 7014609920, len: 24576 });
        assert_eq!(t.records[2], TraceRecord { t_ns: 1_332_052_600, op: Op::Write, target: 1, offset: 1048576, len: 65536 });
        assert_eq!(t.records[3].t_ns, 1_333_052_600);
        assert_eq!(t.records[3].op, Op::Read);
    }

    #[test]
    fn a_header_is_skipped_and_detection_sees_both() {
        let text = format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{SAMPLE}");
        assert_eq!(parse_msr(&text, "h.csv").unwrap().records.len(), 4);
        assert!(looks_like_msr("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"));
        assert!(looks_like_msr(SAMPLE.lines().next().unwrap()));
        assert!(!looks_like_msr("  8,0    3        1     0.000000000  4162  Q   R 223490 + 8 [fio]"));
        // Another Type word is still MSR: the parser then names the Type.
        assert!(looks_like_msr("100,h,0,Trim,0,4096,1"));
        assert!(!looks_like_msr("100,h,0,12,0,4096,1"));
    }

    /// A line timed in the year 9999 (or first in the file) is counted as
    /// skipped; it made every later record wait until then.
    #[test]
    fn an_absurd_time_is_skipped_and_counted_wherever_it_is() {
        let absurd = "2650467743990000000,usr,0,Read,0,4096,1\n";
        for text in [format!("{SAMPLE}{absurd}{SAMPLE}"), format!("{absurd}{SAMPLE}")] {
            let t = parse_msr(&text, "t.csv").unwrap();
            assert_eq!(t.bad_times, 1);
            assert!(t.records.iter().all(|r| r.t_ns < 10_000_000_000), "{:?}", t.records);
            assert_eq!(t.records[0].t_ns, 0);
        }
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse_msr("128166372003061629,usr,0,Trim,0,4096,1\n", "t.csv").unwrap_err().to_string();
        assert!(e.contains("t.csv, line 1") && e.contains("Type 'Trim'"), "{e}");
        let e = parse_msr(&format!("{SAMPLE}128166372003061629,usr,0,Read,x,4096,1\n"), "t.csv").unwrap_err().to_string();
        assert!(e.contains("line 5") && e.contains("Offset 'x'"), "{e}");
        let e = parse_msr("1,2,3\n", "t.csv").unwrap_err().to_string();
        assert!(e.contains("3 fields"), "{e}");
    }

    /// A line listed after a later-timed one keeps its own time (it was
    /// moved to the time before it), counted from the earliest line.
    #[test]
    fn each_line_keeps_its_own_time() {
        let t = parse_msr("200,a,0,Read,0,512,1\n100,a,0,Read,512,512,1\n300,a,0,Read,0,512,1\n", "b.csv").unwrap();
        let times: Vec<u64> = t.records.iter().map(|r| r.t_ns).collect();
        assert_eq!(times, vec![10_000, 0, 20_000]);
    }
}
