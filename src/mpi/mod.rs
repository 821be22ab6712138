//! Scale out over MPI (issue 17): one benchmark run by many ranks on many
//! initiator hosts, started by any MPI launcher (mpirun, srun). lunmark builds
//! no cluster protocol of its own. This module owns everything MPI: knowing it
//! runs under a launcher, the `{rank}`/`{host}`/`{local_rank}` placeholders in
//! target URIs, what a rank sends rank 0 after each point and how rank 0
//! merges it. The MPI transport itself (`world`) is built only with the Cargo
//! feature `mpi`; a binary without it refuses to run under a launcher. The
//! run calls in through `run::cluster::Cluster`, never from the I/O path.

pub mod launcher;
pub mod placeholders;
#[cfg(feature = "mpi")]
pub mod posts;
pub mod reduce;
pub mod report;
pub mod seconds;
#[cfg(feature = "mpi")]
pub mod stop;
#[cfg(feature = "mpi")]
pub mod world;
