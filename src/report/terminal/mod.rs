//! What the terminal shows: a run's summary and per-worker table, the dry run's plan and request, the labs' tables, listings, cache curves, verify checks.

pub mod cache_curve_table;
pub mod lab_plan_text;
pub mod lab_tables;
pub mod listing;
pub mod per_worker_table;
pub mod plan_text;
pub mod request_text;
pub mod table;
pub mod verify_text;
