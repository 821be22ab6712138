//! Numbers as people paste them into a document: thousands separators and as
//! many decimals as the size of the figure warrants (1,234,567 IOPS, 98.4 µs,
//! 3.17 MB/s). Pure.

/// Digits after the point for a figure of this size: none from 100 up, one
/// from 10, two below (0.25, 7.13, 42.5, 1,234).
fn decimals(v: f64) -> usize {
    let a = v.abs();
    if a >= 100.0 || v == 0.0 {
        0
    } else if a >= 10.0 {
        1
    } else {
        2
    }
}

/// A figure with thousands separators and sensible decimals; "-" when it is
/// not a number (NaN, infinite).
pub fn number(v: f64) -> String {
    fixed(v, decimals(v))
}

/// A figure with thousands separators and exactly `places` decimals.
pub fn fixed(v: f64, places: usize) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let text = format!("{:.*}", places, v.abs());
    let (whole, frac) = text.split_once('.').map(|(w, f)| (w, Some(f))).unwrap_or((&text, None));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A whole count with thousands separators.
pub fn count(n: u64) -> String {
    fixed(n as f64, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_have_separators_and_sensible_decimals() {
        assert_eq!(number(1234567.4), "1,234,567");
        assert_eq!(number(123.456), "123");
        assert_eq!(number(42.46), "42.5");
        assert_eq!(number(7.128), "7.13");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-1500.0), "-1,500");
        assert_eq!(number(f64::NAN), "-");
        assert_eq!(fixed(999.96, 1), "1,000.0");
        assert_eq!(fixed(-0.001, 1), "0.0");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(100), "100");
    }
}
