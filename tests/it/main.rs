//! lunmark's integration tests: one binary, a module per feature. They run the
//! real `lunmark` binary against real files, loop devices and servers that each
//! test creates and removes.

mod cache;
mod common;
mod core;
mod edges;
mod fio;
mod kept;
mod line_rate;
mod network;
mod one_client_servers;
mod output_guard;
mod polling;
mod power;
mod report_page;
mod results;
mod scripts;
mod stalls;
mod trust;
mod workloads;
