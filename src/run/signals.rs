//! Ctrl-C and SIGTERM: the first one asks the run to stop (it still writes its
//! result, status "interrupted"); a second one ends the process at once.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The process-wide interrupt flag, with handlers installed on first use.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // The conditional shutdown goes first: it fires only when the flag is
            // already set, i.e. on the second signal.
            let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone());
            let _ = signal_hook::flag::register(sig, flag.clone());
        }
        flag
    })
    .clone()
}
