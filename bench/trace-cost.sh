#!/usr/bin/env bash
# What --trace costs: the same run with and without recording every I/O, on
# null: (no data moved: the per-I/O cost is all lunmark's, so the trace's share
# is as large as it can be) and on a file in /dev/shm.
# Prints IOPS of each and the ratio trace/no-trace (1.00 = free).
# Usage: bench/trace-cost.sh   (DURATION=10 REPS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/common.sh
. bench/common.sh

iops() { # target, extra args -> iops
  local t=$1; shift
  "$LUNMARK" run -q -t "$t" --read 70 --random 100 --bs 4k --qd 32 --time "${DURATION}s" --ramp 0 --json "$work/l.json" "$@" >/dev/null 2>&1
  rm -f "$work/t.trace"
  python3 -c "import json;print(json.load(open('$work/l.json'))['points'][0]['summary']['iops'])"
}

printf '%-28s %12s %12s %8s\n' "4k random 70% read, QD32" "no trace" "--trace" "ratio"
for t in null:1g "$file"; do
  a=(); b=()
  for _ in $(seq "$REPS"); do
    a+=("$(iops "$t")"); b+=("$(iops "$t" --trace "$work/t.trace")")
  done
  python3 - "$t" "$(med "${a[@]}")" "$(med "${b[@]}")" <<'PY'
import sys
name = "null:" if sys.argv[1].startswith("null:") else "file in /dev/shm"
a, b = float(sys.argv[2]), float(sys.argv[3])
print(f"{name:<28} {a:12.0f} {b:12.0f} {b/a:7.2f}x")
PY
done
echo "medians of $REPS runs of ${DURATION}s; $(nproc) cores, kernel $(uname -r)"
