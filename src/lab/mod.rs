//! Labs: real targets started on loopback and a study run against them. A
//! lab takes the typed request of a run (`run::request::RunRequest`) and sets
//! what each of its rows changes: targets, size, cache, label.

pub mod cache;
pub mod lab_dir;
pub mod link;
pub mod plan_view;
pub mod protocols;
pub mod servers;
pub mod topology;
pub mod watchdog;

/// Runs one row of a lab and keeps its result: the caller's measure-and-keep
/// step (store, output), passed in, so that a lab only decides what to run.
pub type Measure<'a> = dyn FnMut(&crate::run::RunPlan, &crate::run::RunContext) -> anyhow::Result<crate::results::model::RunResult> + 'a;
