//! lunmark's integration tests: one binary, a module per feature. They run the
//! real `lunmark` binary against real files, loop devices and servers that each
//! test creates and removes.

mod cache;
mod common;
mod core;
mod distributions;
mod edges;
mod engines;
mod existing_files;
mod fio;
mod fio_corpus;
mod flag_walk;
mod hdr_log;
mod input_files;
mod inputs;
mod kept;
mod kernel_paths;
mod knee_search;
mod lab_exit;
mod lab_flags;
mod lab_topology;
mod line_rate;
mod load_curve;
mod messages;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(not(feature = "mpi"))]
mod mpi_absent;
mod network;
mod observers;
mod one_client_servers;
mod ops;
mod output_escaping;
mod output_guard;
mod paper_commands;
mod per_worker;
mod polling;
mod power;
mod rate_spread;
mod replay;
mod report_charts;
mod report_cut;
mod report_page;
mod results;
mod scripts;
mod sizes;
mod stalls;
mod steady;
mod stops;
mod store;
mod telemetry;
mod thread_tuning;
mod trust;
mod verify_points;
mod workloads;
