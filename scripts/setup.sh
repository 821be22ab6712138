#!/usr/bin/env bash
# Installs what lunmark's build, tests and labs use, when missing: Debian
# packages (as root or through sudo) and a Rust toolchain.
set -euo pipefail
packages=(build-essential curl ca-certificates iproute2 python3-venv nbdkit libnbd-dev libnbd-bin qemu-utils tgt libiscsi-dev libiscsi-bin fio chromium util-linux e2fsprogs pkg-config sqlite3 libopenmpi-dev openmpi-bin libclang-dev prometheus)
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
# Rust, when no cargo is found: Debian's own first (Debian 12 ships a current
# Rust as rustc-web/cargo-web from its security archive; later releases as
# rustc/cargo), rustup's stable only where no Debian package is recent enough,
# since a machine may reach Debian's archive and not rustup's site.
min_rust=1.88
if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  for pair in "rustc-web cargo-web" "rustc cargo"; do
    set -- $pair
    candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && dpkg --compare-versions "$candidate" ge "$min_rust"; then
      echo "installing Rust $candidate from Debian ($1, $2)" >&2
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" "$2" >/dev/null
      break
    fi
  done
fi
if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  echo "no Debian Rust >= $min_rust: installing Rust (rustup, stable, minimal profile) for $(id -un)" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain stable >/dev/null
fi
# fio-plot (PyPI), which tests/it/fio.rs draws the same chart with from fio's
# JSON and lunmark's fio-json, and hdrhistogram (PyPI), which tests/it/hdr_log.rs
# reads --hdr-log with: in a venv of their own, where the tests look.
venv="${LUNMARK_VENV:-$HOME/.cache/lunmark-venv}"
if [ ! -x "$venv/bin/fio-plot" ] || ! "$venv/bin/python" -c 'import hdrh' 2>/dev/null; then
  echo "installing fio-plot and hdrhistogram (PyPI) into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q fio-plot hdrhistogram
fi
