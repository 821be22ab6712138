#!/usr/bin/env bash
# Sets up a fresh Debian machine for lunmark's tests (system packages, as root
# or through sudo) and runs every test. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
# With MPI: the multi-rank tests in tests/it/mpi.rs run against the system Open MPI.
cargo test --release --all-targets --features mpi -- --test-threads=2
# Without it: a binary built without MPI must refuse to run under a launcher
# (tests/it/mpi_absent.rs is compiled only without the feature).
cargo test --release --test it -- mpi_absent
