#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issues 3 and 15: what the mount costs a single unmodified engine job. One loop disk (no
# striping, no throttle), a weighted R-MAT graph on it, cold cache: each app on the plain
# directory and through graphfs mounts of that same directory, with FUSE passthrough
# (passthrough=auto, the default) and without (passthrough=off); sides alternate, their order
# rotating from round to round; medians of REPEAT runs. Raw runs in scripts/bench/results/.
#   scripts/bench/engines-mount.sh [--scale 22] [--partitions 16] [--repeat 3] [--mem-gb 8]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--scale       SCALE   22
--partitions  PARTS   16
--repeat      REPEAT  3
--mem-gb      MEM_GB  8
EOF
bench_setup
bench_on_exit destroy_disks
make_disks 1 $(( (1 << SCALE) * 16 * 12 * 4 + (2 << 30) ))
SRC="${DISK_DIRS[0]}/source"
MNT="$BENCH_ROOT/mnt"
mkdir -p "$SRC"
"$GRAPHFS_BIN/gen-rmat" --scale "$SCALE" --weighted --seed 1 -o "$BENCH_ROOT/edges.bin" >/dev/null
"$GRAPHFS_BIN/preprocess" -i "$BENCH_ROOT/edges.bin" -o "$SRC/g" -v $((1 << SCALE)) -p "$PARTS" -t 1 >/dev/null
START=$(first_source "$BENCH_ROOT/edges.bin")
rm -f "$BENCH_ROOT/edges.bin"
mount_graphfs "$SRC" "$MNT" "passthrough=auto"
mount_graphfs "$SRC" "$MNT-off" "passthrough=off"
declare -A DIR=([plain]="$SRC" [auto]="$MNT" [off]="$MNT-off")
SIDES=(plain auto off)
bench_results
LOG="$RESULTS/engines-mount-scale$SCALE-$STAMP.log"

# seconds DIR APP ARGS...: one cold run, wall time in seconds
seconds() {
  local dir=$1 app=$2
  shift 2
  drop_caches
  local t0 t1
  t0=$(now)
  "$GRAPHFS_BIN/$app" "$dir" "$@" "$MEM_GB" >/dev/null
  t1=$(now)
  elapsed "$t0" "$t1"
}

{
  printf 'scale %s, P=%s, MEM_GB %s, cold cache, one unthrottled loop disk\n' "$SCALE" "$PARTS" "$MEM_GB"
  echo "seconds, medians; ratios to plain: of the medians, then the median of the per-round ratios"
  printf '%-16s %9s %9s %7s %7s %9s %7s %7s\n' app "plain s" "auto s" ratio paired "off s" ratio paired
} | tee "$LOG"
round=0
for spec in "bfs $START" "wcc" "sssp $START" "pagerank 10" "pagerank-delta 0.01" "spmv"; do
  # shellcheck disable=SC2086  # the app and its arguments
  set -- $spec
  app=$1
  shift
  for ((i = 0; i < REPEAT; i++)); do
    round=$((round + 1))
    for side in $(rotate $round "${SIDES[@]}"); do
      echo "  $app $side round $i: $(seconds "${DIR[$side]}/g" "$app" "$@") s" >>"$LOG"
    done
  done
  paired_summary "$LOG" "  $app " "$(printf '%-16s' "$app")" time | tee -a "$LOG"
done
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("auto mount: passthrough opens", j["passthrough"]["opened"], "daemon opens", j["passthrough"]["daemon_opens"], "READ requests", j["kernel_requests"].get("READ", 0))' \
  "$MNT/.graphfs/stats" | tee -a "$LOG"
unmount_graphfs "$MNT"
unmount_graphfs "$MNT-off"
echo "target (issue 15): through the mount with passthrough <= 1.05x plain; log in $LOG"
