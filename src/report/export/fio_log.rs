//! fio-format log files (`write_bw_log`, `write_iops_log`, `write_lat_log`
//! with `log_avg_msec`) from a point's per-second intervals, so that fio's
//! log readers (fio2gnuplot, fio-plot's log mode) read lunmark's. Pure:
//! result in, text out.
//!
//! fio's averaged log line: `TIME_MS, VALUE, DDIR, 0, 0` — the end of the
//! window in ms, the window's mean (bandwidth KiB/s, IOPS, latency ns), the
//! direction (0 read, 1 write), and no block size or offset (fio writes 0
//! there when it averages). One line per direction and window.

use std::fmt::Write;

use crate::results::model::{Interval, Point};
use crate::workload::fio_map::{FioLog, LogKind};

/// The log's text for `point`.
pub fn render(log: &FioLog, point: &Point) -> String {
    let intervals = &point.summary.intervals;
    let only = |d: u8| log.directions == [d];
    let mut out = String::new();
    for window in intervals.chunks(log.avg_secs.max(1) as usize) {
        let secs: f64 = window.iter().map(|i| i.duration_s).sum();
        if secs <= 0.0 {
            continue;
        }
        let end_ms = window.last().map(|i| ((i.t_s + i.duration_s) * 1000.0).round() as u64).unwrap_or(0);
        for &d in &log.directions {
            // A window's mean of a per-second rate: weighted by each interval's length.
            let mean = |f: &dyn Fn(&Interval) -> f64| window.iter().map(|i| f(i) * i.duration_s).sum::<f64>() / secs;
            let value = match log.kind {
                LogKind::Bw => mean(&|i| {
                    let mbps = if d == 0 { i.read_mbps } else { i.write_mbps };
                    mbps.unwrap_or(if only(d) { i.mbps } else { 0.0 }) * 1e6 / 1024.0
                }),
                LogKind::Iops => mean(&|i| if d == 0 { i.read_iops } else { i.write_iops }),
                // fio's latency log: the mean of the window's I/Os, ns (weighted by their count).
                LogKind::Lat | LogKind::Clat => {
                    let ios: f64 = window.iter().map(|i| i.iops * i.duration_s).sum();
                    if ios > 0.0 {
                        window.iter().map(|i| i.lat_mean_us * 1000.0 * i.iops * i.duration_s).sum::<f64>() / ios
                    } else {
                        0.0
                    }
                }
            };
            let _ = writeln!(out, "{end_ms}, {}, {d}, 0, 0", value.round() as u64);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rows: &[(f64, f64, f64, f64)]) -> Point {
        let mut p = crate::report::golden_result("result-a.json").points[0].clone();
        p.summary.intervals = rows
            .iter()
            .enumerate()
            .map(|(t, (ri, wi, rm, lat))| Interval {
                t_s: t as f64,
                duration_s: 1.0,
                iops: ri + wi,
                read_iops: *ri,
                write_iops: *wi,
                read_mbps: Some(*rm),
                write_mbps: Some(0.0),
                lat_mean_us: *lat,
                ..Default::default()
            })
            .collect();
        p
    }

    #[test]
    fn lines_are_fios_averaged_log_lines() {
        let p = point(&[(1000.0, 0.0, 4.096, 50.0), (3000.0, 0.0, 12.288, 30.0), (2000.0, 0.0, 8.192, 40.0)]);
        let log = |kind, avg_secs| FioLog { path: "x".into(), kind, point: 0, avg_secs, directions: vec![0] };
        assert_eq!(render(&log(LogKind::Iops, 1), &p), "1000, 1000, 0, 0, 0\n2000, 3000, 0, 0, 0\n3000, 2000, 0, 0, 0\n");
        assert_eq!(render(&log(LogKind::Bw, 1), &p), "1000, 4000, 0, 0, 0\n2000, 12000, 0, 0, 0\n3000, 8000, 0, 0, 0\n");
        // Two seconds a line: the rates' mean, and the latency's mean over the window's I/Os.
        assert_eq!(render(&log(LogKind::Iops, 2), &p), "2000, 2000, 0, 0, 0\n3000, 2000, 0, 0, 0\n");
        assert_eq!(render(&log(LogKind::Lat, 2), &p), "2000, 35000, 0, 0, 0\n3000, 40000, 0, 0, 0\n");
        // A job that reads and writes: a line per direction.
        let both = FioLog { path: "x".into(), kind: LogKind::Iops, point: 0, avg_secs: 1, directions: vec![0, 1] };
        let p = point(&[(700.0, 300.0, 2.8, 10.0)]);
        assert_eq!(render(&both, &p), "1000, 700, 0, 0, 0\n1000, 300, 1, 0, 0\n");
    }
}
