//! The list of cache sizes a command measures or predicts, each a percentage
//! of a LUN or region: `lunmark lab cache --cache-sizes` and `lunmark
//! cache-curve --sizes` read it with the same rules and the same words.

use anyhow::{bail, Result};

/// What a list may hold, said after every refusal.
const ALLOWED: &str =
    "give each cache size once, as a percentage from 0 to 100 (an optional %, no sign), separated by commas, for example 0,25,50,100";

/// Parses `text`, the value of `flag` (named in every message): each entry a
/// number from 0 to 100 with an optional `%`, without a sign (`-0` would pass
/// as 0 and `+5` as 5), no entry empty, no size given twice (it would be
/// measured twice, a row of the table repeated).
pub fn parse(flag: &str, text: &str) -> Result<Vec<f64>> {
    let mut sizes: Vec<f64> = Vec::new();
    for entry in text.split(',') {
        let item = entry.trim();
        if item.is_empty() {
            bail!("{flag} {text}: there is an empty entry (two commas in a row, or one at an end): {ALLOWED}");
        }
        if item.starts_with(['-', '+']) {
            bail!("{flag}: '{item}' is not a percentage between 0 and 100: write it without a sign; {ALLOWED}");
        }
        let number = item.strip_suffix('%').unwrap_or(item).trim();
        // `f64::from_str` takes "nan" and "inf": neither is a size.
        let Some(pct) = number.parse::<f64>().ok().filter(|v| v.is_finite()) else {
            bail!("{flag}: '{item}' is not a number; {ALLOWED}");
        };
        if !(0.0..=100.0).contains(&pct) {
            bail!("{flag}: '{item}' is not a percentage between 0 and 100; {ALLOWED}");
        }
        if sizes.contains(&pct) {
            bail!("{flag} {text}: {pct}% is given twice; {ALLOWED}");
        }
        sizes.push(pct);
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        parse("--sizes", text).unwrap_err().to_string()
    }

    #[test]
    fn percentages_with_or_without_a_percent_sign_and_spaces_are_read() {
        assert_eq!(parse("--sizes", "0, 25,30%,100 ,12.5 %").unwrap(), vec![0.0, 25.0, 30.0, 100.0, 12.5]);
        assert_eq!(parse("--cache-sizes", "100").unwrap(), vec![100.0]);
    }

    #[test]
    fn every_refusal_names_the_flag_the_value_and_what_is_allowed() {
        for (text, says) in [
            ("0,120", "--sizes: '120' is not a percentage between 0 and 100;"),
            ("10,-0", "--sizes: '-0' is not a percentage between 0 and 100: write it without a sign"),
            ("+5", "--sizes: '+5' is not a percentage between 0 and 100: write it without a sign"),
            ("-5", "--sizes: '-5' is not a percentage between 0 and 100: write it without a sign"),
            ("0,,5", "--sizes 0,,5: there is an empty entry"),
            ("0,5,", "--sizes 0,5,: there is an empty entry"),
            ("", "--sizes : there is an empty entry"),
            ("ten", "--sizes: 'ten' is not a number"),
            ("50%%", "--sizes: '50%%' is not a number"),
            ("%", "--sizes: '%' is not a number"),
            ("nan", "--sizes: 'nan' is not a number"),
            ("inf", "--sizes: 'inf' is not a number"),
            ("0,Infinity", "--sizes: 'Infinity' is not a number"),
            ("10,10", "--sizes 10,10: 10% is given twice"),
            ("0,25,25%", "--sizes 0,25,25%: 25% is given twice"),
            ("0,1e1,10", "--sizes 0,1e1,10: 10% is given twice"),
        ] {
            let err = refusal(text);
            assert!(err.starts_with(says), "{text:?}: {err}");
            assert!(err.ends_with(ALLOWED), "{text:?}: what is allowed, with an example: {err}");
        }
    }

    #[test]
    fn the_messages_name_the_flag_they_are_given() {
        let err = parse("--cache-sizes", "0,0").unwrap_err().to_string();
        assert!(err.starts_with("--cache-sizes 0,0: 0% is given twice"), "{err}");
    }
}
