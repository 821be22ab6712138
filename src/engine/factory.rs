//! Builds a worker's engine: the kind its targets run through (from their
//! parsed kinds, never from their URI strings), that engine over the worker's
//! buffers, and the cache tier in front of it when the targets have a cache.

use std::io;

use super::{cache, iscsi, mem, nbd, psync, uring, BufferPool, Engine, EngineKind};
use crate::targets::{Handle, OpenTarget, TargetKind};
use crate::workload::polling::Polling;
use crate::workload::EngineChoice;

/// The one engine kind of a worker's targets. The planner refuses a group
/// whose targets need different engines; this refuses it again where the
/// engine is built, naming the mix.
pub fn kind_of(targets: &[&OpenTarget], choice: EngineChoice) -> io::Result<EngineKind> {
    let mut kinds = targets.iter().map(|t| EngineKind::for_target(t.facts.kind, choice));
    let first = kinds.next().ok_or_else(|| io::Error::other("a worker without targets has no engine"))?;
    if kinds.all(|k| k == first) {
        return Ok(first);
    }
    let has = |a: TargetKind, b: TargetKind| targets.iter().any(|t| t.facts.kind == a || t.facts.kind == b);
    if has(TargetKind::Mem, TargetKind::Null) && has(TargetKind::File, TargetKind::BlockDevice) {
        return Err(io::Error::other("one worker's targets mix mem: or null: with files or devices"));
    }
    let mut names: Vec<&str> = targets.iter().map(|t| EngineKind::for_target(t.facts.kind, choice).name()).collect();
    names.sort();
    names.dedup();
    Err(io::Error::other(format!("one worker's targets run through different engines ({})", names.join(", "))))
}

/// Builds the engine of `kind` for a worker's targets, with the cache tier in
/// front when they have a cache. `user_slots` of the pool are the worker's;
/// the rest (see `cache_slots`) the cache tier's.
pub fn build(
    kind: EngineKind,
    targets: &[&OpenTarget],
    pool: BufferPool,
    connections: u32,
    user_slots: u32,
    polling: Polling,
) -> io::Result<Box<dyn Engine>> {
    let inner = build_plain(kind, targets, pool, connections, polling)?;
    match targets.iter().find_map(|t| t.cache.as_ref()) {
        Some((_, mode)) => {
            let caches = targets.iter().map(|t| t.cache.as_ref().map(|(c, _)| c.clone())).collect();
            Ok(Box::new(cache::CacheEngine::new(inner, caches, *mode, user_slots)))
        }
        None => Ok(inner),
    }
}

/// Extra buffer slots a cache tier needs for writing dirty blocks back, given
/// the worker's own slots (none without a cache).
pub fn cache_slots(targets: &[&OpenTarget], user_slots: u32) -> u32 {
    if targets.iter().any(|t| t.cache.is_some()) {
        user_slots.clamp(4, 64)
    } else {
        0
    }
}

/// The engine of `kind` alone. Every target must be of a kind that engine
/// takes (`kind_of` checked it); one that is not is refused, not misused.
fn build_plain(
    kind: EngineKind,
    targets: &[&OpenTarget],
    pool: BufferPool,
    connections: u32,
    polling: Polling,
) -> io::Result<Box<dyn Engine>> {
    match kind {
        EngineKind::Iscsi => {
            let uris = targets.iter().map(|t| remote(t).ok_or_else(|| wrong(kind, t))).collect::<io::Result<Vec<String>>>()?;
            Ok(Box::new(iscsi::IscsiEngine::connect(&uris, connections, pool)?))
        }
        EngineKind::Nbd => {
            // The connections were opened before the point (targets::open_all).
            let pools = targets
                .iter()
                .map(|t| {
                    let uri = remote(t).ok_or_else(|| wrong(kind, t))?;
                    Ok(t.nbd.clone().unwrap_or_else(|| nbd::pool::ConnectionPool::new(&uri)))
                })
                .collect::<io::Result<Vec<_>>>()?;
            Ok(Box::new(nbd::NbdEngine::connect(&pools, connections, pool)?))
        }
        EngineKind::Null => match targets.iter().find(|t| !matches!(t.handle, Handle::Null)) {
            Some(t) => Err(wrong(kind, t)),
            None => Ok(Box::new(mem::MemEngine::null(pool))),
        },
        EngineKind::Mem => {
            let luns = targets
                .iter()
                .map(|t| match &t.handle {
                    Handle::Mem(l) => Ok(l.clone()),
                    _ => Err(wrong(kind, t)),
                })
                .collect::<io::Result<Vec<_>>>()?;
            Ok(Box::new(mem::MemEngine::new(luns, pool)))
        }
        EngineKind::Psync | EngineKind::IoUring => {
            let fds = targets.iter().map(|t| t.raw_fd().ok_or_else(|| wrong(kind, t))).collect::<io::Result<Vec<_>>>()?;
            if kind == EngineKind::Psync {
                return Ok(Box::new(psync::PsyncEngine::new(fds, pool)));
            }
            let ring = uring::RingSetup::new(targets.iter().all(|t| t.facts.kind == TargetKind::BlockDevice), polling);
            Ok(Box::new(uring::UringEngine::new(&fds, pool, ring)?))
        }
    }
}

/// The refusal of a target the engine of `kind` cannot reach.
fn wrong(kind: EngineKind, t: &OpenTarget) -> io::Error {
    io::Error::other(format!("{}: the {} engine cannot reach this target", t.facts.uri, kind.name()))
}

/// A network target's URI (what its engine connects to).
fn remote(t: &OpenTarget) -> Option<String> {
    match &t.handle {
        Handle::Remote(u) => Some(u.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::{open_all, RunTargets};
    use crate::workload::{WorkerGroup, WorkloadSpec};

    /// Opens `targets` as a run does (a file is created with --size, buffered so
    /// any filesystem takes it).
    fn open(targets: &[&str]) -> Vec<OpenTarget> {
        let group: WorkerGroup = serde_json::from_value(serde_json::json!({
            "name": "g", "workers": 1, "qd": 2, "access": [{"share": 100.0, "bs": "4k", "read": 100.0, "random": 100.0}]
        }))
        .unwrap();
        let mut spec = WorkloadSpec::plain(targets.iter().map(|t| t.to_string()).collect(), vec![group]);
        spec.size = Some(crate::units::Bytes(1 << 20));
        spec.buffered = true;
        open_all(&spec, Default::default(), &mut RunTargets::default()).unwrap()
    }

    fn pool() -> BufferPool {
        BufferPool::new(4, 4096, 1)
    }

    #[test]
    fn each_kind_builds_the_engine_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.dat");
        let opened = open(&["mem:1m", "null:1m", file.to_str().unwrap()]);
        let [mem, null, file] = [&opened[0], &opened[1], &opened[2]];
        let mut cases = vec![(mem, EngineChoice::Auto, EngineKind::Mem), (null, EngineChoice::Auto, EngineKind::Null)];
        cases.push((file, EngineChoice::Psync, EngineKind::Psync));
        if uring::available() {
            cases.push((file, EngineChoice::IoUring, EngineKind::IoUring));
        }
        for (t, choice, want) in cases {
            let kind = kind_of(&[t], choice).unwrap();
            assert_eq!(kind, want, "{}", t.facts.uri);
            let engine = build(kind, &[t], pool(), 1, 4, Polling::default()).unwrap();
            assert_eq!(engine.kind(), want, "{}: the factory built the engine the kind names", t.facts.uri);
            assert_eq!(engine.capabilities(), want.capabilities(), "{}: the engine declares its kind's capabilities", t.facts.uri);
            assert!(!engine.has_cache());
        }
    }

    #[test]
    fn a_kind_that_cannot_reach_a_target_is_refused_not_misused() {
        let opened = open(&["mem:1m"]);
        let e =
            build(EngineKind::Psync, &[&opened[0]], pool(), 1, 4, Polling::default()).err().expect("psync has no descriptor of a mem: LUN");
        assert_eq!(e.to_string(), "mem:1m: the psync engine cannot reach this target");
        let e = build(EngineKind::Null, &[&opened[0]], pool(), 1, 4, Polling::default()).err().unwrap();
        assert!(e.to_string().contains("the null engine cannot reach"), "{e}");
    }

    #[test]
    fn a_worker_mixing_mem_and_files_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.dat");
        let opened = open(&["mem:1m", file.to_str().unwrap(), "null:1m"]);
        for choice in [EngineChoice::Auto, EngineChoice::Psync, EngineChoice::IoUring] {
            let e = kind_of(&[&opened[0], &opened[1]], choice).unwrap_err();
            assert_eq!(e.to_string(), "one worker's targets mix mem: or null: with files or devices");
            let e = kind_of(&[&opened[2], &opened[1]], choice).unwrap_err();
            assert_eq!(e.to_string(), "one worker's targets mix mem: or null: with files or devices");
        }
        let e = kind_of(&[&opened[0], &opened[2]], EngineChoice::Auto).unwrap_err();
        assert_eq!(e.to_string(), "one worker's targets run through different engines (mem, null)");
        assert_eq!(kind_of(&[&opened[0], &opened[0]], EngineChoice::Psync).unwrap(), EngineKind::Mem);
    }

    #[test]
    fn targets_with_a_cache_get_the_cache_tier_in_front_of_their_engine() {
        let mut opened = open(&["mem:1m"]);
        let cfg = cache::config::CacheConfig {
            size: cache::config::CacheSize::Percent(25.0),
            mode: cache::CacheMode::Writethrough,
            dev: None,
            block_bytes: 4096,
        };
        cache::config::attach(&cfg, &mut opened).unwrap();
        let mine = [&opened[0]];
        assert_eq!(cache_slots(&mine, 2), 4, "at least 4 write-back slots");
        assert_eq!(cache_slots(&mine, 1000), 64, "at most 64");
        let engine = build(EngineKind::Mem, &mine, BufferPool::new(2 + 4, 4096, 1), 1, 2, Polling::default()).unwrap();
        assert!(engine.has_cache());
        assert_eq!(engine.kind(), EngineKind::Mem, "the tier answers for the engine behind it");
        let plain = open(&["mem:1m"]);
        assert_eq!(cache_slots(&[&plain[0]], 2), 0);
    }
}
