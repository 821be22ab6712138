#!/usr/bin/env bash
# What the trust checks cost at run time: this checkout's lunmark against an
# older build (OLD_REV, by default the commit before the trust work), runs
# alternating, on null: (no data moved: every nanosecond of per-I/O work shows),
# mem: and a file in /dev/shm. The checks themselves run before the run; what
# moved into the I/O loop is the in-flight bookkeeping (a flag per slot), the
# error counting and the per-second reports, and a checked add in mem:'s bounds.
# Prints the median IOPS of each and the ratio new/old (1.00 = free).
# Usage: bench/trust-cost.sh   (DURATION=10 REPS=3 by default)
#        OLD_BIN=/path/to/old/lunmark bench/trust-cost.sh   (skip building the old one)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
. bench/common.sh
OLD_REV=${OLD_REV:-a973245}
if [ -z "${OLD_BIN:-}" ]; then
  # The old revision is built in a worktree of its own inside $work (removed on exit).
  git worktree add -q --detach "$work/old" "$OLD_REV"
  trap 'git worktree remove --force "$work/old" 2>/dev/null; rm -rf "$work"' EXIT
  cargo build --release -q --manifest-path "$work/old/Cargo.toml" --target-dir "$work/old-target"
  OLD_BIN=$work/old-target/release/lunmark
fi

iops() { # binary target -> iops (the old build has no --no-store: both use $LUNMARK_STORE)
  "$1" run -q -t "$2" --read 70 --random 100 --bs 4k --qd 32 --time "${DURATION}s" --ramp 0 --json "$work/l.json" >/dev/null 2>&1
  python3 -c "import json;print(json.load(open('$work/l.json'))['points'][0]['summary']['iops'])"
}

printf '%-28s %12s %12s %8s\n' "4k random 70% read, QD32" "old" "this" "ratio"
for t in null:1g mem:256m "$file"; do
  a=(); b=()
  for _ in $(seq "$REPS"); do
    a+=("$(iops "$OLD_BIN" "$t")"); b+=("$(iops "$LUNMARK" "$t")")
  done
  python3 - "$t" "$(med "${a[@]}")" "$(med "${b[@]}")" <<'PY'
import sys
t = sys.argv[1]
name = "null:" if t.startswith("null:") else "mem:" if t.startswith("mem:") else "file in /dev/shm"
a, b = float(sys.argv[2]), float(sys.argv[3])
print(f"{name:<28} {a:12.0f} {b:12.0f} {b/a:7.2f}x")
PY
done
echo "old: $OLD_REV; medians of $REPS runs of ${DURATION}s, builds alternating; $(nproc) cores, kernel $(uname -r)"
