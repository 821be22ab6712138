//! Workloads: the access specification (IOmeter semantics), its validation, and
//! the seeded generator that turns it into a stream of offsets and sizes.

pub mod cpus;
pub mod dist;
pub mod fio_job;
pub mod fio_map;
pub mod generator;
pub mod ops;
pub mod phase_axis;
pub mod polling;
pub mod profile;
pub mod reduction;
pub mod replay;
pub mod rng;
pub mod rounds;
pub mod serde_text;
pub mod spec;
pub mod steady;
pub mod sweep;
pub mod timing;

pub use generator::{Generator, IoShape, Op, Region};
pub use ops::{SyncEvery, SyncKind};
pub use spec::{AccessLine, EngineChoice, GroupWindow, RunLength, SpecError, WorkerGroup, WorkloadSpec};
