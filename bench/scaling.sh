#!/usr/bin/env bash
# Where lunmark stops scaling: 4 KiB random read, QD 32 per worker per target,
# on null: (no data moved: lunmark's own cost), mem: (one memcpy per I/O) and
# files in /dev/shm (io_uring, O_DIRECT). Two sweeps per target kind, each point
# its own run:
#   workers 1..N on one target (N: WORKERS, default twice the CPUs, in powers of two);
#   targets 1..8 with one worker (each worker drives every target, IOmeter's shape).
# Prints IOPS, IOPS per worker, busy CPU-seconds per million I/Os (the host's
# /proc/stat, as lunmark measures it over the measured interval) and the scaling
# against the first row of its sweep (IOPS / first IOPS).
#
# Usage: bench/scaling.sh                 (DURATION=3 by default)
#        DURATION=5 WORKERS=64 bench/scaling.sh
#        NICE=-19 bench/scaling.sh       (lunmark at this nice level, on a busy machine)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-3}
WORKERS=${WORKERS:-$(($(nproc) * 2))}
NICE=${NICE:-0}
# LUNMARK=/path/to/lunmark measures that binary instead of building this tree.
[ -n "${LUNMARK:-}" ] || cargo build --release -q
LUNMARK=${LUNMARK:-$PWD/target/release/lunmark}
work=$(mktemp -d /dev/shm/lunmark-scaling.XXXXXX)
export LUNMARK_STORE=$work/results.db
trap 'rm -rf "$work"' EXIT

counts() { # 1 2 4 ... up to $1, and $1 itself
  local n=1 out=""
  while [ "$n" -lt "$1" ]; do out="$out $n"; n=$((n * 2)); done
  echo "$out $1"
}

targets_of() { # KIND COUNT -> target flags
  local kind=$1 n=$2 i
  for i in $(seq "$n"); do
    case $kind in
      # Distinct sizes make distinct targets (the same URI twice is one target).
      null) printf -- '--target null:%dm ' $((255 + i)) ;;
      mem) printf -- '--target mem:%dm ' $((255 + i)) ;;
      file) printf -- '--target %s ' "$work/data$i" ;;
    esac
  done
}

# Create the files once (filled by lunmark, so reads read data).
for i in $(seq 8); do
  "$LUNMARK" run -q -t "$work/data$i" --size 256m --read 100 --time 1s --ramp 0 >/dev/null 2>&1
done

point() { # KIND WORKERS TARGETS -> "iops cpu_s_per_M"
  local json=$work/p.json
  # shellcheck disable=SC2046
  nice -n "$NICE" "$LUNMARK" run -q $(targets_of "$1" "$3") --workers "$2" --qd 32 --bs 4k --read 100 --random 100 \
    --time "${DURATION}s" --ramp 1s --no-store --json "$json" >/dev/null 2>&1
  python3 - "$json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["points"][0]["summary"]
ios = s["ios_read"] + s["ios_written"]
print(s["iops"], s["cpu"]["busy_cpu_s"] / (ios / 1e6))
PY
}

printf '%-6s %8s %8s %14s %14s %12s %8s\n' target workers targets IOPS IOPS/worker "CPU-s/M I/O" scaling
for kind in null mem file; do
  first=""
  for w in $(counts "$WORKERS"); do
    read -r iops cpu < <(point "$kind" "$w" 1)
    first=${first:-$iops}
    python3 -c "import sys;k,w,i,c,f=sys.argv[1:];print(f'{k:<6} {int(w):8d} {1:8d} {float(i):14,.0f} {float(i)/int(w):14,.0f} {float(c):12.3f} {float(i)/float(f):7.2f}x')" "$kind" "$w" "$iops" "$cpu" "$first"
  done
  first=""
  for t in 1 2 4 8; do
    read -r iops cpu < <(point "$kind" 1 "$t")
    first=${first:-$iops}
    python3 -c "import sys;k,t,i,c,f=sys.argv[1:];print(f'{k:<6} {1:8d} {int(t):8d} {float(i):14,.0f} {float(i):14,.0f} {float(c):12.3f} {float(i)/float(f):7.2f}x')" "$kind" "$t" "$iops" "$cpu" "$first"
  done
done
echo "4 KiB random read, QD 32 per worker per target, ${DURATION}s per point after a 1 s ramp, nice $NICE; $(nproc) CPUs, kernel $(uname -r), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
