//! Knowing whether this process was started by an MPI launcher: Open MPI's
//! mpirun sets OMPI_COMM_WORLD_*, MPICH's hydra and Slurm's srun --mpi=pmi2 set
//! PMI_*, PMIx launchers (srun --mpi=pmix, prterun) set PMIX_RANK. Plain srun
//! without MPI sets only SLURM_* and is not taken for MPI.

/// The environment variables that say "a rank of an MPI job", in the order they are checked.
pub const VARIABLES: [&str; 5] = ["OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"];

/// The variable (and its value) that shows an MPI launcher started this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launched {
    pub variable: &'static str,
    pub value: String,
}

/// This process's launcher, from its environment.
pub fn detect() -> Option<Launched> {
    detect_in(|k| std::env::var(k).ok())
}

/// The same from any source of variables (testable).
pub fn detect_in(var: impl Fn(&str) -> Option<String>) -> Option<Launched> {
    VARIABLES.iter().find_map(|&k| var(k).map(|value| Launched { variable: k, value }))
}

/// What a binary built without MPI says when it finds itself under a launcher.
pub fn refusal(l: &Launched) -> String {
    format!(
        "lunmark was started by an MPI launcher ({}={} is set) but this binary was built without MPI support, \
         so every rank would run alone and their results would never be merged. Rebuild it with MPI: \
         `cargo build --release --features mpi` (needs Open MPI and libclang: apt-get install libopenmpi-dev openmpi-bin libclang-dev), \
         or run lunmark without mpirun/srun",
        l.variable, l.value
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_mpi_pmi_and_pmix_are_recognised_and_plain_slurm_is_not() {
        let env =
            |pairs: &'static [(&'static str, &'static str)]| move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        assert_eq!(detect_in(env(&[("OMPI_COMM_WORLD_SIZE", "3")])).unwrap().variable, "OMPI_COMM_WORLD_SIZE");
        assert_eq!(detect_in(env(&[("PMI_RANK", "1")])).unwrap().variable, "PMI_RANK");
        assert_eq!(detect_in(env(&[("PMIX_RANK", "0")])).unwrap().variable, "PMIX_RANK");
        assert!(detect_in(env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")])).is_none());
        let text = refusal(&detect_in(env(&[("OMPI_COMM_WORLD_SIZE", "3")])).unwrap());
        assert!(text.contains("--features mpi") && text.contains("OMPI_COMM_WORLD_SIZE=3"), "{text}");
    }
}
