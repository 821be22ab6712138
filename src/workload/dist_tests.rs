//! Tests of the access distributions: shares over a million draws against the
//! exact values, the permutation, determinism, and the text form.

use super::*;

const DRAWS: u64 = 1_000_000;

fn dist(text: &str) -> Distribution {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Draws and counts hits per position.
fn counts(d: &Distribution, n: u64, seed: u64, elapsed_ns: u64) -> Vec<u64> {
    let s = Sampler::new(d, n, seed);
    let mut rng = Rng::for_stream(seed, 3);
    let mut c = vec![0u64; n as usize];
    for _ in 0..DRAWS {
        c[s.draw(&mut rng, elapsed_ns) as usize] += 1;
    }
    c
}

/// The share of draws on the positions of ranks [0, m): the hottest m blocks.
fn share_of_ranks(d: &Distribution, n: u64, seed: u64, c: &[u64], ranks: std::ops::Range<u64>) -> f64 {
    let perm = (d.layout == Layout::Scattered).then(|| Permutation::new(n, seed));
    let hits: u64 = ranks.map(|r| c[perm.as_ref().map_or(r, |p| p.apply(r)) as usize]).sum();
    hits as f64 / DRAWS as f64
}

fn check_hottest_tenth(text: &str, n: u64) {
    let d = dist(text);
    let seed = 7;
    let c = counts(&d, n, seed, 0);
    let m = n / 10;
    let got = share_of_ranks(&d, n, seed, &c, 0..m);
    let want = d.hottest_share(n, 0.1).unwrap();
    assert!((got - want).abs() < 0.01, "{text} over {n} blocks: hottest 10% got {:.3}%, exact {:.3}%", got * 100.0, want * 100.0);
}

#[test]
fn zipf_hottest_tenth_matches_the_exact_sum() {
    // Below, at and above theta = 1, where the sampler's helpers switch form.
    check_hottest_tenth("zipf:0.9", 100_000);
    check_hottest_tenth("zipf:1", 50_000);
    check_hottest_tenth("zipf:1.2", 10_000);
    check_hottest_tenth("zipf:0.5:contiguous", 20_000);
}

#[test]
fn zipf_exact_share_is_the_plain_sum() {
    // 10 blocks, theta 1: the hottest one gets 1 / H(10).
    let h10: f64 = (1..=10).map(|k| 1.0 / k as f64).sum();
    assert!((dist("zipf:1").hottest_share(10, 0.1).unwrap() - 1.0 / h10).abs() < 1e-12);
}

#[test]
fn pareto_hottest_tenth_matches_the_power_law() {
    check_hottest_tenth("pareto:0.8", 100_000);
    check_hottest_tenth("pareto:0.9", 10_000);
    // H = 0.8 is the 80/20 rule: the hottest 20% get 80%.
    assert!((dist("pareto:0.8").hottest_share(1000, 0.2).unwrap() - 0.8).abs() < 1e-9);
}

#[test]
fn zoned_shares_land_in_their_zones_within_half_a_point() {
    for text in ["zoned:80/20:20/80", "zoned:60/10:30/30:10/60", "zoned:50/5:0/45:50/50"] {
        let d = dist(text);
        let Shape::Zoned { zones } = &d.shape else { unreachable!() };
        let n = 10_000;
        let c = counts(&d, n, 11, 0);
        let bounds = zone_bounds(zones, n);
        for (z, b) in zones.iter().zip(bounds.windows(2)) {
            let got = c[b[0] as usize..b[1] as usize].iter().sum::<u64>() as f64 / DRAWS as f64 * 100.0;
            assert!((got - z.access).abs() < 0.5, "{text}: zone {}/{} got {got:.2}%", z.access, z.region);
        }
    }
    // 80/20: the hottest 10% of blocks are half the hot zone: 40%.
    assert!((dist("zoned:80/20:20/80").hottest_share(1000, 0.1).unwrap() - 0.4).abs() < 1e-9);
}

#[test]
fn normal_keeps_a_sigma_around_the_centre() {
    let d = dist("normal:10%");
    let n = 100_000;
    let c = counts(&d, n, 5, 0);
    let within: u64 = c[40_000..60_000].iter().sum();
    let got = within as f64 / DRAWS as f64;
    // P(|Z| < 1) = 0.6827; truncation at 5 sigma changes it by under 1e-6.
    assert!((got - 0.6827).abs() < 0.01, "within one sigma: {got}");
    // A wide one is truncated to the region, never outside it.
    let c = counts(&dist("normal:200%"), 1000, 5, 0);
    assert_eq!(c.iter().sum::<u64>(), DRAWS);
}

#[test]
fn the_hot_band_moves_with_time() {
    let d = dist("hotband:10%/80%/100s");
    let n = 10_000;
    // Band share: 80% plus the 20% uniform rest's tenth.
    let want = 0.8 + 0.2 * 0.1;
    for (t_s, start) in [(0u64, 0usize), (25, 2500), (95, 9500)] {
        let c = counts(&d, n, 9, t_s * 1_000_000_000);
        let band: u64 = (0..1000).map(|i| c[(start + i) % n as usize]).sum();
        let got = band as f64 / DRAWS as f64;
        assert!((got - want).abs() < 0.01, "at {t_s}s the band from {start} got {got}");
    }
}

#[test]
fn the_permutation_is_a_bijection_and_scatters() {
    for n in [1u64, 2, 3, 5, 1000, 4096, 65_537] {
        let p = Permutation::new(n, 42);
        let mut seen = vec![false; n as usize];
        for x in 0..n {
            let y = p.apply(x);
            assert!(y < n && !seen[y as usize], "n={n}: {x} -> {y}");
            seen[y as usize] = true;
        }
    }
    // The hottest tenth of a scattered zipf is spread over the region, not at its start.
    let p = Permutation::new(100_000, 42);
    let in_first_tenth = (0..10_000).filter(|&r| p.apply(r) < 10_000).count();
    assert!((500..=1500).contains(&in_first_tenth), "{in_first_tenth} of the hottest tenth in the first tenth");
    assert_ne!(
        (0..16).map(|x| p.apply(x)).collect::<Vec<_>>(),
        (0..16).map(|x| Permutation::new(100_000, 43).apply(x)).collect::<Vec<_>>()
    );
}

#[test]
fn same_seed_same_positions_other_seed_others() {
    for text in ["zipf:0.9", "pareto:0.8", "normal:5%", "zoned:80/20:20/80:scattered", "hotband:10%/80%/1s"] {
        let d = dist(text);
        let draw = |seed: u64| {
            let s = Sampler::new(&d, 1 << 20, seed);
            let mut rng = Rng::for_stream(seed, 0);
            (0..64).map(|i| s.draw(&mut rng, i * 10_000_000)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1), "{text}");
        assert_ne!(draw(1), draw(2), "{text}");
    }
}

#[test]
fn text_round_trips_and_layout_defaults() {
    for text in [
        "uniform",
        "zipf:0.9",
        "zipf:1.2:contiguous",
        "pareto:0.8",
        "normal:10%",
        "normal:5%:scattered",
        "zoned:80/20:20/80",
        "zoned:60/10:30/30:10/60:scattered",
        "hotband:10%/80%/60s",
    ] {
        assert_eq!(dist(text).to_string(), text);
    }
    assert_eq!(dist("zipf:0.9").layout, Layout::Scattered);
    assert_eq!(dist("zoned:80/20:20/80").layout, Layout::Contiguous);
    assert_eq!(dist("normal:10").to_string(), "normal:10%");
}

#[test]
fn bad_distributions_say_what_is_allowed() {
    for (text, says) in [
        ("zipf", "give one theta"),
        ("zipf:0", "above 0"),
        ("zipf:x", "'x' is not a number"),
        ("pareto:0.3", "between 0.5"),
        ("pareto:1", "between 0.5"),
        ("normal:0%", "above 0"),
        ("zoned:80/20:30/80", "access shares add up to 110%"),
        ("zoned:80/20:20", "not ACCESS%/REGION%"),
        ("zoned:100/0:0/100", "no part of the region"),
        ("hotband:10%/80%", "as in hotband:10%/80%/60s"),
        ("hotband:0%/80%/10s", "width"),
        ("hotband:10%/80%/0s", "period"),
        ("lognormal:3", "is not a distribution"),
    ] {
        let e = text.parse::<Distribution>().unwrap_err().to_string();
        assert!(e.contains(says), "{text}: {e}");
    }
}

/// A word where the layout goes is named as a layout, with the two that fit
/// (a user's trial: zipf:0.9:foo said "give one theta").
#[test]
fn a_bad_layout_suffix_is_named_with_the_two_allowed() {
    for (text, default) in [
        ("zipf:0.9:foo", "zipf's default is scattered"),
        ("pareto:0.8:scatter", "pareto's default is scattered"),
        ("normal:10%:contig", "normal's default is contiguous"),
        ("zoned:80/20:20/80:foo", "zoned's default is contiguous"),
        ("hotband:10%/80%/60s:foo", "hotband's default is contiguous"),
        ("uniform:foo", "uniform's default is contiguous"),
    ] {
        let e = text.parse::<Distribution>().unwrap_err().to_string();
        let word = text.rsplit(':').next().unwrap();
        assert!(e.starts_with(&format!("'{text}': the layout suffix ':{word}' is not one")), "{text}: {e}");
        assert!(e.contains(":scattered") && e.contains(":contiguous") && e.contains(default), "{text}: {e}");
    }
    // Numbers stay the shape's own errors; the suffixes themselves parse in any case.
    assert!("zipf:0.9:0.3".parse::<Distribution>().unwrap_err().to_string().contains("give one theta"));
    assert!("zoned:foo".parse::<Distribution>().unwrap_err().to_string().contains("zone 'foo' is not ACCESS%/REGION%"));
    assert_eq!(dist("zipf:0.9:Contiguous").layout, Layout::Contiguous);
    assert_eq!(dist("zoned:80/20:20/80:scattered").layout, Layout::Scattered);
}

#[test]
fn dry_run_text_says_where_the_hot_blocks_are() {
    // A normal distribution peaks at the region's middle.
    let normal = describe(Some(&dist("normal:10%")));
    assert!(normal.contains("centred on the region") && !normal.contains("region's start"), "{normal}");
    let zipf = describe(Some(&dist("zipf:0.9:contiguous")));
    assert!(zipf.contains("from the region's start"), "{zipf}");
}
