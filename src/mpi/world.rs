//! The MPI transport (Cargo feature `mpi`): MPI_COMM_WORLD through the `mpi`
//! crate on the system's Open MPI. Every exchange is an all-gather of bytes, so
//! every rank learns the same outcome (who failed, the point's status) and all
//! go on or stop together; rank 0 alone merges the figures and writes the
//! result. Each call happens once per point at most, never on the I/O path.

use std::cell::{Cell, RefCell};

use mpi::datatype::PartitionMut;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

use super::placeholders::Place;
use super::reduce;
use super::report::RankReport;
use crate::results::cluster::MpiFacts;
use crate::run::cluster::Cluster;
use crate::run::point::PointOutcome;

/// This process as a rank of the job. Dropping it finalizes MPI.
pub struct World {
    // Declared first so the communicator goes before the universe finalizes MPI.
    comm: SimpleCommunicator,
    _universe: mpi::environment::Universe,
    rank: u32,
    size: u32,
    /// Host name and boot id of every rank, in rank order.
    hosts: Vec<String>,
    boot_ids: Vec<String>,
    /// Set when an error was agreed by every rank (all end normally, none aborts the job).
    agreed: Cell<bool>,
    /// One rank's failure stops the others' point (posted before each point).
    stop: RefCell<super::stop::StopSignal>,
    /// Seconds posted to rank 0 for live telemetry, not yet known to be sent.
    posts: RefCell<super::posts::Posts>,
}

/// An error every rank returned together (from `Cluster::agree`): reported once, by rank 0.
#[derive(Debug)]
pub struct Agreed(pub String);

impl std::fmt::Display for Agreed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Agreed {}

/// The kernel's boot id: the same for every process on one kernel, whatever its host name or namespace.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_else(|_| "unknown".into())
}

impl World {
    /// Initializes MPI and learns every rank's host and machine.
    pub fn start() -> anyhow::Result<World> {
        let universe = mpi::initialize().ok_or_else(|| anyhow::anyhow!("MPI could not be initialized (MPI_Init failed)"))?;
        let comm = universe.world();
        let host = crate::results::host::host_facts().hostname;
        let mut world = World {
            rank: comm.rank() as u32,
            size: comm.size() as u32,
            comm,
            _universe: universe,
            hosts: Vec::new(),
            boot_ids: Vec::new(),
            agreed: Cell::new(false),
            stop: RefCell::new(super::stop::StopSignal::new()),
            posts: RefCell::new(super::posts::Posts::default()),
        };
        world.hosts = world.all_gather(host.as_bytes()).into_iter().map(|b| String::from_utf8_lossy(&b).into_owned()).collect();
        world.boot_ids = world.all_gather(boot_id().as_bytes()).into_iter().map(|b| String::from_utf8_lossy(&b).into_owned()).collect();
        Ok(world)
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn host(&self) -> &str {
        &self.hosts[self.rank as usize]
    }

    /// Where this rank sits: its rank, host, and index among the ranks on its host.
    pub fn place(&self) -> Place {
        let host = self.host().to_string();
        let local_rank = self.hosts[..self.rank as usize].iter().filter(|h| **h == host).count() as u32;
        Place { rank: self.rank, local_rank, host }
    }

    /// Whether the error an error path returns was agreed by every rank.
    pub fn agreed(&self) -> bool {
        self.agreed.get()
    }

    /// Rank 0's command line, given to every rank: the request it parses and
    /// validates is the one every rank runs.
    pub fn broadcast_args(&self, args: Vec<String>) -> Vec<String> {
        let mut bytes = if self.rank == 0 { serde_json::to_vec(&args).expect("strings serialize") } else { Vec::new() };
        let root = self.comm.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        root.broadcast_into(&mut bytes[..]);
        serde_json::from_slice(&bytes).expect("rank 0 sent its arguments as JSON")
    }

    /// Every rank's bytes, in rank order, on every rank.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        // Each rank sends at least one byte (a leading 1, stripped on receipt):
        // Open MPI refuses an all-gather whose buffers are all empty.
        let mine: Vec<u8> = std::iter::once(1u8).chain(mine.iter().copied()).collect();
        let mine = &mine[..];
        let n = self.size as usize;
        let mut counts: Vec<Count> = vec![0; n];
        self.comm.all_gather_into(&(mine.len() as Count), &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |acc, &c| {
                let at = *acc;
                *acc += c;
                Some(at)
            })
            .collect();
        let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        {
            let mut partition = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            self.comm.all_gather_varcount_into(mine, &mut partition);
        }
        counts.iter().zip(&displs).map(|(&c, &d)| buf[d as usize + 1..(d + c) as usize].to_vec()).collect()
    }

    /// Before MPI ends: waits a little for this rank's posted seconds to be taken, then lets them go.
    pub fn end_posts(&self) {
        self.posts.borrow_mut().finish();
    }

    /// Ends the whole job after an error only this rank met (the others would wait for it forever).
    pub fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }
}

impl Cluster for World {
    fn is_root(&self) -> bool {
        self.rank == 0
    }

    fn agree(&self, step: &str, local: Option<&anyhow::Error>) -> Option<anyhow::Error> {
        let mine = local.map(|e| format!("{e:#}")).unwrap_or_default();
        let all = self.all_gather(mine.as_bytes());
        let failed: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(r, b)| format!("rank {r} on {}: {}", self.hosts[r], String::from_utf8_lossy(b)))
            .collect();
        if failed.is_empty() {
            return None;
        }
        self.agreed.set(true);
        Some(anyhow::Error::new(Agreed(format!(
            "{} of {} ranks failed {step}, so nothing was run: {}",
            failed.len(),
            self.size,
            failed.join("; ")
        ))))
    }

    fn agree_on_plan(&self, fingerprint: &str) -> Option<anyhow::Error> {
        let all = self.all_gather(fingerprint.as_bytes());
        let differ: Vec<String> =
            all.iter().enumerate().filter(|(_, f)| **f != all[0]).map(|(r, _)| format!("rank {r} on {}", self.hosts[r])).collect();
        if differ.is_empty() {
            return None;
        }
        self.agreed.set(true);
        Some(anyhow::Error::new(Agreed(format!(
            "{} planned a different workload from rank 0's (a profile file or setting that differs between hosts?), so nothing was run",
            differ.join(", ")
        ))))
    }

    fn barrier(&self) {
        self.stop.borrow_mut().arm(self.comm.as_raw());
        self.comm.barrier();
    }

    fn stop_requested(&self) -> bool {
        self.stop.borrow_mut().raised()
    }

    fn reduce_point(&self, index: usize, outcome: &mut PointOutcome) {
        let rank = self.rank as usize;
        {
            let mut stop = self.stop.borrow_mut();
            if outcome.status == crate::results::model::Status::Failed {
                stop.raise(self.comm.as_raw(), self.rank as i32, self.size as i32);
            }
            stop.disarm();
        }
        let mine = RankReport::of(self.rank, &self.hosts[rank], &self.boot_ids[rank], outcome);
        dump_for_tests(index, &mine);
        let all = self.all_gather(&mine.encode());
        let reports: Result<Vec<RankReport>, String> = all.iter().map(|b| RankReport::decode(b)).collect();
        let reports = match reports {
            Ok(r) => r,
            Err(e) => {
                outcome.status = crate::results::model::Status::Failed;
                outcome.reason = Some(e);
                return;
            }
        };
        let (status, reason) = reduce::overall_status(&reports);
        if self.rank == 0 {
            if let Err(e) = reduce::merge_into(outcome, &reports) {
                outcome.status = crate::results::model::Status::Failed;
                outcome.reason = Some(e);
                return;
            }
        }
        outcome.status = status;
        outcome.reason = reason;
    }

    fn post_to_root(&self, bytes: Vec<u8>) {
        self.posts.borrow_mut().post(bytes, self.comm.as_raw());
    }

    fn posted(&self) -> Vec<(u32, Vec<u8>)> {
        let mut got = Vec::new();
        while let Some(probed) = self.comm.any_process().immediate_matched_probe_with_tag(super::posts::TAG) {
            let from = probed.1.source_rank() as u32;
            let (bytes, _) = probed.matched_receive_vec::<u8>();
            got.push((from, bytes));
        }
        got
    }

    fn root_figures(&self, local: Vec<f64>) -> Vec<f64> {
        // Every rank calls this at the same step of the same plan, with as many figures.
        let mut figures = local;
        self.comm.process_at_rank(0).broadcast_into(&mut figures[..]);
        figures
    }

    fn facts(&self) -> Option<MpiFacts> {
        let mut hosts: Vec<String> = Vec::new();
        for h in &self.hosts {
            if !hosts.contains(h) {
                hosts.push(h.clone());
            }
        }
        let mut boots: Vec<&String> = self.boot_ids.iter().collect();
        boots.sort();
        boots.dedup();
        Some(MpiFacts { ranks: self.size, hosts, machines: boots.len() as u32 })
    }
}

/// Test hook: with LUNMARK_MPI_DUMP_DIR set, each rank writes its own
/// histogram of every measured latency (read and write, V2-encoded) for each
/// point there, so a test can rebuild the percentiles from all ranks' raw
/// recordings and hold them against the merged result.
fn dump_for_tests(index: usize, report: &RankReport) {
    let Some(dir) = std::env::var_os("LUNMARK_MPI_DUMP_DIR") else { return };
    let Ok(measured) = report.measured() else { return };
    let (bytes, _) = measured.total.all().to_v2();
    let path = std::path::Path::new(&dir).join(format!("point{}-rank{}.hdr", index + 1, report.rank));
    let written =
        crate::output_path::check("LUNMARK_MPI_DUMP_DIR", &path, crate::output_path::Mode::Replace).and_then(|f| f.replace_with(&bytes));
    if let Err(e) = written {
        eprintln!("warning: LUNMARK_MPI_DUMP_DIR: {e}");
    }
}
