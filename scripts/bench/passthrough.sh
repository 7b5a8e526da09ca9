#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# What the mount costs on an ordinary (not striped) file, with FUSE passthrough (the default,
# passthrough=auto) and without it (passthrough=off), against the plain directory.
# One unthrottled loop disk, one file of SIZE; fio jobs:
#   seq-buffered   1 MiB sequential reads, psync, buffered
#   seq-direct     1 MiB sequential reads, io_uring, O_DIRECT, iodepth 16
#   rand-4k        4 KiB random reads, psync, buffered, RUNTIME seconds
#   seq-write      1 MiB sequential overwrites of a second file, psync, fsync at the end
# each cold (every page cache dropped: the FUSE inode's and the backing file's) and warm (the
# same job run once unmeasured just before, fio told not to invalidate). Sides alternate
# within a round, their order rotating from round to round. Medians of REPEAT.
#   scripts/bench/passthrough.sh [--size 4G] [--repeat 5] [--runtime 10] [--states "cold warm"]
#                                [--jobs "seq-buffered seq-direct rand-4k seq-write"]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
-h|--help
--size     SIZE     4G
--repeat   REPEAT   5
--runtime  RUNTIME  10
--states   STATES   "cold warm"
--jobs     JOBS     "seq-buffered seq-direct rand-4k seq-write"
EOF
bench_setup
bench_on_exit destroy_disks
bytes=$(numfmt --from=iec "$SIZE")
make_disks 1 $((2 * bytes + (1 << 30)))
SRC="${DISK_DIRS[0]}/source"
mkdir -p "$SRC"
head -c "$bytes" /dev/urandom > "$SRC/file"
head -c "$bytes" /dev/urandom > "$SRC/written"
sync
mount_graphfs "$SRC" "$BENCH_ROOT/mnt-auto" "passthrough=auto"
mount_graphfs "$SRC" "$BENCH_ROOT/mnt-off" "passthrough=off"
declare -A DIR=([plain]="$SRC" [auto]="$BENCH_ROOT/mnt-auto" [off]="$BENCH_ROOT/mnt-off")
SIDES=(plain auto off)
bench_results
LOG="$RESULTS/passthrough-$STAMP.log"

# fio_args JOB DIR: the fio command line of one job on one side.
fio_args() {
  local common=(--name="$1" --size="$bytes" --output-format=json)
  case "$1" in
    seq-buffered) echo "${common[*]} --filename=$2/file --rw=read --bs=1M --ioengine=psync --direct=0" ;;
    seq-direct) echo "${common[*]} --filename=$2/file --rw=read --bs=1M --ioengine=io_uring --iodepth=16 --direct=1" ;;
    rand-4k) echo "${common[*]} --filename=$2/file --rw=randread --bs=4k --ioengine=psync --direct=0 --time_based --runtime=$RUNTIME" ;;
    seq-write) echo "${common[*]} --filename=$2/written --rw=write --bs=1M --ioengine=psync --direct=0 --end_fsync=1" ;;
  esac
}

# measure STATE JOB SIDE: MB/s of one run.
measure() {
  local args
  read -r -a args <<<"$(fio_args "$2" "${DIR[$3]}")"
  if [ "$1" = cold ]; then
    drop_caches
  else
    fio "${args[@]}" --invalidate=0 >/dev/null 2>&1   # warms what this job reads (or writes)
    args+=(--invalidate=0)
  fi
  fio "${args[@]}" 2>/dev/null | python3 -c '
import json, sys
job = json.load(sys.stdin)["jobs"][0]
side = job["write"] if job["write"]["io_bytes"] > 0 else job["read"]
print(round(side["bw_bytes"] / 1e6))'
}

{
  echo "passthrough.sh $STAMP: size $SIZE, repeat $REPEAT, runtime $RUNTIME s (rand-4k), kernel $(uname -r)"
  echo "MB/s, medians; a/p and o/p: ratio of the medians, then the median of the per-round ratios"
  printf '%-6s %-13s %9s %9s %7s %7s %9s %7s %7s\n' state job "plain" "auto" "a/p" "paired" "off" "o/p" "paired"
} | tee "$LOG"
round=0
for state in $STATES; do
  for job in $JOBS; do
    for ((r = 0; r < REPEAT; r++)); do
      round=$((round + 1))
      for side in $(rotate $round "${SIDES[@]}"); do
        echo "  $state $job $side round $r: $(measure "$state" "$job" "$side") MB/s" >>"$LOG"
      done
    done
    paired_summary "$LOG" "  $state $job " "$(printf '%-6s %-13s' "$state" "$job")" rate | tee -a "$LOG"
  done
done
for m in auto off; do
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], "passthrough", json.dumps(j["passthrough"]["opened"]), "kernel READ", j["kernel_requests"].get("READ", 0), "WRITE", j["kernel_requests"].get("WRITE", 0))' \
    "${DIR[$m]}/.graphfs/stats" "$m" | tee -a "$LOG"
  unmount_graphfs "${DIR[$m]}"
done
echo "target: auto >= 95% of plain in every row; log in $LOG"
