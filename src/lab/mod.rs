//! Labs: real targets started on loopback and a study run against them.

pub mod cache;
pub mod link;
pub mod protocols;
pub mod servers;
