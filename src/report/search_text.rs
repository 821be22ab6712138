//! The knee search as text (`--sla`, issue 28), for the terminal and the report page alike: each step's queue
//! depth, figures and every bound pass or FAIL, then what was found (or that
//! no load meets the bounds, with the lightest point's figures). Also the dry
//! run's account of a search and its worst-case time. Pure: data in, text out.

use comfy_table::{presets::UTF8_BORDERS_ONLY, Cell, Table};

use crate::report::cells::{num, right};
use crate::results::search::{SearchOutcome, SearchPoint, SearchSpec};

/// The steps as a table, then the found point and why the search ended.
pub fn render(s: &SearchOutcome) -> String {
    let mut out = format!("\nknee search (--sla {}): {}\n", s.expr, counted_steps(s.steps.len()));
    if let Some(w) = s.workers {
        out += &match s.fixed_qd {
            Some(qd) => format!("workers searched from {} to {} at qd={qd}\n", w.min, w.max),
            None => format!("workers searched from {} to {} at qd=1, then the queue depth at {} workers\n", w.min, w.max, w.max),
        };
    }
    if s.steps.is_empty() {
        return out + &format!("ended: {}\n", s.ended);
    }
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    let mut header = vec!["step".to_string(), "qd".into(), "workers".into(), "IOPS".into(), "MB/s".into(), "p99 us".into()];
    header.extend(s.steps[0].bounds.iter().map(|b| b.criterion.clone()));
    header.push("all bounds".into());
    t.set_header(header);
    for (i, p) in s.steps.iter().enumerate() {
        let mut row =
            vec![right((i + 1).to_string()), right(p.qd.to_string()), right(p.workers.to_string()), right(num(p.iops)), right(num(p.mbps))];
        row.push(right(num(p.p99_us)));
        for b in &p.bounds {
            let value = b.value.map(num).unwrap_or_else(|| "-".into());
            row.push(right(format!("{value} {}", if b.passed { "pass" } else { "FAIL" })));
        }
        row.push(Cell::new(match &p.unfinished {
            Some(why) => format!("({why})"),
            None if p.passed => "held".into(),
            None => "FAILED".into(),
        }));
        t.add_row(row);
    }
    out.push_str(&format!("{t}\n"));
    match (&s.found, s.steps.first()) {
        (Some(f), _) => out.push_str(&format!("found: {}{}\n", figures(f), bracket(s, f))),
        (None, Some(lightest)) => out.push_str(&format!(
            "NOT MET: no load meets these bounds; the lightest point ({}) gave {}{}\n",
            lightest.load().label(s.workers.is_some()),
            figures(lightest),
            failed_notes(lightest)
        )),
        (None, None) => {}
    }
    if let Some(f) = s.first_failing.as_ref().filter(|_| s.found.is_some()) {
        out.push_str(&format!("first failing: {}{}\n", figures(f), failed_notes(f)));
    }
    out += &format!("ended: {}\n", s.ended);
    match &s.tuning {
        Some(t) => out + &crate::report::tuning_text::render(t),
        None => out,
    }
}

/// Where the bisection ended, when the found point (the passing step of most
/// IOPS: throughput may dip past the knee) is not the deepest pass below the
/// first fail; empty when it is.
fn bracket(s: &SearchOutcome, found: &SearchPoint) -> String {
    let load = |p: &SearchPoint| p.load().outstanding();
    let Some(fail) = &s.first_failing else { return String::new() };
    let Some(pass) = s.steps.iter().filter(|p| p.passed && load(p) < load(fail)).max_by_key(|p| load(p)) else {
        return String::new();
    };
    if (pass.qd, pass.workers) == (found.qd, found.workers) {
        return String::new();
    }
    let label = |p: &SearchPoint| p.load().label(s.workers.is_some());
    format!("\n  (the passing step with the most IOPS; the bisection ended between {} (pass) and {} (fail))", label(pass), label(fail))
}

fn counted_steps(n: usize) -> String {
    crate::units::counted(n as u64, "step")
}

/// "qd=12 workers=1: 5,980 IOPS, 23.4 MB/s, p99 1,990 us; lat_p99<5ms 1,990 us".
fn figures(p: &SearchPoint) -> String {
    let bounds: Vec<String> = p
        .bounds
        .iter()
        .map(|b| format!("{} {}", b.criterion, b.value.map(|v| format!("{} {}", num(v), b.unit).trim().to_string()).unwrap_or("-".into())))
        .collect();
    format!(
        "qd={} workers={}: {} IOPS, {} MB/s, p99 {} us; {}",
        p.qd,
        p.workers,
        num(p.iops),
        num(p.mbps),
        num(p.p99_us),
        bounds.join(", ")
    )
}

/// Why the failing bounds failed, where the value alone does not say it.
fn failed_notes(p: &SearchPoint) -> String {
    let notes: Vec<String> =
        p.bounds.iter().filter(|b| !b.passed).filter_map(|b| b.note.clone().map(|n| format!("{}: {n}", b.criterion))).collect();
    if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    }
}

/// The dry run's lines: what the search does, its cap and its worst-case time.
/// `per_step` is one step's time (ramp and measured time, times the repeats); None when a step runs a count of I/Os.
pub fn describe(s: &SearchSpec, per_step: Option<std::time::Duration>) -> String {
    let tuning = crate::report::tuning_text::describe(s);
    tuning + &describe_steps(s, per_step)
}

/// The search's own line of `describe`.
fn describe_steps(s: &SearchSpec, per_step: Option<std::time::Duration>) -> String {
    let worst = s.worst_steps();
    let total = match per_step {
        Some(d) => format!("at most {} in all ({} each)", crate::units::format_duration(d * worst), crate::units::format_duration(d)),
        None => "each step runs its count of I/Os, so its time is not known beforehand".into(),
    };
    if s.searches_workers() {
        let (w, q0) = (s.workers, s.fixed_qd.unwrap_or(1));
        let then = match s.fixed_qd {
            Some(_) if s.tune.is_some() => "every group keeps the profile's queue depth".to_string(),
            Some(_) => "the queue depth stays at --qd's".to_string(),
            None => format!(
                "if every bound held at {} workers, the queue depth per worker is then doubled from 1 at {} workers and bisected the same way, at most {}",
                w.max, w.max, s.max_qd
            ),
        };
        return format!(
            "knee search (--sla {}): workers doubled from {} (to {} at most) at qd={q0} until a bound fails, then bisected between the last pass and the first fail; \
             {then}; the point above runs at each load chosen, as a point labelled workers=W qd=N judged on its measured interval; \
             so at most {} steps; {}\n",
            s.expr, w.min, w.max, worst, total
        );
    }
    format!(
        "knee search (--sla {}): queue depth doubled from 1 until a bound fails, then bisected between the last pass and the first fail; \
         the point above runs at each queue depth chosen, as a point labelled qd=N judged on its measured interval; \
         queue depth at most {}, so at most {} steps (no search takes more than {}); {}\n",
        s.expr, s.max_qd, worst, s.max_steps, total
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::search::{outcome, SearchSpec};

    fn step(qd: u32, iops: f64, passed: bool) -> SearchPoint {
        let check =
            crate::results::model::Check { criterion: "lat_p99<5ms".into(), value: Some(1.0), unit: "us".into(), passed, note: None };
        SearchPoint { point: 0, qd, workers: 1, iops, mbps: 0.0, p99_us: 0.0, passed, bounds: vec![check], unfinished: None }
    }

    #[test]
    fn a_found_point_short_of_where_the_bisection_ended_says_both() {
        let spec = SearchSpec::parse("lat_p99<5ms", 1024, 1).unwrap();
        let steps =
            vec![step(16, 29000.0, true), step(32, 1.0, false), step(24, 29535.0, true), step(28, 29361.0, true), step(29, 1.0, false)];
        let text = render(&outcome(&spec, steps, "ended".into()));
        assert!(
            text.contains("found: qd=24 workers=1: 29535 IOPS")
                && text.contains("(the passing step with the most IOPS; the bisection ended between qd=28 (pass) and qd=29 (fail))"),
            "{text}"
        );
        // Found where the bisection ended: nothing more to say.
        let text =
            render(&outcome(&spec, vec![step(1, 10.0, true), step(2, 20.0, true), step(4, 1.0, false), step(3, 30.0, true)], "e".into()));
        assert!(text.contains("found: qd=3") && !text.contains("bisection ended"), "{text}");
    }

    #[test]
    fn a_step_cut_short_is_shown_and_judges_nothing() {
        let spec = SearchSpec::parse("lat_p99<5ms", 1024, 1).unwrap();
        // The third step (qd=4) was stopped part way, with more IOPS than any finished one.
        let cut = SearchPoint { unfinished: Some("cut short".into()), ..step(4, 99999.0, true) };
        let text = render(&outcome(&spec, vec![step(1, 10.0, true), step(2, 20.0, true), cut], "interrupted".into()));
        let row = text.lines().find(|l| l.contains("99999")).unwrap_or_else(|| panic!("the cut step is in the table: {text}"));
        assert!(row.contains("(cut short)") && !row.contains("held"), "{row}");
        assert!(text.contains("found: qd=2"), "a cut step is never the found one: {text}");
        let failed = SearchPoint { unfinished: Some("failed: connection lost".into()), ..step(4, 5.0, false) };
        let o = outcome(&spec, vec![step(1, 10.0, true), failed], "failed".into());
        assert!(o.first_failing.is_none(), "a failed step is not past the knee: {:?}", o.first_failing);
        assert!(render(&o).contains("(failed: connection lost)"), "{}", render(&o));
    }
}
