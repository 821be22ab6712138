#!/usr/bin/env bash
# Installs the system packages lunmark's build, tests and labs use, when missing.
set -euo pipefail
packages=(nbdkit libnbd-dev libnbd-bin tgt libiscsi-dev libiscsi-bin fio chromium util-linux e2fsprogs pkg-config)
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
command -v cargo >/dev/null || { echo "cargo is missing: install Rust from rustup.rs" >&2; exit 1; }
