//! Errors as results count them: an errno, or lunmark's pseudo-errno for a
//! short transfer, and the readable name results and messages show for it.

use std::io;

/// Pseudo-errno recorded for a short read or write (not a kernel errno).
pub const SHORT_TRANSFER: i32 = -1;

/// A readable name for an errno, for results and messages.
pub fn errno_name(errno: i32) -> String {
    if errno == SHORT_TRANSFER {
        return "short transfer (target smaller than expected)".into();
    }
    let text = io::Error::from_raw_os_error(errno).to_string();
    text.split(" (os error").next().unwrap_or(&text).to_string()
}
