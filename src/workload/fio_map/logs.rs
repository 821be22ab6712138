//! fio-format logs a job asks for (`write_bw_log`, `write_iops_log`, `write_lat_log`).

use super::*;

/// Which fio log a job asks for (`write_bw_log`, `write_iops_log`, `write_lat_log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Bw,
    Iops,
    /// fio's total latency, `_lat`.
    Lat,
    /// fio's completion latency, `_clat` (the same figure for lunmark, which
    /// does not time submission apart).
    Clat,
}

impl LogKind {
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
        }
    }
}

/// A fio-format log file to write after the run, from one point's per-second intervals.
#[derive(Clone, Debug, PartialEq)]
pub struct FioLog {
    /// The file, as fio names it: `PREFIX_bw.N.log` (N: the job's thread number in the file).
    pub path: String,
    pub kind: LogKind,
    /// The point (phase) of the job, from 0.
    pub point: usize,
    /// Seconds averaged into one line (log_avg_msec / 1000).
    pub avg_secs: u32,
    /// fio's data directions the job does (0 read, 1 write).
    pub directions: Vec<u8>,
}

/// The fio logs of the chosen jobs: `write_bw_log=PREFIX` and the like (a
/// bare switch: the job's name), as fio names them, `PREFIX_bw.N.log` with N
/// the job's thread number in the file. lunmark keeps per-second figures per
/// point, so a job gets its logs when it runs alone in its phase with one
/// clone; its latency log when it does one direction (the per-second latency
/// is of all I/O) and has no rate (whose latency counts from the schedule).
/// Leaving a log out changes no figure: --fio-lenient may skip it.
pub(super) fn fio_logs(
    sections: &[&JobSection],
    jobs: &[Job],
    profile: &Profile,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Vec<FioLog> {
    let mut logs = Vec::new();
    let mut thread = 1u32;
    for (section, job) in sections.iter().zip(jobs) {
        let set = Settings::of(section, &mut Problems::default());
        let first_thread = thread;
        thread += job.numjobs;
        let asked: Vec<(&Setting, LogKind)> =
            [("write_bw_log", LogKind::Bw), ("write_iops_log", LogKind::Iops), ("write_lat_log", LogKind::Lat)]
                .iter()
                .filter_map(|(k, kind)| set.get(k).map(|s| (s, *kind)))
                .collect();
        let avg = set.value("log_avg_msec").map(|(s, v)| (s, v.trim().parse::<u64>()));
        let avg_secs = match avg {
            None if !asked.is_empty() => {
                notes.push(format!(
                    "job '{}': without log_avg_msec fio logs every I/O; lunmark's logs hold per-second averages (log_avg_msec=1000)",
                    job.name
                ));
                1
            }
            None => 1,
            Some((_, Ok(ms))) if ms >= 1000 && ms % 1000 == 0 => (ms / 1000) as u32,
            Some((s, _)) => {
                problems.push(s, "lunmark's logs are made of its per-second figures: give a multiple of 1000 (ms)", true);
                continue;
            }
        };
        let Some(point) = profile.phases.iter().position(|p| p.groups.iter().any(|g| g.name == job.name)) else { continue };
        let alone = profile.phases[point].groups.len() == 1 && job.numjobs == 1;
        let read: f64 = job.lines.iter().map(|l| l.share * l.read / 100.0).sum();
        let directions: Vec<u8> = [(0u8, read > 0.0), (1, read < 100.0)].iter().filter(|(_, on)| *on).map(|(d, _)| *d).collect();
        for (s, kind) in asked {
            if !alone {
                problems.push(s, format!("lunmark keeps per-second figures per point, so only a job that runs alone in its phase with numjobs=1 gets fio's logs (job '{}' does not)", job.name), true);
                continue;
            }
            if kind == LogKind::Lat && (directions.len() > 1 || job.rate.is_some()) {
                let why = if job.rate.is_some() {
                    "has a rate, and lunmark's latency then counts from the schedule"
                } else {
                    "reads and writes, and lunmark's per-second latency is of all its I/O"
                };
                problems.push(s, format!("job '{}' {why}: no latency log", job.name), true);
                continue;
            }
            let prefix = match s.value.as_deref().map(str::trim) {
                Some(p) if !p.is_empty() && p != "1" => p.to_string(),
                _ => job.name.clone(),
            };
            let kinds: &[LogKind] = if kind == LogKind::Lat { &[LogKind::Lat, LogKind::Clat] } else { std::slice::from_ref(&kind) };
            for k in kinds {
                logs.push(FioLog {
                    path: format!("{prefix}_{}.{first_thread}.log", k.suffix()),
                    kind: *k,
                    point,
                    avg_secs,
                    directions: directions.clone(),
                });
            }
            if kind == LogKind::Lat {
                notes.push(format!("{} ({}): lunmark writes {prefix}_lat and {prefix}_clat (the same figure: it does not time submission apart) and no {prefix}_slat", show(s), s.place()));
            }
        }
    }
    logs
}
