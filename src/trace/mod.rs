//! I/O traces: the formats lunmark reads and writes, and the one record every
//! reader yields. `run --trace` writes lunmark's binary trace while it runs;
//! `run --replay` (`run::replay`) and the cache sizing (`sizing`, `cache-curve`,
//! `lab cache`) read a trace in any of the formats.
//!
//! - `record`: one I/O of a trace, as every reader yields it;
//! - `lunmark`: lunmark's binary trace format, its writer and reader;
//! - `blkparse`: the `blkparse` text reader;
//! - `msr`: the MSR Cambridge CSV reader (SNIA IOTTA block traces);
//! - `load`: a trace file in any of these formats, detected or as given.

pub mod blkparse;
pub mod lines;
pub mod load;
pub mod lunmark;
pub mod msr;
pub mod record;

pub use blkparse::read_blkparse;
pub use load::{load_trace, load_trace_as, LoadedTrace, TraceKind};
pub use lunmark::{TraceError, TraceReader, TraceWriter};
pub use record::TraceRecord;
