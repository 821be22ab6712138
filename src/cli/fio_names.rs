//! fio's option names typed on lunmark's command line (`--iodepth 32`): the
//! parser's "unexpected argument" error is replaced by one that names
//! lunmark's flag for it. They are not accepted as aliases: fio's `--rw`
//! packs two of lunmark's settings into one value, `--runtime` counts
//! seconds without a unit, and an alias that worked for some would make the
//! others' refusal a surprise.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

/// fio's name, and what lunmark calls it.
pub const FIO_NAMES: &[(&str, &str)] = &[
    ("--iodepth", "--qd N (outstanding I/Os per worker per target)"),
    ("--numjobs", "--workers N (worker threads)"),
    ("--rw", "--read PCT and --random PCT (randread is --read 100 --random 100, write is --read 0 --random 0)"),
    ("--readwrite", "--read PCT and --random PCT (randread is --read 100 --random 100, write is --read 0 --random 0)"),
    ("--rwmixread", "--read PCT"),
    ("--runtime", "--time DURATION (with a unit: 60s, 2m)"),
    ("--ramp_time", "--ramp DURATION"),
    ("--blocksize", "--bs SIZE"),
    ("--filename", "--target PATH (-t; repeat it for several)"),
    ("--ioengine", "--engine auto|io_uring|psync"),
    ("--randseed", "--seed N"),
    ("--rate_iops", "--rate IOPS"),
    ("--direct", "nothing needed, direct I/O is the default (--buffered goes through the page cache)"),
    ("--rwmixwrite", "--read PCT (the share of reads: 100 minus the writes)"),
    ("--number_ios", "--ios N (I/Os measured per worker)"),
    ("--time_based", "nothing needed, a run lasts --time unless --ios N is given"),
    ("--name", "--label TEXT"),
    ("--output", "--json FILE (with --output-format fio-json for fio's JSON)"),
    ("--random_distribution", "--dist DIST (zipf:THETA, pareto:H, zoned:A/R:..., normal:SIGMA%, hotband:W%/H%/PERIOD)"),
    ("--thinktime_blocks", "--thinktime-blocks N (with --thinktime DURATION, a unit given: 500us)"),
    ("--rate_process", "--arrivals fixed|poisson (with --rate)"),
    ("--read_iolog", "--replay FILE (a lunmark trace, blkparse text or MSR Cambridge CSV)"),
    ("--replay_no_stall", "--replay-speed max"),
    ("--replay_time_scale", "--replay-speed FACTOR (2 is twice as fast, fio's replay_time_scale=50)"),
    ("--replay_redirect", "--replay-map DEVICE=TARGET,... (each trace device to a target)"),
];

/// The lunmark flag for a fio option name given as `--name` or `--name=value`.
pub fn lunmark_name(arg: &str) -> Option<(&'static str, &'static str)> {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    FIO_NAMES.iter().find(|(fio, _)| *fio == name).copied()
}

/// An unknown argument that is one of fio's names becomes an error saying
/// lunmark's name for it (exit code 2, as every usage error); any other error is returned as it is.
pub fn explain(e: clap::Error) -> clap::Error {
    if e.kind() != ErrorKind::UnknownArgument {
        return e;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else { return e };
    let Some((fio, ours)) = lunmark_name(arg) else { return e };
    super::Cli::command().error(
        ErrorKind::UnknownArgument,
        format!("unexpected argument '{arg}': {fio} is fio's option; in lunmark: {ours}. `lunmark run --help` lists every flag"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn fio_names_are_refused_with_lunmarks_name() {
        for (args, want) in [
            (vec!["lunmark", "run", "--iodepth", "32"], "in lunmark: --qd N"),
            (vec!["lunmark", "run", "-t", "mem:1m", "--iodepth=32"], "in lunmark: --qd N"),
            (vec!["lunmark", "run", "--numjobs", "4"], "in lunmark: --workers N"),
            (vec!["lunmark", "run", "--rw", "randread"], "--read PCT and --random PCT"),
            (vec!["lunmark", "run", "--runtime", "60"], "--time DURATION"),
            (vec!["lunmark", "run", "--read_iolog", "t.log"], "in lunmark: --replay FILE"),
        ] {
            let e = explain(crate::cli::Cli::try_parse_from(&args).unwrap_err());
            assert_eq!(e.kind(), ErrorKind::UnknownArgument);
            assert_eq!(e.exit_code(), 2);
            let text = e.to_string();
            assert!(text.contains(want), "{args:?}: {text}");
        }
        // Other unknown arguments keep clap's own message.
        let e = explain(crate::cli::Cli::try_parse_from(["lunmark", "run", "--frobnicate"]).unwrap_err());
        assert!(!e.to_string().contains("fio's option"), "{e}");
    }
}
