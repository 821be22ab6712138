//! lunmark as one rank of an MPI job (issue 17). Built with the `mpi` feature:
//! MPI is initialized, rank 0's command line is given to every rank (its
//! request is the one run), and `run` goes through the cluster hooks. Built
//! without it, a process started by a launcher refuses, saying how to rebuild.

use super::exit;
use crate::mpi::launcher::Launched;

#[cfg(not(feature = "mpi"))]
pub fn main(launched: Launched) -> i32 {
    crate::ewriteln!("error: {}", crate::mpi::launcher::refusal(&launched));
    exit::ERROR
}

#[cfg(feature = "mpi")]
pub fn main(_launched: Launched) -> i32 {
    use std::rc::Rc;

    use clap::{CommandFactory, FromArgMatches};

    use super::{Cli, Command};
    use crate::mpi::world::{Agreed, World};
    use crate::run::cluster::{Cluster, ClusterRef};

    let world = match World::start() {
        Ok(w) => Rc::new(w),
        Err(e) => {
            crate::ewriteln!("error: {e:#}");
            return exit::ERROR;
        }
    };
    let root = world.is_root();
    let args = world.broadcast_args(std::env::args().collect());
    // Every rank parses the same arguments: a usage error is the same on each, and rank 0 says it.
    let command = Cli::command();
    let matches = match command.clone().try_get_matches_from(&args) {
        Ok(m) => m,
        Err(e) => {
            let e = super::fio_names::explain(e);
            if root {
                let _ = e.print();
            }
            return if e.use_stderr() { exit::USAGE } else { exit::OK };
        }
    };
    // Only rank 0 writes outputs, so only its paths are judged; every rank learns the verdict.
    let checked = if root { super::paths::check(&command, &matches).err().map(anyhow::Error::from) } else { None };
    if let Some(e) = world.agree("checking the output paths", checked.as_ref()) {
        return report(&world, e);
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            if root {
                let _ = e.print();
            }
            return exit::USAGE;
        }
    };
    let outcome = match cli.command {
        Some(Command::Run(args)) => match refused_under_mpi(&args) {
            Some(why) => Err(anyhow::Error::new(Agreed(why))),
            None => {
                let ran = super::run::execute_with(*args, cli.store.as_deref(), &world.place(), ClusterRef(world.clone()));
                // Live seconds still on their way to rank 0 are given a moment, then let go, before MPI ends.
                world.end_posts();
                ran
            }
        },
        _ => Err(anyhow::Error::new(Agreed(
            "under an MPI launcher only `lunmark run` runs: start the other commands without mpirun/srun".into(),
        ))),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => report(&world, e),
    }
}

/// Says an error once: one every rank met together by rank 0 alone, and ends
/// normally; one only this rank met with its rank and host, and then ends the
/// whole job (the other ranks would otherwise wait for this one forever).
#[cfg(feature = "mpi")]
fn report(world: &crate::mpi::world::World, e: anyhow::Error) -> i32 {
    use crate::run::cluster::Cluster;
    let together = world.agreed() || e.downcast_ref::<crate::mpi::world::Agreed>().is_some();
    if together {
        if world.is_root() {
            crate::ewriteln!("error: {}", super::message::once(&e));
        }
        return exit::ERROR;
    }
    crate::ewriteln!("error: rank {} on {}: {}", world.rank(), world.host(), super::message::once(&e));
    world.abort(exit::ERROR)
}

/// Flags that cannot apply across ranks yet, refused before anything runs.
#[cfg(feature = "mpi")]
fn refused_under_mpi(args: &super::run::RunArgs) -> Option<String> {
    let flags = [
        ("--trace", args.trace.is_some()),
        ("--journal", args.journal.is_some()),
        ("--cache", args.cache.is_some()),
        ("--output-format fio-json", args.output_format == Some(super::run::OutputFormat::FioJson)),
    ];
    let used: Vec<&str> = flags.iter().filter(|(_, on)| *on).map(|(f, _)| *f).collect();
    if !used.is_empty() {
        return Some(format!(
            "{} cannot be used under MPI yet (each rank would write its own file, or the figures are not merged across ranks): \
             drop it, or run lunmark without mpirun/srun",
            used.join(", ")
        ));
    }
    single_process_only(args)
}

/// Replay, steady state and rounds are single-process for now: their outcome
/// (the replay summary, the steady verdict, the round that settled) is one
/// process's and is not merged across ranks, and steady state ends a point on
/// one process's figures. Refused, from the flags or the profile, before anything runs.
#[cfg(feature = "mpi")]
fn single_process_only(args: &super::run::RunArgs) -> Option<String> {
    // A profile that cannot be read is left to the run, which says why.
    let profile = args.base_profile().ok().map(|(p, _, _)| p);
    let profile = profile.as_ref();
    let used = [
        ("--replay", args.replay.is_some()),
        ("--steady", args.steady.is_some()),
        ("the profile's [replay]", args.replay.is_none() && profile.is_some_and(|p| p.replay.is_some())),
        ("the profile's [steady]", args.steady.is_none() && profile.is_some_and(|p| p.steady.is_some())),
        ("the profile's [rounds]", profile.is_some_and(|p| p.rounds.is_some())),
    ];
    let used: Vec<&str> = used.iter().filter(|(_, on)| *on).map(|(f, _)| *f).collect();
    (!used.is_empty()).then(|| {
        format!(
            "{} cannot be used under MPI yet: replay, steady state and rounds are single-process for now \
             (their outcome is one process's and is not merged across ranks). Run lunmark without mpirun/srun for them, \
             or drop {} under MPI",
            used.join(", "),
            if used.len() == 1 { "it" } else { "them" }
        )
    })
}
