//! Workloads: the access specification (IOmeter semantics), its validation, and
//! the seeded generator that turns it into a stream of offsets and sizes.

pub mod fio_job;
pub mod fio_map;
pub mod generator;
pub mod pass;
pub mod polling;
pub mod profile;
pub mod rng;
pub mod spec;
pub mod sweep;

pub use generator::{Generator, IoShape, Op, Region};
pub use spec::{AccessLine, EngineChoice, RunLength, SpecError, WorkerGroup, WorkloadSpec};
