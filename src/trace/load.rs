//! Loading a trace file in any format lunmark reads: lunmark's binary trace
//! (told by its magic), MSR Cambridge CSV (by the shape of its first line) or
//! `blkparse` text, detected or as the user names it (`--replay-format`).

use std::path::Path;

use crate::input_path::{BINARY_TRACE, TEXT_TRACE};

use super::lines::Next;
use super::lunmark::{read_full, TraceReader, MAGIC};
use super::record::TraceRecord;

/// Where a loaded trace came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    /// lunmark's binary trace (what `run --trace` writes).
    #[serde(rename = "lunmark")]
    Binary,
    Blkparse,
    /// The CSV of the MSR Cambridge traces (SNIA IOTTA).
    Msr,
}

impl TraceKind {
    /// The format's name in a sentence ("MSR Cambridge CSV").
    pub fn describe(self) -> &'static str {
        match self {
            TraceKind::Binary => "a lunmark binary trace",
            TraceKind::Blkparse => "blkparse output",
            TraceKind::Msr => "MSR Cambridge CSV",
        }
    }

    /// The name users give (`--replay-format`) and see.
    pub fn name(self) -> &'static str {
        match self {
            TraceKind::Binary => "lunmark",
            TraceKind::Blkparse => "blkparse",
            TraceKind::Msr => "msr",
        }
    }
}

/// A trace as loaded from a file, with what the formats say beyond the I/Os.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedTrace {
    pub kind: TraceKind,
    pub records: Vec<TraceRecord>,
    /// The name of each target index of `records`: "usr/0" (MSR), "8:0"
    /// (blkparse), "0" (a lunmark trace: the index in the run that recorded it).
    pub devices: Vec<String>,
    /// Events of the trace that are not reads or writes (blkparse discards and
    /// flushes), or whose time is not one (`bad_times`), skipped.
    pub skipped: u64,
    /// Events skipped for a time that is not one (NaN, negative, absurd).
    pub bad_times: u64,
    /// Records that came before an earlier-timed one in the file: the records
    /// are sorted by their recorded time (stably), and this many moved.
    pub reordered: u64,
}

/// Sorts records by their recorded time, keeping the file's order among
/// equal times: a replay issues them in time order, and a record issued
/// "late" only because the file listed it after a later one would count
/// lateness lunmark did not cause. The count of records that were out of order.
fn in_time_order(records: &mut [TraceRecord]) -> u64 {
    let mut latest = 0;
    let mut out_of_order = 0;
    for r in records.iter() {
        if r.t_ns < latest {
            out_of_order += 1;
        }
        latest = latest.max(r.t_ns);
    }
    if out_of_order > 0 {
        records.sort_by_key(|r| r.t_ns);
    }
    out_of_order
}

/// Loads a trace, telling the binary format (by its magic) from `blkparse` text.
pub fn load_trace(path: &Path) -> anyhow::Result<(TraceKind, Vec<TraceRecord>)> {
    let t = load_trace_as(path, None)?;
    Ok((t.kind, t.records))
}

/// Loads a trace in the format given, or the one detected: the binary format
/// by its magic, MSR CSV by the shape of its first line, else blkparse text.
pub fn load_trace_as(path: &Path, kind: Option<TraceKind>) -> anyhow::Result<LoadedTrace> {
    let mut t = load_as_written(path, kind)?;
    t.reordered = in_time_order(&mut t.records);
    Ok(t)
}

/// `load_trace_as` with the records in the file's order.
fn load_as_written(path: &Path, kind: Option<TraceKind>) -> anyhow::Result<LoadedTrace> {
    use crate::output_path::describe_io;
    let mut start = [0u8; 8];
    // The limit is the text formats' until the magic tells a binary trace (whose reader checks its own).
    let limit = if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > TEXT_TRACE.limit) { &BINARY_TRACE } else { &TEXT_TRACE };
    let mut file = crate::input_path::open(path, limit)?;
    let got = read_full(&mut file, &mut start).map_err(|e| anyhow::anyhow!("reading the trace {}: {}", path.display(), describe_io(&e)))?;
    let binary = got == start.len() && &start == MAGIC;
    let name = path.display().to_string();
    if kind == Some(TraceKind::Binary) || (kind.is_none() && binary) {
        let records = TraceReader::open(path)?.collect::<Result<Vec<_>, _>>()?;
        let mut seen: Vec<u16> = records.iter().map(|r| r.target).collect();
        seen.sort_unstable();
        seen.dedup();
        // Index order: target i of the recording run stays target i, even when
        // target 1 issued first. Indexes with no record still get a name.
        let devices = (0..seen.last().map_or(0, |&m| m as usize + 1)).map(|i| i.to_string()).collect();
        return Ok(LoadedTrace { kind: TraceKind::Binary, records, devices, skipped: 0, bad_times: 0, reordered: 0 });
    }
    if binary {
        anyhow::bail!(
            "{name} is a lunmark binary trace (it starts with LMTRACE1), not {}: drop --replay-format or give lunmark",
            kind.map_or("", |k| k.name())
        );
    }
    // The text is read line by line (`lines`): the first non-empty line tells
    // MSR CSV, a scan up to the first event line tells blkparse.
    let mut first = String::new();
    super::lines::for_each_in(path, |_, line| {
        let line = line.unwrap_or("");
        if line.trim().is_empty() {
            return Ok(Next::More);
        }
        first = line.to_string();
        Ok(Next::Stop)
    })?;
    let is_msr = super::msr::looks_like_msr(&first);
    let is_blkparse = || -> anyhow::Result<bool> {
        let mut found = false;
        super::lines::for_each_in(path, |_, line| {
            found = line.is_some_and(super::blkparse::looks_like_blkparse);
            Ok(if found { Next::Stop } else { Next::More })
        })?;
        Ok(found)
    };
    // A format given that the file does not have: say so, and what it looks
    // like, rather than the auto-detection's "neither ... nor ..." message.
    let given_but = |k: TraceKind, looks: Option<TraceKind>| {
        anyhow::anyhow!(
            "{name} is not {} (--replay-format {}){}",
            k.describe(),
            k.name(),
            looks.map_or(String::new(), |l| format!(
                ": it looks like {}; give --replay-format {} or drop --replay-format to detect it",
                l.describe(),
                l.name()
            ))
        )
    };
    if kind == Some(TraceKind::Blkparse) && !is_blkparse()? {
        return Err(given_but(TraceKind::Blkparse, is_msr.then_some(TraceKind::Msr)));
    }
    if kind == Some(TraceKind::Msr) && !is_msr && is_blkparse()? {
        return Err(given_but(TraceKind::Msr, Some(TraceKind::Blkparse)));
    }
    let msr = kind == Some(TraceKind::Msr) || (kind.is_none() && is_msr);
    if msr {
        let t = super::msr::read_msr(path, &name)?;
        return Ok(LoadedTrace {
            kind: TraceKind::Msr,
            records: t.records,
            devices: t.devices,
            skipped: t.bad_times,
            bad_times: t.bad_times,
            reordered: 0,
        });
    }
    let t = super::blkparse::read_blkparse_full(path, &name)?;
    Ok(LoadedTrace {
        kind: TraceKind::Blkparse,
        records: t.records,
        devices: t.devices,
        skipped: t.skipped,
        bad_times: t.bad_times,
        reordered: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceWriter;

    #[test]
    fn files_round_trip_and_load_trace_detects_the_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.lmtrace");
        let mut w = TraceWriter::create(&path).unwrap();
        for r in crate::trace::lunmark::tests::sample() {
            w.record(r.op, r.target, r.offset, r.len, r.t_ns).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(load_trace(&path).unwrap(), (TraceKind::Binary, crate::trace::lunmark::tests::sample()));
        let msr = dir.path().join("t.csv");
        std::fs::write(&msr, "128166372003061629,usr,0,Read,4096,4096,10\n128166372003061639,usr,1,Write,0,512,10\n").unwrap();
        let t = load_trace_as(&msr, None).unwrap();
        assert_eq!((t.kind, t.records.len(), t.devices.clone()), (TraceKind::Msr, 2, vec!["usr/0".to_string(), "usr/1".to_string()]));
        assert_eq!(t.records[1].t_ns, 1000);
        let e = load_trace_as(&path, Some(TraceKind::Msr)).unwrap_err().to_string();
        assert!(e.contains("is a lunmark binary trace"), "{e}");
    }
}
