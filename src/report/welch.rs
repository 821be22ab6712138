//! Welch's t-test: is the difference between two means larger than their
//! repeats' spread explains? Unequal variances, Welch–Satterthwaite degrees of
//! freedom, two-sided p from Student's t distribution (through the regularized
//! incomplete beta function, Numerical Recipes' continued fraction). Pure math,
//! no crates: used by compare at 95% (p < 0.05).

/// A figure over repeats: mean, sample standard deviation, count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub mean: f64,
    pub stdev: f64,
    pub n: usize,
}

/// The test's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's test of a against b; None when either has fewer than 2 values.
pub fn welch(a: Sample, b: Sample) -> Option<Welch> {
    if a.n < 2 || b.n < 2 || !(a.mean.is_finite() && b.mean.is_finite() && a.stdev.is_finite() && b.stdev.is_finite()) {
        return None;
    }
    let (va, vb) = (a.stdev * a.stdev / a.n as f64, b.stdev * b.stdev / b.n as f64);
    let diff = a.mean - b.mean;
    if va + vb == 0.0 {
        // No spread at all: equal means are the same figure, unequal ones differ for sure.
        return Some(if diff == 0.0 {
            Welch { t: 0.0, df: (a.n + b.n - 2) as f64, p: 1.0 }
        } else {
            Welch { t: diff.signum() * f64::INFINITY, df: (a.n + b.n - 2) as f64, p: 0.0 }
        });
    }
    let t = diff / (va + vb).sqrt();
    let df = (va + vb).powi(2) / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
    Some(Welch { t, df, p: two_sided_p(t, df) })
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The t with P(|T| >= t) = `alpha` (two-sided critical value), by bisection on `two_sided_p`.
pub fn critical_t(alpha: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while two_sided_p(hi, df) > alpha {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if two_sided_p(mid, df) > alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1-x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b).
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() <= tol * want.abs().max(1e-300), "got {got}, want {want}");
    }

    /// Two-sided 95% critical values, scipy 1.17.1 `stats.t.ppf(0.975, df)`.
    #[test]
    fn critical_values_match_scipy() {
        for (df, want) in [
            (1.0, 12.706204736174694),
            (2.0, 4.302652729749462),
            (3.0, 3.1824463052837078),
            (4.5, 2.6589123472044034),
            (5.0, 2.5705818356363146),
            (10.0, 2.228138851986274),
            (30.0, 2.0422724563012378),
            (1000.0, 1.9623390808264083),
        ] {
            close(critical_t(0.05, df), want, 1e-9);
        }
    }

    /// Two-sided p-values, scipy 1.17.1 `2 * stats.t.sf(t, df)`; df = 1 and 2
    /// also against their closed forms (Cauchy: 1 - 2 atan(t) / π; df 2: 1 - t / sqrt(2 + t²)).
    #[test]
    fn p_values_match_scipy_and_closed_forms() {
        for (t, df, want) in [
            (2.0, 3.0, 0.13932596855884305),
            (0.5, 7.3, 0.6317935268044417),
            (4.2, 2.6, 0.032477406720099834),
            (1.0, 1.0, 0.5000000000000001),
            (10.0, 25.0, 3.2064109208925194e-10),
        ] {
            close(two_sided_p(t, df), want, 1e-9);
        }
        for t in [0.1, 0.7, 3.0, 40.0] {
            close(two_sided_p(t, 1.0), 1.0 - 2.0 * f64::atan(t) / std::f64::consts::PI, 1e-9);
            close(two_sided_p(t, 2.0), 1.0 - t / (2.0 + t * t).sqrt(), 1e-9);
        }
        assert_eq!(two_sided_p(0.0, 4.0), 1.0);
    }

    /// Whole tests, scipy 1.17.1 `stats.ttest_ind(a, b, equal_var=False)` on
    /// the raw values, here given as mean, sample stdev and n.
    #[test]
    fn welch_matches_scipy() {
        // a = [101, 104, 99], b = [110, 115, 108]: t -3.807886552931956, df 3.574920297555792, p 0.02329257755282461.
        let sd = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
        };
        let a = Sample { mean: 304.0 / 3.0, stdev: sd(&[101.0, 104.0, 99.0]), n: 3 };
        let b = Sample { mean: 111.0, stdev: sd(&[110.0, 115.0, 108.0]), n: 3 };
        let w = welch(a, b).unwrap();
        close(w.t, -3.807886552931956, 1e-9);
        close(w.df, 3.574920297555792, 1e-9);
        close(w.p, 0.02329257755282461, 1e-8);
        // Wikipedia's Welch example 1 (15 values each): t -2.455356398286006, df 24.988529290231416, p 0.021378001462866992.
        let a = Sample { mean: 20.819999999999997, stdev: 2.8048936827317665, n: 15 };
        let b = Sample { mean: 22.986666666666665, stdev: 1.9526050974702152, n: 15 };
        let w = welch(a, b).unwrap();
        close(w.t, -2.455356398286006, 1e-9);
        close(w.df, 24.988529290231416, 1e-9);
        close(w.p, 0.021378001462866992, 1e-8);
    }

    #[test]
    fn degenerate_samples() {
        let s = |mean, stdev, n| Sample { mean, stdev, n };
        assert_eq!(welch(s(5.0, 1.0, 1), s(5.0, 1.0, 3)), None, "one value has no spread to test");
        assert_eq!(welch(s(5.0, 0.0, 3), s(5.0, 0.0, 3)).unwrap().p, 1.0, "identical repeats");
        assert_eq!(welch(s(5.0, 0.0, 3), s(6.0, 0.0, 3)).unwrap().p, 0.0, "no spread, different means");
        assert_eq!(welch(s(5.0, 2.0, 3), s(5.0, 2.0, 3)).unwrap().p, 1.0, "same mean: t = 0");
    }
}
