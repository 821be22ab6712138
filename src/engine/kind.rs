//! Which engine a target runs through (`EngineKind`), decided once from the
//! target's parsed kind and the user's `--engine` choice, and what each engine
//! can do (`Capabilities`). The planner, the resource check and the engine
//! factory ask these instead of recognising engines by their names; the name
//! is only what the result records ("io_uring", "mem").

use crate::targets::{TargetKind, TargetUri};
use crate::workload::EngineChoice;

/// The engine family of a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKind {
    /// Local files and block devices through io_uring.
    IoUring,
    /// Local files and block devices, one blocking pread/pwrite at a time.
    Psync,
    /// An in-process RAM LUN (`mem:`).
    Mem,
    /// An in-process sink that moves no data (`null:`).
    Null,
    /// An NBD export through libnbd.
    Nbd,
    /// An iSCSI LUN through libiscsi.
    Iscsi,
}

/// What an engine can do. Each engine declares its own (`CAPABILITIES` beside
/// its code); `EngineKind::capabilities` and `Engine::capabilities` read them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// The most I/Os one worker may keep in flight over all its targets (an
    /// io_uring ring's entries). A plan above it is refused before the run.
    pub max_in_flight: Option<u32>,
    /// The deepest queue it keeps per target (psync: one blocking call at a
    /// time). A deeper --qd is lowered to it, with a warning.
    pub max_qd: Option<u32>,
    /// It takes io_uring polling (--sqpoll, --poll).
    pub polling: bool,
    /// It reaches the target through a file descriptor: direct I/O (O_DIRECT)
    /// by default, the page cache with --buffered. Without it there is no page
    /// cache in the path (RAM LUNs, network targets), so neither applies.
    pub direct_or_buffered: bool,
}

impl EngineKind {
    /// The engine a target of `kind` runs through, given the user's choice
    /// (which picks only between the engines of local files and devices).
    pub fn for_target(kind: TargetKind, choice: EngineChoice) -> EngineKind {
        match kind {
            TargetKind::Mem => EngineKind::Mem,
            TargetKind::Null => EngineKind::Null,
            TargetKind::Nbd => EngineKind::Nbd,
            TargetKind::Iscsi => EngineKind::Iscsi,
            TargetKind::File | TargetKind::BlockDevice => match choice {
                EngineChoice::Psync => EngineKind::Psync,
                EngineChoice::IoUring => EngineKind::IoUring,
                EngineChoice::Auto if super::uring::available() => EngineKind::IoUring,
                EngineChoice::Auto => EngineKind::Psync,
            },
        }
    }

    /// The engine a parsed target URI runs through (before it is opened).
    pub fn for_uri(uri: &TargetUri, choice: EngineChoice) -> EngineKind {
        EngineKind::for_target(uri.kind(), choice)
    }

    /// The name the result and the messages use.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
            EngineKind::Mem => "mem",
            EngineKind::Null => "null",
            EngineKind::Nbd => "nbd",
            EngineKind::Iscsi => "iscsi",
        }
    }

    /// What the engine of this kind declares it can do.
    pub fn capabilities(self) -> Capabilities {
        match self {
            EngineKind::IoUring => super::uring::UringEngine::CAPABILITIES,
            EngineKind::Psync => super::psync::PsyncEngine::CAPABILITIES,
            EngineKind::Mem | EngineKind::Null => super::mem::MemEngine::CAPABILITIES,
            EngineKind::Nbd => super::nbd::NbdEngine::CAPABILITIES,
            EngineKind::Iscsi => super::iscsi::IscsiEngine::CAPABILITIES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [EngineKind; 6] =
        [EngineKind::IoUring, EngineKind::Psync, EngineKind::Mem, EngineKind::Null, EngineKind::Nbd, EngineKind::Iscsi];

    #[test]
    fn target_kinds_pick_their_engine_and_the_choice_picks_only_for_files_and_devices() {
        for choice in [EngineChoice::Auto, EngineChoice::IoUring, EngineChoice::Psync] {
            assert_eq!(EngineKind::for_target(TargetKind::Mem, choice), EngineKind::Mem);
            assert_eq!(EngineKind::for_target(TargetKind::Null, choice), EngineKind::Null);
            assert_eq!(EngineKind::for_target(TargetKind::Nbd, choice), EngineKind::Nbd);
            assert_eq!(EngineKind::for_target(TargetKind::Iscsi, choice), EngineKind::Iscsi);
        }
        for kind in [TargetKind::File, TargetKind::BlockDevice] {
            assert_eq!(EngineKind::for_target(kind, EngineChoice::Psync), EngineKind::Psync);
            assert_eq!(EngineKind::for_target(kind, EngineChoice::IoUring), EngineKind::IoUring);
            let auto = if super::super::uring::available() { EngineKind::IoUring } else { EngineKind::Psync };
            assert_eq!(EngineKind::for_target(kind, EngineChoice::Auto), auto);
        }
        let uri = |s: &str| crate::targets::parse(s).unwrap();
        assert_eq!(EngineKind::for_uri(&uri("mem:1m"), EngineChoice::Psync), EngineKind::Mem);
        assert_eq!(EngineKind::for_uri(&uri("/dev/loop0"), EngineChoice::Psync), EngineKind::Psync);
        assert_eq!(EngineKind::for_uri(&uri("/tmp/x"), EngineChoice::IoUring), EngineKind::IoUring);
        assert_eq!(EngineKind::for_uri(&uri("nbd://127.0.0.1/x"), EngineChoice::IoUring), EngineKind::Nbd);
        assert_eq!(EngineKind::for_uri(&uri("iscsi://h/iqn.x/1"), EngineChoice::Psync), EngineKind::Iscsi);
    }

    #[test]
    fn names_are_what_results_record() {
        let names: Vec<&str> = ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["io_uring", "psync", "mem", "null", "nbd", "iscsi"]);
    }

    #[test]
    fn capabilities_say_which_engine_limits_depth_polls_and_has_a_page_cache() {
        let caps = |k: EngineKind| k.capabilities();
        // Only a ring bounds the in-flight I/Os of a worker, at the kernel's limit.
        assert_eq!(caps(EngineKind::IoUring).max_in_flight, Some(super::super::uring::MAX_ENTRIES));
        assert!(ALL.iter().filter(|&&k| k != EngineKind::IoUring).all(|&k| caps(k).max_in_flight.is_none()));
        // Only psync keeps one I/O per target at a time.
        assert_eq!(caps(EngineKind::Psync).max_qd, Some(1));
        assert!(ALL.iter().filter(|&&k| k != EngineKind::Psync).all(|&k| caps(k).max_qd.is_none()));
        // Only io_uring polls.
        assert_eq!(ALL.iter().filter(|&&k| caps(k).polling).copied().collect::<Vec<_>>(), [EngineKind::IoUring]);
        // The engines of files and devices go through a descriptor: direct or buffered.
        assert_eq!(
            ALL.iter().filter(|&&k| caps(k).direct_or_buffered).copied().collect::<Vec<_>>(),
            [EngineKind::IoUring, EngineKind::Psync]
        );
    }
}
