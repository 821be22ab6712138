# Sourced by the bench scripts: builds lunmark, makes a scratch directory in
# /dev/shm ($work, removed on exit, with its own result store) and a filled
# 256 MiB file in it ($file). Sets DURATION, REPS and LUNMARK.
DURATION=${DURATION:-10}
REPS=${REPS:-3}
cargo build --release -q
LUNMARK=$PWD/target/release/lunmark
work=$(mktemp -d /dev/shm/lunmark-bench.XXXXXX)
# Results of the runs go to a store of their own, removed with the rest.
export LUNMARK_STORE=$work/results.db
trap 'rm -rf "$work"' EXIT
file=$work/data
"$LUNMARK" run -q -t "$file" --size 256m --read 100 --time 1s --ramp 0 >/dev/null 2>&1
# The median of the numbers given.
med() { python3 -c "import statistics,sys;print(statistics.median(map(float,sys.argv[1:])))" "$@"; }
