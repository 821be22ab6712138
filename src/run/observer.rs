//! What a run tells whoever watches it (like ripgrep's `Sink`): the run
//! prints nothing itself. It says when it starts (the plan), each second's
//! figures of a point (`tick`), each finished point (the result so far), the
//! warnings and notes it wants said, and the result at the end. The live view,
//! keeping the result after each point (store, `--json FILE`) and the labs are
//! observers; several watch one run through `Fanout`.

use super::live::LiveFigures;
use super::plan::RunPlan;
use crate::results::model::RunResult;

/// Told about a run as it goes. Every method does nothing unless implemented.
pub trait RunObserver {
    /// The targets are checked and the first point is about to start: the plan that runs.
    fn started(&mut self, _plan: &RunPlan) {}
    /// A point's progress, about once a second: the ramp, a measured second
    /// every worker has reported, or silent workers.
    fn tick(&mut self, _figures: &LiveFigures<'_>) {}
    /// A point (with its repeats) is done: the result as it stands.
    fn point_finished(&mut self, _result: &RunResult) {}
    /// A warning or a note the run wants said, as a whole line ("warning: ...").
    fn note(&mut self, _text: &str) {}
    /// The run ended (completed, failed or interrupted): its result.
    fn finished(&mut self, _result: &RunResult) {}
}

/// An observer that does nothing.
pub struct NoObserver;
impl RunObserver for NoObserver {}

/// Several observers watching one run, each told in turn, in order.
#[derive(Default)]
pub struct Fanout<'a>(pub Vec<&'a mut dyn RunObserver>);

impl RunObserver for Fanout<'_> {
    fn started(&mut self, plan: &RunPlan) {
        self.0.iter_mut().for_each(|o| o.started(plan));
    }
    fn tick(&mut self, figures: &LiveFigures<'_>) {
        self.0.iter_mut().for_each(|o| o.tick(figures));
    }
    fn point_finished(&mut self, result: &RunResult) {
        self.0.iter_mut().for_each(|o| o.point_finished(result));
    }
    fn note(&mut self, text: &str) {
        self.0.iter_mut().for_each(|o| o.note(text));
    }
    fn finished(&mut self, result: &RunResult) {
        self.0.iter_mut().for_each(|o| o.finished(result));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{PlannedPoint, RunContext};

    /// What an observer was told, in order.
    #[derive(Debug, PartialEq)]
    enum Call {
        Started(usize),
        Tick { point: usize, measured: bool },
        PointFinished(usize),
        Note(String),
        Finished(usize),
    }

    #[derive(Default)]
    struct Recording(Vec<Call>);

    impl RunObserver for Recording {
        fn started(&mut self, plan: &RunPlan) {
            self.0.push(Call::Started(plan.points.len()));
        }
        fn tick(&mut self, f: &LiveFigures<'_>) {
            self.0.push(Call::Tick { point: f.point, measured: f.second.is_some() });
        }
        fn point_finished(&mut self, result: &RunResult) {
            self.0.push(Call::PointFinished(result.points.len()));
        }
        fn note(&mut self, text: &str) {
            self.0.push(Call::Note(text.to_string()));
        }
        fn finished(&mut self, result: &RunResult) {
            self.0.push(Call::Finished(result.points.len()));
        }
    }

    fn point(bs: &str) -> PlannedPoint {
        let spec: crate::workload::WorkloadSpec = serde_json::from_value(serde_json::json!({
            "targets": ["mem:1m"], "ramp": "0s", "run": {"time": "1s"}, "seed": 1,
            "groups": [{"name": "main", "workers": 1, "qd": 1, "access": [{"share": 100.0, "bs": bs, "read": 100.0, "random": 100.0}]}]
        }))
        .unwrap();
        PlannedPoint::new(Default::default(), format!("bs={bs}"), spec, vec![1], vec![crate::targets::Target::parse("mem:1m").unwrap()])
    }

    /// A two-point run on mem: through `run::execute`: the observer is told it
    /// started, the plan's warning, each point's measured seconds before that
    /// point finished, each point, and the end, in that order, and nothing is
    /// printed by the run itself (the recorder is the only observer).
    #[test]
    fn an_observer_is_told_start_ticks_points_and_end_in_order() {
        let plan = RunPlan {
            points: vec![point("4k"), point("8k")],
            warnings: vec!["a warning of the plan".into()],
            repeat: 1,
            pick: Default::default(),
            criteria: vec![],
            profile: None,
            replay: None,
            rounds: None,
            search: None,
            curve: None,
        };
        let ctx = RunContext { quiet: true, ..Default::default() };
        let mut seen = Recording::default();
        let ready = crate::run::check(plan, &ctx).expect("a plan on mem:");
        let result = crate::run::execute(&ready, &ctx, &mut seen).expect("a run on mem:");
        assert_eq!(result.points.len(), 2);
        let calls = seen.0;
        assert_eq!(calls.first(), Some(&Call::Started(2)), "{calls:?}");
        assert_eq!(calls.get(1), Some(&Call::Note("warning: a warning of the plan".into())), "{calls:?}");
        assert_eq!(calls.last(), Some(&Call::Finished(2)), "{calls:?}");
        let finished_at = |n: usize| calls.iter().position(|c| *c == Call::PointFinished(n)).unwrap_or_else(|| panic!("{calls:?}"));
        let (first, second) = (finished_at(1), finished_at(2));
        assert!(first < second, "{calls:?}");
        // Each point's measured seconds are told while it runs: before it finished, after the one before.
        let measured = |p: usize| {
            calls.iter().enumerate().filter(|(_, c)| **c == Call::Tick { point: p, measured: true }).map(|(i, _)| i).collect::<Vec<_>>()
        };
        let (ticks1, ticks2) = (measured(1), measured(2));
        assert!(!ticks1.is_empty() && ticks1.iter().all(|&i| i > 0 && i < first), "{calls:?}");
        assert!(!ticks2.is_empty() && ticks2.iter().all(|&i| i > first && i < second), "{calls:?}");
        assert_eq!(calls.iter().filter(|c| matches!(c, Call::Started(_) | Call::Finished(_))).count(), 2, "{calls:?}");
    }
}
