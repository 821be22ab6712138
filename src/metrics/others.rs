//! CPU time of the other user-space processes over the measured interval, so
//! that a busy neighbour is shown instead of silently inflating the system-wide
//! CPU figures. Two scans of /proc/[pid]/stat per point (at the start and the
//! end of the interval), nothing per I/O.
//!
//! Counted: every process except lunmark, what lunmark started (lab servers,
//! the power command: part of the run), and kernel threads (PF_KTHREAD, or
//! children of kthreadd, PID 2), whose I/O work belongs in the system figures.
//! A process alive at both scans adds its user + system time between them; one
//! that started during the interval (by its start time) adds all of it. Time of
//! children that ran and were reaped during the interval shows in their
//! parent's cutime + cstime; for children alive at the start and gone at the end
//! the part they had used before the interval is taken off again, from the
//! ancestor alive at the end that their time was reaped into (their parent, or
//! its reaper when the parent exited too). So each name holds only time from
//! inside the interval, and the names add up to the total. Where a reaped
//! process's time cannot be placed, the figure says it is an estimate.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

/// Linux's flag for kernel threads in /proc/[pid]/stat field 9 (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// One process's times, clock ticks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcTimes {
    pub ppid: i32,
    pub name: String,
    /// Ticks after boot at which it started (field 22).
    pub start: u64,
    /// utime + stime: its own threads, dead ones included.
    pub own: u64,
    /// cutime + cstime: children it has waited for.
    pub reaped: u64,
}

/// The user-space processes that are not lunmark's, at one instant.
#[derive(Clone, Debug, Default)]
pub struct ProcessTable {
    /// Ticks since boot when the scan began.
    pub now: u64,
    pub procs: HashMap<i32, ProcTimes>,
}

/// A process name's share of all host CPUs over the interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OtherProcess {
    /// The command name (/proc/[pid]/comm); processes of one name are summed.
    pub name: String,
    pub cpu_pct: f64,
}

/// Parses /proc/[pid]/stat: (ppid, flags, ProcTimes). The name is in parentheses
/// and may hold spaces and parentheses itself, so fields are counted after the last ')'.
pub fn parse_stat(text: &str) -> Option<(i32, u64, ProcTimes)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // f[0] is field 3 (state): field N is f[N - 3].
    let num = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    let ppid = f.get(1)?.parse::<i32>().ok()?;
    let times = ProcTimes { ppid, name, start: num(22)?, own: num(14)? + num(15)?, reaped: num(16)? + num(17)? };
    Some((ppid, num(9)?, times))
}

fn boot_ticks(hz: f64) -> u64 {
    // SAFETY: clock_gettime writes one timespec into the zeroed local.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts);
        ts
    };
    ((ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9) * hz) as u64
}

/// Scans /proc now. `me` is lunmark's PID: it and its descendants are left out.
pub fn scan(me: i32, hz: f64) -> ProcessTable {
    scan_with_started(me, hz).0
}

/// The same, and apart the processes lunmark started (its descendants, not
/// itself: a lab's target servers, a power command), so that their CPU can be
/// told apart from lunmark's own (`between` on two of them).
pub fn scan_with_started(me: i32, hz: f64) -> (ProcessTable, ProcessTable) {
    let now = boot_ticks(hz);
    let mut all: HashMap<i32, (u64, ProcTimes)> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            // A process may exit between the listing and the read: then it is simply not here.
            let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            if let Some((_, flags, times)) = parse_stat(&text) {
                all.insert(pid, (flags, times));
            }
        }
    }
    let started = started_by(&all, me);
    let started =
        ProcessTable { now, procs: all.iter().filter(|(pid, _)| started.contains(pid)).map(|(pid, (_, t))| (*pid, t.clone())).collect() };
    (ProcessTable { now, procs: keep_others(all, me) }, started)
}

/// `me`'s descendants, `me` left out.
fn started_by(all: &HashMap<i32, (u64, ProcTimes)>, me: i32) -> HashSet<i32> {
    let mut mine = descendants(all, me);
    mine.remove(&me);
    mine
}

/// `me` and its descendants.
fn descendants(all: &HashMap<i32, (u64, ProcTimes)>, me: i32) -> HashSet<i32> {
    let mut mine: HashSet<i32> = HashSet::from([me]);
    // Descendants: follow parents until a known one (depth is small; bounded anyway).
    for &pid in all.keys() {
        let mut chain = Vec::new();
        let mut p = pid;
        while let Some((_, t)) = all.get(&p) {
            if mine.contains(&p) {
                mine.extend(chain);
                break;
            }
            chain.push(p);
            if t.ppid <= 1 || chain.len() > 64 {
                break;
            }
            p = t.ppid;
        }
    }
    mine
}

/// Drops kernel threads, `me` and its descendants.
fn keep_others(all: HashMap<i32, (u64, ProcTimes)>, me: i32) -> HashMap<i32, ProcTimes> {
    let mine = descendants(&all, me);
    all.into_iter()
        .filter(|(pid, (flags, t))| flags & PF_KTHREAD == 0 && *pid != 2 && t.ppid != 2 && !mine.contains(pid))
        .map(|(pid, (_, t))| (pid, t))
        .collect()
}

/// Other processes' CPU between two scans: its total, per name, and why it
/// is an estimate where it is one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Between {
    /// CPU-seconds inside the interval: the sum of `by_name`.
    pub total_s: f64,
    pub by_name: BTreeMap<String, f64>,
    /// Set when part of the time could not be placed inside or outside the
    /// interval (a reaped process whose reaper is not known, a process charged
    /// less than nothing), so the figures are an estimate.
    pub estimate: Option<String>,
}

/// The process alive at `b` that a process of `a` gone by `b` was reaped
/// into: its parent, or when the parent is gone too, the parent's reaper,
/// and so on (a subshell that ran a burner and exited with it). None when
/// the chain leaves the scanned processes.
fn reaper(a: &ProcessTable, b: &ProcessTable, gone: &ProcTimes) -> Option<i32> {
    let mut ppid = gone.ppid;
    for _ in 0..64 {
        let alive = |q: &ProcTimes| b.procs.get(&ppid).is_some_and(|p| p.start == q.start);
        match a.procs.get(&ppid) {
            Some(q) if alive(q) => return Some(ppid),
            Some(q) => ppid = q.ppid,
            // Not in the first scan: alive at the end only if it started inside the interval (then its own reaped time holds this).
            None => return b.procs.contains_key(&ppid).then_some(ppid),
        }
    }
    None
}

/// Other processes' CPU between two scans. A process alive at both adds its
/// own and reaped time between them; one started inside the interval all of
/// it. A process gone by the end was reaped into an ancestor alive at the end
/// with its whole life; the part before the interval is taken off that
/// ancestor, which is what it is charged for, so no name holds time from before.
pub fn between(a: &ProcessTable, b: &ProcessTable, hz: f64) -> Between {
    let mut ticks: HashMap<i32, i64> = HashMap::new();
    for (pid, p) in &b.procs {
        let t = match a.procs.get(pid).filter(|q| q.start == p.start) {
            Some(q) => p.own.saturating_sub(q.own) + p.reaped.saturating_sub(q.reaped),
            // Started during the interval: all of its time is inside it.
            None if p.start + 1 >= a.now => p.own + p.reaped,
            // Missed by the first scan (it raced with the listing): unknown, left out.
            None => 0,
        };
        ticks.insert(*pid, t as i64);
    }
    let (mut unplaced, mut below_zero) = (0usize, 0i64);
    for (pid, q) in &a.procs {
        if b.procs.get(pid).is_none_or(|p| p.start != q.start) {
            let before = (q.own + q.reaped) as i64;
            match reaper(a, b, q) {
                Some(r) => *ticks.entry(r).or_default() -= before,
                None => unplaced += 1,
            }
        }
    }
    let mut by_name: BTreeMap<String, i64> = BTreeMap::new();
    for (pid, t) in ticks {
        below_zero += (-t).max(0);
        *by_name.entry(b.procs[&pid].name.clone()).or_default() += t.max(0);
    }
    let secs = |t: i64| t.max(0) as f64 / hz;
    let by_name: BTreeMap<String, f64> = by_name.into_iter().map(|(n, t)| (n, secs(t))).filter(|(_, s)| *s > 0.0).collect();
    let mut why = Vec::new();
    if unplaced > 0 {
        why.push(format!(
            "{unplaced} process(es) exited during the interval and were reaped outside the processes seen: their CPU inside it is not counted"
        ));
    }
    if below_zero > 0 {
        why.push(format!(
            "{:.2} CPU-s from before the interval could not be placed (a child reparented when its parent exited): a name may hold up to that much from before",
            secs(below_zero)
        ));
    }
    // A fold from +0.0: an empty f64 sum is -0.0, which prints as "-0.0".
    Between { total_s: by_name.values().fold(0.0, |a, b| a + b), by_name, estimate: (!why.is_empty()).then(|| why.join("; ")) }
}

/// The names that used most CPU, as shares of all host CPUs (at most `n`, each at least 0.5%).
pub fn top(by_name: &BTreeMap<String, f64>, capacity_s: f64, n: usize) -> Vec<OtherProcess> {
    let mut v: Vec<OtherProcess> =
        by_name.iter().map(|(name, s)| OtherProcess { name: name.clone(), cpu_pct: s * 100.0 / capacity_s }).collect();
    v.sort_by(|x, y| y.cpu_pct.total_cmp(&x.cpu_pct));
    v.retain(|p| p.cpu_pct >= 0.5);
    v.truncate(n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: i32, name: &str, ppid: i32, flags: u64, own: (u64, u64), reaped: (u64, u64), start: u64) -> String {
        format!(
            "{pid} ({name}) S {ppid} {pid} {pid} 0 -1 {flags} 0 0 0 0 {} {} {} {} 20 0 1 0 {start} 0 0",
            own.0, own.1, reaped.0, reaped.1
        )
    }

    #[test]
    fn stat_fields_after_a_name_with_spaces_and_parentheses() {
        let (ppid, flags, t) = parse_stat(&stat(42, "a (b) c", 7, 4194560, (10, 5), (3, 1), 999)).unwrap();
        assert_eq!((ppid, flags), (7, 4194560));
        assert_eq!(t, ProcTimes { ppid: 7, name: "a (b) c".into(), start: 999, own: 15, reaped: 4 });
        // A real line of this process parses.
        let me = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(parse_stat(&me).is_some(), "{me}");
    }

    fn table(now: u64, lines: &[String], me: i32) -> ProcessTable {
        let all = lines
            .iter()
            .map(|l| {
                let pid: i32 = l.split_whitespace().next().unwrap().parse().unwrap();
                let (_, flags, t) = parse_stat(l).unwrap();
                (pid, (flags, t))
            })
            .collect();
        ProcessTable { now, procs: keep_others(all, me) }
    }

    #[test]
    fn kernel_threads_lunmark_and_its_children_are_left_out() {
        let t = table(
            1000,
            &[
                stat(1, "init", 0, 0, (1, 1), (0, 0), 1),
                stat(2, "kthreadd", 0, PF_KTHREAD, (0, 0), (0, 0), 1),
                stat(30, "kworker/0:1", 2, PF_KTHREAD, (9, 9), (0, 0), 5),
                stat(100, "lunmark", 1, 0, (50, 50), (0, 0), 900),
                stat(101, "nbdkit", 100, 0, (5, 5), (0, 0), 950),
                stat(102, "sh", 101, 0, (1, 0), (0, 0), 960),
                stat(200, "sh", 1, 0, (7, 0), (0, 0), 10),
            ],
            100,
        );
        let mut pids: Vec<i32> = t.procs.keys().copied().collect();
        pids.sort();
        assert_eq!(pids, vec![1, 200]);
    }

    #[test]
    fn interval_accounting() {
        let a = table(
            1000,
            &[
                stat(1, "init", 0, 0, (10, 10), (100, 0), 1),
                stat(50, "busy", 1, 0, (400, 0), (0, 0), 500),
                stat(60, "make", 1, 0, (5, 0), (20, 0), 600),
                // Alive at the start, gone at the end, reaped by make: 30 ticks before the interval.
                stat(61, "cc1", 60, 0, (30, 0), (0, 0), 990),
                // Will be replaced by another process with the same PID.
                stat(70, "old", 1, 0, (50, 0), (0, 0), 700),
            ],
            0,
        );
        let b = table(
            1200,
            &[
                // init reaped "old": 50 ticks before the interval and 10 inside it.
                stat(1, "init", 0, 0, (10, 10), (100 + 60, 0), 1),
                stat(50, "busy", 1, 0, (600, 0), (0, 0), 500),
                // make reaped cc1 (80 ticks in all) and another child that lived only inside the interval (40).
                stat(60, "make", 1, 0, (6, 0), (20 + 80 + 40, 0), 600),
                stat(70, "new", 1, 0, (25, 0), (0, 0), 1100),
                stat(80, "late", 1, 0, (15, 0), (0, 0), 1150),
            ],
            0,
        );
        let Between { total_s: secs, by_name, estimate } = between(&a, &b, 100.0);
        assert_eq!(estimate, None);
        // busy 200 + make 1 + its reaped 120 - cc1's 30 before + init's reaped 60 - old's 50 before + new 25 + late 15.
        let want_ticks = 200 + 1 + 120 - 30 + 60 - 50 + 25 + 15;
        assert!((secs - want_ticks as f64 / 100.0).abs() < 1e-9, "{secs}");
        assert_eq!(by_name["busy"], 2.0);
        assert!((by_name["make"] - 0.91).abs() < 1e-9, "{by_name:?}");
        assert!((by_name["init"] - 0.10).abs() < 1e-9, "{by_name:?}");
        let t = top(&by_name, 4.0, 2);
        assert_eq!(t[0], OtherProcess { name: "busy".into(), cpu_pct: 50.0 });
        assert_eq!(t.len(), 2);
    }

    /// A burner under `timeout` under a subshell of a busy loop, alive at the
    /// start and gone with both by the end: its whole life is reaped into the
    /// loop, and only the part inside the interval stays charged to it (it
    /// was charged the part before, so the names added up to more than the total).
    #[test]
    fn time_reaped_through_a_chain_of_exits_is_charged_inside_the_interval_only() {
        let a = table(
            1000,
            &[
                stat(1, "init", 0, 0, (0, 0), (0, 0), 1),
                stat(10, "loop", 1, 0, (5, 0), (100, 0), 1),
                stat(11, "loop", 10, 0, (1, 0), (0, 0), 800),
                stat(12, "timeout", 11, 0, (1, 0), (0, 0), 800),
                stat(13, "sh", 12, 0, (150, 0), (0, 0), 800),
            ],
            0,
        );
        // The burner used 50 more ticks, then timeout reaped it, the subshell timeout, the loop the subshell.
        let b = table(1100, &[stat(1, "init", 0, 0, (0, 0), (0, 0), 1), stat(10, "loop", 1, 0, (5, 0), (100 + 1 + 1 + 200, 0), 1)], 0);
        let got = between(&a, &b, 100.0);
        assert_eq!(got.by_name.get("loop"), Some(&0.5), "{got:?}");
        assert_eq!((got.total_s, got.estimate), (0.5, None));
    }

    /// A child reparented to init when its parent exited: its time from before
    /// the interval is in init's reaped time, not its old grandparent's, so the
    /// figures say they are an estimate; the names still add up to the total.
    #[test]
    fn a_reparented_child_makes_an_estimate() {
        let a = table(
            1000,
            &[
                stat(1, "init", 0, 0, (0, 0), (0, 0), 1),
                stat(5, "shell", 1, 0, (10, 0), (0, 0), 1),
                stat(20, "p", 5, 0, (1, 0), (0, 0), 900),
                stat(21, "c", 20, 0, (100, 0), (0, 0), 900),
            ],
            0,
        );
        let b = table(1100, &[stat(1, "init", 0, 0, (0, 0), (110, 0), 1), stat(5, "shell", 1, 0, (10, 0), (1, 0), 1)], 0);
        let got = between(&a, &b, 100.0);
        assert!(got.estimate.as_deref().unwrap_or_default().contains("1.00 CPU-s from before the interval could not be placed"), "{got:?}");
        assert!((got.total_s - got.by_name.values().sum::<f64>()).abs() < 1e-12, "{got:?}");
        // A process reaped by one never scanned (outside this PID namespace): said too.
        let a = table(1000, &[stat(1, "init", 0, 0, (0, 0), (0, 0), 1), stat(30, "x", 0, 0, (50, 0), (0, 0), 900)], 0);
        let b = table(1100, &[stat(1, "init", 0, 0, (0, 0), (0, 0), 1)], 0);
        assert!(between(&a, &b, 100.0).estimate.unwrap().contains("1 process(es) exited during the interval"));
    }

    /// What lunmark starts is counted apart: a child burning CPU is in the
    /// started table, with its time, and never among the others.
    #[test]
    fn processes_lunmark_started_are_counted_apart() {
        let hz = crate::metrics::cpu::ticks_per_second();
        let me = std::process::id() as i32;
        let mut child = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let (a_others, a_started) = scan_with_started(me, hz);
        std::thread::sleep(std::time::Duration::from_millis(400));
        let (b_others, b_started) = scan_with_started(me, hz);
        let pid = child.id() as i32;
        let _ = child.kill();
        let _ = child.wait();
        assert!(b_started.procs.contains_key(&pid) && !b_others.procs.contains_key(&pid));
        let started = between(&a_started, &b_started, hz);
        // Any time at all: the host may be loaded, a busy child still gets ticks in 0.4 s.
        assert!(started.total_s > 0.0 && started.by_name.contains_key("sh"), "a busy child for 0.4 s: {started:?}");
        assert!(!a_others.procs.contains_key(&pid));
    }
}
