//! Whether a point stalled, from what was in flight when its measured interval
//! ended: a figure of 0 IOPS (or a latency built only from the I/Os that did
//! complete) must not pass for a measurement when the target stopped answering.

use super::model::Summary;

/// What was outstanding at the end of a point, over all its workers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InFlightAtEnd {
    pub ios: u64,
    /// Age of the oldest at the end of the measured interval, seconds.
    pub oldest_s: Option<f64>,
    /// Never completed: abandoned when the run stopped waiting.
    pub abandoned: u64,
}

/// Fills the summary's in-flight fields and marks the point stalled when an
/// I/O was outstanding for longer than the measured interval, or when none
/// completed while I/Os were in flight.
pub fn mark(summary: &mut Summary, at_end: InFlightAtEnd) {
    summary.in_flight_at_end = at_end.ios;
    summary.oldest_in_flight_ms = at_end.oldest_s.map(|s| s * 1e3);
    summary.abandoned_ios = at_end.abandoned;
    summary.stall_reason = reason(summary.ios_read + summary.ios_written, summary.duration_s, at_end);
    summary.stalled = summary.stall_reason.is_some();
}

fn reason(completed: u64, duration_s: f64, at_end: InFlightAtEnd) -> Option<String> {
    let oldest = at_end.oldest_s?;
    if at_end.ios == 0 || duration_s <= 0.0 {
        return None;
    }
    let abandoned = match at_end.abandoned {
        0 => String::new(),
        n => format!("; {n} never completed and {} abandoned", if n == 1 { "was" } else { "were" }),
    };
    let in_flight = format!(
        "{} {} in flight at the end, the oldest for {oldest:.2} s{abandoned}",
        crate::units::counted(at_end.ios, "I/O"),
        if at_end.ios == 1 { "was" } else { "were" }
    );
    if completed == 0 {
        Some(format!("no I/O completed in the {duration_s:.2} s measured: {in_flight}"))
    } else if oldest > duration_s {
        Some(format!("{in_flight}: longer than the {duration_s:.2} s measured"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(ios: u64, duration_s: f64) -> Summary {
        Summary { ios_read: ios, duration_s, ..Default::default() }
    }

    #[test]
    fn a_point_stalls_when_nothing_completes_or_an_io_outlives_the_interval() {
        let stuck = InFlightAtEnd { ios: 32, oldest_s: Some(2.01), abandoned: 32 };
        let mut s = summary(0, 2.0);
        mark(&mut s, stuck);
        assert!(s.stalled);
        let why = s.stall_reason.unwrap();
        assert!(
            why.contains("no I/O completed") && why.contains("32 I/Os") && why.contains("2.01 s") && why.contains("abandoned"),
            "{why}"
        );
        assert!((s.oldest_in_flight_ms.unwrap() - 2010.0).abs() < 1e-6);

        let mut s = summary(1000, 2.0);
        mark(&mut s, InFlightAtEnd { ios: 1, oldest_s: Some(2.5), abandoned: 0 });
        assert!(s.stalled && s.stall_reason.unwrap().contains("longer than the 2.00 s"));

        // Slow but answering: I/Os in flight at the end are younger than the interval.
        let mut s = summary(1000, 2.0);
        mark(&mut s, InFlightAtEnd { ios: 32, oldest_s: Some(0.2), abandoned: 0 });
        assert!(!s.stalled && s.stall_reason.is_none());
        assert_eq!(s.in_flight_at_end, 32);

        // Nothing issued (a paced run between I/Os), or nothing measured (stopped in the ramp).
        let mut s = summary(0, 2.0);
        mark(&mut s, InFlightAtEnd::default());
        assert!(!s.stalled);
        let mut s = summary(0, 0.0);
        mark(&mut s, stuck);
        assert!(!s.stalled);
    }
}
