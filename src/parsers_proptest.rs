//! Property tests of every parser users type into: sizes, durations,
//! percentages, target URIs, profile files, sweep and --pass expressions.
//! No input may panic; every rejection names what was wrong; what is accepted
//! prints back to itself. Bounded (256 cases each) so they run in CI.

use proptest::prelude::*;

use crate::target::uri;
use crate::units::{parse_duration, parse_percent, parse_size, Bytes};
use crate::workload::{pass, profile, sweep};

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
}
