#!/usr/bin/env bash
# What running under MPI costs (issue 17). First one rank under mpirun against a
# plain run on the same /dev/shm file (should be within 2%: MPI is not on the
# I/O path, only a barrier before each point and a gather after it). Then 2 and
# 4 ranks on separate /dev/shm files against as many plain runs started
# together on the same files, summed. Runs alternate; medians of REPS.
# Usage: bench/mpi-overhead.sh   (DURATION=10 REPS=3 by default)
#        LUNMARK=/path/to/lunmark bench/mpi-overhead.sh   (a binary built with --features mpi; skips the build)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
REPS=${REPS:-3}
COUNTS=${COUNTS:-1 2 4}   # rank counts to measure, e.g. COUNTS=1
if [ -z "${LUNMARK:-}" ]; then
  cargo build --release -q --features mpi
  LUNMARK=$PWD/target/release/lunmark
fi
command -v mpirun >/dev/null || { echo "mpirun not found: apt-get install openmpi-bin libopenmpi-dev (scripts/setup.sh)" >&2; exit 1; }
work=$(mktemp -d /dev/shm/lunmark-mpi-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
ARGS=(--size 256m --read 70 --random 100 --bs 4k --qd 32 --time "${DURATION}s" --ramp 1s --no-store -q)
for r in 0 1 2 3; do "$LUNMARK" run -t "$work/lun$r" --size 256m --read 100 --time 1s --ramp 0 --no-store -q >/dev/null 2>&1; done
med() { python3 -c "import statistics,sys;print(statistics.median(map(float,sys.argv[1:])))" "$@"; }
iops_of() { python3 -c "import json,sys;print(sum(json.load(open(f))['points'][0]['summary']['iops'] for f in sys.argv[1:]))" "$@"; }

plain() { # N -> summed IOPS of N plain runs started together, one file each
  local pids=() files=()
  for r in $(seq 0 $(($1 - 1))); do
    "$LUNMARK" run -t "$work/lun$r" "${ARGS[@]}" --json "$work/p$r.json" >/dev/null 2>&1 &
    pids+=($!); files+=("$work/p$r.json")
  done
  wait "${pids[@]}"
  iops_of "${files[@]}"
}
ranked() { # N -> the merged IOPS of N ranks under mpirun, one file each
  "${MPIRUN[@]}" -np "$1" "$LUNMARK" run -t "$work/lun{rank}" "${ARGS[@]}" --json "$work/m.json" >/dev/null 2>&1
  iops_of "$work/m.json"
}

printf '%-34s %12s %12s %8s\n' "4k random 70% read, QD32" "plain" "mpirun" "ratio of medians"
for n in $COUNTS; do
  a=(); b=()
  for _ in $(seq "$REPS"); do
    a+=("$(plain "$n")"); b+=("$(ranked "$n")")
  done
  python3 - "$n" "${a[*]}" "${b[*]}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
a, b = [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
pairs = sorted(y / x for x, y in zip(a, b))
name = "1 rank vs 1 plain run" if n == 1 else f"{n} ranks vs {n} plain runs summed"
print(f"{name:<34} {statistics.median(a):12.0f} {statistics.median(b):12.0f} {statistics.median(b)/statistics.median(a):7.2f}x"
      f"  (median of pair ratios {statistics.median(pairs):.3f}x, pairs {pairs[0]:.2f}-{pairs[-1]:.2f})")
PY
done
