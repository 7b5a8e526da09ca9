#!/usr/bin/env bash
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
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GRAPHFS_BIN=${GRAPHFS_BIN:-$ROOT/build/bin}
SCALE=24
FRACTIONS="0.25"
SWEEP=""
POLICIES="priority lru"
BPS=100000000
PARTITIONS=16
PLAIN_DIRECT=1
PLAIN=1
DAEMONS=""
REPEAT=1
GEN_DIR=/var/tmp/graphfs-gen
while [[ $# -gt 0 ]]; do
  case "$1" in
    --scale) SCALE=$2; shift 2 ;;
    --fractions) FRACTIONS=$2; shift 2 ;;
    --sweep) SWEEP=$2; shift 2 ;;
    --policies) POLICIES=$2; shift 2 ;;
    --bps) BPS=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --gen-dir) GEN_DIR=$2; shift 2 ;;
    --no-plain-direct) PLAIN_DIRECT=0; shift ;;
    --no-plain) PLAIN=0; shift ;;
    --daemons) DAEMONS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
source "$HERE/disks.sh"
BENCH_ROOT=/var/tmp/graphfs-cachebench
trap 'unmount_graphfs "$BENCH_ROOT/mnt" 2>/dev/null || true; destroy_disks' EXIT

# 1. The graph, generated and indexed once.
G=$GEN_DIR/rmat$SCALE
if [[ ! -f $G/column || ! -d $G/.graphfs/index ]]; then
  mkdir -p "$GEN_DIR"
  "$GRAPHFS_BIN/gen-rmat" --scale "$SCALE" --weighted --seed 1 -o "$GEN_DIR/rmat$SCALE.bin"
  "$GRAPHFS_BIN/preprocess" -i "$GEN_DIR/rmat$SCALE.bin" -o "$G" -v $((1 << SCALE)) -p "$PARTITIONS" -t 1
  "$GRAPHFS_BIN/graphfs-index" -q "$G"
fi
START=$(od -An -td4 -N4 "$GEN_DIR/rmat$SCALE.bin" | tr -d ' ')
COLUMN=$(stat -c %s "$G/column")
JOBS="pagerank-delta,wcc,sssp:$START,bfs:$START"
WORK=$(( (1 << SCALE) * 64 ))  # the mix's vertex state and buffers (max RSS at scale 22: 204 MiB)
MIX_CGROUP=/sys/fs/cgroup/memory/graphfs-cachebench-mix

# 2. Four striped disks and one plain disk with the same total bandwidth.
stage_graph "$G" "$BPS" 1024

RESULTS=$ROOT/scripts/bench/results
TRACES=${TRACES:-/var/tmp/graphfs-cache-traces}  # unit lookups of each mount run, for cache_sim.py
mkdir -p "$TRACES"
mkdir -p "$RESULTS"
STAMP=$(date -u +%Y%m%dT%H%MZ)
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
  mkdir -p "$MIX_CGROUP"
  echo "$limit" > "$MIX_CGROUP/memory.limit_in_bytes"
  echo 0 > "$MIX_CGROUP/memory.max_usage_in_bytes"
  sh -c 'echo $$ > "$0/cgroup.procs"; echo $$ > "$1/cgroup.procs"; shift; exec "$@"' "$BENCH_CGROUP" "$MIX_CGROUP" \
    "$GRAPHFS_BIN/run-jobs" --graph "$dir" --jobs "$JOBS" --mem-gb "$memgb" > "$log" 2>&1 ||
    { echo "$config failed:"; cat "$log"; rmdir "$MIX_CGROUP"; return 1; }
  echo "mix cgroup: limit $limit, peak $(cat "$MIX_CGROUP/memory.max_usage_in_bytes")" >> "$log"
  rmdir "$MIX_CGROUP"
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
  budget=$(python3 -c "print(int($COLUMN * $fraction) // 4096 * 4096)")
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
