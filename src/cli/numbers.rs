//! Value parsers of the flags that take a whole number, so that a negative
//! value (`--workers -1`) reaches a message naming the flag, the value and
//! what is allowed, instead of clap's "unexpected argument '-1'" (the flags
//! that take one are marked `allow_negative_numbers`; sizes, durations and
//! percentages, parsed by lunmark itself, `allow_hyphen_values`).

/// A whole number from 0 to `max`; clap prefixes the flag and the value.
fn whole(s: &str, max: u64) -> Result<u64, String> {
    let range = format!("give a whole number from 0 to {max}");
    match s.trim().parse::<i128>() {
        Ok(n) if n < 0 => Err(format!("a negative number is not allowed here: {range}")),
        Ok(n) if n > max as i128 => Err(format!("too large: {range}")),
        Ok(n) => Ok(n as u64),
        Err(_) => Err(format!("not a whole number: {range}")),
    }
}

pub fn whole_u32(s: &str) -> Result<u32, String> {
    whole(s, u32::MAX.into()).map(|n| n as u32)
}

pub fn whole_u64(s: &str) -> Result<u64, String> {
    whole(s, u64::MAX)
}

pub fn whole_usize(s: &str) -> Result<usize, String> {
    whole(s, usize::MAX as u64).map(|n| n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_and_oversized_counts_say_the_allowed_range() {
        assert_eq!(whole_u32("8"), Ok(8));
        assert_eq!(whole_u64("0"), Ok(0));
        let e = whole_u32("-1").unwrap_err();
        assert!(e.contains("negative") && e.contains("from 0 to 4294967295"), "{e}");
        assert!(whole_u32("4294967296").unwrap_err().contains("too large"));
        assert!(whole_u64("x").unwrap_err().contains("not a whole number"));
    }
}
