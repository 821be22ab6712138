//! Runs a meter's command (a --power-cmd, ipmitool) with a time limit, in a
//! process group of its own, so that a meter that stops answering never holds
//! up the run: the reading fails after `READING_TIMEOUT` (or at once when the
//! caller aborts, on Ctrl-C) and the command's whole group is killed. The group
//! is also killed after every reading, so nothing it left in the background
//! outlives it. Output goes to anonymous files, not pipes: a child that keeps a
//! pipe open cannot make the reading wait for it.

use std::io::{Read, Seek};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long one reading may take. A meter is read once a second; one that has
/// not answered in two is taken as gone for the rest of the point.
pub const READING_TIMEOUT: Duration = Duration::from_secs(2);

/// What a command printed, once it exited.
pub struct Finished {
    pub success: bool,
    pub status: String,
    pub stdout: String,
    pub stderr: String,
}

/// Why a command gave no output.
#[derive(Debug)]
pub enum Failure {
    /// It could not be started (the text says why).
    Spawn(std::io::Error),
    /// It did not exit within the limit; its group was killed.
    TimedOut(Duration),
    /// The caller asked to stop (Ctrl-C); its group was killed.
    Aborted,
}

/// Runs `cmd` in a new process group, waiting at most `limit`, or until `abort` is set.
pub fn run(mut cmd: Command, limit: Duration, abort: &AtomicBool) -> Result<Finished, Failure> {
    let mut out = tempfile::tempfile().map_err(Failure::Spawn)?;
    let mut err = tempfile::tempfile().map_err(Failure::Spawn)?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone().map_err(Failure::Spawn)?)
        .stderr(err.try_clone().map_err(Failure::Spawn)?)
        .process_group(0);
    let mut child = cmd.spawn().map_err(Failure::Spawn)?;
    let pid = child.id() as libc::pid_t;
    let deadline = Instant::now() + limit;
    let outcome = loop {
        if exited_unreaped(pid) {
            break Ok(());
        }
        if abort.load(Ordering::Relaxed) {
            break Err(Failure::Aborted);
        }
        if Instant::now() >= deadline {
            break Err(Failure::TimedOut(limit));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The leader is not reaped yet (exited or not), so its PID, which is the
    // group's id, cannot have been reused: the kill reaches only its group.
    kill_group(pid);
    let status = child.wait();
    outcome?;
    let status = status.map_err(Failure::Spawn)?;
    let text = |f: &mut std::fs::File| {
        let mut s = String::new();
        let _ = f.rewind().and_then(|_| f.read_to_string(&mut s));
        s
    };
    Ok(Finished { success: status.success(), status: status.to_string(), stdout: text(&mut out), stderr: text(&mut err) })
}

/// True when the child has exited; it stays a zombie (WNOWAIT) until `wait`.
fn exited_unreaped(pid: libc::pid_t) -> bool {
    // SAFETY: waitid writes one siginfo_t into the zeroed local; WNOWAIT leaves
    // the child to be reaped by Child::wait.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
        r == 0 && info.si_pid() == pid
    }
}

fn kill_group(pgid: libc::pid_t) {
    // SAFETY: kill has no memory effects; a negative pid names the process
    // group the command was started in (ESRCH when it is already empty).
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// "did not answer within 2s" for a time limit.
pub fn describe_timeout(limit: Duration) -> String {
    format!("did not answer within {}s (its process group was killed)", limit.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn output_and_status_of_a_quick_command() {
        let never = AtomicBool::new(false);
        let f = run(sh("echo 42; echo oops >&2; exit 3"), READING_TIMEOUT, &never).unwrap();
        assert_eq!((f.stdout.as_str(), f.stderr.as_str(), f.success), ("42\n", "oops\n", false));
    }

    #[test]
    fn a_hung_command_times_out_and_its_group_is_gone() {
        let never = AtomicBool::new(false);
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        // The shell records its PID (= the group id), then waits on a child.
        let started = Instant::now();
        let r = run(sh(&format!("echo $$ > {}; sleep 100; true", pids.display())), Duration::from_millis(300), &never);
        assert!(matches!(r, Err(Failure::TimedOut(_))));
        assert!(started.elapsed() < Duration::from_secs(2));
        let pgid: i32 = std::fs::read_to_string(&pids).unwrap().trim().parse().unwrap();
        // SIGKILL was sent to the group; a killed process takes a moment to
        // become a zombie, so the check allows it 1 s (seen: one still running at 0 ms).
        let deadline = Instant::now() + Duration::from_secs(1);
        while !group_members(pgid).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(group_members(pgid).is_empty(), "left running: {:?}", group_members(pgid));
    }

    /// PIDs whose process group is `pgid`, from /proc.
    fn group_members(pgid: i32) -> Vec<i32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
                // Zombies not yet reaped by their parent are gone for our purpose.
                let f: Vec<&str> = after.split_whitespace().collect();
                f.len() > 2 && f[2].parse::<i32>() == Ok(pgid) && f[0] != "Z"
            })
            .collect()
    }
}
