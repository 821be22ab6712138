#!/usr/bin/env bash
# lunmark against fio, side by side in one run, on the same targets and workload.
# Rows (4 KiB random read, QD 32, 1 worker unless the row says otherwise):
#   a file in /dev/shm and a loop device over /dev/shm, io_uring, O_DIRECT;
#   the loop device 8 KiB 70/30 random read/write, QD 16, 2 workers;
#   4 files in /dev/shm, one worker each at QD 8 (IOmeter's shape);
#   psync (one blocking I/O at a time) against fio's psync;
#   io_uring with an SQ poller thread (--sqpoll) against fio's --sqthread_poll;
#   lunmark's null: (no data moved) against fio's null engine; mem: (a RAM LUN:
#   one memcpy per I/O) against fio's mmap engine on tmpfs and fio's null engine;
#   the /dev/shm file and null: rows again with --live-json and --metrics-listen
#   (ROWS='^(file /dev/shm|null:)' runs those four: the cost of live telemetry).
# Prints IOPS and CPU-seconds per million I/Os for both, and the ratios: the
# median over REPS pairs and, beside it, the lowest and highest pair.
#
# CPU is system-wide busy time from /proc/stat over each tool's whole run (it
# includes work io_uring hands to kernel threads, an SQ poller's too; see
# docs/methodology.md). Beside it, each tool's own CPU: user and system time of
# its processes and their threads (io-wq workers and an SQ poller included),
# which leaves out the kernel's shared workers (the loop driver's, softirqs)
# that cost the same for both tools. Each row is run REPS times, tools alternating.
#
# Usage: bench/vs-fio.sh            (needs root for the loop device; fio installed)
#        DURATION=10 REPS=5 bench/vs-fio.sh
#        ROWS='loop|psync' bench/vs-fio.sh     (only rows whose name matches)
#        NICE=-19 bench/vs-fio.sh    (both tools at this nice level, on a machine that is
#                                     busy with other work; the kernel's own workers, such
#                                     as the loop driver's, keep their priority)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
REPS=${REPS:-5}
ROWS=${ROWS:-.}
NICE=${NICE:-0}
command -v fio >/dev/null || { echo "fio is missing: apt-get install fio" >&2; exit 1; }
# LUNMARK=/path/to/lunmark measures that binary instead of building this tree.
[ -n "${LUNMARK:-}" ] || cargo build --release -q
LUNMARK=${LUNMARK:-$PWD/target/release/lunmark}
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
# Create and fill the files once (both tools then read the same data).
# Set-up, not results: what lunmark says of these runs ("saved as ...") is
# shown only when one fails.
setup_run() {
  local said
  said=$("$LUNMARK" run -q "$@" --read 100 --time 1s --ramp 0 2>&1 >/dev/null) || { echo "$said" >&2; return 1; }
}
setup_run -t "$file" --size 1g
for i in 1 2 3 4; do
  setup_run -t "$work/f$i" --size 256m
done
if [ "$(id -u)" -eq 0 ]; then
  cp "$file" "$work/loop-backing"
  loopdev=$(losetup --find --show --direct-io=on "$work/loop-backing")
fi
# One worker per file, each at QD 8: a group with worker_per_target.
cat >"$work/four.toml" <<TOML
name = "four-files"
description = "4 files, one worker each, 4 KiB random read, QD 8"
[[phases]]
name = "main"
[[phases.groups]]
name = "main"
workers = 1
worker_per_target = true
qd = 8
[[phases.groups.access]]
share = 100
bs = "4k"
read = 100
random = 100
TOML

busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
hz=$(getconf CLK_TCK)

# run_measured OUTFILE CMD... : runs CMD, prints the busy CPU-seconds it took
# system-wide, then the CPU-seconds of the tool's own processes (user + system
# time of CMD and the children it waited for, with their io-wq threads: what the
# machine-wide figure holds besides the kernel's shared workers, such as the
# loop driver's and softirqs).
run_measured() {
  local out=$1; shift
  local a b own TIMEFORMAT='%U %S'
  a=$(busy_jiffies)
  own=$({ time "$@" >"$out" 2>/dev/null; } 2>&1)
  b=$(busy_jiffies)
  python3 -c "print(($b-$a)/$hz, sum(map(float, '$own'.split())))"
}

lunmark_row() { # lunmark-args... -> "iops ios cpu_s own_cpu_s"
  local json=$work/l.json cpu
  cpu=$(run_measured "$work/l.out" nice -n "$NICE" "$LUNMARK" run -q --time "${DURATION}s" --ramp 0 --json "$json" "$@")
  python3 - "$json" "$cpu" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["points"][0]["summary"]
print(s["iops"], s["ios_read"] + s["ios_written"], sys.argv[2])
PY
}

fio_row() { # fio-args... -> "iops ios cpu_s own_cpu_s"
  local json=$work/f.json cpu
  # Options before the first --name are global (every job takes them): a row
  # that names no job gets one job, "bench", after them.
  local name=(--name=bench)
  [[ " $* " == *" --name="* ]] && name=()
  cpu=$(run_measured "$json" nice -n "$NICE" fio --output-format=json --group_reporting \
        --time_based --runtime="$DURATION" --ramp_time=0 "$@" "${name[@]}")
  python3 - "$json" "$cpu" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
j = json.loads(text[text.index("{"):])["jobs"][0]  # fio may print notes before the JSON
print(j["read"]["iops"] + j["write"]["iops"], j["read"]["total_ios"] + j["write"]["total_ios"], sys.argv[2])
PY
}

uring="--ioengine=io_uring --direct=1 --fixedbufs=1 --registerfiles=1"
rr4="--rw=randread --bs=4k --iodepth=32 --numjobs=1"
lrr4="--read 100 --random 100 --bs 4k --qd 32 --workers 1"
rows=()
rows+=("file /dev/shm, io_uring|-t $file $lrr4|--filename=$file $uring $rr4 --size=1g")
# The same row with live telemetry (issue 29): its ratio against the row above is the cost of
# --live-json and --metrics-listen, fio's run in both the yardstick for the machine's drift.
telemetry="--live-json $work/live.jsonl --metrics-listen :0"
rows+=("file /dev/shm +telemetry|-t $file $lrr4 $telemetry|--filename=$file $uring $rr4 --size=1g")
if [ -n "$loopdev" ]; then
  rows+=("loop device, io_uring|-t $loopdev $lrr4|--filename=$loopdev $uring $rr4")
  rows+=("loop 8k 70/30 QD16 2w|-t $loopdev --destructive --read 70 --random 100 --bs 8k --qd 16 --workers 2|--filename=$loopdev $uring --rw=randrw --rwmixread=70 --bs=8k --iodepth=16 --numjobs=2")
fi
rows+=("4 files QD8 1w each|--profile-file $work/four.toml -t $work/f1 -t $work/f2 -t $work/f3 -t $work/f4|$uring --rw=randread --bs=4k --iodepth=8 --size=256m --name=f1 --filename=$work/f1 --name=f2 --filename=$work/f2 --name=f3 --filename=$work/f3 --name=f4 --filename=$work/f4")
rows+=("psync /dev/shm|-t $file --engine psync --read 100 --random 100 --bs 4k --qd 1 --workers 1|--filename=$file --ioengine=psync --direct=1 --rw=randread --bs=4k --iodepth=1 --size=1g")
rows+=("sqpoll /dev/shm|-t $file --sqpoll $lrr4|--filename=$file $uring --sqthread_poll=1 $rr4 --size=1g")
rows+=("null: vs fio null|-t null:1g $lrr4|--ioengine=null --size=1g $rr4")
rows+=("null: +telemetry|-t null:1g $lrr4 $telemetry|--ioengine=null --size=1g $rr4")
# mem: copies every transfer to or from RAM; its like-for-like peer is fio's mmap
# engine on a tmpfs file (also a memcpy per I/O). Against fio's null engine (which
# moves no data) it is listed too, but the fair row is null:.
rows+=("mem: vs fio mmap (tmpfs)|-t mem:1g $lrr4|--filename=$file --ioengine=mmap --size=1g $rr4")
rows+=("mem: vs fio null|-t mem:1g $lrr4|--ioengine=null --size=1g $rr4")

# Column widths, set once for the header and every row (each at least as wide
# as its header): the row name, an IOPS figure, a CPU figure, a ratio with its
# range ("1.00x (0.95-1.05)").
export W_NAME=24 W_IOPS=12 W_CPU=9 W_RATIO=20
printf "%-${W_NAME}s %${W_IOPS}s %${W_IOPS}s %${W_RATIO}s   %${W_CPU}s %${W_CPU}s %${W_RATIO}s   %${W_CPU}s %${W_CPU}s %${W_RATIO}s\n" \
  "row" "lunmark IOPS" "fio IOPS" "IOPS lm/fio" "lm CPU/M" "fio CPU/M" "CPU lm/fio" "lm own/M" "fio own/M" "own lm/fio"
for row in "${rows[@]}"; do
  IFS='|' read -r name largs fargs <<<"$row"
  [[ $name =~ $ROWS ]] || continue
  lm=(); fo=()
  for _ in $(seq "$REPS"); do
    # shellcheck disable=SC2086
    lm+=("$(lunmark_row $largs)")
    # shellcheck disable=SC2086
    fo+=("$(fio_row $fargs)")
  done
  python3 - "$name" "${lm[@]}" -- "${fo[@]}" <<'PY'
import os, statistics, sys
args = sys.argv[2:]
cut = args.index("--")
def parse(rows):
    f = [[float(x) for x in r.split()] for r in rows]
    iops = [r[0] for r in f]
    cpu = [r[2] / (r[1] / 1e6) for r in f]
    own = [r[3] / (r[1] / 1e6) for r in f]
    return iops, cpu, own
li, lc, lo = parse(args[:cut]); fi, fc, fo = parse(args[cut + 1:])
ratios = lambda a, b: sorted(x / y for x, y in zip(a, b))
ri, rc, ro = ratios(li, fi), ratios(lc, fc), ratios(lo, fo)
med = statistics.median
w = {k: int(os.environ[k]) for k in ("W_NAME", "W_IOPS", "W_CPU", "W_RATIO")}
ratio = lambda r: f"{med(r):.2f}x ({r[0]:.2f}-{r[-1]:.2f})"
print(f"{sys.argv[1]:<{w['W_NAME']}} {med(li):{w['W_IOPS']}.0f} {med(fi):{w['W_IOPS']}.0f} {ratio(ri):>{w['W_RATIO']}}   "
      f"{med(lc):{w['W_CPU']}.3f} {med(fc):{w['W_CPU']}.3f} {ratio(rc):>{w['W_RATIO']}}   "
      f"{med(lo):{w['W_CPU']}.3f} {med(fo):{w['W_CPU']}.3f} {ratio(ro):>{w['W_RATIO']}}", flush=True)
PY
done
echo "IOPS lm/fio: higher is better for lunmark (goal >= 1.0); CPU lm/fio: busy CPU-seconds of the whole machine per million I/Os, lower is better (goal <= 0.8);"
echo "own lm/fio: CPU-seconds of the tool's own processes (with their io-wq threads) per million I/Os, the part of the machine's figure a tool controls."
echo "medians (lowest-highest pair) of $REPS pairs of ${DURATION}s runs, tools alternating at nice $NICE; $(nproc) cores, kernel $(uname -r), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
