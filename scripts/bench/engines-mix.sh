#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Engine benchmarks: preprocess throughput (edges/s) per scale, and the
# 4-job mix {pagerank-delta, wcc, sssp, bfs} run sequentially vs concurrently
# with run-jobs on a plain directory. Every measurement is repeated and the
# median quoted. Page cache is NOT dropped (runs are warm) unless --cold.
#
#   scripts/bench/engines-mix.sh [--bin DIR] [--dir DIR] [--scales "22 24"]
#       [--mix-scale 22] [--partitions 16] [--runs 3] [--cold] [--keep]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--bin         BIN         "${BIN:-$GRAPHFS_BIN}"
--dir         DIR         /work/tmp-bench
--scales      SCALES      22
--mix-scale   MIX_SCALE   22
--partitions  PARTITIONS  16
--runs        RUNS        3
--cold        COLD        0  =1
--keep        KEEP        0  =1
EOF
for b in gen-rmat preprocess run-jobs bfs wcc sssp pagerank-delta; do
  [[ -x $BIN/$b ]] || { echo "missing $BIN/$b (build the 'engines' target)" >&2; exit 1; }
done
mkdir -p "$DIR"

# The page cache is dropped before a run only with --cold.
cold_start() { if [[ $COLD == 1 ]]; then drop_caches; fi; }

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
    cold_start
    line=$("$BIN/preprocess" -i "$IN" -o "$OUT" -v "$V" -p "$PARTITIONS" -t 1)
    echo "  run $run: $line"
    rates+=("$(sed -E 's/.*\(([0-9.e+]+) edges\/s\).*/\1/' <<<"$line")")
  done
  echo "preprocess scale $SCALE median: $(median "${rates[@]}") edges/s"
  if [[ $SCALE == "$MIX_SCALE" ]]; then
    START=$(first_source "$IN")
    JOBS="pagerank-delta,wcc,sssp:$START,bfs:$START"
    echo "## 4-job mix on scale $SCALE: run-jobs --graph $OUT --jobs $JOBS"
    for mode in sequential concurrent; do
      totals=()
      for run in $(seq "$RUNS"); do
        cold_start
        flag=""; [[ $mode == sequential ]] && flag="--sequential"
        report=$("$BIN/run-jobs" --graph "$OUT" --jobs "$JOBS" $flag)
        # shellcheck disable=SC2001  # a prefix on every line
        echo "$report" | sed "s/^/  $mode run $run | /"
        totals+=("$(awk '/^total wall time:/{print $4}' <<<"$report")")
      done
      echo "mix $mode median total: $(median "${totals[@]}") s"
    done
  fi
  if [[ $KEEP == 0 ]]; then rm -rf "$IN" "$OUT"; fi
done
