//! The terminal summary of a result: pure, result in, text out.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, Table};

use crate::report::cells::{num, right};
use crate::results::model::{LatencyStats, Pick, Point, RunResult};
use crate::units::counted;

/// The cache tier's part of the summary: its setting, hit ratios, where I/Os
/// were served, and hit and miss latency apart.
fn cache_lines(k: &crate::results::model::CacheSummary) -> String {
    format!(
        "cache {} {} ({:.0}% of the region, {}-byte blocks): hit ratio {:.1}%, reads {:.1}% ({} from cache, {} from target), writes {} to cache, {} to target\n  latency us: hits mean {} p99 {}; misses mean {} p99 {}\n",
        k.mode,
        crate::units::Bytes(k.size_bytes),
        k.size_pct,
        k.block_bytes,
        k.hit_ratio * 100.0,
        k.read_hit_ratio * 100.0,
        k.reads_from_cache,
        k.reads_from_target,
        k.writes_to_cache,
        k.writes_to_target,
        num(k.hit_latency_us.mean),
        num(k.hit_latency_us.p99),
        num(k.miss_latency_us.mean),
        num(k.miss_latency_us.p99),
    ) + &lost_lines(k)
}

/// Dirty blocks a write-back cache could not write to the target (nothing when none).
fn lost_lines(k: &crate::results::model::CacheSummary) -> String {
    if k.loss().is_none() {
        return String::new();
    }
    format!("  NOT WRITTEN BACK: {}\n", k.loss().unwrap_or_default())
}

/// "line rate 10gbe (1,225 MB/s per direction): read 45.2%, write 0.0%; busier direction 45.2%".
pub fn line_rate_line(l: &crate::results::line_rate::LineRate) -> String {
    let whose = l.target.map(|t| format!(" of target {t}")).unwrap_or_default();
    let note = l.note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
    format!(
        "line rate{whose} {} ({} MB/s per direction): read {:.1}%, write {:.1}%; busier direction {:.1}%{note}\n",
        l.link,
        crate::results::line_rate::fmt_mbps(l.usable_mbps_per_direction),
        l.read_pct,
        l.write_pct,
        l.pct
    )
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}

/// "steady state (iops): reached at 7 s ..." or "not reached in 10 rounds ...".
pub fn steady_line(st: &crate::results::steady::SteadyOutcome) -> String {
    let pct = |v: f64| if st.mean > 0.0 { format!("{:.1}%", v / st.mean * 100.0) } else { "-".into() };
    let when = match st.reached_at_s {
        Some(t) if st.reached => format!("reached at {t:.0} s"),
        _ => format!("NOT reached in {}", counted(st.rounds, "round")),
    };
    format!(
        "steady state ({}): {when}; last {} of {:.0} s: mean {}, range {} (limit {}%), slope {} (limit {}%)\n",
        st.metric,
        counted(st.window.len() as u64, "round"),
        st.round_s,
        num(st.mean),
        pct(st.range),
        st.range_limit_pct,
        pct(st.slope),
        st.slope_limit_pct
    )
}

pub fn render(result: &RunResult) -> String {
    render_with(result, false)
}

/// The summary; with `detail` (--detail), each point's worker and target tables as well.
pub fn render_with(result: &RunResult, detail: bool) -> String {
    let mut out = String::new();
    let label = result.label.as_deref().map(|l| format!("  label: {l}")).unwrap_or_default();
    // Under MPI the targets and the workload line are rank 0's; every rank ran the same on its own targets.
    let of_rank_0 = result.mpi.as_ref().map(|m| format!(" (rank 0 of {}; each rank its own)", m.ranks)).unwrap_or_default();
    out.push_str(&format!(
        "lunmark {}  result {}  status: {:?}{label}\nengine: {}  targets{of_rank_0}: {}\n",
        result.lunmark_version,
        result.id,
        result.status,
        result.engine,
        result.targets.iter().map(|t| t.uri.as_str()).collect::<Vec<_>>().join(", ")
    ));
    if let Some(reason) = &result.status_reason {
        out.push_str(&format!("reason: {reason}\n"));
    }
    // Power not measured at any point, for one reason: said once for the run, not after every point.
    let unmeasured = |p: &Point| p.summary.power.as_ref().filter(|w| w.avg_watts.is_none()).map(|w| w.reason.clone());
    let first = result.points.first().and_then(unmeasured);
    let power_said = first.is_some() && result.points.iter().all(|p| unmeasured(p) == first);
    if let Some(reason) = first.filter(|_| power_said) {
        out.push_str(&format!("power: not measured ({})\n", reason.as_deref().unwrap_or("no source")));
    }
    if let Some(r) = &result.rounds {
        for p in &r.purge {
            out.push_str(&format!("purge: {p}\n"));
        }
        out.push_str(&crate::report::rounds_line::rounds_line(r));
    }
    for (i, p) in result.points.iter().enumerate() {
        if result.points.len() > 1 || !p.params.is_empty() {
            let params: Vec<String> = p.params.iter().map(|(k, v)| format!("{k}={}", v.to_string().trim_matches('"'))).collect();
            out.push_str(&format!("\npoint {}: {}\n", i + 1, params.join(" ")));
        }
        // Each point restates what it ran, so a point read alone is complete.
        if let Some(w) = crate::report::workload_text::of_point(result, i) {
            match &p.summary.replay {
                // The access lines were not used: the trace gave every I/O.
                Some(r) => out.push_str(&format!("workload: {}\n", replay_workload_line(r, &w))),
                None => out.push_str(&format!("workload{of_rank_0}: {}\n", crate::report::workload_text::line(&w))),
            }
        }
        out.push_str(&render_point_with(p, power_said));
        if detail {
            out.push_str(&crate::report::terminal::per_worker_table::render(p));
        }
    }
    if let Some(s) = &result.search {
        out.push_str(&crate::report::search_text::render(s));
    }
    if let Some(c) = &result.curve {
        out.push_str(&crate::report::curve_text::render(c));
    }
    out
}

/// The trim and sync rows of the rates table, when the point issued any. A
/// trim moves no data (its bytes are the range discarded, not in MB/s); a
/// sync has no range and is not counted in IOPS or in the total.
fn add_op_rows(rates: &mut Table, s: &crate::results::model::Summary) {
    if s.ios_trimmed > 0 {
        let row = ["trim".into(), num(s.trim_iops), "-".into(), "-".into(), s.ios_trimmed.to_string(), s.bytes_trimmed.to_string()];
        rates.add_row(row.into_iter().enumerate().map(|(i, v)| if i == 0 { Cell::new(v) } else { right(v) }).collect::<Vec<_>>());
    }
    if s.ios_synced > 0 {
        let row = ["sync".into(), format!("{}/s", num(s.sync_per_s)), "-".into(), "-".into(), s.ios_synced.to_string(), "-".into()];
        rates.add_row(row.into_iter().enumerate().map(|(i, v)| if i == 0 { Cell::new(v) } else { right(v) }).collect::<Vec<_>>());
    }
}

/// CPU use, CPU efficiency, service demand, the pinned CPUs', the depth
/// held and the other processes' CPU, with their warnings and notes.
fn cpu_lines(s: &crate::results::model::Summary) -> String {
    let c = &s.cpu;
    let cores: Vec<String> = c.per_core_pct.iter().map(|v| format!("{v:.0}")).collect();
    let mut text = String::new();
    text.push_str(&format!(
        "CPU {:.1}% of all cores (per core: {}), lunmark itself {:.1}%\nCPU efficiency {} IOPS per CPU%, {} MB/s per CPU%; service demand {} us CPU per KB\n",
        c.utilization_pct,
        cores.join(" "),
        c.process_pct,
        opt(c.iops_per_cpu_pct),
        opt(c.mbps_per_cpu_pct),
        opt(c.service_demand_us_per_kb)
    ));
    if let Some(p) = &c.pinned {
        let each: Vec<String> = p.per_cpu_pct.iter().map(|v| format!("{v:.0}")).collect();
        text.push_str(&format!(
            "pinned CPUs {}: {:.1}% busy (each: {}); {} IOPS per CPU%; service demand {} us CPU per KB\n",
            p.cpus,
            p.utilization_pct,
            each.join(" "),
            opt(p.iops_per_cpu_pct),
            opt(p.service_demand_us_per_kb)
        ));
    }
    if let Some(q) = &s.queue_depth {
        text.push_str(&format!("queue depth: {:.1} held of {} requested (mean I/Os in flight)\n", q.achieved, q.requested));
        if let Some(w) = &q.warning {
            text.push_str(&format!("warning: {w}\n"));
        }
        if let Some(n) = &q.note {
            text.push_str(&format!("note: {n}\n"));
        }
    }
    if let Some(o) = c.other_processes_pct {
        text.push_str(&format!("other processes: {o:.0}% of all cores{}\n", crate::results::model::top_names(&c.other_processes_top)));
        if let Some(why) = &c.other_processes_estimate {
            text.push_str(&format!("other processes: an estimate: {why}\n"));
        }
    }
    if let Some(w) = &c.warning {
        text.push_str(&format!("warning: {w}\n"));
    }
    text
}

/// The power line: the average draw, and per watt above idle where an idle
/// baseline was measured, else per watt; each measure named.
fn power_lines(pw: &crate::metrics::power::PowerStats) -> String {
    let Some(w) = pw.avg_watts else {
        return format!("power: not measured ({})\n", pw.reason.as_deref().unwrap_or("no source"));
    };
    let mut text = format!("power {} W average ({})", num(w), pw.source.as_deref().unwrap_or("?"));
    if let (Some(idle), Some(d)) = (pw.idle_watts, pw.delta_watts) {
        text.push_str(&format!(
            ", idle {} W, {} W above idle: {} IOPS and {} MB/s per watt above idle",
            num(idle),
            num(d),
            opt(pw.iops_per_delta_watt),
            opt(pw.mbps_per_delta_watt)
        ));
    } else {
        text.push_str(&format!(": {} IOPS and {} MB/s per watt", opt(pw.iops_per_watt), opt(pw.mbps_per_watt)));
    }
    text.push('\n');
    if let Some(r) = &pw.reason {
        text.push_str(&format!("  note: {r}\n"));
    }
    text
}

/// What verification checked and the first mismatches.
fn verify_lines(v: &crate::verify::VerifyStats, ios: u64) -> String {
    let mut text = String::new();
    text.push_str(&format!(
        "verify: {} checked, {} ({} written; {} of never-written blocks not checked; {} avoided)\n",
        counted(v.blocks_checked, "block"),
        if v.mismatches == 1 { "1 mismatch".to_string() } else { format!("{} mismatches", v.mismatches) },
        counted(v.blocks_written, "block"),
        counted(v.blocks_unchecked, "read"),
        counted(v.conflicts, "busy draw")
    ));
    if let Some(note) = forced_reads_note(v, ios) {
        text.push_str(&format!("  note: {note}\n"));
    }
    for m in &v.first {
        text.push_str(&format!(
            "  MISMATCH {} offset {}: {}; expected generation {}, found {}; first differing byte at {}\n",
            m.target,
            m.offset,
            m.what,
            m.expected.generation,
            m.found.map(|h| format!("generation {} offset {}", h.generation, h.offset)).unwrap_or_else(|| "no header".into()),
            m.first_bad_byte.map(|b| b.to_string()).unwrap_or_else(|| "-".into())
        ));
    }
    text
}

pub fn render_point(p: &Point) -> String {
    render_point_with(p, false)
}

/// A point's figures; `power_said`: the run's "power: not measured" was said once above.
fn render_point_with(p: &Point, power_said: bool) -> String {
    let s = &p.summary;
    let mut rates = Table::new();
    rates.load_preset(UTF8_BORDERS_ONLY).set_header(vec!["", "IOPS", "MB/s", "MiB/s", "I/Os", "bytes"]);
    for (name, iops, mbps, mibps, ios, bytes) in [
        ("read", s.read_iops, s.read_mbps, s.read_mibps, s.ios_read, s.bytes_read),
        ("write", s.write_iops, s.write_mbps, s.write_mibps, s.ios_written, s.bytes_written),
        ("total", s.iops, s.mbps, s.mibps, s.ios_read + s.ios_written + s.ios_trimmed, s.bytes_read + s.bytes_written),
    ] {
        if name == "total" {
            add_op_rows(&mut rates, s);
        }
        rates.add_row(vec![
            Cell::new(name),
            right(num(iops)),
            right(num(mbps)),
            right(num(mibps)),
            right(ios.to_string()),
            right(bytes.to_string()),
        ]);
    }
    let mut lat = Table::new();
    lat.load_preset(UTF8_BORDERS_ONLY).set_header(vec!["latency us", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"]);
    let row = |name: &str, l: &LatencyStats| {
        vec![
            Cell::new(name),
            right(num(l.mean)),
            right(num(l.p50)),
            right(num(l.p90)),
            right(num(l.p99)),
            right(num(l.p99_9)),
            right(num(l.p99_99)),
            right(num(l.max)),
        ]
    };
    for (name, l) in [("read", &s.latency_us.read), ("write", &s.latency_us.write)] {
        if l.count > 0 {
            lat.add_row(row(name, l));
        }
    }
    // Trims and syncs (when the point issued any) before "all", which counts trims too.
    for (name, l) in [("trim", &s.latency_us.trim), ("sync", &s.latency_us.sync)] {
        if let Some(l) = l {
            lat.add_row(row(name, l));
        }
    }
    lat.add_row(row("all", &s.latency_us.all));
    let mut text = format!("measured {:.2}s\n", s.duration_s);
    if let Some(note) = &p.cut_short {
        text.push_str(&format!("cut short: {note}\n"));
    }
    text.push_str(&format!("{rates}\n"));
    if let Some(l) = &s.line_rate {
        text.push_str(&line_rate_line(l));
    }
    if let Some(st) = &s.steady {
        text.push_str(&steady_line(st));
    }
    text.push_str(&format!("{lat}\n"));
    text.push_str(&crate::report::page::ranks::summary_lines(p));
    text.push_str(&in_flight_lines(s));
    text.push_str(&cpu_lines(s));
    text.push_str(&pacing_lines(p));
    if let Some(r) = &s.replay {
        text.push_str(&replay_lines(r));
    }
    if let Some(k) = &s.cache {
        text.push_str(&cache_lines(k));
    }
    if let Some(pw) = s.power.as_ref().filter(|_| !power_said) {
        text.push_str(&power_lines(pw));
    }
    if let Some(v) = &s.verify {
        text.push_str(&verify_lines(v, s.ios_read + s.ios_written));
    }
    if s.errors.total > 0 {
        text.push_str(&format!("I/O errors: {}\n", s.errors.total));
        for e in &s.errors.first {
            text.push_str(&format!("  {} offset {} ({:?}): {}\n", e.target, e.offset, e.op, e.message));
        }
    }
    text
}

/// I/Os outstanding at the end, when there were any, and the stall warning.
/// Verification changed the mix when many I/Os found their blocks busy at
/// every draw and ran as unchecked reads (a write among them is a read the
/// workload did not ask for): said when that is over 1% of the I/Os.
fn forced_reads_note(v: &crate::verify::VerifyStats, ios: u64) -> Option<String> {
    if ios == 0 || v.forced_unchecked_reads * 100 <= ios {
        return None;
    }
    Some(format!(
        "{} (ramp included) found their blocks taken by I/Os in flight {} draws in a row and ran as unchecked reads, \
         so the read/write mix differs from the one asked for: fewer I/Os in flight (--qd, --workers) or a larger region keeps it",
        counted(v.forced_unchecked_reads, "I/O"),
        crate::verify::MAX_DRAWS
    ))
}

fn in_flight_lines(s: &crate::results::model::Summary) -> String {
    let mut text = String::new();
    if let Some(reason) = &s.stall_reason {
        text.push_str(&format!("STALLED: {reason}. The figures above cover only the I/Os that completed.\n"));
    } else if s.in_flight_at_end > 0 {
        let abandoned = match s.abandoned_ios {
            0 => String::new(),
            n => format!("; {n} never completed and {} abandoned", if n == 1 { "was" } else { "were" }),
        };
        text.push_str(&format!(
            "in flight at the end: {}, the oldest for {} ms{abandoned}\n",
            counted(s.in_flight_at_end, "I/O"),
            opt(s.oldest_in_flight_ms)
        ));
    }
    text
}

/// "replay of t.csv (msr, 1200 records, speed 1), QD 32, 1 worker, 2 targets".
fn replay_workload_line(r: &crate::results::replay::ReplaySummary, w: &crate::workload::WorkloadSpec) -> String {
    crate::report::workload_text::replay_said(&r.file, &r.format, r.records, &r.speed, w)
}

/// "replay: 1200 of 1200 records issued, ... lag mean 12 us, max 340 us".
fn replay_lines(r: &crate::results::replay::ReplaySummary) -> String {
    let mut text = format!(
        "replay: {} of {} issued over a recorded span of {:.3} s ({}); {} skipped, {} wrapped\n",
        r.issued,
        counted(r.records, "record"),
        r.span_s,
        r.mapping.join(", "),
        r.skipped,
        counted(r.wrapped, "offset")
    );
    if r.bad_times > 0 || r.reordered > 0 {
        text.push_str(&format!(
            "replay order: {} out of time order in the trace, replayed by recorded time; {} skipped for a time that is not one\n",
            counted(r.reordered, "record"),
            r.bad_times
        ));
    }
    match (r.lag_mean_us, r.lag_max_us) {
        (Some(mean), Some(max)) => {
            text.push_str(&format!("replay lag (issue behind recorded time): mean {} us, max {} us\n", num(mean), num(max)))
        }
        _ => text.push_str("replay lag: none kept (speed max: no recorded timing to keep)\n"),
    }
    text
}

/// Rate, service time, group ratios, repeats and verdict, where the point has them.
fn pacing_lines(p: &Point) -> String {
    let s = &p.summary;
    let mut text = String::new();
    if let Some(svc) = &s.service_latency_us {
        text.push_str(&format!(
            "latency above is from each I/O's scheduled time; service time from submission: mean {} us, p99 {} us, max {} us\n",
            num(svc.all.mean),
            num(svc.all.p99),
            num(svc.all.max)
        ));
    }
    if let Some(r) = &s.rate {
        text.push_str(&format!(
            "rate: target {} IOPS, achieved {} IOPS{}\n",
            num(r.target_iops),
            num(r.achieved_iops),
            if r.held { ", held" } else { "" }
        ));
        if let Some(note) = &r.note {
            text.push_str(&format!("  {note}\n"));
        }
    }
    for g in &p.groups {
        // Groups that start apart: each one's figures are over its own window.
        let window = match g.window {
            None => String::new(),
            Some(w) if w.duration_s <= 0.0 => format!(", to start at {:.1} s: the point ended before", w.start_s),
            Some(w) => format!(", measured {:.1}-{:.1} s of the span", w.start_s, w.start_s + w.duration_s),
        };
        text.push_str(&format!(
            "group {} ({}{window}): {} IOPS, {} MB/s, mean latency {} us",
            g.name,
            counted(g.workers, "worker"),
            num(g.iops),
            num(g.mbps),
            num(g.latency_us.all.mean)
        ));
        if let Some(f) = &g.follow {
            text.push_str(&format!(
                "; {}:{} IOPS ratio {:.2}:1 (asked {:.2}:1)",
                f.group,
                g.name,
                1.0 / f.achieved_ratio.max(1e-12),
                1.0 / f.target_ratio
            ));
        }
        text.push('\n');
    }
    if let Some(r) = &p.repeats {
        text.push_str(&format!(
            "repeats: {}, IOPS mean {} stdev {} (CV {:.1}%) min {} max {}; reporting run {}, {}\n",
            counted(r.count as u64, "run"),
            num(r.iops.mean),
            num(r.iops.stdev),
            r.iops.cv_pct,
            num(r.iops.min),
            num(r.iops.max),
            r.picked,
            pick_text(r.pick)
        ));
    }
    if let Some(v) = &p.verdict {
        text.push_str(&format!("verdict: {}\n", if v.passed { "PASS" } else { "FAIL" }));
        for c in &v.checks {
            let measured = c.value.map(|v| format!("measured {} {}", num(v), c.unit)).unwrap_or_else(|| "nothing measured".into());
            text.push_str(&format!("  {} {}: {measured}\n", if c.passed { "pass" } else { "FAIL" }, c.criterion));
            if let Some(note) = &c.note {
                text.push_str(&format!("    {note}\n"));
            }
        }
    }
    text
}

/// What the reported repeat is, said plainly: `--pick mean` reports one real
/// run (the one whose IOPS is nearest the mean), not the mean itself.
pub(super) fn pick_text(pick: Pick) -> &'static str {
    match pick {
        Pick::Mean => "the run nearest the mean IOPS",
        Pick::Median => "the run with the median IOPS",
        Pick::Best => "the run with the highest IOPS",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three repeats, --pick mean: the line names the reported run and says it
    /// is the one nearest the mean (its IOPS differ from the mean), in lower case.
    #[test]
    fn the_repeats_line_says_which_run_it_reports() {
        let runs = [100.0, 130.0, 90.0].map(|iops| crate::results::Summary { iops, ..Default::default() });
        let (index, stats) = crate::results::repeats::combine(&runs, Pick::Mean);
        let point = Point {
            params: Default::default(),
            summary: runs[index].clone(),
            groups: Vec::new(),
            repeats: Some(stats),
            verdict: None,
            workload: None,
            mpi: None,
            workers: Vec::new(),
            targets: Vec::new(),
            cut_short: None,
        };
        let text = render_point(&point);
        assert!(text.contains("IOPS mean 107"), "{text}");
        assert!(text.contains("reporting run 1, the run nearest the mean IOPS"), "{text}");
        assert!(!text.contains("(Mean)"), "{text}");
    }
}
