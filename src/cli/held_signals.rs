//! Ctrl-C, SIGTERM and SIGHUP held back while a set of files that belong
//! together is written (a Markdown report and the charts it links): a signal
//! that comes meanwhile takes effect once the last file is in place, so a stop
//! never leaves charts without their page. Only for a command that runs on one
//! thread (a signal goes to a thread that does not hold it).

/// Holds the signals from `hold()` until dropped; the mask before is then put back.
pub struct HeldSignals {
    before: libc::sigset_t,
}

/// The signals that end lunmark from outside: held while files are written.
const HELD: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

pub fn hold() -> HeldSignals {
    // SAFETY: sigset_t is plain data, initialised by sigemptyset before use;
    // pthread_sigmask changes only this thread's mask and fills `before`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in HELD {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut before);
        HeldSignals { before }
    }
}

impl Drop for HeldSignals {
    fn drop(&mut self) {
        // SAFETY: `before` is the mask pthread_sigmask returned in `hold`; a
        // signal that came meanwhile is delivered as it is restored.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.before, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    /// A SIGTERM sent while the signals are held ends the process only once
    /// they are let go: in a child process (forked, so the test binary's other
    /// threads are not in it), the file written after the signal is there and
    /// the child still dies of SIGTERM.
    #[test]
    fn a_sigterm_while_held_takes_effect_after_the_files_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("written");
        // SAFETY: the child only holds signals, signals itself, writes a file
        // and exits; it never returns into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let held = super::hold();
            // SAFETY: kill on our own pid.
            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
            std::thread::sleep(std::time::Duration::from_millis(50));
            let ok = std::fs::write(&marker, b"page").is_ok();
            drop(held);
            // Not reached when the held SIGTERM ends the process as it should.
            // SAFETY: _exit ends the child without running the harness's atexit handlers.
            unsafe { libc::_exit(if ok { 7 } else { 8 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGTERM, "status {status:#x}");
        assert!(marker.exists(), "the file written while SIGTERM was held is there");
    }
}
