#!/usr/bin/env bash
# lunmark against fio, side by side in one run, on the same targets and workload:
# 4 KiB random read, 32 outstanding, 1 worker, on a file in /dev/shm and on a
# loop device over /dev/shm; lunmark's null: (no data moved) against fio's null
# engine; and mem: (a RAM LUN: one memcpy per I/O) against fio's mmap engine on
# tmpfs and against fio's null engine.
# Prints IOPS and CPU-seconds per million I/Os for both, and the ratios.
#
# CPU is system-wide busy time from /proc/stat over each tool's whole run (it
# includes work io_uring hands to kernel threads; see METHODOLOGY.md). Each row is
# run REPS times, tools alternating, and the median is reported.
#
# Usage: bench/vs-fio.sh            (needs root for the loop device; fio installed)
#        DURATION=10 REPS=3 bench/vs-fio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
REPS=${REPS:-3}
command -v fio >/dev/null || { echo "fio is missing: apt-get install fio" >&2; exit 1; }
cargo build --release -q
LUNMARK=$PWD/target/release/lunmark
work=$(mktemp -d /dev/shm/lunmark-bench.XXXXXX)
# Results of the runs go to a store of their own, removed with the rest.
export LUNMARK_STORE=$work/results.db
loopdev=""
cleanup() {
  [ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

file=$work/data
# Create and fill the file once (both tools then read the same data).
"$LUNMARK" run -q -t "$file" --size 1g --read 100 --time 1s --ramp 0 >/dev/null
if [ "$(id -u)" -eq 0 ]; then
  cp "$file" "$work/loop-backing"
  loopdev=$(losetup --find --show --direct-io=on "$work/loop-backing")
fi

busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
hz=$(getconf CLK_TCK)

# run_measured OUTFILE CMD... : runs CMD, prints the busy CPU-seconds it took system-wide.
run_measured() {
  local out=$1; shift
  local a b
  a=$(busy_jiffies)
  "$@" >"$out" 2>/dev/null
  b=$(busy_jiffies)
  python3 -c "print(($b-$a)/$hz)"
}

lunmark_row() { # TARGET -> "iops ios cpu_s"
  local json=$work/l.json cpu
  cpu=$(run_measured "$work/l.out" "$LUNMARK" run -q -t "$1" --read 100 --random 100 --bs 4k --qd 32 --workers 1 \
        --time "${DURATION}s" --ramp 0 --json "$json")
  python3 - "$json" "$cpu" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["points"][0]["summary"]
print(s["iops"], s["ios_read"] + s["ios_written"], sys.argv[2])
PY
}

fio_row() { # fio-args... -> "iops ios cpu_s"
  local json=$work/f.json cpu
  cpu=$(run_measured "$json" fio --output-format=json --name=bench --rw=randread --bs=4k --iodepth=32 --numjobs=1 \
        --time_based --runtime="$DURATION" --ramp_time=0 "$@")
  python3 - "$json" "$cpu" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]["read"]  # fio may print notes before the JSON
print(j["iops"], j["total_ios"], sys.argv[2])
PY
}

rows=()
rows+=("file /dev/shm, io_uring|$file|--filename=$file --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1 --size=1g")
[ -n "$loopdev" ] && rows+=("loop device, io_uring|$loopdev|--filename=$loopdev --ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1")
rows+=("null: vs fio null|null:1g|--ioengine=null --size=1g")
# mem: copies every transfer to or from RAM; its like-for-like peer is fio's mmap
# engine on a tmpfs file (also a memcpy per I/O). Against fio's null engine (which
# moves no data) it is listed too, as the issue asks, but the fair row is null:.
rows+=("mem: vs fio mmap (tmpfs)|mem:1g|--filename=$file --ioengine=mmap --size=1g")
rows+=("mem: vs fio null|mem:1g|--ioengine=null --size=1g")

printf '%-26s %12s %12s %7s   %12s %12s %7s\n' "row (4k randread QD32 1w)" "lunmark IOPS" "fio IOPS" "ratio" "lm CPU-s/M" "fio CPU-s/M" "ratio"
for row in "${rows[@]}"; do
  IFS='|' read -r name target fioargs <<<"$row"
  lm=(); fo=()
  for _ in $(seq "$REPS"); do
    lm+=("$(lunmark_row "$target")")
    # shellcheck disable=SC2086
    fo+=("$(fio_row $fioargs)")
  done
  python3 - "$name" "${lm[@]}" -- "${fo[@]}" <<'PY'
import statistics, sys
args = sys.argv[2:]
cut = args.index("--")
def parse(rows):
    iops = [float(r.split()[0]) for r in rows]
    cpu_per_m = [float(r.split()[2]) / (float(r.split()[1]) / 1e6) for r in rows]
    return statistics.median(iops), statistics.median(cpu_per_m)
li, lc = parse(args[:cut]); fi, fc = parse(args[cut + 1:])
print(f"{sys.argv[1]:<26} {li:12.0f} {fi:12.0f} {li/fi:6.2f}x   {lc:12.3f} {fc:12.3f} {fc/lc:6.2f}x")
PY
done
echo "ratios: IOPS lunmark/fio (higher is better for lunmark); CPU fio/lunmark (higher: lunmark uses less CPU per I/O)."
echo "medians of $REPS runs of ${DURATION}s each, tools alternating; $(nproc) cores, kernel $(uname -r)"
