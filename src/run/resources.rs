//! The memory a run needs, estimated and checked before it starts: every
//! worker's I/O buffers, io_uring rings, latency histograms and bookkeeping,
//! the RAM LUNs (`mem:`), a cache tier kept in RAM and the verification
//! tables, at the largest point of the plan, against the memory the system
//! has available (MemAvailable in /proc/meminfo). A run that cannot fit is
//! refused with the figures before anything is created or started, instead of
//! failing in an allocation (or pushing the host into swap) once it runs.

use std::fmt::Write;

use thiserror::Error;

use super::plan::RunPlan;
use crate::engine::cache::config::{frames_for, CacheConfig};
use crate::engine::uring;
use crate::engine::EngineKind;
use crate::metrics::LatencyHistogram;
use crate::targets::host_memory::HostMemory;
use crate::targets::{self, region, TargetUri};
use crate::units::counted;
use crate::workload::WorkloadSpec;

/// Bookkeeping per in-flight slot besides its buffer: the worker's slot record
/// and completion entry, the verifier's claim, an engine's tag.
const PER_SLOT: u64 = 256;
/// Per worker thread besides buffers and histograms: the stack pages it
/// touches and its share of the allocator's state.
const PER_THREAD: u64 = 64 << 10;
/// Cache bookkeeping per frame: map entry, LRU links, dirty flag.
const PER_CACHE_FRAME: u64 = 64;
/// lunmark itself: its code, libraries and heap before any worker starts
/// (measured: about 14 MiB resident).
const PROCESS_BASE: u64 = 16 << 20;
/// One atomic word per verified block.
const PER_VERIFY_BLOCK: u64 = 8;
/// Memory mappings per worker (measured with /proc/PID/maps): its stack and
/// guard page, its largest histograms and its buffer pool; an io_uring ring
/// adds its queues.
const MAPS_PER_WORKER: u64 = 4;
const MAPS_PER_RING: u64 = 2;
/// Mappings of the process itself: the binary, libraries, heap, RAM LUNs.
const MAPS_BASE: u64 = 1024;
/// Buffers are whole pages (engine/buffers.rs).
const PAGE: u64 = crate::engine::buffers::ALIGN as u64;

/// One part of the estimate: what it is, its bytes, how they were counted and
/// which flags lower it.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub what: &'static str,
    pub bytes: u64,
    pub how: String,
    pub lower: &'static str,
}

/// The memory of one point (or of the whole run), part by part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub parts: Vec<Part>,
}

impl Estimate {
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |t, p| t.saturating_add(p.bytes))
    }

    fn add(&mut self, what: &'static str, bytes: u64, how: String, lower: &'static str) {
        if bytes > 0 {
            self.parts.push(Part { what, bytes, how, lower });
        }
    }
}

/// What a run adds to its points: a cache tier and verification.
#[derive(Clone, Copy, Debug)]
pub struct Extras<'a> {
    pub cache: Option<&'a CacheConfig>,
    pub verify: bool,
    /// Under MPI: the ranks on this host, each a process holding a whole
    /// run's memory of its own (its own `mem:` LUNs among it), all from the
    /// same MemAvailable.
    pub ranks_here: u64,
}

impl Default for Extras<'_> {
    fn default() -> Self {
        Extras { cache: None, verify: false, ranks_here: 1 }
    }
}

/// How many ranks of an MPI job run on this host, as the launcher says
/// (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS); 1 when
/// it does not.
pub fn ranks_on_this_host() -> u64 {
    ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<u64>().ok())
        .unwrap_or(1)
        .max(1)
}

/// How many operations (reads, writes, trims) the workload's lines do: each
/// has its own histogram in a one-second slice.
fn slice_ops(spec: &WorkloadSpec) -> u64 {
    let lines = || spec.groups.iter().flat_map(|g| g.access.iter());
    let reads = lines().any(|l| l.read > 0.0);
    let writes = lines().any(|l| l.read + l.trim < 100.0);
    let trims = lines().any(|l| l.trim > 0.0);
    ([reads, writes, trims].iter().filter(|d| **d).count() as u64).max(1)
}

/// The memory one point needs while it runs.
/// `engines`: each target's engine kind (`PlannedPoint::engines`).
pub fn point(spec: &WorkloadSpec, engines: &[EngineKind], extras: Extras) -> Estimate {
    let h3 = LatencyHistogram::footprint_bytes(3);
    // A one-second slice holds a small histogram per operation the workload does.
    let h2 = LatencyHistogram::footprint_bytes(crate::metrics::recorder::SLICE_DIGITS) * slice_ops(spec);
    let mut e = Estimate::default();
    let (mut buffers, mut rings, mut slots_total, mut workers_total) = (0u64, 0u64, 0u64, 0u64);
    // Each worker keeps a small histogram per target it drives (per-target figures).
    let mut target_tallies = 0u64;
    let mut how_buffers: Vec<String> = Vec::new();
    for g in &spec.groups {
        let workers = spec.group_workers(g) as u64;
        let slots = g.qd as u64 * spec.targets_per_worker(g) as u64;
        // The cache tier's write-back slots (engine/factory.rs cache_slots).
        let slots = slots + if extras.cache.is_some() { slots.clamp(4, 64) } else { 0 };
        let bs = g.access.iter().map(|l| l.bs.get()).max().unwrap_or(PAGE).max(1).div_ceil(PAGE) * PAGE;
        buffers = buffers.saturating_add(workers.saturating_mul(slots).saturating_mul(bs));
        how_buffers.push(format!("{} x {} x {}", counted(workers, "worker"), counted(slots, "slot"), human(bs)));
        let uring = spec.group_targets(g).iter().any(|&i| engines.get(i) == Some(&EngineKind::IoUring));
        if uring {
            rings = rings.saturating_add(workers.saturating_mul(uring::ring_bytes(uring::ring_entries(slots as usize))));
        }
        slots_total = slots_total.saturating_add(workers.saturating_mul(slots));
        workers_total += workers;
        target_tallies = target_tallies.saturating_add(workers.saturating_mul(spec.targets_per_worker(g) as u64));
    }
    e.add("I/O buffers", buffers, how_buffers.join(" + "), "--qd, --bs or --workers");
    e.add("io_uring rings", rings, counted(workers_total, "ring"), "--qd or --workers");
    // Each worker: latency and service time per op (4), its current one-second
    // slice and one on its way (2 smaller ones), hits and misses behind a cache.
    let per_worker_h = 4 * h3 + 2 * h2 + if extras.cache.is_some() { 2 * h3 } else { 0 };
    e.add(
        "latency histograms",
        workers_total.saturating_mul(per_worker_h),
        format!("{} x {} each", counted(workers_total, "worker"), human(per_worker_h)),
        "--workers",
    );
    let tally_h = LatencyHistogram::footprint_bytes(crate::metrics::per_worker::TARGET_DIGITS);
    e.add(
        "per-target histograms",
        target_tallies.saturating_mul(tally_h),
        format!("{} x {}", counted(target_tallies, "worker x target pair"), human(tally_h)),
        "--workers or the targets each worker drives",
    );
    e.add(
        "worker threads and slot bookkeeping",
        workers_total.saturating_mul(PER_THREAD).saturating_add(slots_total.saturating_mul(PER_SLOT)),
        format!("{}, {}", counted(workers_total, "thread"), counted(slots_total, "slot")),
        "--workers or --qd",
    );
    // The main thread merges every group and keeps one slice per measured second.
    let seconds = spec.planned_span().map_or(0, |d| d.as_secs_f64().ceil() as u64 + 1);
    let merged = (spec.groups.len() as u64 + 2) * 4 * h3;
    // Groups that start late lengthen the span: their delays are the flag too.
    let flag = if spec.groups_apart() { "--time, or the groups' start delays and own times (fio's startdelay, runtime)" } else { "--time" };
    e.add("merged figures", merged.saturating_add(seconds.saturating_mul(h2)), counted(seconds, "one-second slice"), flag);
    if spec.data.is_some() {
        let bytes = super::data_fill::SOURCE as u64;
        e.add("data reduction source", bytes, "random bytes shared by the point's workers".into(), "nothing (fixed)");
    }
    if let Some(cfg) = extras.cache {
        let mut bytes = 0u64;
        for t in &spec.targets {
            if let Some(len) = region::known_len(t, spec) {
                let frames = frames_for(cfg, len) as u64;
                let data = if cfg.dev.is_none() { cfg.block_bytes as u64 } else { 0 };
                bytes = bytes.saturating_add(frames.saturating_mul(data + PER_CACHE_FRAME));
            }
        }
        let place = if cfg.dev.is_none() { "blocks in RAM and their index" } else { "the index of blocks kept in --cache-dev" };
        e.add("cache", bytes, place.into(), "--cache");
    }
    e
}

/// The memory that lives for the whole run: lunmark itself, and the
/// verification tables, sized by the first point's regions (verify/mod.rs).
pub fn run_wide(first: &WorkloadSpec, extras: Extras) -> Estimate {
    let mut e = Estimate::default();
    e.add("lunmark itself", PROCESS_BASE, "code, libraries and heap".into(), "the memory other processes use");
    if extras.verify {
        if let Ok(block) = crate::verify::block_size(first) {
            let blocks: u64 = first.targets.iter().filter_map(|t| region::known_len(t, first)).map(|len| len / block).sum();
            e.add(
                "verification tables",
                blocks.saturating_mul(PER_VERIFY_BLOCK),
                format!("{} of {}", counted(blocks, "block"), human(block)),
                "--size (or a larger --bs)",
            );
        }
    }
    e
}

/// The largest point's estimate plus what the run keeps throughout, and the
/// index of that point. Points run one after another, so the largest decides.
pub fn for_plan(plan: &RunPlan, extras: Extras) -> (usize, Estimate) {
    let mut worst = (0usize, Estimate::default());
    for (i, p) in plan.points.iter().enumerate() {
        let e = point(&p.spec, &p.engines, extras);
        if i == 0 || e.total() > worst.1.total() {
            worst = (i, e);
        }
    }
    worst.1.parts.extend(mem_luns(plan).parts);
    if let Some(first) = plan.points.first() {
        worst.1.parts.extend(run_wide(&first.spec, extras).parts);
    }
    worst
}

/// The RAM LUNs of the whole plan, each named. A `mem:` target lives for the
/// whole run from the point that first opens it (`targets::RunTargets` keeps
/// it, one per URI and place in the point's list), so the LUNs of every point
/// count together, not only the largest point's. Each holds its size in RAM
/// and a page-table entry of 8 bytes per 4 KiB page (with 4 KiB pages, where
/// the kernel gives no huge pages): 0.2% of it, 38 MiB for 19 GiB.
fn mem_luns(plan: &RunPlan) -> Estimate {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    let (mut bytes, mut names) = (0u64, Vec::new());
    for p in &plan.points {
        for (i, t) in p.spec.targets.iter().enumerate() {
            let Ok(TargetUri::Mem(size)) = targets::parse(t) else { continue };
            let key = (t.as_str(), p.spec.targets[..i].iter().filter(|u| *u == t).count());
            if !seen.contains(&key) {
                seen.push(key);
                bytes = bytes.saturating_add(size.get()).saturating_add(size.get() / 512);
                names.push(t.as_str());
            }
        }
    }
    let mut how = match names.len() {
        0..=4 => names.join(", "),
        n => format!("{} and {} more", names[..3].join(", "), n - 3),
    };
    how += ", held in RAM with page tables";
    let mut e = Estimate::default();
    e.add(MEM_LUNS, bytes, how, "the mem: size");
    e
}

/// The part the RAM LUNs are counted in.
const MEM_LUNS: &str = "mem: targets";

#[derive(Debug, Error)]
pub enum ResourceError {
    #[error(
        "this run needs about {need}, but only {available} is available (MemAvailable in /proc/meminfo), {usable}: {parts}. Lower {lower}"
    )]
    NotEnoughMemory { need: String, available: String, usable: String, parts: String, lower: String },
    #[error("this run needs about {need} (its memory, and {overhead}), {limit} (ulimit -v, RLIMIT_AS): {parts}. Lower {lower}, or raise the limit")]
    AddressSpace { need: String, overhead: String, limit: String, parts: String, lower: String },
    #[error("{workers} workers need about {need} memory mappings (each worker's stack, histograms, buffers and ring){at}, above the kernel's limit of {max} (vm.max_map_count): use at most {max_workers} --workers, or raise the limit with sysctl vm.max_map_count")]
    TooManyMappings { workers: u64, need: u64, at: String, max: u64, max_workers: u64 },
    #[error("group '{group}': with --cache each worker keeps {extra} more I/Os for write-back, so --qd {qd} is {slots} I/Os in flight per worker, above the {max} an io_uring ring holds: use --qd 1 to {max_qd}")]
    RingWithCache { group: String, qd: u32, extra: u64, slots: u64, max: u32, max_qd: u64 },
}

/// What the run may take: the host's memory, and this process's limit on
/// its address space when it has one (`ulimit -v`: past it every allocation
/// fails, a worker's buffers among them, part way into the run).
#[derive(Clone, Copy, Debug, Default)]
pub struct Room {
    pub host: Option<HostMemory>,
    pub address_space: Option<AddressSpace>,
}

/// RLIMIT_AS and the address space the process uses already (VmSize).
#[derive(Clone, Copy, Debug)]
pub struct AddressSpace {
    pub limit: u64,
    pub used: u64,
}

impl Room {
    pub fn here() -> Room {
        Room { host: HostMemory::read(), address_space: address_space() }
    }
}

/// This process's address-space limit, None when unlimited.
fn address_space() -> Option<AddressSpace> {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct we own and pass.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let used = line.split_whitespace().nth(1)?.parse::<u64>().ok()?.saturating_mul(1024);
    Some(AddressSpace { limit: r.rlim_cur, used })
}

/// Address space a worker thread takes beyond its memory: its stack (Rust's
/// 2 MiB) and, for as many threads as glibc makes arenas (8 per CPU), a malloc
/// arena of 64 MiB. Reserved, not resident, so only an address-space limit sees it.
fn thread_address_space(workers: u64) -> u64 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    workers.saturating_mul(2 << 20).saturating_add(workers.min(8 * cpus).saturating_mul(64 << 20))
}

/// Refuses, before anything runs, a plan whose largest point does not fit in
/// the memory available, or whose rings overflow once a cache adds its slots.
pub fn preflight(plan: &RunPlan, extras: Extras) -> Result<(), ResourceError> {
    if extras.cache.is_some() {
        for p in &plan.points {
            let s = &p.spec;
            for g in &s.groups {
                let uring = s.group_targets(g).iter().any(|&i| p.engines[i] == EngineKind::IoUring);
                let base = g.qd as u64 * s.targets_per_worker(g) as u64;
                let extra = base.clamp(4, 64);
                if uring && base + extra > uring::MAX_ENTRIES as u64 {
                    let per_target = s.targets_per_worker(g).max(1) as u64;
                    return Err(ResourceError::RingWithCache {
                        group: g.name.clone(),
                        qd: g.qd,
                        extra,
                        slots: base + extra,
                        max: uring::MAX_ENTRIES,
                        max_qd: (uring::MAX_ENTRIES as u64 - 64) / per_target,
                    });
                }
            }
        }
    }
    if let Some(max) = max_map_count() {
        check_mappings(plan, max)?;
    }
    check_fits(plan, extras, Room::here())
}

/// Memory mappings a point's workers need: (workers, mappings).
pub fn mappings(spec: &WorkloadSpec, engines: &[EngineKind]) -> (u64, u64) {
    let (mut workers, mut maps) = (0u64, MAPS_BASE);
    for g in &spec.groups {
        let w = spec.group_workers(g) as u64;
        let uring = spec.group_targets(g).iter().any(|&i| engines.get(i) == Some(&EngineKind::IoUring));
        workers += w;
        maps = maps.saturating_add(w.saturating_mul(MAPS_PER_WORKER + if uring { MAPS_PER_RING } else { 0 }));
    }
    (workers, maps)
}

/// Refuses a point whose workers would run out of memory mappings: past
/// vm.max_map_count, thread creation and allocations fail part way.
pub fn check_mappings(plan: &RunPlan, max: u64) -> Result<(), ResourceError> {
    for (i, p) in plan.points.iter().enumerate() {
        let (workers, need) = mappings(&p.spec, &p.engines);
        if need > max {
            let per = (need - MAPS_BASE) / workers.max(1);
            let at = if plan.points.len() > 1 { format!(" at point {}", i + 1) } else { String::new() };
            return Err(ResourceError::TooManyMappings { workers, need, at, max, max_workers: max.saturating_sub(MAPS_BASE) / per.max(1) });
        }
    }
    Ok(())
}

/// vm.max_map_count: how many memory mappings one process may have.
fn max_map_count() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/vm/max_map_count").ok()?.trim().parse().ok()
}

/// The memory check itself, against the room given.
pub fn check_fits(plan: &RunPlan, extras: Extras, room: Room) -> Result<(), ResourceError> {
    let (index, estimate) = for_plan(plan, extras);
    let need = estimate.total();
    let at = || {
        if plan.points.len() > 1 {
            let label = &plan.points[index].label;
            format!(" at point {}{}", index + 1, if label.is_empty() { String::new() } else { format!(" ({label})") })
        } else {
            String::new()
        }
    };
    // Every rank on this host holds what this one does.
    let ranks = extras.ranks_here.max(1);
    if let Some(m) = room.host.filter(|m| need.saturating_mul(ranks) > m.usable()) {
        let (parts, mut lower) = explain(&estimate, m.usable() / ranks);
        if ranks > 1 {
            lower += ", on each rank (or run fewer ranks on this host)";
        }
        let each = if ranks > 1 { format!(" ({} on this host, {} each)", counted(ranks, "rank"), human(need)) } else { String::new() };
        return Err(ResourceError::NotEnoughMemory {
            need: format!("{} of memory{}{each}", human(need.saturating_mul(ranks)), at()),
            available: human(m.available),
            usable: format!(
                "of which lunmark leaves {} to the rest of the system (a sixteenth of the RAM), so {} can be used",
                human(m.reserve()),
                human(m.usable())
            ),
            parts,
            lower,
        });
    }
    if let Some(a) = room.address_space {
        let workers = plan.points.get(index).map_or(0, |p| mappings(&p.spec, &p.engines).0);
        let overhead = thread_address_space(workers);
        let room_left = a.limit.saturating_sub(a.used).saturating_sub(overhead);
        if need > room_left {
            let (parts, lower) = explain(&estimate, room_left);
            return Err(ResourceError::AddressSpace {
                need: format!("{} of address space{}", human(need.saturating_add(overhead)), at()),
                overhead: format!("{} for the stacks and malloc arenas of {}", human(overhead), counted(workers, "worker thread")),
                limit: format!("and {} is in use already: above this process's limit of {}", human(a.used), human(a.limit)),
                parts,
                lower,
            });
        }
    }
    Ok(())
}

/// The parts of a refused estimate, largest first (those above 1% of it), and
/// what lowers the largest. When that is the RAM LUNs: how much of them fits
/// in `usable` beside the rest of the run.
fn explain(estimate: &Estimate, usable: u64) -> (String, String) {
    let need = estimate.total();
    let mut parts = estimate.parts.clone();
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    let mut text = String::new();
    for (i, p) in parts.iter().filter(|p| p.bytes >= need / 100).enumerate() {
        let _ = write!(text, "{}{} {} ({})", if i > 0 { "; " } else { "" }, p.what, human(p.bytes), p.how);
    }
    let lower = match parts.first() {
        Some(p) if p.what == MEM_LUNS => {
            let rest = need - p.bytes;
            match usable.checked_sub(rest).map(|room| room / 513 * 512).filter(|&room| room >= 1 << 20) {
                Some(room) => {
                    format!("the mem: size: at most about {} of mem: targets in all fits beside the rest of this run", human(room))
                }
                None => format!("the mem: size, and the rest of this run ({}), which alone leaves no room for a mem: target", human(rest)),
            }
        }
        Some(p) => p.lower.to_string(),
        None => String::new(),
    };
    (text, lower)
}

/// One line for `--dry-run`: the estimate against what is available.
pub fn describe(plan: &RunPlan, extras: Extras) -> String {
    let (index, e) = for_plan(plan, extras);
    let at = if plan.points.len() > 1 { format!(" (largest at point {})", index + 1) } else { String::new() };
    match HostMemory::read() {
        Some(m) => format!(
            "memory: about {} needed{at}, {} available, {} of it usable (lunmark leaves {} to the rest of the system)",
            human(e.total()),
            human(m.available),
            human(m.usable()),
            human(m.reserve())
        ),
        None => format!("memory: about {} needed{at}", human(e.total())),
    }
}

/// MemAvailable from /proc/meminfo, in bytes (None when it cannot be read).
pub fn mem_available() -> Option<u64> {
    HostMemory::read().map(|m| m.available)
}

/// Bytes as people read them: "512 KiB", "1.3 GiB".
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} bytes")
    } else if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bytes;

    fn spec(workers: u32, qd: u32, bs: u64) -> WorkloadSpec {
        let mut s = crate::workload::spec::tests::one_line_spec();
        s.groups[0].workers = workers;
        s.groups[0].qd = qd;
        s.groups[0].access[0].bs = Bytes(bs);
        s
    }

    /// The point estimate of a spec, its targets' engines resolved as a plan does.
    fn estimate(s: &WorkloadSpec) -> Estimate {
        let targets: Vec<crate::targets::Target> = s.targets.iter().map(|t| crate::targets::Target::parse(t).unwrap()).collect();
        point(s, &crate::run::plan::kinds(&targets, s.engine), Extras::default())
    }

    fn plan_of(s: WorkloadSpec) -> RunPlan {
        super::super::plan::single(s).unwrap()
    }

    #[test]
    fn buffers_count_every_slot_of_every_worker_in_whole_pages() {
        let e = estimate(&spec(3, 16, 6000));
        let b = e.parts.iter().find(|p| p.what == "I/O buffers").unwrap();
        assert_eq!(b.bytes, 3 * 16 * 8192);
        // The RAM LUN is the plan's, with its page tables.
        let (_, e) = for_plan(&plan_of(spec(3, 16, 6000)), Extras::default());
        assert!(
            e.parts.iter().any(|p| p.what == "mem: targets" && p.bytes == (64 << 20) + (128 << 10) && p.how.starts_with("mem:64m, ")),
            "{e:?}"
        );
    }

    /// A host of 24 GiB with `available` free, and no address-space limit.
    fn host(available: u64) -> Room {
        Room { host: Some(HostMemory { available, total: 24 << 30 }), address_space: None }
    }

    /// A LUN under MemAvailable that leaves the rest of the system less than
    /// its reserve is refused, naming the LUN and what fits (2026-11-27: such
    /// a LUN was filled and lunmark OOM-killed at 19.6 GB).
    #[test]
    fn a_mem_lun_that_leaves_too_little_is_refused_naming_it() {
        let mut s = spec(1, 1, 4096);
        s.targets = vec!["mem:20g".into()];
        let e = check_fits(&plan_of(s.clone()), Extras::default(), host(21 << 30)).unwrap_err().to_string();
        assert!(e.contains("mem: targets 20.0 GiB (mem:20g, held in RAM with page tables)") && e.contains("21 GiB is available"), "{e}");
        assert!(e.contains("leaves 1.5 GiB to the rest of the system") && e.contains("19.5 GiB can be used"), "{e}");
        assert!(e.contains("Lower the mem: size: at most about 19.4 GiB of mem: targets"), "{e}");
        assert!(check_fits(&plan_of(s), Extras::default(), host(22 << 30)).is_ok());
    }

    /// Every `mem:` target lives for the whole run: a sweep of the targets
    /// holds the first point's LUNs and the later ones' together, the same
    /// URI twice in a point is two LUNs.
    #[test]
    fn the_luns_of_every_point_count_together() {
        let mut s = spec(1, 1, 4096);
        s.targets = vec!["mem:1g".into(), "mem:1g".into(), "mem:2g".into()];
        let mut plan = plan_of(s.clone());
        let mut second = plan.points[0].clone();
        second.spec.targets = vec!["mem:1g".into(), "mem:4g".into()];
        plan.points.push(second);
        let (_, e) = for_plan(&plan, Extras::default());
        let luns = e.parts.iter().find(|p| p.what == "mem: targets").unwrap();
        assert_eq!(luns.bytes, (8u64 << 30) + (8u64 << 30) / 512, "{luns:?}");
        assert!(luns.how.starts_with("mem:1g, mem:1g, mem:2g, mem:4g"), "{luns:?}");
    }

    /// Two MPI ranks on one host each hold their own LUN: a LUN that fits
    /// once is refused twice over, naming the ranks.
    #[test]
    fn ranks_on_one_host_each_count_their_own_luns() {
        let mut s = spec(1, 1, 4096);
        s.targets = vec!["mem:8g".into()];
        let p = plan_of(s);
        assert!(check_fits(&p, Extras::default(), host(16 << 30)).is_ok());
        let two = Extras { ranks_here: 2, ..Extras::default() };
        let e = check_fits(&p, two, host(16 << 30)).unwrap_err().to_string();
        assert!(e.contains("needs about 16.1 GiB of memory (2 ranks on this host, 8.0 GiB each)"), "{e}");
        assert!(e.contains("at most about 7.2 GiB of mem: targets in all fits beside the rest of this run, on each rank"), "{e}");
    }

    /// Under `ulimit -v` a worker's buffers once failed to allocate and the
    /// worker panicked: a run beyond the limit is refused with it.
    #[test]
    fn a_run_beyond_the_address_space_limit_is_refused_with_the_limit() {
        let p = plan_of(spec(1, 128, 4 << 20));
        let room = |limit| Room { host: None, address_space: Some(AddressSpace { limit, used: 64 << 20 }) };
        let e = check_fits(&p, Extras::default(), room(512 << 20)).unwrap_err().to_string();
        assert!(e.contains("RLIMIT_AS") && e.contains("limit of 512 MiB") && e.contains("64 MiB is in use"), "{e}");
        assert!(e.contains("1 worker x 128 slots x 4 MiB") && e.contains("Lower --qd, --bs or --workers, or raise the limit"), "{e}");
        assert!(check_fits(&p, Extras::default(), room(2 << 30)).is_ok());
    }

    #[test]
    fn histograms_grow_with_workers() {
        let one = estimate(&spec(1, 32, 4096));
        let many = estimate(&spec(10_000, 32, 4096));
        let h = |e: &Estimate| e.parts.iter().find(|p| p.what == "latency histograms").unwrap().bytes;
        assert_eq!(h(&many), 10_000 * h(&one));
        assert!(h(&one) >= 4 * LatencyHistogram::footprint_bytes(3));
        // Measured: about 1.3 MiB per worker at 32 x 4 KiB (issue 12: 6.6 GB and growing at 10000 workers).
        assert!(many.total() > 10_000 * (1 << 20), "{}", human(many.total()));
    }

    #[test]
    fn a_plan_that_does_not_fit_is_refused_with_the_figures() {
        let p = plan_of(spec(1, 32768, 1 << 20));
        let e = check_fits(&p, Extras::default(), host(8 << 30)).unwrap_err().to_string();
        assert!(e.contains("32 GiB") && e.contains("8 GiB") && e.contains("MemAvailable"), "{e}");
        assert!(e.contains("1 worker x 32768 slots x 1 MiB") && e.contains("--qd, --bs or --workers"), "{e}");
        assert!(check_fits(&plan_of(spec(1, 32, 4096)), Extras::default(), host(8 << 30)).is_ok());
    }

    #[test]
    fn a_count_of_one_takes_the_singular_and_others_the_plural() {
        let how = |e: &Estimate, what: &str| e.parts.iter().find(|p| p.what == what).unwrap().how.clone();
        // A file target (never opened here) so that the worker has an io_uring ring.
        let mut one = spec(1, 1, 4096);
        one.targets = vec!["/dev/shm/lunmark-never-opened".into()];
        let e = estimate(&one);
        assert_eq!(how(&e, "I/O buffers"), "1 worker x 1 slot x 4 KiB");
        assert_eq!(how(&e, "io_uring rings"), "1 ring");
        assert!(how(&e, "latency histograms").starts_with("1 worker x "), "{e:?}");
        assert!(how(&e, "per-target histograms").starts_with("1 worker x target pair x "), "{e:?}");
        assert_eq!(how(&e, "worker threads and slot bookkeeping"), "1 thread, 1 slot");
        assert!(e.parts.iter().all(|p| !p.how.contains("(s)")), "{e:?}");
        let mut two = spec(2, 4, 4096);
        two.targets = one.targets.clone();
        let e = estimate(&two);
        assert_eq!(how(&e, "I/O buffers"), "2 workers x 4 slots x 4 KiB");
        assert_eq!(how(&e, "io_uring rings"), "2 rings");
        assert_eq!(how(&e, "worker threads and slot bookkeeping"), "2 threads, 8 slots");
    }

    #[test]
    fn workers_beyond_the_mapping_limit_are_refused_with_the_limit() {
        let p = plan_of(spec(20_000, 32, 4096));
        let e = check_mappings(&p, 65_530).unwrap_err().to_string();
        assert!(e.contains("20000 workers") && e.contains("65530") && e.contains("vm.max_map_count"), "{e}");
        assert!(e.contains("at most 16126 --workers"), "{e}");
        assert!(check_mappings(&plan_of(spec(64, 32, 4096)), 65_530).is_ok());
    }

    #[test]
    fn human_sizes_read_at_a_glance() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(32 << 30), "32 GiB");
        assert_eq!(human(1_395_864_371), "1.3 GiB");
    }
}
