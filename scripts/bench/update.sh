#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 19 benchmark: graphfs-update against a full re-preprocess, per batch size and kind.
#
#   scripts/bench/update.sh [--family rmat|rmat-local|grid] [--scale 22] [--grid 1024x1024]
#                           [--fractions "0.0001 0.001 0.01 0.1"] [--kinds "clustered random"]
#                           [--gen-dir DIR] [--chunk-size 2M] [--repeat 3] [--striped N]
#                           [--stripe-min-size 64M] [--parity K]
#
# The graph of integrated.sh (scripts/bench/graphs.sh: weighted, --sort-sources, indexed), copied
# to WORK=/var/tmp/graphfs-updatebench. The reference: preprocess of an edge list of the graph's
# size (the original one: the time and bytes do not depend on which edges) plus graphfs-index,
# page cache dropped first. Then per kind and fraction: a batch from gen-update (half additions,
# half deletions of existing edges; clustered: one run of `row` and sources in its range), and
# graphfs-update in place on the copy (cache dropped first; the old version removed after). Per
# run: wall seconds, bytes written (the tool's count; for the reference the new directory's size),
# blocks touched, and the ratios to the reference. --repeat N: N rounds (the reference too), each
# batch drawn anew per round (seed 7 + round); the summary gives the median per kind and fraction.
# --striped N: the copy is striped first (graphfs-stripe, default unit; files of --stripe-min-size or
# more: `column` and `row`, and the blocks that large) over N directories WORK/diskK, so graphfs-update writes its
# new bytes to the disks and the versions share stripe units; the reference is then preprocess,
# graphfs-index and graphfs-stripe of the new graph (its bytes: the plain files plus the parts).
# --parity K: graphfs-stripe --parity K (default 0, --compress auto as the tool's default), so the
# version's new files get K parity units and sums too (graphfs-update gives them the set's K).
# Per run also the update's CPU seconds (user + system, /usr/bin/time): its floor on the
# machine's cores is cpu_s / cores, beside the bytes it wrote.
# Results: scripts/bench/results/update-NAME[-striped[-parityK]]-STAMP.tsv, one row per run.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--family           FAMILY      rmat-local
--scale            SCALE       22
--grid             GRID        1024x1024
--fractions        FRACTIONS   "0.0001 0.001 0.01 0.1"
--kinds            KINDS       "clustered random"
--gen-dir          GEN_DIR     /var/tmp/graphfs-gen
--chunk-size       CHUNK       2M
--repeat           REPEAT      1
--striped          STRIPED     0
--stripe-min-size  STRIPE_MIN  64M
--parity           PARITY      0
EOF
bench_graph "$FAMILY" "$SCALE" "$GRID" "$GEN_DIR" "$CHUNK"
WORK=/var/tmp/graphfs-updatebench
rm -rf "$WORK"
mkdir -p "$WORK"
bench_on_exit rm -rf "$WORK"
bench_results
SUFFIX=$(if [[ $STRIPED -gt 0 ]]; then echo "-striped"; fi)$(if [[ $PARITY -gt 0 ]]; then echo "-parity$PARITY"; fi)
SUMMARY=$RESULTS/update-$NAME$SUFFIX-$STAMP.tsv
echo "# update benchmark $STAMP: $NAME ($VERTICES vertices, $EDGES edges, $(stat -c %s "$G/column") B of column)"

printf 'round\tkind\tfraction\tbatch_edges\twall_s\tbytes_written\tblocks_touched\ttouched_bytes\ttime_vs_full\tbytes_vs_full\tcpu_s\n' > "$SUMMARY"
cp -a "$G" "$WORK/g"
if [[ $STRIPED -gt 0 ]]; then
  "$GRAPHFS_BIN/graphfs-stripe" --parity "$PARITY" --min-size "$STRIPE_MIN" --disks "$(dir_disks "$WORK/disk" "$STRIPED")" "$WORK/g" 2>&1 | tail -1
fi
for round in $(seq 1 "$REPEAT"); do
  # The reference: a full preprocess of a list of the same size, and its index.
  drop_caches
  t0=$(now)
  "$GRAPHFS_BIN/preprocess" -i "$EDGE_FILE" -o "$WORK/ref" -v "$VERTICES" -p 16 -t 1 --sort-sources > /dev/null
  "$GRAPHFS_BIN/graphfs-index" -q --chunk-size "$CHUNK" "$WORK/ref" > /dev/null
  REF_BYTES=$(du -sb "$WORK/ref" | cut -f1)
  if [[ $STRIPED -gt 0 ]]; then
    "$GRAPHFS_BIN/graphfs-stripe" --parity "$PARITY" --min-size "$STRIPE_MIN" --disks "$(dir_disks "$WORK/refdisk" "$STRIPED")" "$WORK/ref" \
      > /dev/null 2>&1
    REF_BYTES=$((REF_BYTES + $(du -scb "$WORK"/refdisk* | tail -1 | cut -f1)))
  fi
  sync
  REF_S=$(python3 -c "print($(now) - $t0)")
  rm -rf "$WORK/ref" "$WORK"/refdisk*
  printf '%s\tfull\t-\t-\t%.2f\t%s\t-\t-\t1\t1\t-\n' "$round" "$REF_S" "$REF_BYTES" >> "$SUMMARY"
  for kind in $KINDS; do
    for f in $FRACTIONS; do
      "$GRAPHFS_BIN/gen-update" --graph "$WORK/g" --fraction "$f" --kind "$kind" --seed $((7 + round)) \
        --add "$WORK/add.bin" --delete "$WORK/del.bin" > /dev/null
      batch=$(( ($(stat -c %s "$WORK/add.bin") + $(stat -c %s "$WORK/del.bin")) / 12 ))
      drop_caches
      t0=$(now)
      out=$(/usr/bin/time -f '%U %S' -o "$WORK/cpu" "$GRAPHFS_BIN/graphfs-update" "$WORK/g" --add "$WORK/add.bin" \
            --delete "$WORK/del.bin" --allow-missing --keep 0)
      sync
      wall=$(python3 -c "print($(now) - $t0)")
      written=$(sed -n 's/.*, \([0-9]*\) bytes written.*/\1/p' <<< "$out")
      touched=$(sed -n 's/.*; \([0-9]*\) of [0-9]* blocks touched (\([0-9]*\) bytes).*/\1\t\2/p' <<< "$out")
      cpu=$(awk '{print $1 + $2}' "$WORK/cpu")
      printf '%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%.3f\t%.3f\t%.2f\n' "$round" "$kind" "$f" "$batch" "$wall" "$written" \
        "$touched" "$(python3 -c "print($wall / $REF_S)")" "$(python3 -c "print($written / $REF_BYTES)")" "$cpu" \
        >> "$SUMMARY"
      tail -1 "$SUMMARY"
    done
  done
done
echo "# runs: $SUMMARY"
# Medians per kind and fraction over the rounds.
python3 - "$SUMMARY" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = []
for r in rows:
    k = (r["kind"], r["fraction"])
    if k not in keys:
        keys.append(k)
print("median of %d round(s)" % len({r["round"] for r in rows}))
print("%-10s %-9s %12s %8s %7s %14s %8s %14s %12s %13s" % ("kind", "fraction", "batch_edges", "wall_s", "cpu_s",
      "bytes_written", "blocks", "touched_bytes", "time_vs_full", "bytes_vs_full"))
for k in keys:
    rs = [r for r in rows if (r["kind"], r["fraction"]) == k]
    # The reference rows have no CPU time ("-").
    med = lambda f: statistics.median([float(r[f]) for r in rs if r[f] != "-"] or [float("nan")])
    print("%-10s %-9s %12s %8.2f %7.2f %14d %8s %14s %12.3f %13.3f" % (k[0], k[1], rs[0]["batch_edges"], med("wall_s"),
          med("cpu_s"), med("bytes_written"), rs[0]["blocks_touched"], rs[0]["touched_bytes"], med("time_vs_full"),
          med("bytes_vs_full")))
PY
