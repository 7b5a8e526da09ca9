#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Benchmark 1 of issue 2: what coarse striping with per-disk queues is worth.
# 4 loop disks throttled to 100 MB/s each (physical limit 400 MB/s), a file striped over
# them, cold cache, fio sequential reads of 24 MiB by 4 readers (GridGraph's I/O shape),
# through the mount. Compares unit 16 MiB + per-disk queues, unit 512 KiB + one shared
# queue, and the same file on one throttled disk; sweeps the unit and plots MB/s.
# Runs under two disk models: bandwidth only (100 MB/s), and HDD-like: 100 MB/s and 125
# requests/s, i.e. one average seek of a 7200 rpm disk (8 ms) per request. Direct I/O bios
# are at most 1 MiB, so a sequential stream stays bandwidth-bound under that cap, while
# many small requests pay for their number.
#   scripts/bench/striping.sh [--size 4G] [--repeat 3] [--units "1 4 8 16 32"] [--direct 1] [--models "0 125"]
#                             [--daemons "NAME=BIN_DIR NAME=BIN_DIR"]
# --daemons compares graphfs daemons (e.g. before and after a change) on the same disks in one
# run: for the two headline layouts, each repeat mounts every daemon in turn (alternating), and
# the medians and the ratio of the first daemon to the others are printed; no sweep, no plot.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--size     SIZE     4G
--repeat   REPEAT   3
--units    UNITS    "1 4 8 16 32"
--direct   DIRECT   1
--models   MODELS   "0 125"
--daemons  DAEMONS  ""
EOF
BPS=100000000
bench_setup
bench_on_exit destroy_disks
bytes=$(numfmt --from=iec "$SIZE")
per_disk=$(( bytes * 9 / 4 + (2 << 30) ))  # room for every layout below
make_disks 5 "$per_disk"
SINGLE="${DISK_DIRS[4]}"
SRC="$BENCH_ROOT/source"
mkdir -p "$SRC"
echo "generating a $SIZE file" >&2
head -c "$bytes" /dev/urandom > "$BENCH_ROOT/data.bin"

layouts=()
for u in $UNITS; do layouts+=("u${u}M"); done
layouts+=("u512K")
for l in "${layouts[@]}"; do
  mkdir -p "$SRC/$l"
  cp "$BENCH_ROOT/data.bin" "$SRC/$l/column"
  unit=${l#u}
  "$GRAPHFS_BIN/graphfs-stripe" -q --parity 0 --compress none --unit "$unit" --min-size 1M --disks "$(disks_csv 4)" "$SRC/$l" >&2
done
mkdir -p "$SINGLE/source/single"
cp "$BENCH_ROOT/data.bin" "$SINGLE/source/single/column"
rm -f "$BENCH_ROOT/data.bin"

# read_mbps MOUNT FILE: one cold fio run, prints MB/s.
read_mbps() {
  local file=$1
  drop_caches
  fio --name=seq --filename="$file" --rw=read --bs=24M --numjobs=4 --size=$((bytes / 4)) \
      --offset_increment=$((bytes / 4)) --ioengine=psync --direct="$DIRECT" --group_reporting \
      --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["bw_bytes"]/1e6))'
}

# bench NAME SOURCE FILE OPTIONS: median MB/s over REPEAT cold runs.
declare -A RESULT
bench() {
  local name=$1 src=$2 file=$3 opts=$4 runs=() i
  mount_graphfs "$src" "$BENCH_ROOT/mnt" "$opts"
  for ((i = 0; i < REPEAT; i++)); do runs+=("$(read_mbps "$BENCH_ROOT/mnt/$file")"); done
  unmount_graphfs "$BENCH_ROOT/mnt"
  RESULT[$name]=$(median "${runs[@]}")
  printf '%-34s %6s MB/s   (runs: %s)\n' "$name" "${RESULT[$name]}" "${runs[*]}"
}

# compare NAME SOURCE FILE OPTIONS: every daemon of --daemons in turn, REPEAT rounds.
compare() {
  local name=$1 src=$2 file=$3 opts=$4 i d first="" line=""
  declare -A by_daemon=()
  for ((i = 0; i < REPEAT; i++)); do
    for d in $DAEMONS; do
      DAEMON_BIN=${d#*=} mount_graphfs "$src" "$BENCH_ROOT/mnt" "$opts"
      by_daemon[${d%%=*}]+="$(read_mbps "$BENCH_ROOT/mnt/$file") "
      unmount_graphfs "$BENCH_ROOT/mnt"
    done
  done
  for d in $DAEMONS; do
    local n=${d%%=*} m
    # shellcheck disable=SC2086
    m=$(median ${by_daemon[$n]})
    [ -z "$first" ] && first=$m
    line+=$(printf '%s %s MB/s (runs: %s) ratio %s; ' "$n" "$m" "${by_daemon[$n]% }" "$(echo "scale=3; $first / $m" | bc)")
  done
  printf '%-34s %s\n' "$name" "$line"
}

bench_results
if [ -n "$DAEMONS" ]; then
  for iops in $MODELS; do
    throttle "$BPS" "$iops"
    echo "== disk model $([ "$iops" = 0 ] && echo bandwidth-only || echo "hdd-like-${iops}iops"): daemons $DAEMONS, $SIZE file, cold, medians of $REPEAT alternating rounds (ratio: first daemon / this one)"
    compare "unit 16M, per-disk queues" "$SRC" u16M/column "io=perdisk"
    compare "unit 512K, one shared queue" "$SRC" u512K/column "io=shared"
  done
  exit 0
fi
for iops in $MODELS; do
  throttle "$BPS" "$iops"
  model=$([ "$iops" = 0 ] && echo "bandwidth-only" || echo "hdd-like-${iops}iops")
  echo
  echo "== disk model: $model: fio 24 MiB sequential reads, 4 readers, direct=$DIRECT, $SIZE file, cold cache, 4 x 100 MB/s disks"
  bench "unit 16M, per-disk queues" "$SRC" u16M/column "io=perdisk"
  bench "unit 512K, one shared queue" "$SRC" u512K/column "io=shared"
  bench "one disk, no striping" "$SINGLE/source" single/column "io=perdisk"
  for u in $UNITS; do
    if [ "$u" = 16 ]; then
      RESULT["sweep $u"]=${RESULT["unit 16M, per-disk queues"]}
    else
      bench "sweep $u" "$SRC" "u${u}M/column" "io=perdisk"
    fi
  done
  ratio=$(echo "scale=2; ${RESULT["unit 16M, per-disk queues"]} / ${RESULT["unit 512K, one shared queue"]}" | bc)
  echo "unit 16M per-disk / unit 512K shared = ${ratio}x (target >= 1.3x)"
  echo "unit 16M per-disk = ${RESULT["unit 16M, per-disk queues"]} MB/s of 400 (target >= 360)"
  csv="$RESULTS/striping-sweep-$model.csv"
  {
    echo "unit_mib,mb_per_s"
    for u in $UNITS; do echo "$u,${RESULT["sweep $u"]}"; done
  } > "$csv"
  /usr/bin/python3 "$HERE/plot_sweep.py" "$csv" "${csv%.csv}.png" \
    "${RESULT["unit 512K, one shared queue"]}" "${RESULT["one disk, no striping"]}" "$model"
  echo "plot: ${csv#"$ROOT"/}" | sed 's/csv$/png/'
done
