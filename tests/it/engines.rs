//! One workload through every engine: the same seeded write workload with
//! `--verify` runs through `mem:`, io_uring (direct on a loop device and
//! buffered on a file), psync, NBD (nbdkit), iSCSI (tgtd) and the write-back
//! cache tier, and each target ends up holding the same bytes.
//!
//! The workload is one worker at queue depth 1 (so no draw is ever redrawn
//! because its blocks were busy, which would depend on timing): a sequential
//! write pass and a random write pass of a fixed number of I/Os, then a
//! sequential and a random verified read pass. Every block is written at
//! least twice, so nothing of the target's earlier content is left.
//!
//! What "the same bytes" means here: every run stamps its blocks with a random
//! run stamp (it tells one run's data from another's, on purpose), so two runs
//! never write equal bytes. The test reads each target's bytes after the run
//! and checks them against the image the run's journal describes (each block
//! exactly `fill(stamp, target 0, offset, generation)`), and checks that every
//! engine's journal gives every block the same final generation. Together:
//! the targets are byte-identical but for the run stamp. A `mem:` LUN lives
//! only inside the run, so it cannot be read afterwards: for it, the journal's
//! generations are compared and the run's own verified read passes (every
//! block checked, no mismatch) stand for reading its bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use lunmark::verify::{block, journal};

use crate::common::*;

const SIZE: u64 = 1 << 20;
const BLOCK: u64 = 4096;
const BLOCKS: u64 = SIZE / BLOCK;
/// I/Os per point: the sequential write pass covers every block at least twice.
const IOS: &str = "600";

/// Where the bytes of a target can be read once the run is over.
enum Bytes {
    File(PathBuf),
    /// An NBD export, copied out with nbdcopy.
    Nbd(String),
    /// Gone with the run (`mem:`).
    Gone,
}

struct Case {
    name: &'static str,
    engine: &'static str,
    target: String,
    extra: Vec<&'static str>,
    bytes: Bytes,
}

/// What one engine's run left: its journal's final generation per block, and
/// the run stamp.
struct Outcome {
    generations: BTreeMap<u64, u32>,
    stamp: u32,
}

fn run_case(dir: &Path, case: &Case) -> Outcome {
    let journal_path = dir.join(format!("{}.journal", case.name));
    let json = dir.join(format!("{}.json", case.name));
    let mut args = vec![
        "run",
        "-q",
        "--no-store",
        "-t",
        &case.target,
        "--bs",
        "4k",
        "--workers",
        "1",
        "--qd",
        "1",
        "--seed",
        "7",
        "--ios",
        IOS,
        "--ramp",
        "0",
        "--sweep",
        "read=0,100",
        "--sweep",
        "random=0,100",
        "--verify",
    ];
    args.extend(&case.extra);
    let (jp, js) = (journal_path.to_str().unwrap().to_string(), json.to_str().unwrap().to_string());
    args.extend(["--journal", &jp, "--json", &js]);
    let out = run(&args);
    assert!(out.status.success(), "{}: lunmark {}\n{}", case.name, args.join(" "), stderr(&out));
    let r = read_json(&json);
    assert_eq!(r["engine"], case.engine, "{}: the engine the run used", case.name);
    let points = r["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "{}", case.name);
    for (i, p) in points.iter().enumerate() {
        let v = &p["summary"]["verify"];
        assert_eq!(v["mismatches"], 0, "{} point {}: {v}", case.name, i + 1);
        let checked = v["blocks_checked"].as_u64().unwrap_or(0);
        if i == 2 {
            // The sequential read pass reads every block (600 reads of 256 blocks).
            assert!(checked >= BLOCKS, "{} point 3 checked {checked} of {BLOCKS} blocks: {v}", case.name);
        }
    }
    let replay = journal::replay(&journal_path).expect("the run's journal reads back");
    assert_eq!(replay.header.block, BLOCK);
    let generations: BTreeMap<u64, u32> = replay
        .blocks
        .iter()
        .map(|(&(t, b), rec)| {
            assert_eq!(t, 0, "{}: one target", case.name);
            assert!(!rec.failed && rec.in_flight.is_none(), "{}: block {b}: {rec:?}", case.name);
            (b, rec.generation)
        })
        .collect();
    assert_eq!(generations.len() as u64, BLOCKS, "{}: every block was written", case.name);
    Outcome { generations, stamp: replay.header.stamp }
}

/// The bytes a target must hold after the run: each block as the journal says.
fn image(outcome: &Outcome) -> Vec<u8> {
    let mut img = vec![0u8; SIZE as usize];
    for (&b, &generation) in &outcome.generations {
        let at = (b * BLOCK) as usize;
        block::fill(&mut img[at..at + BLOCK as usize], outcome.stamp, 0, b * BLOCK, generation);
    }
    img
}

fn read_back(dir: &Path, case: &Case) -> Option<Vec<u8>> {
    match &case.bytes {
        Bytes::File(path) => Some(std::fs::read(path).expect("the target's bytes")[..SIZE as usize].to_vec()),
        Bytes::Nbd(uri) => {
            let copy = dir.join(format!("{}.image", case.name));
            let out = Command::new("nbdcopy").arg(uri).arg(&copy).output().expect("nbdcopy (libnbd-bin)");
            assert!(out.status.success(), "{}", stderr(&out));
            Some(std::fs::read(&copy).unwrap())
        }
        Bytes::Gone => None,
    }
}

/// The first block where two images differ, for a readable failure.
fn first_difference(a: &[u8], b: &[u8]) -> Option<u64> {
    a.iter().zip(b).position(|(x, y)| x != y).map(|i| i as u64 / BLOCK)
}

#[test]
fn the_same_seeded_workload_leaves_the_same_bytes_through_every_engine() {
    crate::require_root!();
    let dir = shm_dir();
    let d = dir.path();
    let file = |name: &str| d.join(format!("{name}.lun"));
    let loop_direct = LoopDevice::new(d, SIZE);
    let nbd = Nbdkit::unix(d, "1M", &[]);
    let tgt_backing = d.join("tgt-lun");
    std::fs::File::create(&tgt_backing).unwrap().set_len(SIZE).unwrap();
    let tgt = lunmark::lab::servers::tgtd(&tgt_backing).expect("tgtd (Debian's tgt package; scripts/setup.sh installs it)");
    let path_of = |p: &Path| p.to_str().unwrap().to_string();
    let cases = vec![
        Case { name: "mem", engine: "mem", target: "mem:1m".into(), extra: vec![], bytes: Bytes::Gone },
        Case {
            name: "io_uring-direct",
            engine: "io_uring",
            target: path_of(&loop_direct.path),
            extra: vec!["--engine", "io_uring", "--destructive", "--force"],
            bytes: Bytes::File(loop_direct.backing().to_path_buf()),
        },
        Case {
            name: "io_uring-buffered",
            engine: "io_uring",
            target: path_of(&file("uring")),
            extra: vec!["--engine", "io_uring", "--buffered", "--size", "1m"],
            bytes: Bytes::File(file("uring")),
        },
        Case {
            name: "psync",
            engine: "psync",
            target: path_of(&file("psync")),
            extra: vec!["--engine", "psync", "--buffered", "--size", "1m"],
            bytes: Bytes::File(file("psync")),
        },
        Case { name: "nbd", engine: "nbd", target: nbd.uri.clone(), extra: vec![], bytes: Bytes::Nbd(nbd.uri.clone()) },
        Case { name: "iscsi", engine: "iscsi", target: tgt.uri.clone(), extra: vec![], bytes: Bytes::File(tgt_backing.clone()) },
        Case {
            name: "cache-writeback",
            engine: "io_uring",
            target: path_of(&file("cached")),
            extra: vec!["--buffered", "--size", "1m", "--cache", "25%", "--cache-mode", "writeback"],
            bytes: Bytes::File(file("cached")),
        },
    ];
    let mut first: Option<(&str, BTreeMap<u64, u32>)> = None;
    for case in &cases {
        let outcome = run_case(d, case);
        if let Some(bytes) = read_back(d, case) {
            let want = image(&outcome);
            assert!(
                bytes == want,
                "{}: the target's bytes differ from what the journal says was written, first at block {:?}",
                case.name,
                first_difference(&bytes, &want)
            );
        }
        match &first {
            None => {
                // The workload is not trivial: blocks end at different generations.
                let most = outcome.generations.values().max().copied().unwrap_or(0);
                let least = outcome.generations.values().min().copied().unwrap_or(0);
                assert!(least >= 2 && most > least + 1, "generations {least}..{most}: the random pass should rewrite some blocks often");
                first = Some((case.name, outcome.generations));
            }
            Some((name, generations)) => {
                let differ: Vec<_> = generations.iter().filter(|(b, g)| outcome.generations.get(b) != Some(g)).take(5).collect();
                assert!(
                    differ.is_empty(),
                    "{} and {name} wrote different blocks last (block, generation in {name}): {differ:?}",
                    case.name
                );
            }
        }
    }
    drop(tgt);
}
