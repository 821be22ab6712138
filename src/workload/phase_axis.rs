//! Whether the phases of a profile stay a separate axis of a sweep, and what
//! each is called there. A sweep (or a flag) that sets what the phases differ
//! in makes them the same workload: `database --sweep bs=8k,4k` runs its
//! phases "4k" and "8k" both at 8k, then both at 4k. Such phases are one point
//! each, not one per phase; and where phases stay apart, the words of a phase's
//! name that describe what a sweep or flag replaced ("4k" under `--bs`,
//! "randwrite" under `--read`, "qd8" under `--qd`) are dropped, so no label
//! names a size, direction or depth the point did not run. Phases the user
//! wrote alike (a warm-up, then the same workload measured) are never folded
//! into one another: only phases a sweep or flag made alike are. Pure.

use super::WorkloadSpec;
use crate::units::parse_size;

/// What a sweep or a flag sets for every phase, so a phase's name no longer
/// describes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overridden {
    /// The transfer size (`--bs`, a `bs` sweep).
    pub size: bool,
    /// The read share (`--read`, a `read` sweep): "read", "write", "rw" in a name.
    pub direction: bool,
    /// The random share (`--random`, a `random` sweep): "rand", "seq" in a name.
    pub order: bool,
    /// The queue depth (`--qd`, a `qd` sweep).
    pub depth: bool,
}

/// One phase of one sweep point: its name, its workload with the point's
/// values applied, and the index of the first phase written exactly like it
/// in the profile (its own index when none before it is).
pub struct PhasePoint<'a> {
    pub name: &'a str,
    pub spec: &'a WorkloadSpec,
    pub written_as: usize,
}

/// Of the phases of one sweep point (in profile order): the ones that run,
/// each with the name its label gives it, or None when the phases are one
/// workload (no phase axis).
pub fn distinct(phases: &[PhasePoint], overridden: Overridden) -> Vec<(usize, Option<String>)> {
    // Phases that ended up the same workload, in order of first appearance; a
    // phase never joins a group holding one written like it.
    // Phases are matched through their workload's text, found in a map (a
    // search of every group for every phase made 100 K phases quadratic).
    // The groups of one workload that hold a given `written_as` are always
    // the first ones made, so the next phase written as it joins the group
    // after them: the count of such phases so far is its place.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_spec: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
    let mut seen: std::collections::HashMap<(String, usize), usize> = std::collections::HashMap::new();
    for (i, p) in phases.iter().enumerate() {
        let text = serde_json::to_string(p.spec).expect("a workload serialises");
        let place = seen.entry((text.clone(), p.written_as)).or_default();
        let alike = by_spec.entry(text).or_default();
        match alike.get(*place) {
            Some(&g) => groups[g].push(i),
            None => {
                alike.push(groups.len());
                groups.push(vec![i]);
            }
        }
        *place += 1;
    }
    if groups.len() == 1 {
        return vec![(0, None)];
    }
    let named: Vec<String> = groups
        .iter()
        .map(|g| {
            let mut names: Vec<String> = g.iter().map(|&i| still_true(phases[i].name, overridden)).filter(|n| !n.is_empty()).collect();
            names.dedup();
            names.join("+")
        })
        .collect();
    // A name left empty, or one two groups share, is told apart by the place
    // of its first phase in the profile ("#2", "randread#3").
    let mut uses: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for n in &named {
        *uses.entry(n).or_default() += 1;
    }
    let unique = |n: &String| !n.is_empty() && uses[n.as_str()] == 1;
    groups.iter().zip(&named).map(|(g, n)| (g[0], Some(if unique(n) { n.clone() } else { format!("{n}#{}", g[0] + 1) }))).collect()
}

/// A phase's name without what it says of the overridden: "randread-4k" under
/// `--bs` is "randread", under `--read` "rand-4k", under `--random` "read-4k".
fn still_true(name: &str, o: Overridden) -> String {
    name.split('-')
        .filter_map(|w| match pattern(w) {
            Some((order, direction)) => {
                let kept: String = [(!o.order).then_some(order), (!o.direction).then_some(direction)].into_iter().flatten().collect();
                Some(kept).filter(|k| !k.is_empty())
            }
            None if o.size && is_size(w) || o.depth && is_depth(w) => None,
            None => Some(w.to_string()),
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// "4k", "128K", "1m": a size with its unit (a bare number is not taken for one).
fn is_size(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_alphabetic()) && parse_size(word).is_ok()
}

/// A word of order and direction, split: "randread" is ("rand", "read"),
/// "seq" ("seq", ""), "rw" ("", "rw"); None for any other word.
fn pattern(word: &str) -> Option<(&str, &str)> {
    let lower = word.to_ascii_lowercase();
    let order_len = ["random", "rand", "seq"].iter().find(|o| lower.starts_with(*o)).map_or(0, |o| o.len());
    let (order, direction) = word.split_at(order_len);
    let is_direction = ["read", "write", "rw", "readwrite", "mixed", "reads", "writes"].contains(&direction.to_ascii_lowercase().as_str());
    (direction.is_empty() && order_len > 0 || is_direction).then_some((order, direction))
}

/// "qd8", "8qd": a queue depth.
fn is_depth(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    let digits = w.strip_prefix("qd").or_else(|| w.strip_suffix("qd"));
    digits.is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    fn spec(bs: u64, read: f64) -> WorkloadSpec {
        let mut s = crate::workload::spec::tests::one_line_spec();
        s.groups[0].access[0].bs = Bytes(bs);
        s.groups[0].access[0].read = read;
        s
    }

    /// Phases written apart (each its own `written_as`).
    fn apart<'a>(phases: &[(&'a str, &'a WorkloadSpec)]) -> Vec<PhasePoint<'a>> {
        phases.iter().enumerate().map(|(i, (name, spec))| PhasePoint { name, spec, written_as: i }).collect()
    }

    const SIZE: Overridden = Overridden { size: true, ..NONE };
    const READ: Overridden = Overridden { direction: true, ..NONE };
    const NONE: Overridden = Overridden { size: false, direction: false, order: false, depth: false };

    #[test]
    fn phases_made_one_workload_are_one_point_without_a_phase() {
        let a = spec(8192, 66.0);
        assert_eq!(distinct(&apart(&[("4k", &a), ("8k", &a)]), SIZE), vec![(0, None)]);
    }

    #[test]
    fn phases_that_stay_apart_drop_the_size_they_no_longer_run() {
        let (r, w) = (spec(8192, 100.0), spec(8192, 0.0));
        let phases = apart(&[("randread-4k", &r), ("randread-8k", &r), ("randwrite-4k", &w), ("randwrite-8k", &w)]);
        assert_eq!(distinct(&phases, SIZE), vec![(0, Some("randread".into())), (2, Some("randwrite".into()))]);
        // Sizes left as the profile has them: the names are right as they are.
        let (a, b) = (spec(4096, 100.0), spec(8192, 100.0));
        assert_eq!(
            distinct(&apart(&[("randread-4k", &a), ("randread-8k", &b)]), NONE),
            vec![(0, Some("randread-4k".into())), (1, Some("randread-8k".into()))]
        );
    }

    #[test]
    fn a_direction_or_order_set_for_all_phases_leaves_their_names() {
        // oltp-db --read 100: "randwrite-16k" runs random reads, so it is "rand-16k".
        let (a, b) = (spec(8192, 100.0), spec(16384, 100.0));
        assert_eq!(
            distinct(&apart(&[("randread-8k", &a), ("randwrite-16k", &b)]), READ),
            vec![(0, Some("rand-8k".into())), (1, Some("rand-16k".into()))]
        );
        // quick --read 100: the 4k pair and the 128k pair are one workload each.
        let phases = apart(&[("4k-randread", &a), ("4k-randwrite", &a), ("128k-seqread", &b), ("128k-seqwrite", &b)]);
        assert_eq!(distinct(&phases, READ), vec![(0, Some("4k-rand".into())), (2, Some("128k-seq".into()))]);
        // quick --random 0: directions stay, orders go.
        let (r, w) = (spec(4096, 100.0), spec(4096, 0.0));
        let order = Overridden { order: true, ..NONE };
        assert_eq!(
            distinct(&apart(&[("4k-randread", &r), ("4k-randwrite", &w)]), order),
            vec![(0, Some("4k-read".into())), (1, Some("4k-write".into()))]
        );
        let depth = Overridden { depth: true, ..NONE };
        assert_eq!(
            distinct(&apart(&[("read-qd1", &a), ("write-qd8", &b)]), depth),
            vec![(0, Some("read".into())), (1, Some("write".into()))]
        );
        // Words that only look alike are kept: "readiness", "sequence", "warmup".
        assert_eq!(
            still_true("readiness-sequence-warmup", Overridden { direction: true, order: true, ..NONE }),
            "readiness-sequence-warmup"
        );
    }

    #[test]
    fn names_that_would_be_empty_or_alike_are_told_apart_by_their_place() {
        let (r, w) = (spec(8192, 100.0), spec(8192, 0.0));
        assert_eq!(distinct(&apart(&[("4k", &r), ("8k", &w)]), SIZE), vec![(0, Some("#1".into())), (1, Some("#2".into()))]);
        assert_eq!(distinct(&apart(&[("x-4k", &r), ("x-8k", &w)]), SIZE), vec![(0, Some("x#1".into())), (1, Some("x#2".into()))]);
        // A bare number is no size: "phase-1" keeps its number.
        assert_eq!(
            distinct(&apart(&[("phase-1", &r), ("phase-2", &w)]), SIZE),
            vec![(0, Some("phase-1".into())), (1, Some("phase-2".into()))]
        );
    }

    #[test]
    fn phases_written_alike_stay_apart_and_a_phase_made_like_them_joins_the_first() {
        // warmup and measure written alike; big-8k made like them by --bs 16k.
        let a = spec(16384, 100.0);
        let phases = [
            PhasePoint { name: "warmup", spec: &a, written_as: 0 },
            PhasePoint { name: "measure", spec: &a, written_as: 0 },
            PhasePoint { name: "big-8k", spec: &a, written_as: 2 },
        ];
        assert_eq!(distinct(&phases, SIZE), vec![(0, Some("warmup+big".into())), (1, Some("measure".into()))]);
    }
}
