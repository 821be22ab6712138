//! What a rank sends rank 0 after each point: its raw figures (recorders with
//! their HDR histograms in the V2 encoding, one-second slices, CPU usage of its
//! machine, power) and its outcome, as JSON bytes. Rank 0 merges them exactly
//! (`reduce`): counts are summed and histograms added, never averaged.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::cpu::CpuUsage;
use crate::metrics::recorder::IoErrorRecord;
use crate::metrics::{IntervalSlice, LatencyHistogram, Recorder};
use crate::results::model::Status;
use crate::run::point::{Measured, PointOutcome};

/// A latency histogram on the wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireHistogram {
    /// HdrHistogram's V2 encoding.
    pub v2: Vec<u8>,
    /// The exact sum of the recorded latencies, ns (decimal: JSON numbers stop at 2^64).
    pub sum_ns: String,
}

impl WireHistogram {
    pub fn of(h: &LatencyHistogram) -> WireHistogram {
        let (v2, sum) = h.to_v2();
        WireHistogram { v2, sum_ns: sum.to_string() }
    }

    pub fn decode(&self) -> Result<LatencyHistogram, String> {
        let sum = self.sum_ns.parse::<u128>().map_err(|e| format!("a histogram's sum {:?}: {e}", self.sum_ns))?;
        LatencyHistogram::from_v2(&self.v2, sum)
    }
}

/// A recorder on the wire (a cache tier's counters are not carried: --cache is refused under MPI).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireRecorder {
    pub read: WireHistogram,
    pub write: WireHistogram,
    pub trim: WireHistogram,
    pub sync: WireHistogram,
    pub service_read: WireHistogram,
    pub service_write: WireHistogram,
    pub ios_read: u64,
    pub ios_written: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub ios_trimmed: u64,
    pub bytes_trimmed: u64,
    pub ios_synced: u64,
    pub errors: BTreeMap<i32, u64>,
    pub first_errors: Vec<IoErrorRecord>,
    pub verify: crate::verify::VerifyStats,
}

impl WireRecorder {
    pub fn of(r: &Recorder) -> WireRecorder {
        WireRecorder {
            read: WireHistogram::of(&r.read),
            write: WireHistogram::of(&r.write),
            trim: WireHistogram::of(&r.trim),
            sync: WireHistogram::of(&r.sync),
            service_read: WireHistogram::of(&r.service_read),
            service_write: WireHistogram::of(&r.service_write),
            ios_read: r.ios_read,
            ios_written: r.ios_written,
            bytes_read: r.bytes_read,
            bytes_written: r.bytes_written,
            ios_trimmed: r.ios_trimmed,
            bytes_trimmed: r.bytes_trimmed,
            ios_synced: r.ios_synced,
            errors: r.errors.clone(),
            first_errors: r.first_errors.clone(),
            verify: r.verify.clone(),
        }
    }

    pub fn decode(&self) -> Result<Recorder, String> {
        Ok(Recorder {
            read: self.read.decode()?,
            write: self.write.decode()?,
            trim: self.trim.decode()?,
            sync: self.sync.decode()?,
            service_read: self.service_read.decode()?,
            service_write: self.service_write.decode()?,
            ios_read: self.ios_read,
            ios_written: self.ios_written,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            ios_trimmed: self.ios_trimmed,
            bytes_trimmed: self.bytes_trimmed,
            ios_synced: self.ios_synced,
            errors: self.errors.clone(),
            first_errors: self.first_errors.clone(),
            verify: self.verify.clone(),
            cache: None,
        })
    }
}

/// One second of one rank on the wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireSlice {
    pub index: u32,
    pub ios_read: u64,
    pub ios_written: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub ios_trimmed: u64,
    /// Latency per operation; absent for an operation the rank did not do in that second.
    pub read: Option<WireHistogram>,
    pub write: Option<WireHistogram>,
    pub trim: Option<WireHistogram>,
    /// The rank's machine's average watts in this second, when power was measured.
    #[serde(default)]
    pub watts: Option<f64>,
}

impl WireSlice {
    pub fn of(x: &IntervalSlice, watts: Option<f64>) -> WireSlice {
        WireSlice {
            index: x.index,
            ios_read: x.ios_read,
            ios_written: x.ios_written,
            bytes_read: x.bytes_read,
            bytes_written: x.bytes_written,
            ios_trimmed: x.ios_trimmed,
            read: x.read.as_ref().map(WireHistogram::of),
            write: x.write.as_ref().map(WireHistogram::of),
            trim: x.trim.as_ref().map(WireHistogram::of),
            watts,
        }
    }

    pub fn decode(&self) -> Result<IntervalSlice, String> {
        Ok(IntervalSlice {
            index: self.index,
            ios_read: self.ios_read,
            ios_written: self.ios_written,
            bytes_read: self.bytes_read,
            bytes_written: self.bytes_written,
            ios_trimmed: self.ios_trimmed,
            read: self.read.as_ref().map(WireHistogram::decode).transpose()?,
            write: self.write.as_ref().map(WireHistogram::decode).transpose()?,
            trim: self.trim.as_ref().map(WireHistogram::decode).transpose()?,
        })
    }
}

/// Everything one rank tells rank 0 about one point.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: u32,
    pub host: String,
    pub boot_id: String,
    pub status: Status,
    pub reason: Option<String>,
    /// The rank's measured interval, Unix seconds.
    pub span: (f64, f64),
    pub total: WireRecorder,
    pub by_group: Vec<WireRecorder>,
    pub slices: Vec<WireSlice>,
    /// CPU of the rank's machine over its measured interval.
    pub usage: CpuUsage,
    pub power: Option<crate::metrics::power::PowerStats>,
    pub in_flight_at_end: u64,
    pub oldest_in_flight_ms: Option<f64>,
    pub abandoned_ios: u64,
    pub stall_reason: Option<String>,
    /// The rank's requested and held queue depth (summed over ranks by rank 0).
    #[serde(default)]
    pub queue_depth: Option<crate::results::per_worker::QueueDepth>,
    /// The targets this rank ran the point on, its placeholders filled in.
    #[serde(default)]
    pub targets: Vec<String>,
}

impl RankReport {
    /// This rank's report of a point it ran.
    pub fn of(rank: u32, host: &str, boot_id: &str, o: &PointOutcome) -> RankReport {
        let m = &o.measured;
        let s = &o.point.summary;
        RankReport {
            rank,
            host: host.to_string(),
            boot_id: boot_id.to_string(),
            status: o.status,
            reason: o.reason.clone(),
            span: o.span,
            total: WireRecorder::of(&m.total),
            by_group: m.by_group.iter().map(WireRecorder::of).collect(),
            slices: m
                .slices
                .iter()
                // The power meter put each second's watts in the summary's intervals, by their start.
                .map(|x| WireSlice::of(x, s.intervals.iter().find(|i| i.t_s == x.index as f64).and_then(|i| i.watts)))
                .collect(),
            usage: m.usage.clone(),
            power: s.power.clone(),
            in_flight_at_end: s.in_flight_at_end,
            oldest_in_flight_ms: s.oldest_in_flight_ms,
            abandoned_ios: s.abandoned_ios,
            stall_reason: s.stall_reason.clone(),
            queue_depth: s.queue_depth.clone(),
            targets: o.point.workload.as_ref().map(|w| w.targets.clone()).unwrap_or_default(),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a rank report serializes")
    }

    pub fn decode(bytes: &[u8]) -> Result<RankReport, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("a rank's report could not be read: {e}"))
    }

    /// The raw figures in the run's own types.
    pub fn measured(&self) -> Result<Measured, String> {
        let slices = self.slices.iter().map(WireSlice::decode).collect::<Result<Vec<_>, String>>()?;
        Ok(Measured {
            total: self.total.decode()?,
            by_group: self.by_group.iter().map(WireRecorder::decode).collect::<Result<_, _>>()?,
            slices,
            usage: self.usage.clone(),
        })
    }
}
