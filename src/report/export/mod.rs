//! A result's exporters for programs: the result model as JSON, fio's JSON shape, fio's log files.

pub mod fio_json;
pub mod fio_log;
pub mod hdr_log;
pub mod json;
