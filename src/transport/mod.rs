//! The network transports lunmark speaks as a client: NBD connections and
//! iSCSI sessions with their C bindings, and the CHAP secrets iSCSI URIs may
//! carry. Both the target layer (to open and size an export) and the engines
//! (to drive I/O) use them, so they sit below both.

pub mod credentials;
pub mod iscsi;
pub mod nbd;
