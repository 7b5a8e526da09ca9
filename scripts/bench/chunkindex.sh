#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Chunk index benchmark: index build time vs preprocess time, index size vs graph size,
# and the active-chunk query vs reading the chunks. Medians of --runs runs.
#   scripts/bench/chunkindex.sh [--bin build/bin] [--dir /var/tmp/idx-bench] [--scales "22 24"]
#                               [--partitions 16] [--runs 3] [--keep]
# Per scale S: gen-rmat --scale S --weighted --seed 1; preprocess -p P -t 1 (x runs);
# graphfs-index --force (x runs); chunkindex-bench on the graph with the automatic chunk size and
# with --chunk-size 256K; the same on a --sort-sources copy. Data is deleted unless --keep.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
-h|--help
--bin         BIN     "$GRAPHFS_BIN"
--dir         DIR     /var/tmp/idx-bench
--scales      SCALES  22
--partitions  P       16
--runs        RUNS    3
--keep        KEEP    0  =1
EOF
mkdir -p "$DIR"
du_bytes() { du -sb "$@" | awk '{s+=$1} END {printf "%.0f\n", s}'; }

echo "# chunkindex benchmark $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores; bin $BIN; P=$P; runs $RUNS"
for S in $SCALES; do
  V=$((1 << S)); G="$DIR/rmat$S"; IN="$DIR/rmat$S.bin"
  [ -f "$IN" ] || "$BIN/gen-rmat" --scale "$S" --weighted --seed 1 -o "$IN" > /dev/null
  pre=(); idx=(); scan=(); fin=()
  for _ in $(seq "$RUNS"); do
    rm -rf "$G"
    t0=$(now); "$BIN/preprocess" -i "$IN" -o "$G" -v "$V" -p "$P" -t 1 > /dev/null; t1=$(now)
    pre+=("$(elapsed "$t0" "$t1")")
  done
  for _ in $(seq "$RUNS"); do
    t0=$(now); out=$("$BIN/graphfs-index" -q --force "$G"); t1=$(now)
    idx+=("$(elapsed "$t0" "$t1")")
    scan+=("$(echo "$out" | sed -n 's/.*streaming pass \([0-9.]*\) s.*/\1/p')")
    fin+=("$(echo "$out" | sed -n 's/.*flush+compaction \([0-9.]*\) s.*/\1/p')")
  done
  echo "$out"
  graph_bytes=$(du_bytes "$G"/column "$G"/row "$G"/block-*)
  index_bytes=$(du_bytes "$G/.graphfs/index")
  pre_m=$(median_low "${pre[@]}"); idx_m=$(median_low "${idx[@]}")
  echo "scale $S: preprocess runs ${pre[*]} -> median $pre_m s"
  echo "scale $S: graphfs-index runs ${idx[*]} -> median $idx_m s (streaming pass ${scan[*]}; flush ${fin[*]})"
  echo "scale $S: index/preprocess = $(echo "100 * $idx_m / $pre_m" | bc -l | xargs printf '%.1f')%"
  echo "scale $S: graph $graph_bytes B (column+row+blocks), index $index_bytes B = $(echo "100 * $index_bytes / $graph_bytes" | bc -l | xargs printf '%.2f')%"
  t0=$(now); "$BIN/graphfs-index" "$G" > /dev/null; t1=$(now)
  echo "scale $S: re-run on the unchanged graph (no-op) $(elapsed "$t0" "$t1") s"
  echo "## query, automatic chunk size"
  "$BIN/chunkindex-bench" "$G" --reps 11
  "$BIN/graphfs-index" -q --chunk-size 256K "$G" | tail -1
  echo "## query, --chunk-size 256K"
  "$BIN/chunkindex-bench" "$G" --reps 11
  rm -rf "$G"
  "$BIN/preprocess" -i "$IN" -o "$G.sorted" -v "$V" -p "$P" -t 1 --sort-sources > /dev/null
  "$BIN/graphfs-index" -q --chunk-size 256K "$G.sorted" | tail -1
  echo "## query, sorted sources, --chunk-size 256K"
  "$BIN/chunkindex-bench" "$G.sorted" --reps 11
  [ "$KEEP" = 1 ] || rm -rf "$G.sorted" "$IN"
done
