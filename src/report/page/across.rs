//! Charts across results that differ in one setting none of them sweeps:
//! `report A B C` of runs at 1, 2 and 4 workers (or queue depths, transfer
//! sizes, target counts), each a single point or the same sweep, draws IOPS
//! and MB/s against that setting, one result per x value. Without it the
//! results only stand side by side as bars, and a scaling curve made of
//! separate runs is never drawn as one. Pure: results in, SVG text out.

use crate::report::page::charts::{self, Chart, Marks, Series};
use crate::report::rows::params_text;
use crate::report::{point_view, shown};
use crate::results::model::RunResult;
use crate::workload::WorkloadSpec;

/// A setting results may differ in and still be one curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setting {
    Qd,
    Workers,
    Bs,
    Targets,
}

impl Setting {
    const ALL: [Setting; 4] = [Setting::Qd, Setting::Workers, Setting::Bs, Setting::Targets];

    /// (chart id part, title words, x axis label).
    fn words(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Setting::Qd => ("qd", "queue depth", "outstanding I/Os per worker per target (QD), one result each"),
            Setting::Workers => ("workers", "workers", "workers, one result each"),
            Setting::Bs => ("bs", "transfer size", "transfer size (KiB), one result each"),
            Setting::Targets => ("targets", "target count", "targets, one result each"),
        }
    }

    /// The setting's value in a workload, when every worker group has the
    /// same one (a profile whose groups differ has no single x).
    fn value(self, spec: &WorkloadSpec) -> Option<f64> {
        let mut values = spec.groups.iter().map(|g| match self {
            Setting::Qd => Some(g.qd as f64),
            Setting::Workers => Some(spec.group_workers(g) as f64),
            Setting::Bs => {
                let first = g.access.first()?.bs.get();
                g.access.iter().all(|l| l.bs.get() == first).then_some(first as f64 / 1024.0)
            }
            Setting::Targets => Some(spec.group_targets(g).len() as f64),
        });
        let first = values.next()??;
        values.all(|v| v == Some(first)).then_some(first)
    }

    /// What decides a point's figures, with this setting left out: two
    /// workloads that differ only in it have the same key. Run time and seed
    /// are not in it (they change no setting being compared).
    fn key_without(self, spec: &WorkloadSpec) -> String {
        let mut s = spec.clone();
        for g in &mut s.groups {
            match self {
                Setting::Qd => g.qd = 0,
                Setting::Workers => g.workers = 0,
                Setting::Bs => g.access.iter_mut().for_each(|l| {
                    l.bs = crate::units::Bytes(0);
                    l.align = None;
                }),
                Setting::Targets => g.targets.clear(),
            }
        }
        if self == Setting::Targets {
            s.targets.clear();
        }
        serde_json::to_string(&(&s.targets, &s.groups, &s.engine, s.buffered, &s.size, &s.offset, &s.replay, &s.data)).unwrap_or_default()
    }
}

/// The one setting the results differ in, with each result's value of it:
/// every result has the same points (by their parameters, in order), the
/// same workload at each but for the setting, and a value of its own.
fn varied(results: &[&RunResult]) -> Option<(Setting, Vec<f64>)> {
    let keys = |r: &RunResult| r.points.iter().map(params_text).collect::<Vec<_>>();
    if results.len() < 2 || results[0].points.is_empty() || results.iter().any(|r| keys(r) != keys(results[0])) {
        return None;
    }
    let specs: Vec<Vec<WorkloadSpec>> =
        results.iter().map(|r| r.points.iter().map(|p| point_view::spec(r, p)).collect::<Option<Vec<_>>>()).collect::<Option<_>>()?;
    Setting::ALL.into_iter().find_map(|setting| {
        let mut values: Option<Vec<f64>> = None;
        for i in 0..results[0].points.len() {
            let at: Vec<f64> = specs.iter().map(|s| setting.value(&s[i])).collect::<Option<_>>()?;
            let key = setting.key_without(&specs[0][i]);
            let distinct = at.iter().enumerate().all(|(a, v)| at[..a].iter().all(|w| w != v));
            // One value per result across its points (else the x of a result is not one number).
            if !distinct || specs.iter().any(|s| setting.key_without(&s[i]) != key) || values.as_ref().is_some_and(|v| *v != at) {
                return None;
            }
            values = Some(at);
        }
        Some((setting, values?))
    })
}

/// IOPS and MB/s against the setting the results differ in: one line per
/// point they share (one line for single-point results), a marker per result.
pub fn charts(results: &[&RunResult], names: &[String]) -> Vec<Chart> {
    let Some((setting, values)) = varied(results) else { return Vec::new() };
    let (id, words, x_label) = setting.words();
    let mut order: Vec<usize> = (0..results.len()).collect();
    order.sort_by(|a, b| values[*a].total_cmp(&values[*b]));
    let x: Vec<f64> = order.iter().map(|r| values[*r]).collect();
    let which: Vec<String> = order.iter().map(|r| format!("{}: {}", charts::compact(&values[*r]), names[*r])).collect();
    let chart = |what: &str, y: &str, key: &str| {
        let (series, marks): (Vec<Series>, Vec<Marks>) = results[0]
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let figs: Vec<shown::Fig> = order.iter().map(|r| shown::fig(&results[*r].points[i], key)).collect();
                let label = match params_text(p).as_str() {
                    "-" => format!("{} results", results.len()),
                    text => text.to_string(),
                };
                (
                    Series { label, values: figs.iter().map(|f| f.value).collect() },
                    Marks { stdev: figs.iter().map(|f| f.stdev).collect(), missing: figs.iter().map(|f| f.missing.is_some()).collect() },
                )
            })
            .unzip();
        let title = format!("{what} against {words}, across results");
        let spread = marks.iter().any(|m| m.stdev.iter().any(Option::is_some));
        let note = if spread { ". Points are the mean of each point's repeats; error bars ± 1 standard deviation" } else { "" };
        Chart {
            id: format!("{}-{id}-across", key.split('.').next().unwrap_or(key)),
            caption: format!("{title} (each x is one result: {}){note}", which.join("; ")),
            svg: charts::lines_at_values_marked(&title, x_label, y, &x, &series, setting != Setting::Targets, &marks),
        }
    };
    vec![chart("IOPS", "IOPS (I/O per second)", "iops"), chart("Throughput", "MB/s (10^6 bytes per second)", "mbps")]
}
