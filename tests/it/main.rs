//! lunmark's integration tests: one binary, a module per feature. They run the
//! real `lunmark` binary against real files, loop devices and servers that each
//! test creates and removes.

mod cache;
mod common;
mod core;
mod cut_short2;
mod distributions;
mod edges;
mod engines;
mod fio;
mod flag_walk;
mod inputs5;
mod kept;
mod kernel_paths;
mod lab_exit;
mod lab_flags;
mod line_rate;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(not(feature = "mpi"))]
mod mpi_absent;
mod network;
mod observers;
mod one_client_servers;
mod ops;
mod output_guard;
mod per_worker;
mod polish;
mod polish3;
mod polish4;
mod polling;
mod power;
mod rate_spread;
mod replay;
mod report_cut;
mod report_page;
mod results;
mod scripts;
mod sizes;
mod stalls;
mod steady;
mod store;
mod trial_fixes_1;
mod trial_fixes_2;
mod trial_fixes_3;
mod trial_fixes_4;
mod trial_fixes_5;
mod trust;
mod verify_points;
mod workloads;
