//! Access distributions: which aligned position of the region a random I/O
//! lands on. `uniform` (every position alike, the default), `zipf:THETA`,
//! `pareto:H`, `normal:SIGMA%`, `zoned:A/R:...` and `hotband:W%/H%/PERIOD`.
//!
//! Each distribution draws a *rank* in `[0, n)` over the `n` aligned positions
//! of the region. The rank becomes a position either as it is (`contiguous`:
//! rank 0 is the first position of the region) or through a seeded bijective
//! permutation of `[0, n)` (`scattered`), so that the hot blocks of zipf and
//! pareto are spread over the region as a database's hot rows are, instead of
//! sitting together at its start. The permutation is keyed by the run's seed
//! alone, so every worker of the run has the same hot blocks. Defaults: zipf
//! and pareto are scattered; normal, zoned and hotband are defined by places in
//! the region (its centre, zones in order, a band) and are contiguous. A
//! `:scattered` or `:contiguous` suffix chooses the other.
//!
//! Zipf uses rejection-inversion sampling (W. Hörmann and G. Derflinger,
//! "Rejection-inversion to generate variates from monotone discrete
//! distributions", ACM TOMACS 6(3):169-184, 1996): exact for any THETA > 0 and
//! any n, O(1) set-up and an expected number of trials close to 1. fio's own
//! zipf generator is not used (its maintainers call it flawed, fio issue 1991).
//! The definitions, with the exact share of the hottest blocks for each, are in
//! docs/profiles.md.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

use super::rng::Rng;
use crate::units::{format_duration, parse_duration};

/// One zone of `zoned`: `access` % of the I/Os go to the next `region` % of the region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    pub access: f64,
    pub region: f64,
}

/// The shape of a distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Uniform,
    /// P(rank k) proportional to 1 / (k+1)^theta.
    Zipf {
        theta: f64,
    },
    /// The hottest (1-H) of the positions get H of the accesses (0.8: 80/20).
    Pareto {
        h: f64,
    },
    /// Normal around the region's centre, standard deviation `sigma_pct` % of
    /// the region; draws outside the region are drawn again (truncated).
    Normal {
        sigma_pct: f64,
    },
    Zoned {
        zones: Vec<Zone>,
    },
    /// `hot_pct` % of the I/Os go to a band of `width_pct` % of the region whose
    /// start moves across the region once per `period` (wrapping at its end);
    /// the rest are uniform over the whole region.
    Hotband {
        width_pct: f64,
        hot_pct: f64,
        period: Duration,
    },
}

/// How ranks are laid over the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Rank r is position r.
    Contiguous,
    /// Rank r is position perm(r), a seeded permutation.
    Scattered,
}

/// A distribution as users write it: `zipf:0.9`, `zoned:80/20:20/80:scattered`.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution {
    pub shape: Shape,
    pub layout: Layout,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution { shape: Shape::Uniform, layout: Layout::Contiguous }
    }
}

impl Shape {
    /// The layout a shape has unless the text says otherwise.
    pub fn default_layout(&self) -> Layout {
        match self {
            Shape::Zipf { .. } | Shape::Pareto { .. } => Layout::Scattered,
            _ => Layout::Contiguous,
        }
    }
}

impl Distribution {
    pub fn is_uniform(&self) -> bool {
        self.shape == Shape::Uniform
    }

    /// Whether the distribution depends on the time since the start (hotband).
    pub fn moves(&self) -> bool {
        matches!(self.shape, Shape::Hotband { .. })
    }

    /// The exact share of accesses that land on the hottest `fraction` of `n`
    /// positions, for the shapes where it does not depend on time (None for
    /// normal and hotband). O(n) for zipf: for tests and documentation, not the run.
    pub fn hottest_share(&self, n: u64, fraction: f64) -> Option<f64> {
        let m = ((n as f64 * fraction).round() as u64).clamp(0, n);
        match &self.shape {
            Shape::Uniform => Some(m as f64 / n as f64),
            Shape::Zipf { theta } => {
                // Exact sums, largest terms last to keep the small ones.
                let sum = |upto: u64| (1..=upto).rev().map(|k| (k as f64).powf(-theta)).sum::<f64>();
                Some(sum(m) / sum(n))
            }
            Shape::Pareto { h } => Some(1.0 - (1.0 - m as f64 / n as f64).powf(pareto_exponent(*h))),
            Shape::Zoned { zones } => {
                // The hottest positions: zones by density, densest first.
                let bounds = zone_bounds(zones, n);
                let mut by_density: Vec<(f64, u64)> =
                    zones.iter().zip(bounds.windows(2)).map(|(z, b)| (z.access / 100.0, b[1] - b[0])).filter(|(_, len)| *len > 0).collect();
                by_density.sort_by(|a, b| (b.0 / b.1 as f64).total_cmp(&(a.0 / a.1 as f64)));
                let (mut left, mut share) = (m, 0.0);
                for (a, len) in by_density {
                    let take = left.min(len);
                    share += a * take as f64 / len as f64;
                    left -= take;
                }
                Some(share)
            }
            Shape::Normal { .. } | Shape::Hotband { .. } => None,
        }
    }
}

/// Text for `--dry-run` of a line's distribution ("" for uniform).
pub fn describe(dist: Option<&Distribution>) -> String {
    match dist {
        Some(d) if !d.is_uniform() => format!(
            ", random offsets {d} ({})",
            match (&d.shape, d.layout) {
                (Shape::Hotband { .. }, _) => "band moving from the region's start, time counted from the point's start",
                (_, Layout::Scattered) => "hot blocks scattered over the region by the seed",
                // A normal distribution peaks at the region's middle, not its start.
                (Shape::Normal { .. }, Layout::Contiguous) => "hot blocks in place, centred on the region",
                (_, Layout::Contiguous) => "hot blocks in place, from the region's start",
            }
        ),
        _ => String::new(),
    }
}

/// a in P(rank < f n) = 1 - (1 - f)^a: the hottest 1-H get H.
fn pareto_exponent(h: f64) -> f64 {
    (1.0 - h).ln() / h.ln()
}

#[derive(Debug, Error, PartialEq)]
pub enum DistError {
    #[error("'{text}' is not a distribution: write uniform, zipf:THETA, pareto:H, normal:SIGMA%, zoned:A/R:A/R... or hotband:W%/H%/PERIOD, optionally followed by :scattered or :contiguous (docs/profiles.md)")]
    Unknown { text: String },
    #[error("'{text}': {why}")]
    Bad { text: String, why: String },
}

fn number(text: &str, part: &str, what: &str) -> Result<f64, DistError> {
    let v: f64 = part
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| DistError::Bad { text: text.into(), why: format!("{what} '{part}' is not a number") })?;
    if !v.is_finite() {
        return Err(DistError::Bad { text: text.into(), why: format!("{what} '{part}' is not a finite number") });
    }
    Ok(v)
}

impl FromStr for Distribution {
    type Err = DistError;
    fn from_str(s: &str) -> Result<Self, DistError> {
        let text = s.trim();
        let bad = |why: &str| DistError::Bad { text: text.into(), why: why.into() };
        let mut parts: Vec<&str> = text.split(':').collect();
        let layout = match parts.last().map(|l| l.trim().to_ascii_lowercase()).as_deref() {
            Some("scattered") if parts.len() > 1 => {
                parts.pop();
                Some(Layout::Scattered)
            }
            Some("contiguous") if parts.len() > 1 => {
                parts.pop();
                Some(Layout::Contiguous)
            }
            _ => None,
        };
        let kind = parts[0].trim().to_ascii_lowercase();
        let args = &parts[1..];
        // A word where the layout goes (zipf:0.9:scatter) is a layout misspelt,
        // not a second THETA nor a zone: say which words fit there.
        if let Some(word) = misplaced_layout(&kind, args) {
            let default = match kind.as_str() {
                "zipf" | "pareto" => "scattered",
                _ => "contiguous",
            };
            return Err(bad(&format!(
                "the layout suffix ':{word}' is not one: end with :scattered (hot blocks spread over the region by the seed) \
                 or :contiguous (hot blocks in place), or leave it out ({kind}'s default is {default})"
            )));
        }
        let one = |what: &str| -> Result<f64, DistError> {
            match args {
                [v] => number(text, v, what),
                _ => Err(bad(&format!("give one {what}, as in {}:{}", parts[0], if what == "theta" { "0.9" } else { "0.8" }))),
            }
        };
        let shape = match kind.as_str() {
            "uniform" | "random" if args.is_empty() => Shape::Uniform,
            "zipf" => {
                let theta = one("theta")?;
                if theta <= 0.0 || theta > 100.0 {
                    return Err(bad("zipf's THETA must be above 0 (uniform) and at most 100; 0.9 to 1.2 are the usual"));
                }
                Shape::Zipf { theta }
            }
            "pareto" => {
                let h = one("H")?;
                if !(h > 0.5 && h < 1.0) {
                    return Err(bad(
                        "pareto's H must lie between 0.5 (uniform) and 1, both excluded: the hottest 1-H of the blocks get H of the accesses (0.8 is the 80/20 rule)",
                    ));
                }
                Shape::Pareto { h }
            }
            "normal" | "gauss" => {
                let sigma_pct = match args {
                    [v] => number(text, v, "SIGMA%")?,
                    _ => return Err(bad("give the standard deviation as a share of the region, as in normal:10%")),
                };
                if sigma_pct <= 0.0 || sigma_pct > 1000.0 {
                    return Err(bad("normal's SIGMA% must be above 0 and at most 1000 (% of the region)"));
                }
                Shape::Normal { sigma_pct }
            }
            "zoned" => zoned(text, args)?,
            "hotband" => hotband(text, args)?,
            _ => return Err(DistError::Unknown { text: text.into() }),
        };
        Ok(Distribution { layout: layout.unwrap_or_else(|| shape.default_layout()), shape })
    }
}

/// `zoned:A/R:A/R...`: access shares over region shares, each adding up to 100%.
fn zoned(text: &str, args: &[&str]) -> Result<Shape, DistError> {
    let bad = |why: &str| DistError::Bad { text: text.into(), why: why.into() };
    if args.is_empty() {
        return Err(bad("give zones as ACCESS%/REGION%, as in zoned:80/20:20/80"));
    }
    let mut zones = Vec::new();
    for z in args {
        let (a, r) = z.split_once('/').ok_or_else(|| bad(&format!("zone '{z}' is not ACCESS%/REGION%, as in 80/20")))?;
        let zone = Zone { access: number(text, a, "access share")?, region: number(text, r, "region share")? };
        if !(0.0..=100.0).contains(&zone.access) || !(0.0..=100.0).contains(&zone.region) {
            return Err(bad(&format!("zone '{z}': both shares are percentages between 0 and 100")));
        }
        if zone.access > 0.0 && zone.region == 0.0 {
            return Err(bad(&format!("zone '{z}' sends accesses to no part of the region")));
        }
        zones.push(zone);
    }
    let a: f64 = zones.iter().map(|z| z.access).sum();
    let r: f64 = zones.iter().map(|z| z.region).sum();
    if (a - 100.0).abs() > 0.01 || (r - 100.0).abs() > 0.01 {
        return Err(bad(&format!("the access shares add up to {a}% and the region shares to {r}%: both must add up to 100%")));
    }
    Ok(Shape::Zoned { zones })
}

/// `hotband:WIDTH%/HOT%/PERIOD`: a band of the region that takes HOT% of the accesses and crosses it in PERIOD.
fn hotband(text: &str, args: &[&str]) -> Result<Shape, DistError> {
    let bad = |why: &str| DistError::Bad { text: text.into(), why: why.into() };
    let usage = "give the band's width, its share of the accesses and the time it takes to cross the region, as in hotband:10%/80%/60s";
    let [spec] = args else { return Err(bad(usage)) };
    let fields: Vec<&str> = spec.split('/').collect();
    let [w, h, p] = fields.as_slice() else { return Err(bad(usage)) };
    let width_pct = number(text, w, "band width")?;
    let hot_pct = number(text, h, "hot share")?;
    let period = parse_duration(p.trim()).map_err(|e| bad(&format!("period '{p}': {e}")))?;
    if !(width_pct > 0.0 && width_pct <= 100.0) {
        return Err(bad("the band's width must be above 0% and at most 100% of the region"));
    }
    if !(0.0..=100.0).contains(&hot_pct) {
        return Err(bad("the band's share of the accesses must lie between 0% and 100%"));
    }
    if period.is_zero() {
        return Err(bad("the band's period must be longer than 0 (for example 60s)"));
    }
    Ok(Shape::Hotband { width_pct, hot_pct, period })
}

/// The last field of a distribution's text when it stands where the layout
/// goes and is a word, not a value of the shape: after the one value of zipf,
/// pareto, normal and hotband (or after uniform), or a zone without its `/`.
fn misplaced_layout<'a>(kind: &str, args: &[&'a str]) -> Option<&'a str> {
    let last = args.last()?.trim();
    let word = last.starts_with(|c: char| c.is_ascii_alphabetic());
    let values = match kind {
        "uniform" | "random" => 0,
        "zipf" | "pareto" | "normal" | "gauss" | "hotband" => 1,
        "zoned" if !last.contains('/') && args.len() > 1 => args.len() - 1,
        _ => return None,
    };
    (word && args.len() == values + 1).then_some(last)
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.shape {
            Shape::Uniform => write!(f, "uniform")?,
            Shape::Zipf { theta } => write!(f, "zipf:{theta}")?,
            Shape::Pareto { h } => write!(f, "pareto:{h}")?,
            Shape::Normal { sigma_pct } => write!(f, "normal:{sigma_pct}%")?,
            Shape::Zoned { zones } => {
                write!(f, "zoned")?;
                for z in zones {
                    write!(f, ":{}/{}", z.access, z.region)?;
                }
            }
            Shape::Hotband { width_pct, hot_pct, period } => write!(f, "hotband:{width_pct}%/{hot_pct}%/{}", format_duration(*period))?,
        }
        if self.layout != self.shape.default_layout() {
            write!(f, ":{}", if self.layout == Layout::Scattered { "scattered" } else { "contiguous" })?;
        }
        Ok(())
    }
}

impl Serialize for Distribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Distribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Zone boundaries in positions: zone i is [b[i], b[i+1]).
fn zone_bounds(zones: &[Zone], n: u64) -> Vec<u64> {
    let mut acc = 0.0;
    let mut bounds = vec![0u64];
    for (i, z) in zones.iter().enumerate() {
        acc += z.region;
        let end = if i + 1 == zones.len() { n } else { ((acc / 100.0) * n as f64).round() as u64 };
        bounds.push(end.clamp(*bounds.last().unwrap(), n));
    }
    bounds
}

/// A seeded bijection of [0, n): a balanced Feistel network over the smallest
/// even number of bits that covers n, walked until the value falls below n
/// (cycle-walking keeps it a bijection; the domain is under 4n, so fewer than
/// 4 rounds of walking are needed on average).
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let bits = bits + bits % 2;
        let mut rng = Rng::for_stream(seed, 0x5EED_FE15_7E1E_0001);
        let keys = [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()];
        Permutation { n, half_bits: bits / 2, mask: (1u64 << (bits / 2)) - 1, keys }
    }

    fn round(&self, x: u64, key: u64) -> u64 {
        let mut z = x.wrapping_add(key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (z ^ (z >> 32)) & self.mask
    }

    fn feistel(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask);
        for &k in &self.keys {
            let next = l ^ self.round(r, k);
            l = r;
            r = next;
        }
        (l << self.half_bits) | r
    }

    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        let mut y = self.feistel(x);
        while y >= self.n {
            y = self.feistel(y);
        }
        y
    }
}

/// Rejection-inversion zipf over ranks 1..=n (Hörmann & Derflinger 1996, in
/// the form of their paper's Algorithm ZRI with the helper functions that keep
/// it exact near theta = 1).
#[derive(Clone, Debug)]
struct ZipfRi {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    threshold: f64,
}

impl ZipfRi {
    fn new(n: u64, s: f64) -> Self {
        let mut z = ZipfRi { n: n as f64, s, h_integral_x1: 0.0, h_integral_n: 0.0, threshold: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.threshold = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// h(x) = x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// H(x) = (x^(1-s) - 1) / (1 - s), or ln x at s = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.s) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.threshold || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

/// ln(1 + x) / x, exact near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, exact near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

#[derive(Clone, Debug)]
enum Draw {
    Uniform,
    Zipf(ZipfRi),
    /// rank = floor(n (1 - v^p)), p = 1/a.
    Pareto {
        p: f64,
    },
    Normal {
        centre: f64,
        sd: f64,
    },
    /// Cumulative access share and the zone's [start, end).
    Zoned {
        zones: Vec<(f64, u64, u64)>,
    },
    Hotband {
        width: u64,
        hot: f64,
        period_ns: u64,
    },
}

/// Draws positions in [0, n) for one access line on one target.
#[derive(Clone, Debug)]
pub struct Sampler {
    n: u64,
    draw: Draw,
    perm: Option<Permutation>,
}

impl Sampler {
    /// A sampler over `n` positions; `seed` keys the permutation (the run's
    /// seed: every worker shares the hot blocks).
    pub fn new(dist: &Distribution, n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let draw = match &dist.shape {
            Shape::Uniform => Draw::Uniform,
            Shape::Zipf { theta } => Draw::Zipf(ZipfRi::new(n, *theta)),
            Shape::Pareto { h } => Draw::Pareto { p: 1.0 / pareto_exponent(*h) },
            Shape::Normal { sigma_pct } => Draw::Normal { centre: n as f64 / 2.0, sd: sigma_pct / 100.0 * n as f64 },
            Shape::Zoned { zones } => {
                let bounds = zone_bounds(zones, n);
                let mut acc = 0.0;
                let total: f64 = zones.iter().map(|z| z.access).sum();
                Draw::Zoned {
                    zones: zones
                        .iter()
                        .zip(bounds.windows(2))
                        .filter(|(z, _)| z.access > 0.0)
                        .map(|(z, b)| {
                            acc += z.access / total;
                            // A zone rounded to nothing on a tiny region keeps one position.
                            let start = b[0].min(n - 1);
                            (acc, start, b[1].clamp(start + 1, n))
                        })
                        .collect(),
                }
            }
            Shape::Hotband { width_pct, hot_pct, period } => Draw::Hotband {
                width: ((width_pct / 100.0 * n as f64).round() as u64).clamp(1, n),
                hot: hot_pct / 100.0,
                period_ns: period.as_nanos().min(u64::MAX as u128) as u64,
            },
        };
        let perm = (dist.layout == Layout::Scattered && n > 1).then(|| Permutation::new(n, seed));
        Sampler { n, draw, perm }
    }

    /// The rank of the next access (before the layout), `elapsed_ns` after the start.
    fn rank(&self, rng: &mut Rng, elapsed_ns: u64) -> u64 {
        let n = self.n;
        match &self.draw {
            Draw::Uniform => rng.below(n),
            Draw::Zipf(z) => z.sample(rng),
            Draw::Pareto { p } => {
                let v = 1.0 - rng.unit();
                ((n as f64 * (1.0 - v.powf(*p))) as u64).min(n - 1)
            }
            Draw::Normal { centre, sd } => loop {
                // Box-Muller; u1 in (0, 1] keeps the log finite.
                let u1 = 1.0 - rng.unit();
                let u2 = rng.unit();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let x = (centre + sd * z).floor();
                if x >= 0.0 && x < n as f64 {
                    return x as u64;
                }
            },
            Draw::Zoned { zones } => {
                let u = rng.unit();
                let &(_, start, end) = zones.iter().find(|z| u < z.0).unwrap_or_else(|| zones.last().expect("a zone with accesses"));
                start + rng.below(end - start)
            }
            Draw::Hotband { width, hot, period_ns } => {
                if rng.unit() < *hot {
                    let phase = (elapsed_ns % period_ns) as f64 / *period_ns as f64;
                    let start = ((phase * n as f64) as u64).min(n - 1);
                    (start + rng.below(*width)) % n
                } else {
                    rng.below(n)
                }
            }
        }
    }

    /// The position of the next access, `elapsed_ns` after the start.
    #[inline]
    pub fn draw(&self, rng: &mut Rng, elapsed_ns: u64) -> u64 {
        let r = self.rank(rng, elapsed_ns);
        match &self.perm {
            Some(p) => p.apply(r),
            None => r,
        }
    }
}

#[cfg(test)]
#[path = "dist_tests.rs"]
mod tests;
