//! The list of cache sizes a command measures or predicts, each a percentage
//! of a LUN or region: `lunmark lab cache --cache-sizes` and `lunmark
//! cache-curve --sizes` read it with the same rules and the same words.

use anyhow::{bail, Result};

/// What a list may hold, said after every refusal.
const ALLOWED: &str = "give each cache size once, as a plain decimal percentage from 0 to 100 (digits, an optional fraction \
     such as 12.5, an optional % right after the number; no sign, no exponent, no leading zero), separated by commas, \
     for example 0,25,50,100";

/// Parses `text`, the value of `flag`: each entry a plain decimal from 0 to
/// 100 with an optional `%` right after it. Every refusal has one shape:
/// `FLAG VALUE: what is wrong; what is allowed`. Refused: a sign (`-0` would
/// pass as 0 and `+5` as 5), an exponent (`1e2`), a leading zero (`0100`), a
/// space before `%`, an empty entry, and a size given twice (it would be
/// measured twice, a row of the table repeated). `.5` is read as 0.5, as
/// `--read .5` is.
pub fn parse(flag: &str, text: &str) -> Result<Vec<f64>> {
    let given = shown(text);
    if text.trim().is_empty() {
        bail!("{flag} {given}: the list is empty; {ALLOWED}");
    }
    let mut sizes: Vec<f64> = Vec::new();
    for entry in text.split(',') {
        let item = entry.trim();
        if item.is_empty() {
            bail!("{flag} {given}: there is an empty entry (two commas in a row, or one at an end); {ALLOWED}");
        }
        let pct = read_entry(item).map_err(|problem| anyhow::anyhow!("{flag} {given}: '{item}' {problem}; {ALLOWED}"))?;
        if sizes.contains(&pct) {
            bail!("{flag} {given}: {pct}% is given twice; {ALLOWED}");
        }
        sizes.push(pct);
    }
    Ok(sizes)
}

/// The value as a shell would need it: quoted when empty or holding a space.
fn shown(text: &str) -> String {
    if text.is_empty() || text.contains(char::is_whitespace) {
        format!("'{text}'")
    } else {
        text.to_string()
    }
}

/// One entry (trimmed, not empty): the percentage, or what is wrong with it.
fn read_entry(item: &str) -> Result<f64, &'static str> {
    if item.starts_with(['-', '+']) {
        return Err("is not a percentage between 0 and 100: write it without a sign");
    }
    let number = item.strip_suffix('%').unwrap_or(item);
    if number.ends_with(char::is_whitespace) {
        return Err("has a space before %: write the % right after the number (50%)");
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (number, None),
    };
    let (mantissa, exponent) = number.split_once(['e', 'E']).unwrap_or((number, ""));
    if !exponent.is_empty() && mantissa.bytes().any(|b| b.is_ascii_digit()) && mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err("has an exponent: write the plain number (100, not 1e2)");
    }
    // Digits, then a point only with digits after it (`.5` as `--read .5` reads it).
    if !(whole.is_empty() || digits(whole)) || !fraction.map_or(!whole.is_empty(), digits) {
        return Err("is not a number");
    }
    if whole.len() > 1 && whole.starts_with('0') {
        return Err("has a leading zero: write it without (100, not 0100)");
    }
    let pct: f64 = number.parse().map_err(|_| "is not a number")?;
    if pct > 100.0 {
        return Err("is not a percentage between 0 and 100");
    }
    Ok(pct)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        parse("--sizes", text).unwrap_err().to_string()
    }

    #[test]
    fn percentages_with_or_without_a_percent_sign_and_spaces_are_read() {
        assert_eq!(parse("--sizes", "0, 25,30%,100 ,12.5%, 0.5").unwrap(), vec![0.0, 25.0, 30.0, 100.0, 12.5, 0.5]);
        // `.5` is 0.5, as `--read .5` reads it.
        assert_eq!(parse("--sizes", ".5,100.0").unwrap(), vec![0.5, 100.0]);
        assert_eq!(parse("--cache-sizes", "100").unwrap(), vec![100.0]);
    }

    #[test]
    fn every_refusal_names_the_flag_the_value_and_what_is_allowed() {
        for (text, says) in [
            ("0,120", "--sizes 0,120: '120' is not a percentage between 0 and 100;"),
            ("10,-0", "--sizes 10,-0: '-0' is not a percentage between 0 and 100: write it without a sign;"),
            ("+5", "--sizes +5: '+5' is not a percentage between 0 and 100: write it without a sign;"),
            ("-5", "--sizes -5: '-5' is not a percentage between 0 and 100: write it without a sign;"),
            ("0,,5", "--sizes 0,,5: there is an empty entry"),
            ("0,5,", "--sizes 0,5,: there is an empty entry"),
            ("", "--sizes '': the list is empty;"),
            (" ", "--sizes ' ': the list is empty;"),
            ("ten", "--sizes ten: 'ten' is not a number;"),
            ("50%%", "--sizes 50%%: '50%%' is not a number;"),
            ("%", "--sizes %: '%' is not a number;"),
            ("nan", "--sizes nan: 'nan' is not a number;"),
            ("inf", "--sizes inf: 'inf' is not a number;"),
            ("0,Infinity", "--sizes 0,Infinity: 'Infinity' is not a number;"),
            ("1e2", "--sizes 1e2: '1e2' has an exponent: write the plain number (100, not 1e2);"),
            ("1e+2", "--sizes 1e+2: '1e+2' has an exponent"),
            ("1e-1", "--sizes 1e-1: '1e-1' has an exponent"),
            ("0,1E1", "--sizes 0,1E1: '1E1' has an exponent"),
            ("0100", "--sizes 0100: '0100' has a leading zero: write it without (100, not 0100);"),
            ("05.5", "--sizes 05.5: '05.5' has a leading zero"),
            ("00", "--sizes 00: '00' has a leading zero"),
            ("50 %", "--sizes '50 %': '50 %' has a space before %: write the % right after the number (50%);"),
            ("5.", "--sizes 5.: '5.' is not a number;"),
            (".", "--sizes .: '.' is not a number;"),
            ("1.2.3", "--sizes 1.2.3: '1.2.3' is not a number;"),
            ("0x10", "--sizes 0x10: '0x10' is not a number;"),
            ("10,10", "--sizes 10,10: 10% is given twice;"),
            ("0,25,25%", "--sizes 0,25,25%: 25% is given twice;"),
            ("0,10.0,10", "--sizes 0,10.0,10: 10% is given twice;"),
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
