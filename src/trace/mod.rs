//! I/O traces: the formats lunmark reads and writes, and the one record every
//! reader yields. `run --trace` writes lunmark's binary trace while it runs;
//! `run --replay` (`run::replay`) and the cache sizing (`sizing`, `cache-curve`,
//! `lab cache`) read a trace in any of the formats.
//!
//! - `record`: one I/O of a trace, as every reader yields it;
//! - `lunmark`: lunmark's binary trace format, its writer and reader, and the
//!   loading of a trace file in any format (detected, or as given);
//! - `blkparse`: the `blkparse` text reader;
//! - `msr`: the MSR Cambridge CSV reader (SNIA IOTTA block traces).

pub mod blkparse;
pub mod lunmark;
pub mod msr;
pub mod record;

pub use blkparse::read_blkparse;
pub use lunmark::{load_trace, load_trace_as, LoadedTrace, TraceError, TraceKind, TraceReader, TraceWriter};
pub use record::TraceRecord;
