#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 16: the LP loader's own throughput on dense logical partitions, against the disks' limit
# measured in the same run.
#
#   scripts/bench/loader.sh [--family rmat-local] [--scale 22] [--bps 100000000] [--cache 64M]
#                           [--partition 256M] [--repeat 3] [--loaders "cache direct"] [--gen-dir DIR]
#
# The graph of scripts/bench/integrated.sh (generated there: same --family/--scale/--gen-dir)
# striped over 4 loop disks of BPS bytes/s each (unit 16M). Per repeat, cold page cache:
#   raw      the physical limit: 4 concurrent O_DIRECT readers (dd, 16 MiB requests), one per
#            disk, each reading its part of `column`; aggregate MB/s
#   loader   one integrated `pagerank 2` job (every vertex active: every chunk whole, so every LP
#            is dense) through graphfs with a small cache (CACHE: the LPs come from the disks), LPs
#            of PARTITION; the loader's MB/s of its own time (stats: loader whole bytes / seconds),
#            the disks' bytes over the same time, and the job's wall time and wait in `next`;
#            once per loader mode (-o lp_loader=cache|direct), the order rotating between repeats;
#   layout   (direct loader) the limit of the LPs' own layout: per LP its busiest disk's bytes at a
#            quarter of the raw rate — an LP whose chunks are not spread evenly over the disks loads
#            no faster than that, whatever the loader
# Prints the loader's share of the raw limit per repeat and the medians per mode.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--family     FAMILY     rmat-local
--scale      SCALE      22
--bps        BPS        100000000
--cache      CACHE      64M
--partition  PARTITION  256M
--repeat     REPEAT     3
--loaders    LOADERS    "cache direct"
--gen-dir    GEN_DIR    /var/tmp/graphfs-gen
EOF
case $FAMILY in
  rmat) G=$GEN_DIR/rmat${SCALE}s ;;
  rmat-local) G=$GEN_DIR/rmat${SCALE}ls ;;
  *) echo "family $FAMILY: use rmat or rmat-local (grid graphs are too small for this)" >&2; exit 2 ;;
esac
[[ -f $G/meta ]] || { echo "no graph at $G: run scripts/bench/integrated.sh --family $FAMILY --scale $SCALE first" >&2; exit 1; }
BENCH_ROOT=/var/tmp/graphfs-loaderbench
bench_on_exit destroy_disks
bench_on_exit quietly unmount_graphfs "$BENCH_ROOT/mnt"
stage_graph "$G" "$BPS" 2048 >/dev/null
# The column's part files, one per disk (striping puts one part of each file on every disk).
COLUMN_ID=$(getfattr --only-values -n user.graphfs.stripe "$SRC/g/column" 2>/dev/null |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
bench_results
OUT=$RESULTS/loader-$STAMP.tsv
printf 'repeat\tloader\traw_MBps\tloader_MBps\tloader_share\tlayout_MBps\tlayout_share\tjob_wall_s\tjob_wait_s\tlps\n' > "$OUT"
echo "# loader benchmark $STAMP: $G, $BPS B/s x 4 disks, cache $CACHE, partition $PARTITION"

for ((r = 1; r <= REPEAT; r++)); do
  drop_caches
  t0=$(date +%s.%N)
  for d in 0 1 2 3; do
    run_throttled dd if="${DISK_DIRS[$d]}/parts/$COLUMN_ID" of=/dev/null bs=16M iflag=direct status=none &
  done
  wait
  t1=$(date +%s.%N)
  bytes=0
  for d in 0 1 2 3; do bytes=$((bytes + $(stat -c %s "${DISK_DIRS[$d]}/parts/$COLUMN_ID"))); done
  raw=$(python3 -c "print('%.1f' % ($bytes / ($t1 - $t0) / 1e6))")

  read -r -a modes <<< "$LOADERS"
  if (( r % 2 == 0 )); then mapfile -t modes < <(printf '%s\n' "${modes[@]}" | tac); fi
  for mode in "${modes[@]}"; do
    mount_graphfs "$SRC" "$BENCH_ROOT/mnt" "cache_size=$CACHE,readahead_mem=256M,lp_loader=$mode"
    drop_caches
    before=$(loops_read "${LOOPS[@]:0:4}")
    GRAPHFS_ENGINE_VERBOSE=1 run_throttled "$GRAPHFS_BIN/pagerank" "$BENCH_ROOT/mnt/g" 2 0.25 --graphfs \
      --graphfs-partition "$PARTITION" > "$RESULTS/loader-$STAMP-$r-$mode.log" 2>&1
    after=$(loops_read "${LOOPS[@]:0:4}")
    cp "$BENCH_ROOT/mnt/.graphfs/stats" "$RESULTS/loader-$STAMP-$r-$mode.stats.json"
    unmount_graphfs "$BENCH_ROOT/mnt"
    python3 - "$RESULTS/loader-$STAMP-$r-$mode.stats.json" "$RESULTS/loader-$STAMP-$r-$mode.log" "$raw" "$((after - before))" "$r" "$mode" >> "$OUT" <<'EOF'
import json, re, sys
stats, log, raw, disk, r, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
g = json.load(open(stats))["schedulers"][0]
l = g["loader"]
text = open(log).read()
wall = re.search(r"pagerank: .* in ([0-9.]+) s", text)
waits = sum(float(w) for w in re.findall(r"waited ([0-9.]+) s", text))
mbps = l["whole_bytes"] / l["seconds"] / 1e6 if l["seconds"] else 0
# The layout's limit: each LP loads no faster than its busiest disk reads its share (direct
# reads only; the disks' raw rate split evenly), whatever the loader does.
busiest = l.get("busiest_disk_bytes", 0)
layout = l["run_disk_bytes"] / (busiest / (raw * 1e6 / 4)) / 1e6 if busiest else 0
print("\t".join([r, mode, "%.1f" % raw, "%.1f" % mbps, "%.3f" % (mbps / raw),
                  "%.1f" % layout if layout else "-", "%.3f" % (mbps / layout) if layout else "-",
                  wall.group(1) if wall else "-", "%.2f" % waits, str(g["lps_built"])]))
EOF
    tail -1 "$OUT"
  done
done
python3 - "$OUT" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
for mode in sorted({r["loader"] for r in rows}):
    mine = [r for r in rows if r["loader"] == mode]
    med = lambda k: statistics.median(float(r[k]) for r in mine)
    layout = [float(r["layout_share"]) for r in mine if r["layout_share"] != "-"]
    print(f"lp_loader={mode}: medians over {len(mine)} repeats: raw {med('raw_MBps'):.1f} MB/s, loader "
          f"{med('loader_MBps'):.1f} MB/s ({med('loader_share'):.3f} of raw"
          + (f", {statistics.median(layout):.3f} of its LPs' layout limit" if layout else "")
          + f"), job {med('job_wall_s'):.2f} s, waiting {med('job_wait_s'):.2f} s")
EOF
echo "# results: $OUT"
