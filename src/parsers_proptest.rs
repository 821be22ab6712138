//! Property tests of every parser users type into: sizes, durations,
//! percentages, target URIs, profile files, sweep and --pass expressions,
//! and the verify journals `lunmark verify` reads back.
//! No input may panic; every rejection names what was wrong; what is accepted
//! prints back to itself. Bounded (256 cases each) so they run in CI.

use proptest::prelude::*;

use crate::results::pass;
use crate::targets::uri;
use crate::units::{parse_duration, parse_percent, parse_size, Bytes};
use crate::verify::journal::{self, record, tests::journal as journal_bytes, COMPLETED, SUBMITTED};
use crate::workload::{profile, sweep};

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn sizes_never_panic_and_round_trip(text in "\\PC{0,12}", n in 0u64..1 << 40) {
        if let Err(e) = parse_size(&text) {
            prop_assert!(e.to_string().contains(&text));
        }
        let b = Bytes(n);
        prop_assert_eq!(parse_size(&b.to_string()), Ok(b));
    }

    #[test]
    fn durations_and_percentages_never_panic(text in "\\PC{0,12}", ms in 0u64..10_000_000) {
        if let Err(e) = parse_duration(&text) {
            prop_assert!(e.to_string().contains("not a duration"));
        }
        prop_assert_eq!(parse_duration(&format!("{ms}ms")).unwrap().as_millis() as u64, ms);
        match parse_percent(&text) {
            Ok(v) => prop_assert!((0.0..=100.0).contains(&v)),
            Err(e) => prop_assert!(e.to_string().contains("0 to 100")),
        }
    }

    #[test]
    fn target_uris_never_panic(text in "(mem:|null:|file:|nbd://|/dev/|/tmp/)?\\PC{0,16}") {
        if let Err(e) = uri::parse(&text) {
            prop_assert!(e.to_string().contains("Targets are"));
        }
    }

    #[test]
    fn sweeps_and_pass_expressions_never_panic(text in "[a-z_.]{0,8}[=<>]{0,2}[0-9a-z.,%]{0,12}") {
        if let Err(e) = sweep::parse(&text) {
            prop_assert!(!e.to_string().is_empty());
        }
        if let Err(e) = pass::parse(&text) {
            prop_assert!(e.to_string().contains("pass criterion") || e.to_string().contains("no criterion"));
        }
    }

    /// Mutations of a real profile: a changed character anywhere gives a profile or a
    /// clear error, never a panic.
    #[test]
    fn mutated_profiles_never_panic(at in 0usize..2000, c in "\\PC") {
        let (_, text) = profile::BUILTIN[1];
        let mut t: Vec<char> = text.chars().collect();
        let i = at % t.len();
        t[i] = c.chars().next().unwrap_or('x');
        let t: String = t.into_iter().collect();
        if let Err(e) = profile::parse(&t, "mutant.toml") {
            prop_assert!(e.to_string().contains("mutant.toml"));
        }
    }

    /// A journal with bytes changed anywhere (header or records): it replays,
    /// or the error names the journal and line 1 or the record; every block it
    /// replays lies inside its target's region.
    #[test]
    fn mutated_journals_never_panic(at in 0usize..4000, bytes in proptest::collection::vec(any::<u8>(), 1..9), block_pow in 0u32..64) {
        let records: Vec<[u8; 24]> = (0..40u64).map(|b| record(if b % 3 == 0 { SUBMITTED } else { COMPLETED }, (b % 2) as u32, b, 1)).collect();
        let mut j = journal_bytes(4096, &[(0, 1 << 20), (1 << 20, 1 << 20)], &records);
        let i = at % j.len();
        for (k, b) in bytes.iter().enumerate() {
            if let Some(x) = j.get_mut(i + k) {
                *x = *b;
            }
        }
        match journal::read(&j[..], "mutant-j") {
            Ok(r) => {
                for &(t, b) in r.blocks.keys() {
                    let target = &r.header.targets[t as usize];
                    prop_assert!(b < target.len / r.header.block);
                    prop_assert!(r.offset(t as usize, b).checked_add(r.header.block).is_some_and(|end| end <= target.start + target.len));
                }
            }
            Err(e) => {
                let e = format!("{e:#}");
                prop_assert!(e.starts_with("mutant-j: line 1") || e.starts_with("mutant-j: record"), "{}", e);
            }
        }
        // Any block size in the header: refused or replayed, never a panic.
        let _ = journal::read(&journal_bytes(1u64 << block_pow, &[(0, 1 << 20)], &records)[..], "j");
    }
}
