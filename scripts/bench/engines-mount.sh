#!/usr/bin/env bash
# Issue 3: what the mount costs a single unmodified engine job. One loop disk (no striping,
# no throttle), a weighted R-MAT graph on it, cold cache: each app on the plain directory
# and through a graphfs mount of that same directory, alternating; medians of REPEAT runs.
#   scripts/bench/engines-mount.sh [--scale 22] [--partitions 16] [--repeat 3] [--mem-gb 8]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
GRAPHFS_BIN="$ROOT/build/bin"
# shellcheck source=disks.sh
. "$ROOT/scripts/bench/disks.sh"
SCALE=22
PARTS=16
REPEAT=3
MEM_GB=8
while [ $# -gt 0 ]; do
  case "$1" in
    --scale) SCALE="$2"; shift 2 ;;
    --partitions) PARTS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --mem-gb) MEM_GB="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
"$ROOT/scripts/setup" >/dev/null
trap destroy_disks EXIT
trap 'exit 130' INT TERM
make_disks 1 $(( (1 << SCALE) * 16 * 12 * 4 + (2 << 30) ))
SRC="${DISK_DIRS[0]}/source"
MNT="$BENCH_ROOT/mnt"
mkdir -p "$SRC"
"$GRAPHFS_BIN/gen-rmat" --scale "$SCALE" --weighted --seed 1 -o "$BENCH_ROOT/edges.bin" >/dev/null
"$GRAPHFS_BIN/preprocess" -i "$BENCH_ROOT/edges.bin" -o "$SRC/g" -v $((1 << SCALE)) -p "$PARTS" -t 1 >/dev/null
START=$(od -An -td4 -N4 "$BENCH_ROOT/edges.bin" | tr -d ' ')
rm -f "$BENCH_ROOT/edges.bin"
mount_graphfs "$SRC" "$MNT" ""

# seconds DIR APP ARGS...: one cold run, wall time in seconds
seconds() {
  local dir=$1 app=$2
  shift 2
  drop_caches
  local t0 t1
  t0=$(date +%s.%N)
  "$GRAPHFS_BIN/$app" "$dir" "$@" "$MEM_GB" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

printf 'scale %s, P=%s, MEM_GB %s, cold cache, one unthrottled loop disk\n' "$SCALE" "$PARTS" "$MEM_GB"
printf '%-16s %9s %9s %7s\n' app "plain s" "mount s" ratio
for spec in "bfs $START" "wcc" "sssp $START" "pagerank 10" "pagerank-delta 0.01" "spmv"; do
  set -- $spec
  app=$1
  shift
  plain=() mounted=()
  for ((i = 0; i < REPEAT; i++)); do
    plain+=("$(seconds "$SRC/g" "$app" "$@")")
    mounted+=("$(seconds "$MNT/g" "$app" "$@")")
  done
  p=$(median "${plain[@]}") m=$(median "${mounted[@]}")
  printf '%-16s %9.2f %9.2f %6.2fx\n' "$app" "$p" "$m" "$(echo "$m / $p" | bc -l)"
done
unmount_graphfs "$MNT"
echo "target: through the mount <= 1.10x plain"
