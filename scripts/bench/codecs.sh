#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Codec comparison for compressed partition files (issue 18): per graph file, the frames' bytes /
# raw bytes and single-thread compress and decode MB/s of every codec (graphfs-codec-bench).
#   scripts/bench/codecs.sh [--bin build/bin] [--codecs "none zstd:1 ..."] [--unit-size 2M]
#                           [--max-bytes 256M] [--files "column row"] [--passes 3]
#                           [--generate "SPEC..."] [--gen-dir /var/tmp/graphfs-codecs] [GRAPH_DIR...]
# Each GRAPH_DIR is a GridGraph-format graph: the record size comes from its `meta` (first field:
# 0 unweighted -> 8 bytes, 1 weighted -> 12). --generate also builds (once, in --gen-dir) and
# measures generated graphs, SPEC = FAMILY:SIZE[:u][:unsorted] with FAMILY rmat (ids permuted),
# rmat-local (R-MAT's own ids) or grid (SIZE = WxH, 10% of edges dropped); weighted unless :u,
# blocks sorted by source (preprocess --sort-sources) unless :unsorted; 16 partitions.
# Prints the tool's table per file, then all TSV lines with the graph's name in front.
# The machine should be otherwise idle: the speeds are single-thread wall-clock numbers.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
-h|--help
...           GRAPHS
--bin         BIN       "$GRAPHFS_BIN"
--codecs      CODECS    "none zstd:1 zstd:3 lz4 shuffle-zstd:1 shuffle-lz4 svb svb-zstd:1"
--unit-size   UNIT      2M
--max-bytes   MAX       256M
--files       FILES     column
--passes      PASSES    3
--generate    GENERATE  ""
--gen-dir     GEN_DIR   /var/tmp/graphfs-codecs
EOF
[ -x "$BIN/graphfs-codec-bench" ] || { echo "codecs.sh: no $BIN/graphfs-codec-bench (build it first)" >&2; exit 2; }

# generate SPEC: makes the graph (if missing) and prints its directory.
generate() {
  local spec=$1 family size opts weighted=1 sorted=1 opt
  IFS=: read -r family size opts <<<"$spec"
  for opt in ${opts//:/ }; do
    case $opt in
      u) weighted=0 ;;
      unsorted) sorted=0 ;;
      *) echo "codecs.sh: unknown option '$opt' in '$spec'" >&2; exit 2 ;;
    esac
  done
  local name=$family$size gen=() vertices
  case $family in
    rmat) gen=("$BIN/gen-rmat" --scale "$size" --seed 1); vertices=$((1 << size)) ;;
    rmat-local) gen=("$BIN/gen-rmat" --scale "$size" --seed 1 --no-permute); vertices=$((1 << size)) ;;
    grid) gen=("$BIN/gen-grid" --width "${size%x*}" --height "${size#*x}" --drop 0.1 --seed 1)
          vertices=$(( ${size%x*} * ${size#*x} )) ;;
    *) echo "codecs.sh: unknown family '$family' in '$spec'" >&2; exit 2 ;;
  esac
  [ "$weighted" = 1 ] && gen+=(--weighted) || name+=u
  local edges="$GEN_DIR/$name.bin" dir="$GEN_DIR/$name" pre=()
  [ "$sorted" = 1 ] && { dir+=s; pre=(--sort-sources); }
  mkdir -p "$GEN_DIR"
  [ -f "$edges" ] || "${gen[@]}" -o "$edges" >&2
  [ -f "$dir/meta" ] || "$BIN/preprocess" -i "$edges" -o "$dir" -v "$vertices" -p 16 -t "$weighted" "${pre[@]}" >&2
  echo "$dir"
}

for spec in $GENERATE; do GRAPHS+=("$(generate "$spec")"); done
[ ${#GRAPHS[@]} -gt 0 ] || { echo "codecs.sh: no graph (give GRAPH_DIRs or --generate)" >&2; exit 2; }

echo "# codecs $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(nproc) cores; bin $BIN; unit $UNIT; max $MAX per file; passes $PASSES"
tsv=()
for g in "${GRAPHS[@]}"; do
  edge_type=$(awk '{print $1; exit}' "$g/meta")  # meta has no final newline
  case $edge_type in
    0) record=8 ;;
    1) record=12 ;;
    *) echo "codecs.sh: $g/meta: edge type '$edge_type' is neither 0 nor 1" >&2; exit 1 ;;
  esac
  for f in $FILES; do
    echo "## $(basename "$g")/$f"
    out=$("$BIN/graphfs-codec-bench" "$g/$f" --record-size "$record" --unit-size "$UNIT" --max-bytes "$MAX" \
            --passes "$PASSES" --codecs "$CODECS")
    grep -v '^tsv' <<<"$out"
    while IFS= read -r line; do tsv+=("$(basename "$g")	$line"); done < <(grep '^tsv	/' <<<"$out")
  done
done
echo "## tsv"
printf 'graph\t%s\n' "$(grep -m1 '^tsv	file' <<<"$out")"
printf '%s\n' "${tsv[@]}"
