#!/usr/bin/env bash
# Chunk index benchmark: index build time vs preprocess time, index size vs graph size,
# and the active-chunk query vs reading the chunks. Medians of --runs runs.
#   scripts/bench/chunkindex.sh [--bin build/bin] [--dir /var/tmp/idx-bench] [--scales "22 24"]
#                               [--partitions 16] [--runs 3] [--keep]
# Per scale S: gen-rmat --scale S --weighted --seed 1; preprocess -p P -t 1 (x runs);
# graphfs-index --force (x runs); chunkindex-bench on the graph with the automatic chunk size and
# with --chunk-size 256K; the same on a --sort-sources copy. Data is deleted unless --keep.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$ROOT/build/bin"; DIR=/var/tmp/idx-bench; SCALES="22"; P=16; RUNS=3; KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN="$2"; shift 2 ;;
    --dir) DIR="$2"; shift 2 ;;
    --scales) SCALES="$2"; shift 2 ;;
    --partitions) P="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "chunkindex.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$DIR"
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
du_bytes() { du -sb "$@" | awk '{s+=$1} END {printf "%.0f\n", s}'; }

echo "# chunkindex benchmark $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores; bin $BIN; P=$P; runs $RUNS"
for S in $SCALES; do
  V=$((1 << S)); G="$DIR/rmat$S"; IN="$DIR/rmat$S.bin"
  [ -f "$IN" ] || "$BIN/gen-rmat" --scale "$S" --weighted --seed 1 -o "$IN" > /dev/null
  pre=(); idx=(); scan=(); fin=()
  for r in $(seq "$RUNS"); do
    rm -rf "$G"
    t0=$(now); "$BIN/preprocess" -i "$IN" -o "$G" -v "$V" -p "$P" -t 1 > /dev/null; t1=$(now)
    pre+=("$(echo "$t1 - $t0" | bc -l)")
  done
  for r in $(seq "$RUNS"); do
    t0=$(now); out=$("$BIN/graphfs-index" -q --force "$G"); t1=$(now)
    idx+=("$(echo "$t1 - $t0" | bc -l)")
    scan+=("$(echo "$out" | sed -n 's/.*streaming pass \([0-9.]*\) s.*/\1/p')")
    fin+=("$(echo "$out" | sed -n 's/.*flush+compaction \([0-9.]*\) s.*/\1/p')")
  done
  echo "$out"
  graph_bytes=$(du_bytes "$G"/column "$G"/row "$G"/block-*)
  index_bytes=$(du_bytes "$G/.graphfs/index")
  pre_m=$(printf '%s\n' "${pre[@]}" | median); idx_m=$(printf '%s\n' "${idx[@]}" | median)
  echo "scale $S: preprocess runs ${pre[*]} -> median $pre_m s"
  echo "scale $S: graphfs-index runs ${idx[*]} -> median $idx_m s (streaming pass ${scan[*]}; flush ${fin[*]})"
  echo "scale $S: index/preprocess = $(echo "100 * $idx_m / $pre_m" | bc -l | xargs printf '%.1f')%"
  echo "scale $S: graph $graph_bytes B (column+row+blocks), index $index_bytes B = $(echo "100 * $index_bytes / $graph_bytes" | bc -l | xargs printf '%.2f')%"
  t0=$(now); "$BIN/graphfs-index" "$G" > /dev/null; t1=$(now)
  echo "scale $S: re-run on the unchanged graph (no-op) $(echo "$t1 - $t0" | bc -l) s"
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
