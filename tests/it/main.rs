//! lunmark's integration tests: one binary, a module per feature. They run the
//! real `lunmark` binary against real files, loop devices and servers that each
//! test creates and removes.

mod cache;
mod common;
mod core;
mod line_rate;
mod network;
mod power;
mod results;
mod trust;
mod workloads;
