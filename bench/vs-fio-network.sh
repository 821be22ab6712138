#!/usr/bin/env bash
# lunmark against the reference initiators, side by side in one run, on the same
# servers and workload (4 KiB random read, 32 outstanding, 1 worker):
#   NBD:   lunmark against fio's nbd engine, on one nbdkit memory server (unix socket)
#   iSCSI: lunmark against libiscsi's iscsi-perf, on one tgtd LUN (a file in /dev/shm)
# Both servers hold written data (no holes), on loopback, started by this script
# and stopped by PID at the end.
#
# Prints IOPS and CPU-seconds per million I/Os: the initiator's own CPU (user +
# system of the tool's process, from wait4's rusage) and the whole machine's
# (/proc/stat busy time: server included, the same server for both tools). Each
# row runs REPS times, tools alternating; medians are reported.
#
# Usage: bench/vs-fio-network.sh                (root for tgtd; nbdkit, tgt, fio, libiscsi-bin installed)
#        DURATION=10 REPS=3 bench/vs-fio-network.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
REPS=${REPS:-3}
for p in fio nbdkit tgtd tgtadm iscsi-perf; do
  command -v $p >/dev/null || { echo "$p is missing: scripts/setup.sh installs it" >&2; exit 1; }
done
cargo build --release -q
LUNMARK=$PWD/target/release/lunmark
work=$(mktemp -d /dev/shm/lunmark-netbench.XXXXXX)
# Results of the runs go to a store of their own, removed with the rest.
export LUNMARK_STORE=$work/results.db
pids=()
control=$(( (RANDOM % 20000) + 5000 ))
cleanup() {
  tgtadm -C "$control" --lld iscsi --op delete --force --mode target --tid 1 >/dev/null 2>&1 || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -f "/var/run/tgtd/socket.$control" "/var/run/tgtd/socket.$control.lock"
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# NBD server, 1 GiB, filled once by a sequential write pass.
sock=$work/nbd.sock
nbdkit -f -U "$sock" --threads 16 memory 1G >/dev/null 2>&1 &
pids+=($!); disown
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
nbd_uri="nbd+unix:///?socket=$sock"
"$LUNMARK" run -q -t "$nbd_uri" --read 0 --random 0 --bs 1m --qd 8 --ios 1024 --ramp 0 --store "$work/s.db" >/dev/null

# iSCSI server: tgtd on a free port, LUN 1 a filled 1 GiB file in /dev/shm.
port=$(free_port)
lun=$work/tgt-lun
"$LUNMARK" run -q -t "$lun" --size 1g --read 100 --ios 1 --ramp 0 --store "$work/s.db" >/dev/null
tgtd -f -C "$control" --iscsi "portal=127.0.0.1:$port" >/dev/null 2>&1 &
pids+=($!); disown
for _ in $(seq 50); do [ -S "/var/run/tgtd/socket.$control" ] && break; sleep 0.1; done
iqn=iqn.2026-11.org.lunmark:bench
tgtadm -C "$control" --lld iscsi --op new --mode target --tid 1 -T $iqn
tgtadm -C "$control" --lld iscsi --op new --mode logicalunit --tid 1 --lun 1 -b "$lun"
tgtadm -C "$control" --lld iscsi --op bind --mode target --tid 1 -I ALL
iscsi_uri="iscsi://127.0.0.1:$port/$iqn/1"

# measure KIND TARGET: runs one tool once, prints "iops ios tool_cpu_s machine_cpu_s".
measure() {
  python3 - "$@" <<'PY'
import json, os, re, subprocess, sys, time
kind, target, duration, lunmark, work = sys.argv[1:6]
def busy():
    f = open("/proc/stat").readline().split()
    return sum(int(x) for x in (f[1], f[2], f[3], f[6], f[7], f[8])) / os.sysconf("SC_CLK_TCK")
if kind == "lunmark":
    cmd = [lunmark, "run", "-q", "-t", target, "--read", "100", "--random", "100", "--bs", "4k", "--qd", "32", "--workers", "1",
           "--time", f"{duration}s", "--ramp", "0", "--json", f"{work}/l.json", "--store", f"{work}/s.db"]
elif kind == "fio-nbd":
    cmd = ["fio", "--output-format=json", "--name=bench", "--ioengine=nbd", f"--uri={target}", "--rw=randread", "--bs=4k",
           "--iodepth=32", "--numjobs=1", "--size=1g", "--time_based", f"--runtime={duration}", f"--output={work}/f.json"]
else:  # iscsi-perf: -m outstanding requests, -b 512-byte blocks per request, -r random
    cmd = ["iscsi-perf", "-m", "32", "-b", "8", "-r", "-t", duration, target]
b0 = busy()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
out = p.stdout.read()
_, status, ru = os.wait4(p.pid, 0)
b1 = busy()
if status != 0:
    sys.exit(f"{cmd[0]} failed ({status}): {out[-500:]}")
tool_cpu = ru.ru_utime + ru.ru_stime
if kind == "lunmark":
    s = json.load(open(f"{work}/l.json"))["points"][0]["summary"]
    iops, ios = s["iops"], s["ios_read"]
elif kind == "fio-nbd":
    j = json.load(open(f"{work}/f.json"))["jobs"][0]["read"]
    iops, ios = j["iops"], j["total_ios"]
else:
    iops = float(re.findall(r"iops average (\d+)", out)[-1])
    ios = iops * float(duration)
print(iops, ios, tool_cpu, b1 - b0)
PY
}

median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

report_row() { # LABEL PEER_KIND TARGET
  local label=$1 peer=$2 target=$3 i l f
  local li=() lt=() lm=() fi_=() ft=() fm=()
  for i in $(seq "$REPS"); do
    read -r a b c d <<<"$(measure lunmark "$target" "$DURATION" "$LUNMARK" "$work")"
    li+=("$a"); lt+=("$(python3 -c "print($c/$b*1e6)")"); lm+=("$(python3 -c "print($d/$b*1e6)")")
    read -r a b c d <<<"$(measure "$peer" "$target" "$DURATION" "$LUNMARK" "$work")"
    fi_+=("$a"); ft+=("$(python3 -c "print($c/$b*1e6)")"); fm+=("$(python3 -c "print($d/$b*1e6)")")
  done
  python3 - "$label" "$peer" "$(median "${li[@]}")" "$(median "${lt[@]}")" "$(median "${lm[@]}")" \
    "$(median "${fi_[@]}")" "$(median "${ft[@]}")" "$(median "${fm[@]}")" <<'PY'
import sys
label, peer = sys.argv[1:3]
li, lt, lm, fi, ft, fm = map(float, sys.argv[3:])
print(f"| {label} | {peer} | {li:,.0f} | {fi:,.0f} | {li/fi:.2f}x | {lt:.1f} | {ft:.1f} | {ft/lt:.2f}x | {lm:.1f} | {fm:.1f} | {fm/lm:.2f}x |")
PY
}

echo "DURATION=${DURATION}s REPS=$REPS, 4 KiB random read, QD 32, 1 worker; medians. CPU-s per million I/Os: tool = the initiator's process, machine = all CPUs (server included)."
echo
echo "| server | peer | lunmark IOPS | peer IOPS | IOPS ratio | lunmark tool CPU | peer tool CPU | tool CPU ratio (peer/lunmark) | lunmark machine CPU | peer machine CPU | machine CPU ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
report_row "nbdkit memory (unix socket)" fio-nbd "$nbd_uri"
report_row "tgtd, LUN in /dev/shm (TCP 127.0.0.1)" iscsi-perf "$iscsi_uri"
