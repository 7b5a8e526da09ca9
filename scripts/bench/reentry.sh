#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 17 benchmark: loaded-data reentry, diagonal-first order and union-find WCC, each
# relaxation app alone on 4 throttled disks, unmodified and integrated.
#
#   scripts/bench/reentry.sh [--family grid|rmat|rmat-local] [--scale 22] [--grid 1024x1024]
#                            [--apps "bfs sssp wcc wcc-uf pagerank-delta"] [--reentries "0 1 5 10"] [--diagonal "off on"]
#                            [--modes "unmodified integrated"] [--bps 100000000] [--partition 256M]
#                            [--chunk-size 2M] [--fraction 0.25] [--readahead-mem 256M] [--gen-dir DIR]
#
# The graph of scripts/bench/integrated.sh (scripts/bench/graphs.sh), striped over 4 loop disks
# of BPS bytes/s each. Per mode and diagonal setting one mount (cache_size = FRACTION x column,
# readahead_mem, lp_diagonal=0|1); per app and reentry value one job alone (run-jobs, memory
# cgroup of 64 B per vertex + 512 MiB like integrated.sh's), with --reentry N and, unmodified
# with diagonal on, --diagonal-first. wcc-uf (one union-find pass) runs once per mount, beside
# wcc. bfs and sssp start from the source of the first edge. Per run: wall time, disk bytes,
# passes over the graph, buffers re-entered, and the result (identical across runs).
# Prints per (mode, diagonal, app) the passes and time of each reentry value against 0.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--family         FAMILY         grid
--scale          SCALE          22
--grid           GRID           1024x1024
--apps           APPS           "bfs sssp wcc wcc-uf"
--reentries      REENTRIES      "0 1 5 10"
--diagonal       DIAGONAL       "off on"
--modes          MODES          "unmodified integrated"
--bps            BPS            100000000
--partition      PARTITION      256M
--chunk-size     CHUNK          2M
--fraction       FRACTION       0.25
--readahead-mem  READAHEAD_MEM  256M  bytes
--gen-dir        GEN_DIR        /var/tmp/graphfs-gen
EOF
BENCH_ROOT=/var/tmp/graphfs-reentrybench
JOB_CGROUP=/sys/fs/cgroup/memory/graphfs-reentrybench-job
bench_on_exit destroy_disks
bench_on_exit quietly cgroup_remove "$JOB_CGROUP"
bench_on_exit quietly unmount_graphfs "$BENCH_ROOT/mnt"

bench_graph "$FAMILY" "$SCALE" "$GRID" "$GEN_DIR" "$CHUNK"
BUDGET=$(cache_budget "$COLUMN" "$FRACTION")
stage_graph "$G" "$BPS" 8192
calibrate_disks

bench_results
SUMMARY=$RESULTS/reentry-$STAMP.tsv
printf 'family\tmode\tdiagonal\tapp\treentry\twall_s\tdisk_bytes\tpasses\treentries\tresult\n' > "$SUMMARY"
echo "# reentry benchmark $STAMP: family $FAMILY ($NAME, $VERTICES vertices), column $COLUMN B, cache $BUDGET B, partition $PARTITION, $BPS B/s x 4 disks"

# run MODE DIAGONAL APP REENTRY
run() {
  local mode=$1 diagonal=$2 app=$3 reentry=$4 job log before after flags=""
  job=$app
  [[ $app == bfs || $app == sssp ]] && job=$app:$FIRST
  [[ $mode == integrated ]] && flags="--integrated --partition $PARTITION"
  flags="$flags --reentry $reentry"  # run-jobs passes it to bfs, sssp and wcc (whose default is 5)
  [[ $mode == unmodified && $diagonal == on ]] && flags="$flags --diagonal-first"
  log=$RESULTS/reentry-$STAMP-$mode-$diagonal-$app-$reentry.log
  drop_caches
  before=$(loops_read "${LOOPS[@]:0:4}")
  memcg_create "$JOB_CGROUP" $(( VERTICES * 64 + (512 << 20) ))
  # shellcheck disable=SC2086  # the flags: words
  GRAPHFS_ENGINE_VERBOSE=1 run_in_cgroups "$BENCH_CGROUP" "$JOB_CGROUP" -- \
    "$GRAPHFS_BIN/run-jobs" --graph "$BENCH_ROOT/mnt/g" --jobs "$job" --mem-gb 0.25 $flags \
    > "$log" 2>&1 || { echo "$mode $diagonal $app $reentry failed:"; tail -20 "$log"; }
  cgroup_remove "$JOB_CGROUP"
  after=$(loops_read "${LOOPS[@]:0:4}")
  python3 - "$log" "$FAMILY" "$mode" "$diagonal" "$app" "$reentry" $((after - before)) >> "$SUMMARY" <<'PY' || true
import re, sys
log, family, mode, diagonal, app, reentry, disk = sys.argv[1:8]
text = open(log).read()
wall = re.search(r"total wall time: ([0-9.]+) s", text)
final = re.search(r"^\S+: streamed .* (\d+) passes, (\d+) reentries", text, re.M)
result = re.search(r"((?:discovered|reached) \d+|\d+ components|sum of ranks [0-9.]+)", text)
print("\t".join([family, mode, diagonal, app, reentry, wall.group(1) if wall else "FAILED", disk,
                 final.group(1) if final else "-", final.group(2) if final else "-",
                 result.group(1) if result else "FAILED"]))
PY
  tail -1 "$SUMMARY"
}

for mode in $MODES; do
  for diagonal in $DIAGONAL; do
    mount_graphfs "$SRC" "$BENCH_ROOT/mnt" \
      "cache_size=$BUDGET,readahead_mem=$READAHEAD_MEM,lp_diagonal=$([[ $diagonal == on ]] && echo 1 || echo 0)"
    for app in $APPS; do
      if [[ $app == wcc-uf ]]; then run "$mode" "$diagonal" "$app" 0; continue; fi
      for reentry in $REENTRIES; do run "$mode" "$diagonal" "$app" "$reentry"; done
    done
    unmount_graphfs "$BENCH_ROOT/mnt"
  done
done

echo "# summary: $SUMMARY"
column -t -s $'\t' "$SUMMARY"
python3 - "$SUMMARY" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
base = {(r["mode"], r["diagonal"], r["app"]): r for r in rows if r["reentry"] == "0"}
print("\nagainst --reentry 0 of the same mode, diagonal setting and app (passes fewer by x, time faster by x):")
for r in rows:
    b = base.get((r["mode"], r["diagonal"], r["app"]))
    if b is None or r is b or r["passes"] in ("-", "0") or r["wall_s"] == "FAILED" or b["wall_s"] == "FAILED":
        continue
    print(f'{r["mode"]:11} diagonal {r["diagonal"]:3} {r["app"]:5} reentry {r["reentry"]:>3}: passes '
          f'{int(b["passes"]) / int(r["passes"]):.2f}x fewer, time {float(b["wall_s"]) / float(r["wall_s"]):.2f}x')
ufs = [r for r in rows if r["app"] == "wcc-uf" and r["wall_s"] != "FAILED"]
for u in ufs:
    w = base.get((u["mode"], u["diagonal"], "wcc"))
    if w and w["wall_s"] != "FAILED":
        print(f'{u["mode"]:11} diagonal {u["diagonal"]:3} wcc-uf vs wcc (label propagation): '
              f'{float(w["wall_s"]) / float(u["wall_s"]):.2f}x faster, {w["passes"]} passes -> {u["passes"]}')
PY
