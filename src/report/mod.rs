//! Exporters: a result in, bytes out. They never do I/O; the caller decides
//! where the bytes go.

pub mod json;
pub mod table;
