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

/// `--workers N`, or `--workers MIN-MAX`: a range the knee search (--sla) grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerCount {
    pub min: u32,
    pub max: u32,
}

impl std::fmt::Display for WorkerCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.max)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

/// A whole number of workers, or a range MIN-MAX of them (MIN at least 1, below MAX).
pub fn workers(s: &str) -> Result<WorkerCount, String> {
    let Some((lo, hi)) = s.split_once('-').filter(|(lo, _)| !lo.trim().is_empty()) else {
        return whole_u32(s).map(|n| WorkerCount { min: n, max: n });
    };
    let range = "give a range MIN-MAX of whole numbers, MIN at least 1 and below MAX (for example 1-8), or one count";
    match (whole_u32(lo), whole_u32(hi)) {
        (Ok(min), Ok(max)) if min >= 1 && min < max => Ok(WorkerCount { min, max }),
        _ => Err(format!("not a range of workers: {range}")),
    }
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

    #[test]
    fn workers_are_a_count_or_a_rising_range() {
        assert_eq!(workers("4"), Ok(WorkerCount { min: 4, max: 4 }));
        assert_eq!(workers("1-8"), Ok(WorkerCount { min: 1, max: 8 }));
        assert_eq!(workers("1-8").unwrap().to_string(), "1-8");
        assert!(workers("-1").unwrap_err().contains("negative"));
        for bad in ["8-1", "0-4", "4-4", "1-x", "1-"] {
            assert!(workers(bad).unwrap_err().contains("MIN-MAX"), "{bad}");
        }
    }
}
