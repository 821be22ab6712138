#!/usr/bin/env bash
# Sets up a fresh Debian machine (scripts/setup.sh) and runs lunmark from this
# checkout. Without arguments: the default benchmark (the quick profile on a
# scratch file in the current directory, removed afterwards).
# Usage: scripts/run.sh [lunmark run arguments...]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/setup.sh"
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
cargo build --release -q --manifest-path "$here/Cargo.toml"
exec "$here/target/release/lunmark" run "$@"
