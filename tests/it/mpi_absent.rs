//! A binary built without the `mpi` feature, started by an MPI launcher,
//! refuses and says how to rebuild (issue 17): its ranks would otherwise each
//! run alone and write separate, unmerged results.

use crate::common::{lunmark, shm_dir, stderr};

#[test]
fn a_binary_without_mpi_refuses_to_run_under_a_launcher() {
    let dir = shm_dir();
    for var in ["OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK"] {
        let out =
            lunmark().current_dir(dir.path()).env(var, "0").args(["run", "-t", "mem:1m", "--time", "1s", "--no-store"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{var}");
        let err = stderr(&out);
        assert!(err.contains(var) && err.contains("cargo build --release --features mpi"), "{var}: {err}");
        assert_eq!(err.matches("error:").count(), 1, "said once: {err}");
    }
}
