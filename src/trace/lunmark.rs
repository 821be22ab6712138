//! A compact binary trace of an I/O stream, so that a run (or a `blkparse`
//! capture) can be replayed through cache models offline. Recording must cost
//! next to nothing per I/O: each record is a fixed 20-byte little-endian
//! struct, encoded on the stack and appended to a buffered writer.
//!
//! # Format, version 1 (also in docs/trace-format.md)
//!
//! Header, 16 bytes:
//!
//! | bytes | field        | value                                  |
//! |-------|--------------|----------------------------------------|
//! | 0..8  | magic        | ASCII `LMTRACE1`                       |
//! | 8..10 | version      | u16 LE, 1                              |
//! | 10..12| record size  | u16 LE, 20                             |
//! | 12..16| reserved     | zero                                   |
//!
//! Then records, 20 bytes each, until the end of the file:
//!
//! | bytes  | field  | meaning                                                      |
//! |--------|--------|--------------------------------------------------------------|
//! | 0..4   | dt_us  | u32 LE, µs since the previous record (the first: since start) |
//! | 4      | op     | 0 read, 1 write, 2 time gap (no I/O; only dt_us counts), 3 trim |
//! | 5      | -      | reserved, zero                                               |
//! | 6..8   | target | u16 LE, index of the target (device or file)                 |
//! | 8..16  | offset | u64 LE, byte offset in the target                            |
//! | 16..20 | len    | u32 LE, bytes                                                |
//!
//! Times are kept at µs resolution; the writer derives each delta from the
//! absolute µs time, so rounding never accumulates. A gap longer than
//! `u32::MAX` µs (71 minutes) is written as time-gap records first. Times that
//! go backwards (records from several workers) are stored as a zero delta:
//! record order is the access order, times never decrease when read back.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::workload::Op;

pub const MAGIC: &[u8; 8] = b"LMTRACE1";
pub const VERSION: u16 = 1;
pub const HEADER_LEN: usize = 16;
pub const RECORD_LEN: usize = 20;

const OP_READ: u8 = 0;
const OP_WRITE: u8 = 1;
const OP_GAP: u8 = 2;
const OP_TRIM: u8 = 3;

pub use super::record::TraceRecord;

#[derive(Debug, Error)]
pub enum TraceError {
    /// The io::Error is in the message and deliberately not a `source` (printed once).
    #[error("{path}: {}", crate::output_path::describe_io(.error))]
    Io { path: PathBuf, error: io::Error },
    /// Not a regular file within the limit (`input_path`).
    #[error(transparent)]
    Input(Box<crate::input_path::InputError>),
    #[error("{path} is not a lunmark binary trace: it starts with {found:?}, not \"LMTRACE1\"")]
    BadMagic { path: PathBuf, found: String },
    #[error(
        "{path}: trace version {version} with {record_len}-byte records is not supported; \
         this lunmark reads version 1 with 20-byte records (write the trace again with this version)"
    )]
    Unsupported { path: PathBuf, version: u16, record_len: u16 },
    #[error(
        "{path}: truncated {what} at byte offset {offset}: {got} of {want} bytes; \
         the trace was cut short (was the writer finished?). The records before it are intact"
    )]
    Truncated { path: PathBuf, what: &'static str, offset: u64, got: usize, want: usize },
    #[error("{path}: record at byte offset {offset} has op {op}; allowed are 0 (read), 1 (write) and 2 (time gap)")]
    BadOp { path: PathBuf, offset: u64, op: u8 },
}

/// Appends records to a trace. No allocation per record; call `finish` to flush.
pub struct TraceWriter<W: Write> {
    out: W,
    /// Absolute time of the previous record, in µs.
    last_us: u64,
    records: u64,
}

impl TraceWriter<BufWriter<File>> {
    /// Creates `path` (or empties it, when it is a regular file: anything else
    /// is refused by `output_path`, the guard of every output) and writes the
    /// header. Errors name `--trace` and the path once.
    pub fn create(path: &Path) -> io::Result<Self> {
        let out = crate::output_path::check("--trace", path, crate::output_path::Mode::Stream).map_err(io::Error::other)?;
        let file = out.create_stream().map_err(io::Error::other)?;
        TraceWriter::new(BufWriter::with_capacity(1 << 16, file)).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("--trace {}: writing the header failed: {}", path.display(), crate::output_path::describe_io(&e)),
            )
        })
    }
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut header = [0u8; HEADER_LEN];
        header[0..8].copy_from_slice(MAGIC);
        header[8..10].copy_from_slice(&VERSION.to_le_bytes());
        header[10..12].copy_from_slice(&(RECORD_LEN as u16).to_le_bytes());
        out.write_all(&header)?;
        Ok(TraceWriter { out, last_us: 0, records: 0 })
    }

    /// Appends one I/O issued `t_ns` after the start of the trace.
    #[inline]
    pub fn record(&mut self, op: Op, target: u16, offset: u64, len: u32, t_ns: u64) -> io::Result<()> {
        let now_us = t_ns / 1000;
        let mut dt = now_us.saturating_sub(self.last_us);
        self.last_us = self.last_us.max(now_us);
        while dt > u32::MAX as u64 {
            self.out.write_all(&encode(u32::MAX, OP_GAP, 0, 0, 0))?;
            dt -= u32::MAX as u64;
        }
        let code = match op {
            Op::Read => OP_READ,
            Op::Write => OP_WRITE,
            Op::Trim => OP_TRIM,
            // Syncs have no range: a trace holds the I/Os on ranges only.
            Op::Sync | Op::DataSync => return Ok(()),
        };
        self.records += 1;
        self.out.write_all(&encode(dt as u32, code, target, offset, len))
    }

    /// The number of I/O records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[inline]
fn encode(dt_us: u32, op: u8, target: u16, offset: u64, len: u32) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[0..4].copy_from_slice(&dt_us.to_le_bytes());
    r[4] = op;
    r[6..8].copy_from_slice(&target.to_le_bytes());
    r[8..16].copy_from_slice(&offset.to_le_bytes());
    r[16..20].copy_from_slice(&len.to_le_bytes());
    r
}

/// Reads a binary trace record by record. Yields an error (and then stops) on a
/// truncated or invalid record, naming the file and the byte offset.
pub struct TraceReader<R: Read> {
    input: R,
    path: PathBuf,
    /// Byte offset of the next record.
    offset: u64,
    t_us: u64,
    done: bool,
}

impl TraceReader<BufReader<File>> {
    /// Opens `path` and checks its header.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let file = crate::input_path::open(path, &crate::input_path::BINARY_TRACE).map_err(|e| TraceError::Input(Box::new(e)))?;
        TraceReader::new(BufReader::with_capacity(1 << 16, file), path)
    }
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header; `path` names the source in errors.
    pub fn new(mut input: R, path: &Path) -> Result<Self, TraceError> {
        let path = path.to_path_buf();
        let mut header = [0u8; HEADER_LEN];
        let got = read_full(&mut input, &mut header).map_err(|error| TraceError::Io { path: path.clone(), error })?;
        if got < MAGIC.len() || &header[..8] != MAGIC {
            let found = String::from_utf8_lossy(&header[..got.min(8)]).into_owned();
            return Err(TraceError::BadMagic { path, found });
        }
        if got < HEADER_LEN {
            return Err(TraceError::Truncated { path, what: "header", offset: 0, got, want: HEADER_LEN });
        }
        let version = u16::from_le_bytes([header[8], header[9]]);
        let record_len = u16::from_le_bytes([header[10], header[11]]);
        if version != VERSION || record_len as usize != RECORD_LEN {
            return Err(TraceError::Unsupported { path, version, record_len });
        }
        Ok(TraceReader { input, path, offset: HEADER_LEN as u64, t_us: 0, done: false })
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            let mut r = [0u8; RECORD_LEN];
            let at = self.offset;
            let got = read_full(&mut self.input, &mut r).map_err(|error| TraceError::Io { path: self.path.clone(), error })?;
            if got == 0 {
                return Ok(None);
            }
            if got < RECORD_LEN {
                return Err(TraceError::Truncated { path: self.path.clone(), what: "record", offset: at, got, want: RECORD_LEN });
            }
            self.offset += RECORD_LEN as u64;
            self.t_us += u32::from_le_bytes(r[0..4].try_into().unwrap()) as u64;
            let op = match r[4] {
                OP_READ => Op::Read,
                OP_WRITE => Op::Write,
                OP_TRIM => Op::Trim,
                OP_GAP => continue,
                op => return Err(TraceError::BadOp { path: self.path.clone(), offset: at, op }),
            };
            return Ok(Some(TraceRecord {
                t_ns: self.t_us * 1000,
                op,
                target: u16::from_le_bytes([r[6], r[7]]),
                offset: u64::from_le_bytes(r[8..16].try_into().unwrap()),
                len: u32::from_le_bytes(r[16..20].try_into().unwrap()),
            }));
        }
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_record().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(super) fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Records at the edges of the format, shared with the loader's tests.
    pub(crate) fn sample() -> Vec<TraceRecord> {
        vec![
            TraceRecord { t_ns: 0, op: Op::Read, target: 0, offset: 0, len: 4096 },
            TraceRecord { t_ns: 5_000, op: Op::Write, target: 3, offset: 1 << 40, len: 1 << 20 },
            TraceRecord { t_ns: 5_000, op: Op::Read, target: 65535, offset: u64::MAX - 4095, len: u32::MAX },
            // A gap longer than u32::MAX µs: written as gap records.
            TraceRecord { t_ns: 10_000_000_000_000, op: Op::Write, target: 1, offset: 512, len: 512 },
        ]
    }

    fn write(records: &[TraceRecord]) -> Vec<u8> {
        let mut w = TraceWriter::new(Vec::new()).unwrap();
        for r in records {
            w.record(r.op, r.target, r.offset, r.len, r.t_ns).unwrap();
        }
        assert_eq!(w.records(), records.len() as u64);
        w.finish().unwrap()
    }

    fn read(bytes: &[u8]) -> Result<Vec<TraceRecord>, TraceError> {
        TraceReader::new(bytes, Path::new("mem.trace"))?.collect()
    }

    #[test]
    fn a_record_is_laid_out_as_documented() {
        // The example in docs/trace-format.md.
        let bytes = [0x0f, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0];
        assert_eq!(encode(15, OP_READ, 0, 8192, 4096), bytes);
        let mut w = TraceWriter::new(Vec::new()).unwrap();
        w.record(Op::Read, 0, 8192, 4096, 15_999).unwrap();
        let out = w.finish().unwrap();
        assert_eq!(out.len(), HEADER_LEN + RECORD_LEN);
        assert_eq!(&out[..HEADER_LEN], b"LMTRACE1\x01\x00\x14\x00\x00\x00\x00\x00");
        assert_eq!(out[HEADER_LEN..], bytes);
    }

    #[test]
    fn records_round_trip() {
        let bytes = write(&sample());
        assert_eq!(&bytes[..8], b"LMTRACE1");
        assert_eq!(read(&bytes).unwrap(), sample());
    }

    #[test]
    fn times_keep_microseconds_without_drift_and_never_go_back() {
        let mut w = TraceWriter::new(Vec::new()).unwrap();
        for i in 0..1000u64 {
            w.record(Op::Read, 0, i, 1, i * 1_700).unwrap(); // 1.7 µs apart
        }
        w.record(Op::Read, 0, 0, 1, 10).unwrap(); // out of order
        let got = read(&w.finish().unwrap()).unwrap();
        assert_eq!(got[999].t_ns, 999 * 1_700 / 1000 * 1000);
        assert_eq!(got[1000].t_ns, got[999].t_ns);
    }

    #[test]
    fn a_truncated_record_names_the_file_and_byte_offset() {
        let bytes = write(&sample());
        let cut = &bytes[..bytes.len() - 7];
        let err = read(cut).unwrap_err().to_string();
        let last = bytes.len() - RECORD_LEN;
        assert!(err.contains("mem.trace") && err.contains(&format!("byte offset {last}")) && err.contains("13 of 20"), "{err}");
    }

    #[test]
    fn bad_magic_and_short_header_are_reported() {
        let err = read(b"LMTRACE2xxxxxxxxxxxxxxxx").unwrap_err().to_string();
        assert!(err.contains("not a lunmark binary trace") && err.contains("LMTRACE2"), "{err}");
        let err = read(b"LMTRACE1\x01\x00").unwrap_err().to_string();
        assert!(err.contains("truncated header at byte offset 0"), "{err}");
        let mut bytes = write(&sample());
        bytes[8] = 9;
        let err = read(&bytes).unwrap_err().to_string();
        assert!(err.contains("version 9"), "{err}");
    }

    #[test]
    fn a_bad_op_is_reported() {
        let mut bytes = write(&sample()[..1]);
        bytes[HEADER_LEN + 4] = 7;
        let err = read(&bytes).unwrap_err().to_string();
        assert!(err.contains("byte offset 16 has op 7"), "{err}");
    }
}
