//! Links libnbd (Debian: libnbd-dev) and libiscsi (Debian: libiscsi-dev), used
//! by the NBD and iSCSI engines through small hand-written FFIs in
//! src/engine/nbd/ffi.rs and src/engine/iscsi/ffi.rs.

fn main() {
    println!("cargo:rustc-link-lib=nbd");
    println!("cargo:rustc-link-lib=iscsi");
    println!("cargo:rerun-if-changed=build.rs");
}
