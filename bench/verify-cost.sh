#!/usr/bin/env bash
# What verification costs, lunmark against fio, in one run on the same file:
# 4 KiB random writes then reads (50/50 for lunmark), QD 32, 1 worker, a
# 256 MiB file in /dev/shm.
#   lunmark: the same run with and without --verify (every write carries a
#            header, pattern and CRC-32C; every read is checked).
#   fio:     rw=randwrite with verify=crc32c and verify_backlog (fio checks the
#            blocks it wrote as it goes) against rw=randwrite without verify.
# Prints IOPS of each and the ratio verify/no-verify per tool (1.00 = free).
# Usage: bench/verify-cost.sh   (DURATION=10 REPS=3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v fio >/dev/null || { echo "fio is missing: apt-get install fio" >&2; exit 1; }
# shellcheck source=bench/common.sh
. bench/common.sh

lm() { # extra args -> iops
  "$LUNMARK" run -q -t "$file" --read 50 --random 100 --bs 4k --qd 32 --time "${DURATION}s" --ramp 0 --json "$work/l.json" "$@" >/dev/null 2>&1 || true
  python3 -c "import json;print(json.load(open('$work/l.json'))['points'][0]['summary']['iops'])"
}
fo() { # extra args -> iops (reads + writes)
  # From $work: fio may leave verify state files in its working directory.
  (cd "$work" && fio --output-format=json --name=v --filename="$file" --size=256m --ioengine=io_uring --direct=1 --rw=randwrite --bs=4k \
      --iodepth=32 --time_based --runtime="$DURATION" --verify_state_save=0 "$@") >"$work/f.json" 2>/dev/null
  python3 - "$work/f.json" <<'PY'
import json, sys
t = open(sys.argv[1]).read(); j = json.loads(t[t.index("{"):])["jobs"][0]
# I/Os of both directions over the job's whole runtime: with verify, fio's
# checking reads happen inside it (verify_backlog), so per-direction iops would
# each be over a different span.
ios = j["read"]["total_ios"] + j["write"]["total_ios"]
print(ios / (j["job_runtime"] / 1000.0))
PY
}

a=(); b=(); c=(); d=()
for _ in $(seq "$REPS"); do
  a+=("$(lm)"); b+=("$(lm --verify)")
  c+=("$(fo)"); d+=("$(fo --verify=crc32c --verify_backlog=1024)")
done
la=$(med "${a[@]}"); lb=$(med "${b[@]}"); fa=$(med "${c[@]}"); fb=$(med "${d[@]}")
printf '%-34s %12s %12s %8s\n' "4k random, QD32, 1 worker, tmpfs" "no verify" "verify" "ratio"
python3 - "$la" "$lb" "$fa" "$fb" <<'PY'
import sys
la, lb, fa, fb = map(float, sys.argv[1:])
print(f"{'lunmark (50/50 r/w, --verify)':<34} {la:12.0f} {lb:12.0f} {lb/la:7.2f}x")
print(f"{'fio (randwrite, verify=crc32c)':<34} {fa:12.0f} {fb:12.0f} {fb/fa:7.2f}x")
print(f"verification keeps {lb/la*100:.0f}% of lunmark's IOPS and {fb/fa*100:.0f}% of fio's")
PY
echo "medians of $REPS runs of ${DURATION}s; $(nproc) cores, kernel $(uname -r)"
