#!/usr/bin/env bash
# Installs what lunmark's build, tests and labs use, when missing: Debian
# packages (as root or through sudo) and a Rust toolchain.
set -euo pipefail
packages=(build-essential curl ca-certificates nbdkit libnbd-dev libnbd-bin tgt libiscsi-dev libiscsi-bin fio chromium util-linux e2fsprogs pkg-config sqlite3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Rust: Debian's own rustc is older than lunmark needs, so rustup's stable is
# installed for this user when no cargo is found. Callers then source
# ~/.cargo/env (scripts/run.sh and scripts/test.sh do).
if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  echo "installing Rust (rustup, stable, minimal profile) for $(id -un)" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain stable >/dev/null
fi
