#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# The peer side by side: graphfs (integrated jobs on the striped mount) against GraphSO's public code
# (jinzh-hust/GraphSO: GridGraph-M with GraphSO's storage), the same four jobs at equal TOTAL memory
# and equal bandwidth. Run it as root, under the machine's benchmark lock on a shared machine:
#
#   flock /var/tmp/graphfs-machine.lock scripts/bench/peer.sh --graphso DIR [--scale 22] [--repeat 3]
#       [--family rmat|rmat-local] [--partitions 16] [--bps 100000000] [--iterations 20]
#       [--sides "graphfs graphso plain plain-btrfs"] [--gen-dir DIR] [--chunk-size 2M] [--partition 256M]
#       [--fraction 0.25] [--readahead-mem 256M] [--memory SIZE] [--mount-opts OPTS]
#       [--compress auto|none|CODEC] [--mem-gb G] [--limit SIZE] [--graphso-mem MIB] [--llc-mb MB]
#       [--out DIR]
#
# DIR is a checkout of GraphSO supplied by the user; nothing of it enters this repository. It is
# copied to /var/tmp/graphfs-peer/graphso-build and built there with its own Makefiles (g++, its
# CXXFLAGS: -O3 -std=c++11 -fopenmp; builds unchanged with Debian 12's g++ 12, no patch applied).
#
# The graph: a weighted R-MAT of 2^SCALE vertices, 16 edges per vertex (gen-rmat --weighted --seed 1;
# --family rmat-local keeps R-MAT's own ids), preprocessed with --sort-sources into P (16) partitions
# and indexed (graphfs-index, chunks of --chunk-size) once in --gen-dir (default
# /var/tmp/graphfs-peer/gen; a directory of scripts/bench/graphs.sh's layout is reused, read-only
# but for a missing or stale index). Staged as disks.sh does (stage_graph): striped over 4 loop
# disks of BPS bytes/s each for graphfs (compressed where graphfs-stripe's auto says it pays), one
# plain copy on a fifth disk of 4 x BPS for GraphSO and the plain side: the same total bandwidth.
# Disks, mounts, cgroups, logs: /var/tmp/graphfs-peer only (the cleanup detaches the loop devices
# backed by files under /var/tmp/graphfs-peer/bench, unmounts the mounts there, removes its own
# cgroups graphfs-peer*). Raw output: /var/tmp/graphfs-peer/results/STAMP/ (or --out).
#
# The sides (each run starts with the page cache dropped; the order turns from round to round,
# but round 1 runs graphfs first: it measures the memory the others get):
#   graphfs  run-jobs --integrated --partition PARTITION --jobs pagerank:ITER,wcc,sssp:S,bfs:S
#            (S: the source of the graph's first edge) through a fresh mount (cache_size =
#            FRACTION x column, readahead_mem, lp=vertex, the disks' calibration; or --memory SIZE,
#            + --mount-opts). The jobs run in a memory cgroup of 64 B per vertex + 512 MiB (as
#            integrated.sh). TOTAL = the jobs' cgroup peak + the daemon's peak RSS (VmHWM).
#   graphso  GraphSO/bin/concurrent_jobs PLAIN 1 ITER S LLC_MB GRAPH_MB BUDGET in a memory cgroup
#            limited to TOTAL (the largest graphfs TOTAL measured so far, or --limit), on the plain copy.
#   plain    (optional) the same run-jobs jobs unmodified on the plain copy, limited to TOTAL and
#            told it (--mem-gb: TOTAL less 64 MiB, told_mem_gb; --mem-gb G overrides), as users of
#            plain storage tell their engines: buffered reads where the active edges fit.
#   plain-btrfs (optional) the same as plain on a copy on btrfs mounted compress-force=zstd:1 (a
#            sixth disk of 4 x BPS: make_btrfs_disk), the plain row for compressed storage.
# Per side: wall time, bytes read from its disks (/sys/block/loopN/stat), the I/O floor (bytes /
# (4 x BPS)), CPU seconds (the jobs' cpuacct cgroup, + the daemon's CPU for graphfs) and the CPU floor
# (CPU s / cores), the memory limit and peaks; then the medians, graphfs/GraphSO (ratio of medians and
# median of per-round ratios) against the target 0.8 (scripts/bench/peer_summary.py).
#
# What GraphSO's public code does (read from its source, GraphSO/examples/concurrent_jobs.cpp and
# core/graph.hpp, core/memory_control.hpp; PreProcessing/):
# - One process, 2 threads (hardware_concurrency), each reading 24 MiB preads and applying every job
#   to the edges it read: one copy of each loaded block for the four jobs. ITER iterations, exactly:
#   the loop is `iter < ITER` (the `|| active != 0` in its condition is dead). Each iteration reads
#   every partition row that some job has active: PageRank keeps every row active, so every iteration
#   reads all of `column` (activity is per partition row, GridGraph's should_access_shard; no
#   chunk-granular logical partitions are built). Before them, two passes over `row`: the
#   constructor's set_range_table (always buffered; its start/end vertex tables are printed, never
#   used) and the degree pass. So 2 x row + ITER x column: 22 passes for ITER = 20.
# - PageRank: ITER iterations, GridGraph's (rank 1/degree, 0.15 + 0.85 sum), float32: the same as
#   ours (pagerank:ITER, float64). WCC, BFS and SSSP run at most ITER iterations, stopping early only
#   in that they make no more updates (their rows go inactive); they are CUT at ITER iterations if
#   not converged (the summary prints the update count at the start of GraphSO's last iteration: 0
#   means they had converged). Ours run to convergence (with the apps' default reentry 5), so when
#   GraphSO is cut it did less work than we did, never more.
#   Deviations of GraphSO's jobs from ours, in its code: BFS and SSSP start with EVERY vertex active
#   (active_out->fill() after set_bit(start)), so its "BFS" gives every vertex with an in-edge a
#   parent in the first iteration (not BFS levels; cheap, and it converges in a few iterations);
#   SSSP keeps int distances (depth + float weight truncated to int: floor of the weights summed
#   step by step) — the same reachability as ours, other distances. WCC is the same directed
#   min-label propagation as ours. The summary checks the results: PageRank's sum of ranks,
#   WCC's components and SSSP's reached vertices, GraphSO's files against our jobs' result lines.
# - Memory budget (7th argument): the README says GB, the code multiplies by 2^20: MiB, an integer.
#   It (1) picks the read mode: O_DIRECT when the budget < the bytes of the active rows (all of
#   column), else buffered reads through the page cache; (2) sizes Chunk_memory, a buffer of chunks
#   loaded once at start from chunk-table-0 — only chunks of exactly 4980736 bytes are eligible,
#   which no chunk of 12-byte records can be, and a read is served from it only when a 24 MiB task
#   starts at a chunk and has that length: for a weighted graph the buffer stays empty (allocated,
#   never touched) and every read goes to the file; (3) sizes vertex windows when 12 B x V >
#   0.8 x budget (not at these sizes). Its O_DIRECT mode cannot work on a grid: column reads start at
#   block offsets that are not 512-aligned, pread fails with EINVAL, and the failure is not checked
#   (the assert is commented out): whole blocks are skipped silently. So the budget given is
#   max(TOTAL in MiB, column + 1 MiB): buffered reads, the only mode in which its code processes
#   every edge; the memory it really has is the cgroup's TOTAL (page cache included). Chunk_memory
#   keeps its size in an int: a budget whose buffer is 2-4 GiB (mod 4 GiB) aborts it, so such a
#   budget is raised to the next safe one (same read mode, same empty buffer; said on stderr).
#   --graphso-mem MIB gives the budget as is (e.g. below column to see the O_DIRECT mode).
# - I/O: `column` and `row` (24 MiB preads, posix_fadvise SEQUENTIAL), never block-i-j (it stat()s
#   them); chunk-table-0 (written by PreProcessing/bin/preprocessing into its working directory: run
#   here in the plain copy, not timed, with LLC_MB = the L3 size and GRAPH_MB = column in MiB, which
#   only size its chunks and the compute tiles); its vertex state in files of the graph directory
#   (degree, pagerank0, sum0, depth0, parent0, label0: mmap'd, removed before each run).
#   It prints its own time ("N iterations of concurrent jobs took T seconds", from before its
#   first read); the wall time here is the process's, start to exit, as run-jobs' is its jobs'.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PEER_ROOT=/var/tmp/graphfs-peer
ARGS="$*"
bench_options "$@" <<'EOF'
-h|--help
--graphso        GRAPHSO_SRC      ""
--scale          SCALE            22
--family         FAMILY           rmat
--partitions     PARTITIONS       "${PARTITIONS:-}"
--bps            BPS              100000000
--iterations     ITER             20
--sides          SIDES            "graphfs graphso"
--gen-dir        GEN_DIR          "$PEER_ROOT/gen"
--chunk-size     CHUNK            2M
--partition      PARTITION        256M
--fraction       FRACTION         0.25
--readahead-mem  READAHEAD_MEM    256M  bytes
--memory         MEMORY           ""
--mount-opts     MOUNT_OPTS       ""
--compress       STRIPE_COMPRESS  "${STRIPE_COMPRESS:-}"
--mem-gb         MEM_GB           ""
--limit          LIMIT            ""  bytes
--graphso-mem    GS_MEM           ""
--llc-mb         LLC_MB           ""
--repeat         REPEAT           1
--out            OUT              ""
EOF
MEM_GB_MOUNT=${MEM_GB:-0.25}
MEM_GB_PLAIN=${MEM_GB:-}  # empty: each plain run is told its limit (run_plain)
[[ $(id -u) == 0 ]] || { echo "peer.sh: run as root (loop disks, cgroups, drop_caches)" >&2; exit 2; }
[[ -n $GRAPHSO_SRC && -f $GRAPHSO_SRC/GraphSO/examples/concurrent_jobs.cpp && -f $GRAPHSO_SRC/PreProcessing/examples/Preprocessing.cpp ]] ||
  { echo "peer.sh: --graphso DIR must be a checkout of GraphSO (GraphSO/examples/concurrent_jobs.cpp, PreProcessing/)" >&2; exit 2; }
for s in $SIDES; do case $s in graphfs | graphso | plain | plain-btrfs) ;; *) echo "peer.sh: unknown side $s" >&2; exit 2 ;; esac; done
[[ " $SIDES " == *" graphfs "* || -n $LIMIT ]] || { echo "peer.sh: without the graphfs side, give --limit SIZE" >&2; exit 2; }
for b in graphfs run-jobs gen-rmat preprocess graphfs-index graphfs-stripe graphfs-calibrate; do
  [[ -x $GRAPHFS_BIN/$b ]] || { echo "peer.sh: $GRAPHFS_BIN/$b is missing (build graphfs first)" >&2; exit 2; }
done

# Everything of ours under PEER_ROOT, and cgroups of our own names: nothing another bench uses.
BENCH_ROOT=$PEER_ROOT/bench
BENCH_CGROUP=/sys/fs/cgroup/blkio/graphfs-peer
MIX_CGROUP=/sys/fs/cgroup/memory/graphfs-peer-mix
CPU_CGROUP=/sys/fs/cgroup/cpuacct/graphfs-peer-jobs
MNT=$BENCH_ROOT/mnt
bench_on_exit destroy_disks
bench_on_exit quietly cgroup_remove "$MIX_CGROUP" "$CPU_CGROUP"
bench_on_exit quietly unmount_graphfs "$MNT"

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$PEER_ROOT/results/$STAMP}
mkdir -p "$OUT"
NCPU=$(nproc)

# 1. GraphSO, built out of tree from the user's checkout (its own Makefiles; the committed binaries
# in its bin/ are removed first, so what runs is built here).
GS_BUILD=$PEER_ROOT/graphso-build
rm -rf "$GS_BUILD"
mkdir -p "$GS_BUILD"
(cd "$GRAPHSO_SRC" && tar --exclude=.git -cf - GraphSO PreProcessing) | tar -xf - -C "$GS_BUILD"
rm -f "$GS_BUILD"/GraphSO/bin/* "$GS_BUILD"/PreProcessing/bin/*
echo "# building GraphSO ($(git -C "$GRAPHSO_SRC" rev-parse --short HEAD 2>/dev/null || echo "not a git checkout")) in $GS_BUILD with $(g++ --version | head -1)"
make -s -C "$GS_BUILD/GraphSO" CXX=g++ bin/concurrent_jobs > "$OUT/graphso-build.log" 2>&1 ||
  { cat "$OUT/graphso-build.log" >&2; exit 1; }
make -s -C "$GS_BUILD/PreProcessing" CXX=g++ bin/preprocessing >> "$OUT/graphso-build.log" 2>&1 ||
  { cat "$OUT/graphso-build.log" >&2; exit 1; }
GS_RUN=$GS_BUILD/GraphSO/bin/concurrent_jobs
GS_PRE=$GS_BUILD/PreProcessing/bin/preprocessing

# 2. The graph (generated, preprocessed and indexed once: graphs.sh).
bench_graph "$FAMILY" "$SCALE" "" "$GEN_DIR" "$CHUNK"
START=$FIRST
JOBS="pagerank:$ITER,wcc,sssp:$START,bfs:$START"
BUDGET=$(cache_budget "$COLUMN" "$FRACTION")
WORK=$((VERTICES * 64 + (512 << 20)))
COLUMN_MIB=$(((COLUMN >> 20) + 1))
GRAPH_MB=$(((COLUMN >> 20) > 0 ? COLUMN >> 20 : 1))
if [[ -z $LLC_MB ]]; then
  # The L3 of one core (sysfs; getconf's LEVEL3_CACHE_SIZE is wrong in this VM: 320M for 32M).
  LLC_MB=$(( $(numfmt --from=iec "$(cat /sys/devices/system/cpu/cpu0/cache/index3/size 2>/dev/null || echo 0)" 2>/dev/null || echo 0) >> 20 ))
  ((LLC_MB > 0)) || LLC_MB=8
fi

# 3. Disks: 4 x BPS striped (graphfs), one plain copy on a disk of 4 x BPS (GraphSO, plain).
ROOM_MIB=$(jobs_disk_room "$JOBS")   # the jobs' vertex state beside the graph (graphs.sh)
stage_graph "$G" "$BPS" "$ROOM_MIB"
PLAIN=${DISK_DIRS[4]}/g
BTRFS_DISK=""
if [[ " $SIDES " == *" plain-btrfs "* ]]; then
  make_btrfs_disk "$G" "$BPS" "$ROOM_MIB"
  echo "# plain-btrfs: the plain copy on btrfs (compress-force=zstd:1) takes $((BTRFS_DATA_BYTES >> 20)) MiB of data on its disk"
fi
COST_OPTS=""
calibrate_disks > "$OUT/calibrate.log" 2>&1 ||
  { echo "# graphfs-calibrate failed (the mount uses its defaults):"; tail -5 "$OUT/calibrate.log"; }
# GraphSO's chunk labelling (PreProcessing): writes chunk-table-<thread> into its working directory;
# concurrent_jobs reads PATH/chunk-table-0. Not timed (as graphfs-index is not).
gs_budget_safe() {  # the budget raised past the sizes at which Chunk_memory's int size is negative
  python3 - "$1" <<'PY'
import sys
m = int(sys.argv[1])
def ok(m):
    size = (m << 20) // 4980736 * 4980736
    return size % (1 << 32) < (1 << 31)
n = m
while not ok(n):
    n += 1
print(n)
PY
}
GS_PRE_MEM=$(gs_budget_safe "$COLUMN_MIB")
(cd "$PLAIN" && "$GS_PRE" "$PLAIN" "$LLC_MB" "$GRAPH_MB" "$GS_PRE_MEM") > "$OUT/graphso-preprocessing.log" 2>&1 ||
  { echo "GraphSO's preprocessing failed:" >&2; tail -20 "$OUT/graphso-preprocessing.log" >&2; exit 1; }
[[ -s $PLAIN/chunk-table-0 ]] || { echo "GraphSO's preprocessing wrote no chunk-table-0" >&2; exit 1; }

RUNS=$OUT/runs.tsv
printf 'round\tside\twall_s\tdisk_bytes\tcpu_s\tjobs_cpu_s\tdaemon_cpu_s\tmem_limit\tjobs_peak\tdaemon_peak\ttotal\tstatus\tlog\n' > "$RUNS"
cat > "$OUT/setup.txt" <<EOF
date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')
command: $0 $ARGS
graphfs: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo ?)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo " (working tree modified)"), binaries $GRAPHFS_BIN
graphso: $GRAPHSO_SRC $(git -C "$GRAPHSO_SRC" rev-parse --short HEAD 2>/dev/null || echo ?)
graph: $NAME ($FAMILY, $VERTICES vertices, $EDGES edges, P=${PARTITIONS:-16}), column $COLUMN B, $G
disks: 4 x $BPS B/s striped (compress ${STRIPE_COMPRESS:-auto}), plain copy on 1 x $((4 * BPS)) B/s
jobs: $JOBS (graphfs: --integrated --partition $PARTITION --mem-gb $MEM_GB_MOUNT; plain: --mem-gb ${MEM_GB_PLAIN:-its limit less 64 MiB})
graphso: concurrent_jobs PATH 1 $ITER $START $LLC_MB $GRAPH_MB BUDGET
mount: $([[ -n $MEMORY ]] && echo "memory=$MEMORY" || echo "cache_size=$BUDGET"),readahead_mem=$READAHEAD_MEM,lp=vertex${MOUNT_OPTS:+,$MOUNT_OPTS}
cores: $NCPU
EOF
echo "# peer benchmark $STAMP: $NAME ($VERTICES vertices, $EDGES edges), column $((COLUMN >> 20)) MiB, jobs $JOBS, $REPEAT round(s), sides: $SIDES; raw output in $OUT"

# cgroups: the blkio throttle (BENCH_CGROUP), the memory limit, and a cpuacct group for the jobs' CPU.
cg_setup() {  # LIMIT
  memcg_create "$MIX_CGROUP" "$1"
  cpucg_create "$CPU_CGROUP"
}
cg_run() {  # CMD...: in the three cgroups
  run_in_cgroups "$BENCH_CGROUP" "$MIX_CGROUP" "$CPU_CGROUP" -- "$@"
}
cg_done() {  # sets PEAK, JOBS_CPU, OOM_KILLS
  PEAK=$(memcg_peak "$MIX_CGROUP")
  OOM_KILLS=$(memcg_oom_kills "$MIX_CGROUP")
  JOBS_CPU=$(cpucg_seconds "$CPU_CGROUP")
  cgroup_remove "$MIX_CGROUP" "$CPU_CGROUP"
}
fdiff() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {printf "%.2f", a - b}'; }
fsum() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {printf "%.2f", a + b}'; }
record() {  # ROUND SIDE WALL BYTES CPU JOBS_CPU DAEMON_CPU LIMIT PEAK DAEMON_PEAK TOTAL STATUS LOG
  local IFS=$'\t'
  echo "$*" >> "$RUNS"
  python3 "$HERE/peer_summary.py" --line "$RUNS" --bps $((4 * BPS)) --cores "$NCPU"
}

# graphfs: integrated jobs through a fresh mount. Sets TOTAL_LAST.
run_graphfs() {
  local round=$1 log=$OUT/r$1-graphfs.log cache_opt before after t0 t1 dcpu0 dcpu1 dpeak status=ok
  cache_opt="cache_size=$BUDGET"
  [[ -n $MEMORY ]] && cache_opt="memory=$MEMORY"
  mount_graphfs "$SRC" "$MNT" "$cache_opt,readahead_mem=$READAHEAD_MEM,lp=vertex$COST_OPTS${MOUNT_OPTS:+,$MOUNT_OPTS}"
  drop_caches
  dcpu0=$(daemon_cpu_seconds "$GRAPHFS_PID")
  before=$(loops_read "${LOOPS[@]:0:4}")
  cg_setup "$WORK"
  t0=$(now)
  GRAPHFS_ENGINE_VERBOSE=1 cg_run "$GRAPHFS_BIN/run-jobs" --graph "$MNT/g" --jobs "$JOBS" --integrated \
    --partition "$PARTITION" --mem-gb "$MEM_GB_MOUNT" > "$log" 2>&1 || status=failed
  t1=$(now)
  cg_done
  after=$(loops_read "${LOOPS[@]:0:4}")
  dpeak=$(daemon_peak_rss "$GRAPHFS_PID")
  dcpu1=$(daemon_cpu_seconds "$GRAPHFS_PID")
  cp "$MNT/.graphfs/stats" "$log.stats.json" 2>/dev/null || true
  unmount_graphfs "$MNT"
  grep -q ' \(exit\|signal\) [0-9]' "$log" && status=failed
  [[ $status == ok ]] || { echo "graphfs run failed:"; tail -20 "$log"; }
  local wall dcpu
  wall=$(awk '/^total wall time:/ {print $4; exit}' "$log")
  [[ -n $wall ]] || wall=$(fdiff "$t1" "$t0")
  dcpu=$(fdiff "$dcpu1" "$dcpu0")
  TOTAL_LAST=$((PEAK + ${dpeak:-0}))
  record "$round" graphfs "$wall" $((after - before)) "$(fsum "$JOBS_CPU" "$dcpu")" "$JOBS_CPU" "$dcpu" \
    "$WORK" "$PEAK" "${dpeak:--}" "$TOTAL_LAST" "$status" "$log"
}

# GraphSO's concurrent_jobs on the plain copy, in a cgroup of LIMIT.
run_graphso() {
  local round=$1 limit=$2 log=$OUT/r$1-graphso.log before after t0 t1 status=ok budget
  if [[ -n $GS_MEM ]]; then
    budget=$GS_MEM
  else
    budget=$((limit >> 20))
    ((budget >= COLUMN_MIB)) || budget=$COLUMN_MIB
    local safe
    safe=$(gs_budget_safe "$budget")
    [[ $safe == "$budget" ]] || echo "# GraphSO budget $budget MiB would make Chunk_memory's int size negative (abort): $safe MiB given (same read mode, same empty buffer)" >&2
    budget=$safe
  fi
  ((budget < COLUMN_MIB)) && echo "# GraphSO budget $budget MiB < column: its O_DIRECT mode (unaligned column reads fail with EINVAL, unchecked: blocks skipped)" >&2
  rm -f "$PLAIN"/{degree,pagerank0,sum0,depth0,parent0,label0}
  drop_caches
  before=$(loops_read "${LOOPS[4]}")
  cg_setup "$limit"
  t0=$(now)
  (cd "$PLAIN" && cg_run "$GS_RUN" "$PLAIN" 1 "$ITER" "$START" "$LLC_MB" "$GRAPH_MB" "$budget") > "$log" 2>&1 || status="failed(rc=$?)"
  t1=$(now)
  cg_done
  after=$(loops_read "${LOOPS[4]}")
  grep -q "iterations of concurrent jobs took" "$log" || status=${status/ok/failed}
  if [[ $status != ok ]]; then
    echo "GraphSO run failed ($status; OOM kills in its cgroup: ${OOM_KILLS:-?}):"; tail -5 "$log"
  fi
  echo "graphso budget argument: $budget MiB; cgroup limit $limit; process wall $(fdiff "$t1" "$t0") s" >> "$log"
  # Its results, for the equal-work check (summary): read now, before the next run removes them.
  python3 "$HERE/peer_summary.py" --graphso-results "$PLAIN" "$VERTICES" >> "$log" 2>&1 || true
  record "$round" graphso "$(fdiff "$t1" "$t0")" $((after - before)) "$JOBS_CPU" "$JOBS_CPU" 0 \
    "$limit" "$PEAK" - "$PEAK" "$status" "$log"
}

# The same jobs unmodified on a plain copy (SIDE plain: ext4; plain-btrfs: btrfs zstd:1), in a cgroup of LIMIT.
run_plain() {
  local round=$1 limit=$2 side=${3:-plain} log=$OUT/r$1-${3:-plain}.log before after t0 t1 status=ok wall dir loop
  dir=$PLAIN loop=${LOOPS[4]}
  [[ $side == plain-btrfs ]] && dir=${DISK_DIRS[BTRFS_DISK]}/g loop=${LOOPS[BTRFS_DISK]}
  drop_caches
  before=$(loops_read "$loop")
  cg_setup "$limit"
  t0=$(now)
  local told=${MEM_GB_PLAIN:-$(told_mem_gb "$limit")}
  GRAPHFS_ENGINE_VERBOSE=1 cg_run "$GRAPHFS_BIN/run-jobs" --graph "$dir" --jobs "$JOBS" --mem-gb "$told" > "$log" 2>&1 || status=failed
  t1=$(now)
  echo "$side: memory cgroup $((limit >> 20)) MiB, engines told --mem-gb $told" >> "$log"
  cg_done
  after=$(loops_read "$loop")
  grep -q ' \(exit\|signal\) [0-9]' "$log" && status=failed
  [[ $status == ok ]] || { echo "$side run failed:"; tail -20 "$log"; }
  wall=$(awk '/^total wall time:/ {print $4; exit}' "$log")
  [[ -n $wall ]] || wall=$(fdiff "$t1" "$t0")
  record "$round" "$side" "$wall" $((after - before)) "$JOBS_CPU" "$JOBS_CPU" 0 "$limit" "$PEAK" - "$PEAK" "$status" "$log"
}

MAX_TOTAL=0
read -r -a SIDE_LIST <<< "$SIDES"
for ((ROUND = 1; ROUND <= REPEAT; ROUND++)); do
  order=$(rotate $((ROUND - 1)) "${SIDE_LIST[@]}")
  # Round 1: graphfs first, so that the others get its measured total memory.
  if ((ROUND == 1)) && [[ -z $LIMIT && " $SIDES " == *" graphfs "* ]]; then
    # (grep finds nothing when graphfs is the only side: not a failure under pipefail)
    order="graphfs $(printf '%s\n' "${SIDE_LIST[@]}" | { grep -vx graphfs || true; } | tr '\n' ' ')"
  fi
  for side in $order; do
    case $side in
      graphfs)
        run_graphfs "$ROUND"
        ((TOTAL_LAST > MAX_TOTAL)) && MAX_TOTAL=$TOTAL_LAST
        echo "  round $ROUND graphfs: total memory $((TOTAL_LAST >> 20)) MiB (jobs' peak + daemon's peak RSS); the others get $(( ${LIMIT:-$MAX_TOTAL} >> 20 )) MiB" ;;
      graphso) run_graphso "$ROUND" "${LIMIT:-$MAX_TOTAL}" ;;
      plain) run_plain "$ROUND" "${LIMIT:-$MAX_TOTAL}" plain ;;
      plain-btrfs) run_plain "$ROUND" "${LIMIT:-$MAX_TOTAL}" plain-btrfs ;;
    esac
  done
done

python3 "$HERE/peer_summary.py" "$RUNS" --bps $((4 * BPS)) --cores "$NCPU" --target 0.8 | tee "$OUT/summary.txt"
echo "# raw output: $OUT"
