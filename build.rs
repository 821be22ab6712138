//! Links libnbd (Debian: libnbd-dev), used by the NBD engine through a small
//! hand-written FFI in src/engine/nbd/ffi.rs.

fn main() {
    println!("cargo:rustc-link-lib=nbd");
    println!("cargo:rerun-if-changed=build.rs");
}
