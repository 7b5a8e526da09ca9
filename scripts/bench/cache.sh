#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 4 benchmark: the shared cache under the concurrent 4-job mix on 4 throttled disks.
#
#   scripts/bench/cache.sh [--scale 24] [--fractions "0.25"] [--sweep "0.10 0.50"] [--bps 100000000]
#   (--fractions: every config; --sweep: the mount only, for the hit ratio against the budget)
#                          [--partitions 16] [--gen-dir DIR] [--policies "priority lru"]
#                          [--no-plain] [--no-plain-direct] [--daemons "NAME=BIN_DIR ..."] [--repeat N]
#   (--daemons: the mount runs once per daemon in turn — e.g. before and after a change — on the
#    same disks and graph, --repeat rounds alternating; a last table gives each one's median
#    wall time and disk bytes and the ratio to the first daemon)
#
# A weighted R-MAT graph (generated once into --gen-dir and reused), indexed with graphfs-index,
# striped over 4 loop disks of BPS bytes/s each (unit 16M); a plain copy on a fifth loop disk of
# 4 x BPS (the same total bandwidth, no striping). The mix {pagerank-delta, wcc, sssp, bfs} starts
# together under run-jobs, unmodified engines, all four in one memory cgroup (cgroup v1):
#   mount-POLICY  the mount with cache_size = FRACTION x column bytes and cache_policy=POLICY
#                 (readahead_mem=256M); the jobs read with O_DIRECT (MEM_GB below the edge bytes)
#                 and their cgroup holds only their vertex state (WORK = 64 B per vertex), so the
#                 only cache of edges is graphfs's;
#   plain-capped  the plain copy, buffered reads (MEM_GB 8), cgroup limit WORK + budget: the
#                 kernel's page cache gets the same budget;
#   plain-direct  the plain copy with O_DIRECT (what GridGraph does when MEM is small): no cache.
# For each: wall time of the mix, bytes read from the loop disks (/sys/block), graphfs hit ratio.
# The budget is a fraction of `column`, the file every app streams.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--scale            SCALE         24
--fractions        FRACTIONS     0.25
--sweep            SWEEP         ""
--policies         POLICIES      "priority lru"
--bps              BPS           100000000
--partitions       PARTITIONS    16
--gen-dir          GEN_DIR       /var/tmp/graphfs-gen
--no-plain-direct  PLAIN_DIRECT  1  =0
--no-plain         PLAIN         1  =0
--daemons          DAEMONS       ""
--repeat           REPEAT        1
EOF
BENCH_ROOT=/var/tmp/graphfs-cachebench
bench_on_exit destroy_disks
bench_on_exit quietly unmount_graphfs "$BENCH_ROOT/mnt"

# 1. The graph, generated and indexed once.
G=$GEN_DIR/rmat$SCALE
if [[ ! -f $G/column || ! -d $G/.graphfs/index ]]; then
  mkdir -p "$GEN_DIR"
  "$GRAPHFS_BIN/gen-rmat" --scale "$SCALE" --weighted --seed 1 -o "$GEN_DIR/rmat$SCALE.bin"
  "$GRAPHFS_BIN/preprocess" -i "$GEN_DIR/rmat$SCALE.bin" -o "$G" -v $((1 << SCALE)) -p "$PARTITIONS" -t 1
  "$GRAPHFS_BIN/graphfs-index" -q "$G"
fi
START=$(first_source "$GEN_DIR/rmat$SCALE.bin")
COLUMN=$(stat -c %s "$G/column")
JOBS="pagerank-delta,wcc,sssp:$START,bfs:$START"
WORK=$(( (1 << SCALE) * 64 ))  # the mix's vertex state and buffers (max RSS at scale 22: 204 MiB)
MIX_CGROUP=/sys/fs/cgroup/memory/graphfs-cachebench-mix
bench_on_exit quietly cgroup_remove "$MIX_CGROUP"

# 2. Four striped disks and one plain disk with the same total bandwidth.
stage_graph "$G" "$BPS" 1024

TRACES=${TRACES:-/var/tmp/graphfs-cache-traces}  # unit lookups of each mount run, for cache_sim.py
mkdir -p "$TRACES"
bench_results
SUMMARY=$RESULTS/cache-$STAMP.tsv
printf 'config\tfraction\tbudget\twall_s\tdisk_bytes\tbyte_hit_ratio\tbytes_from_cache\tindex\tresults\n' > "$SUMMARY"
echo "# cache benchmark $STAMP: scale $SCALE, column $COLUMN B, graph $GRAPH_BYTES B, $BPS B/s x 4 disks, jobs $JOBS"

# run CONFIG FRACTION GRAPH_DIR MEM_GB LIMIT LOOPS...: one concurrent mix, its jobs together in a
# memory cgroup of LIMIT bytes and in the throttled blkio cgroup; one summary line.
run() {
  local config=$1 fraction=$2 dir=$3 memgb=$4 limit=$5; shift 5
  local log=$RESULTS/cache-$STAMP-$config-$fraction${ROUND_SUFFIX:-}.log before after wall hit fromcache
  drop_caches
  before=$(loops_read "$@")
  memcg_create "$MIX_CGROUP" "$limit"
  run_in_cgroups "$BENCH_CGROUP" "$MIX_CGROUP" -- \
    "$GRAPHFS_BIN/run-jobs" --graph "$dir" --jobs "$JOBS" --mem-gb "$memgb" > "$log" 2>&1 ||
    { echo "$config failed:"; cat "$log"; cgroup_remove "$MIX_CGROUP"; return 1; }
  echo "mix cgroup: limit $limit, peak $(memcg_peak "$MIX_CGROUP")" >> "$log"
  cgroup_remove "$MIX_CGROUP"
  after=$(loops_read "$@")
  wall=$(awk '/^total wall time/ {print $4}' "$log")
  hit=-; fromcache=-; index=-
  if [[ -f $BENCH_ROOT/mnt/.graphfs/stats ]]; then
    cp "$BENCH_ROOT/mnt/.graphfs/stats" "$log.stats.json"
    hit=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["cache"]; print("%.3f" % c["byte_hit_ratio"])' "$log.stats.json")
    fromcache=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cache"]["bytes_from_cache"])' "$log.stats.json")
    # The chunk index must be in use (cache units = chunks), else say why.
    index=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["indexes"]; print(";".join("chunks:%d" % x["column_chunks"] if x["in_use"] else "unused:" + x["error"] for x in i) or "none")' "$log.stats.json")
  fi
  local results
  results=$(grep -oE '(sum of ranks [0-9.]+|[0-9]+ components|reached [0-9]+|discovered [0-9]+)' "$log" | sort | tr '\n' ';')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$config" "$fraction" "$budget" "$wall" $((after - before)) "$hit" "$fromcache" "$index" "$results" | tee -a "$SUMMARY"
}

for fraction in $FRACTIONS $SWEEP; do
  budget=$(cache_budget "$COLUMN" "$fraction")
  for ((round = 0; round < REPEAT; round++)); do
    [[ $REPEAT -gt 1 ]] && ROUND_SUFFIX=-r$round
    for policy in $POLICIES; do
      for daemon in ${DAEMONS:-"=$GRAPHFS_BIN"}; do
        name=${daemon%%=*}
        DAEMON_BIN=${daemon#*=} mount_graphfs "$SRC" "$BENCH_ROOT/mnt" "cache_size=$budget,cache_policy=$policy,readahead_mem=256M,cache_trace=$TRACES/$STAMP-$policy-$fraction${name:+-$name}-$round.trace"
        run "mount-$policy${name:+-$name}" "$fraction" "$BENCH_ROOT/mnt/g" 0.25 "$WORK" "${LOOPS[@]:0:4}"
        unmount_graphfs "$BENCH_ROOT/mnt"
      done
    done
  done
  if [[ $PLAIN == 1 && " $SWEEP " != *" $fraction "* ]]; then
    run plain-capped "$fraction" "${DISK_DIRS[4]}/g" 8 $((WORK + budget)) "${LOOPS[4]}"
    [[ $PLAIN_DIRECT == 1 ]] && run plain-direct "$fraction" "${DISK_DIRS[4]}/g" 0.25 "$WORK" "${LOOPS[4]}"
  fi
done
echo "# summary: $SUMMARY"
column -t -s $'\t' "$SUMMARY"
if [[ -n $DAEMONS ]]; then
  echo "# daemons compared: medians over $REPEAT rounds; ratio = this daemon / the first"
  python3 - "$SUMMARY" "$DAEMONS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
names = [d.split("=", 1)[0] for d in sys.argv[2].split()]
groups = {}
for r in rows:
    if not r["config"].startswith("mount-"): continue
    policy, name = r["config"][len("mount-"):].rsplit("-", 1)
    groups.setdefault((policy, r["fraction"]), {}).setdefault(name, []).append(r)
for (policy, fraction), by in sorted(groups.items()):
    base = None
    for name in names:
        runs = by.get(name, [])
        if not runs: continue
        wall = statistics.median(float(r["wall_s"]) for r in runs)
        disk = statistics.median(int(r["disk_bytes"]) for r in runs)
        base = base or (wall, disk)
        print(f"{policy} {fraction} {name}: wall {wall:.1f} s (runs {' '.join(r['wall_s'] for r in runs)}), "
              f"disk {disk / 1e9:.2f} GB; ratio wall {wall / base[0]:.3f}, disk {disk / base[1]:.3f}")
PY
fi
