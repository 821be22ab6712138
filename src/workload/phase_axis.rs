//! Whether the phases of a profile stay a separate axis of a sweep, and what
//! each is called there. A sweep (or a flag) that sets what the phases differ
//! in makes them the same workload: `database --sweep bs=8k,4k` runs its
//! phases "4k" and "8k" both at 8k, then both at 4k. Such phases are one point
//! each, not one per phase; and where phases stay apart (reads and writes of
//! `line-rate`), a transfer size in a phase's name ("randread-4k") is dropped
//! when the transfer size is set for every phase, so no label names a size the
//! point did not run. Pure.

use super::WorkloadSpec;
use crate::units::parse_size;

/// Of the phases of one sweep point (phase name, its workload with the
/// point's values applied, in profile order): the ones that run, each with the
/// name its label gives it, or None when the phases are one workload (no phase
/// axis). `size_set` is true when a sweep or a flag sets the transfer size of
/// every phase.
pub fn distinct(phases: &[(&str, &WorkloadSpec)], size_set: bool) -> Vec<(usize, Option<String>)> {
    // Phases that ended up the same workload, in order of first appearance.
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, (_, spec)) in phases.iter().enumerate() {
        match groups.iter_mut().find(|g| phases[g[0]].1 == *spec) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    if groups.len() == 1 {
        return vec![(0, None)];
    }
    let joined = |g: &[usize]| g.iter().map(|&i| phases[i].0).collect::<Vec<_>>().join("+");
    let named: Vec<String> = groups
        .iter()
        .map(|g| {
            let mut names: Vec<String> =
                g.iter().map(|&i| if size_set { without_sizes(phases[i].0) } else { phases[i].0.to_string() }).collect();
            names.dedup();
            match names.as_slice() {
                [one] if !one.is_empty() => one.clone(),
                _ => joined(g),
            }
        })
        .collect();
    // Two groups under one name would be told apart by nothing: their phases' names instead.
    let unique = named.iter().all(|n| named.iter().filter(|m| *m == n).count() == 1);
    groups.iter().zip(named).map(|(g, n)| (g[0], Some(if unique { n } else { joined(g) }))).collect()
}

/// A phase's name without the words that are transfer sizes: "randread-4k"
/// is "randread", "128k-seqwrite" is "seqwrite", "4k" is "".
fn without_sizes(name: &str) -> String {
    name.split('-').filter(|w| parse_size(w).is_err()).collect::<Vec<_>>().join("-")
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

    #[test]
    fn phases_made_one_workload_are_one_point_without_a_phase() {
        let a = spec(8192, 66.0);
        assert_eq!(distinct(&[("4k", &a), ("8k", &a)], true), vec![(0, None)]);
    }

    #[test]
    fn phases_that_stay_apart_drop_the_size_they_no_longer_run() {
        let (r, w) = (spec(8192, 100.0), spec(8192, 0.0));
        let phases = [("randread-4k", &r), ("randread-8k", &r), ("randwrite-4k", &w), ("randwrite-8k", &w)];
        assert_eq!(distinct(&phases, true), vec![(0, Some("randread".into())), (2, Some("randwrite".into()))]);
        // Sizes left as the profile has them: the names are right as they are.
        let (a, b) = (spec(4096, 100.0), spec(8192, 100.0));
        assert_eq!(
            distinct(&[("randread-4k", &a), ("randread-8k", &b)], false),
            vec![(0, Some("randread-4k".into())), (1, Some("randread-8k".into()))]
        );
    }

    #[test]
    fn names_that_would_be_empty_or_alike_keep_the_phases_names() {
        let (r, w) = (spec(8192, 100.0), spec(8192, 0.0));
        assert_eq!(distinct(&[("4k", &r), ("8k", &w)], true), vec![(0, Some("4k".into())), (1, Some("8k".into()))]);
        assert_eq!(distinct(&[("x-4k", &r), ("x-8k", &w)], true), vec![(0, Some("x-4k".into())), (1, Some("x-8k".into()))]);
    }
}
