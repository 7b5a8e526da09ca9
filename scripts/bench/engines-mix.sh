#!/usr/bin/env bash
# Engine benchmarks: preprocess throughput (edges/s) per scale, and the
# 4-job mix {pagerank-delta, wcc, sssp, bfs} run sequentially vs concurrently
# with run-jobs on a plain directory. Every measurement is repeated and the
# median quoted. Page cache is NOT dropped (runs are warm) unless --cold.
#
#   scripts/bench/engines-mix.sh [--bin DIR] [--dir DIR] [--scales "22 24"]
#       [--mix-scale 22] [--partitions 16] [--runs 3] [--cold] [--keep]
set -euo pipefail

BIN=${BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
DIR=/work/tmp-bench
SCALES="22"
MIX_SCALE=22
PARTITIONS=16
RUNS=3
COLD=0
KEEP=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --scales) SCALES=$2; shift 2 ;;
    --mix-scale) MIX_SCALE=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --cold) COLD=1; shift ;;
    --keep) KEEP=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
for b in gen-rmat preprocess run-jobs bfs wcc sssp pagerank-delta; do
  [[ -x $BIN/$b ]] || { echo "missing $BIN/$b (build the 'engines' target)" >&2; exit 1; }
done
mkdir -p "$DIR"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
drop_caches() { if [[ $COLD == 1 ]]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi; }

echo "# engine benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB RAM"
echo "# bin=$BIN dir=$DIR partitions=$PARTITIONS runs=$RUNS cold=$COLD"

for SCALE in $SCALES; do
  V=$((1 << SCALE))
  IN=$DIR/rmat$SCALE.bin
  OUT=$DIR/rmat$SCALE
  echo "## scale $SCALE: gen-rmat --scale $SCALE --weighted --seed 1"
  /usr/bin/time -f "gen-rmat wall %e s, max rss %M KiB" "$BIN/gen-rmat" --scale "$SCALE" --weighted --seed 1 -o "$IN"
  rates=()
  for run in $(seq "$RUNS"); do
    drop_caches
    line=$("$BIN/preprocess" -i "$IN" -o "$OUT" -v "$V" -p "$PARTITIONS" -t 1)
    echo "  run $run: $line"
    rates+=("$(sed -E 's/.*\(([0-9.e+]+) edges\/s\).*/\1/' <<<"$line")")
  done
  echo "preprocess scale $SCALE median: $(printf '%s\n' "${rates[@]}" | median) edges/s"
  if [[ $SCALE == "$MIX_SCALE" ]]; then
    START=$(od -An -td4 -N4 "$IN" | tr -d ' ')
    JOBS="pagerank-delta,wcc,sssp:$START,bfs:$START"
    echo "## 4-job mix on scale $SCALE: run-jobs --graph $OUT --jobs $JOBS"
    for mode in sequential concurrent; do
      totals=()
      for run in $(seq "$RUNS"); do
        drop_caches
        flag=""; [[ $mode == sequential ]] && flag="--sequential"
        report=$("$BIN/run-jobs" --graph "$OUT" --jobs "$JOBS" $flag)
        echo "$report" | sed "s/^/  $mode run $run | /"
        totals+=("$(awk '/^total wall time:/{print $4}' <<<"$report")")
      done
      echo "mix $mode median total: $(printf '%s\n' "${totals[@]}" | median) s"
    done
  fi
  if [[ $KEEP == 0 ]]; then rm -rf "$IN" "$OUT"; fi
done
