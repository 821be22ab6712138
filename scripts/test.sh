#!/usr/bin/env bash
# Sets up a fresh Debian machine for lunmark's tests (system packages, as root
# or through sudo) and runs every test. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
# With MPI (issue 17): the multi-rank tests in tests/it/mpi.rs run against the system Open MPI.
cargo test --release --all-targets --features mpi -- --test-threads=2
