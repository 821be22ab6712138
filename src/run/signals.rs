//! Ctrl-C (SIGINT), SIGTERM and SIGHUP (a closed terminal or ssh session: the
//! run is kept as after SIGTERM, not lost with its scratch file). The first asks the run to stop: it ends within
//! a second, abandoning I/Os a stalled target still holds, and writes its result
//! (status "interrupted"). A second one hurries that: nothing more is waited
//! for, but the result of what was measured is still written. Only a third
//! ends the process at once, for a run stuck somewhere no flag reaches.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

struct Signals {
    /// Set by the first signal; the flag every stop check reads.
    interrupt: Arc<AtomicBool>,
    /// Set by the second.
    hurry: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
    /// The first signal received.
    first: Arc<AtomicI32>,
}

static SIGNALS: OnceLock<Signals> = OnceLock::new();

fn signals() -> &'static Signals {
    SIGNALS.get_or_init(|| {
        let s = Signals {
            interrupt: Arc::new(AtomicBool::new(false)),
            hurry: Arc::new(AtomicBool::new(false)),
            count: Arc::new(AtomicUsize::new(0)),
            first: Arc::new(AtomicI32::new(0)),
        };
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
            let (interrupt, hurry, count, first) = (s.interrupt.clone(), s.hurry.clone(), s.count.clone(), s.first.clone());
            let handler = move || {
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                if n == 1 {
                    first.store(sig, Ordering::SeqCst);
                    interrupt.store(true, Ordering::SeqCst);
                } else if n == 2 {
                    hurry.store(true, Ordering::SeqCst);
                } else {
                    signal_hook::low_level::exit(130);
                }
            };
            // SAFETY: the handler only does atomic loads and stores on memory that
            // lives for the whole process, and _exit (async-signal-safe).
            let _ = unsafe { signal_hook::low_level::register(sig, handler) };
        }
        s
    })
}

/// The process-wide interrupt flag, with handlers installed on first use.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    signals().interrupt.clone()
}

/// The flag a second signal sets: give up on everything still in flight.
pub fn hurry_flag() -> Arc<AtomicBool> {
    signals().hurry.clone()
}

/// Why the run was interrupted, naming the signal, for `status_reason`.
pub fn reason() -> String {
    let s = signals();
    let name = match s.first.load(Ordering::SeqCst) {
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGINT => "Ctrl-C (SIGINT)",
        signal_hook::consts::SIGHUP => "SIGHUP (the terminal or session closed)",
        _ => "a signal",
    };
    if s.count.load(Ordering::SeqCst) > 1 {
        format!("interrupted by {name}, then a second signal: I/Os still in flight were abandoned at once")
    } else {
        format!("interrupted by {name}")
    }
}
