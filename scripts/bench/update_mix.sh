#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 19 benchmark: a job mix running across a graph update.
#
#   scripts/bench/update_mix.sh [--family rmat|rmat-local|grid] [--scale 22] [--grid 1024x1024]
#                               [--fraction 0.01] [--kind clustered|random] [--iterations 10]
#                               [--partition 256M] [--chunk-size 2M] [--delay 0.3] [--repeat 1]
#                               [--keep 0] [--seed S] [--striped N] [--stripe-min-size 64M]
#
# The graph of integrated.sh (scripts/bench/graphs.sh: weighted, --sort-sources, indexed) copied,
# plain, to WORK/src/g and mounted with graphfs at WORK/mnt. Four integrated jobs (pagerank,
# wcc, bfs, sssp from a vertex with out-edges) run together on MNT/g, page cache dropped first:
#   base    the mix alone;
#   across  the same mix; after DELAY x base's time, graphfs-update applies a batch (gen-update:
#           FRACTION of the edges, KIND) in place with --keep KEEP (0: the old version is
#           reclaimed once its jobs left), while the jobs run;
#   after   the mix again, on the new version (column, row and touched blocks are extent maps);
#   fresh   the mix on the same updated graph as ordinary files (graphfs-update -o): after/fresh
#           is what reading a version costs (after/base also holds the batch's change of work).
# --striped N: SRC/g (and `fresh`) striped first with graphfs-stripe over N directories WORK/diskK
# (files of --stripe-min-size or more): the new version's maps then read striped pieces.
# Checks (the script fails if one does not hold): the `across` jobs' results, which stay with the
# version they ran on (SRC/g@N), equal the unmodified apps' on a plain copy of the old graph; the
# `after` jobs' equal them on the updated graph written whole (graphfs-update -o); the old
# version is reclaimed once its jobs left (with --keep 0). Prints wall times, across/base and
# after/base, and the update's own time while the mix ran; a TSV goes to scripts/bench/results/.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--family           FAMILY      rmat-local
--scale            SCALE       22
--grid             GRID        1024x1024
--fraction         FRACTION    0.01
--kind             KIND        clustered
--iterations       ITERATIONS  10
--partition        PARTITION   256M
--chunk-size       CHUNK       2M
--delay            DELAY       0.3
--repeat           REPEAT      1
--keep             KEEP        0
--seed             SEED        ""
--striped          STRIPED     0
--stripe-min-size  STRIPE_MIN  64M
--gen-dir          GEN_DIR     /var/tmp/graphfs-gen
EOF
bench_graph "$FAMILY" "$SCALE" "$GRID" "$GEN_DIR" "$CHUNK"
read -r START _ <<< "$(random_starts 7 1)"
JOBS="pagerank:$ITERATIONS,wcc,bfs:$START,sssp:$START"
RESULTS_FILES=(pagerank.rank wcc.label bfs.level sssp.distance)
WORK=/var/tmp/graphfs-updatemix
MNT=$WORK/mnt
# The mount has no simulated disks under it: the daemon runs unthrottled (mount_graphfs).
BENCH_CGROUP=""
cleanup() {
  fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || true
  rm -rf "$WORK"
}
bench_on_exit cleanup
cleanup
mkdir -p "$WORK/src" "$MNT"
bench_results
SUMMARY=$RESULTS/update-mix-$NAME$(if [[ $STRIPED -gt 0 ]]; then echo "-striped"; fi)-$STAMP.tsv
stripe() {  # stripe DIR: over WORK/disk0.. (one disk set for the whole source directory)
  "$GRAPHFS_BIN/graphfs-stripe" --parity 0 --min-size "$STRIPE_MIN" --disks "$(dir_disks "$WORK/disk" "$STRIPED")" "$1" 2>&1 | tail -1
}
echo "# update mix $STAMP: $NAME ($VERTICES vertices, $EDGES edges), jobs $JOBS, batch $FRACTION $KIND"

# Compares the result arrays of two directories: exact for levels and labels, relative 1e-6 for
# ranks and distances.
compare_results() {
  python3 - "$1" "$2" "${RESULTS_FILES[@]}" <<'PY'
import array, math, sys
a_dir, b_dir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
bad = []
for name in names:
    code = {"rank": "d", "distance": "f", "level": "i", "label": "i"}[name.split(".")[1]]
    a, b = array.array(code), array.array(code)
    a.frombytes(open(f"{a_dir}/{name}", "rb").read())
    b.frombytes(open(f"{b_dir}/{name}", "rb").read())
    if len(a) != len(b):
        bad.append(f"{name}: {len(a)} vs {len(b)} values")
        continue
    if code == "i":
        diff = sum(1 for x, y in zip(a, b) if x != y)
        if diff:
            bad.append(f"{name}: {diff} values differ")
    else:
        worst = max((abs(x - y) / max(abs(x), abs(y), 1e-30) for x, y in zip(a, b)
                     if not (math.isinf(x) and math.isinf(y))), default=0.0)
        if worst > 1e-6:
            bad.append(f"{name}: worst relative difference {worst:.3g}")
if bad:
    print("DIFFERENT: " + "; ".join(bad))
    sys.exit(1)
print("identical")
PY
}

run_mix() {  # run_mix LOG [GRAPH]: the mix on MNT/GRAPH (g); prints its wall seconds
  local t0
  t0=$(now)
  "$GRAPHFS_BIN/run-jobs" --graph "$MNT/${2:-g}" --jobs "$JOBS" --integrated --partition "$PARTITION" > "$1" 2>&1 ||
    { cat "$1" >&2; return 1; }
  python3 -c "print(round($(now) - $t0, 2))"
}

printf 'round\tbase_s\tacross_s\tafter_s\tfresh_s\tupdate_s\tacross_vs_base\tafter_vs_base\tafter_vs_fresh\told_results\tnew_results\treclaimed\n' > "$SUMMARY"
for round in $(seq 1 "$REPEAT"); do
  rm -rf "$WORK/src/g" "$WORK/src"/g@* "$WORK/src/fresh" "$WORK/old" "$WORK/new" "$WORK"/disk*
  cp -a "$G" "$WORK/src/g"
  # Each round draws its batch with its own seed, unless --seed fixes one for all.
  "$GRAPHFS_BIN/gen-update" --graph "$WORK/src/g" --fraction "$FRACTION" --kind "$KIND" --seed "${SEED:-$round}" \
    --add "$WORK/add.bin" --delete "$WORK/del.bin" > /dev/null
  # The references: the unmodified apps on plain copies of the old and the updated graph.
  cp -a "$G" "$WORK/old"
  "$GRAPHFS_BIN/graphfs-update" "$WORK/old" --add "$WORK/add.bin" --delete "$WORK/del.bin" --allow-missing \
    -o "$WORK/new" > /dev/null
  "$GRAPHFS_BIN/graphfs-index" -q --chunk-size "$CHUNK" "$WORK/new"
  for ref in old new; do
    "$GRAPHFS_BIN/run-jobs" --graph "$WORK/$ref" --jobs "$JOBS" > "$WORK/$ref.log" 2>&1 || { cat "$WORK/$ref.log"; exit 1; }
  done
  # `fresh`: the updated graph as the tools would make it anew (striped too, with --striped).
  cp -a "$WORK/new" "$WORK/src/fresh"
  if [[ $STRIPED -gt 0 ]]; then
    stripe "$WORK/src/g"
    stripe "$WORK/src/fresh"
  fi
  mount_graphfs "$WORK/src" "$MNT" "cache_size=1G"
  drop_caches
  base=$(run_mix "$WORK/base.log")
  (cd "$WORK/src/g" && rm -f "${RESULTS_FILES[@]}" pagerank.degree pagerank.sum)
  drop_caches
  t0=$(now)
  run_mix "$WORK/across.log" > "$WORK/across.time" &
  mix=$!
  sleep "$(python3 -c "print($base * $DELAY)")"
  u0=$(now)
  "$GRAPHFS_BIN/graphfs-update" "$WORK/src/g" --add "$WORK/add.bin" --delete "$WORK/del.bin" --allow-missing \
    --keep "$KEEP" > "$WORK/update.log"
  update_s=$(python3 -c "print(round($(now) - $u0, 2))")
  wait "$mix"
  across=$(cat "$WORK/across.time")
  # The old version is reclaimed once its jobs left (by the daemon); its results stay.
  reclaimed=no
  if [[ $KEEP == 0 ]]; then
    for _ in $(seq 1 100); do [[ -f $WORK/src/g@0/meta ]] || { reclaimed=yes; break; }; sleep 0.1; done
  else
    reclaimed=held
  fi
  old_check=$(compare_results "$WORK/old" "$WORK/src/g@0") || true
  drop_caches
  after=$(run_mix "$WORK/after.log")
  new_check=$(compare_results "$WORK/new" "$WORK/src/g") || true
  # The same updated graph as ordinary files (written whole, -o): what the mix costs on it
  # without the version's maps. A batch changes the work itself (on the grid, random targets are
  # shortcuts: bfs and sssp then take fewer, far denser iterations), so after/base mixes the
  # two; after/fresh is the cost of reading a version.
  drop_caches
  fresh=$(run_mix "$WORK/fresh.log" fresh)
  unmount_graphfs "$MNT"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%s\t%s\t%s\n' "$round" "$base" "$across" "$after" "$fresh" \
    "$update_s" "$(python3 -c "print($across / $base)")" "$(python3 -c "print($after / $base)")" \
    "$(python3 -c "print($after / $fresh)")" "$old_check" "$new_check" "$reclaimed" >> "$SUMMARY"
  tail -1 "$SUMMARY"
  for mix in base across after fresh; do  # per job: which one a slow mix waited for
    echo "# $mix:"
    # run-jobs' table: job, app, its arguments, then planned_s start_s wall_s: the third number
    # with a decimal point is the job's wall time.
    grep -E '^[0-9]+ ' "$WORK/$mix.log" |
      awk '{n = 0; for (i = 3; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/ && ++n == 3) {print "#   " $2, "wall", $i, "s"; break}}'
  done
  cat "$WORK/update.log"
  [[ $old_check == identical && $new_check == identical ]] || { echo "results differ" >&2; exit 1; }
done
echo "# summary: $SUMMARY"
column -t -s $'\t' "$SUMMARY"
