#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Parity through the mount (issue 44's benchmarks; docs/parity.md): a weighted R-MAT graph of
# --scale (scripts/bench/graphs.sh: preprocessed with sorted sources, indexed) striped twice over
# N loop disks of --bps each (../shared/DESIGN.md, "Simulated disks"), for each N of --disk-counts:
# without parity (--parity 0) and with --parity K, both raw (--compress none) or both compressed
# with --compress CODEC (parity over the packed stream). Each copy is a graph directory of its own
# source directory, mounted alone.
# One more disk of the same throttle stands by for graphfs-rebuild. Per N it prints:
#   space     what graphfs-stripe says parity costs (K/N of the disks' space) against the bytes the
#             two copies take on the disks (parts and sums files)
#   read      sequential cold reads of the graph's `column` through the mount (a fresh mount, the
#             page cache dropped; dd of 24 MiB O_DIRECT requests, GridGraph's reads): without
#             parity, with parity (healthy), and with parity and disk --lost emptied (its parts and
#             identity removed: the mount starts degraded and says so in stats' "degraded"); MB/s,
#             the bytes the disks read, the floor (those bytes / the present disks' bandwidth) and
#             the ratios against the targets (parity / none >= 0.97, degraded / healthy >= 0.75);
#             per read also each disk's MB read and busy seconds from the daemon's stats, and its
#             extent queue's MB (a daemon that counts them); with --memory BYTES the reads'
#             mounts get memory=BYTES (the one budget) and each read prints the daemon's peak RSS
#             (VmHWM) against it, and what degraded files kept of their rows' blocks at most
#             (stats' degraded_share, a daemon that reports it)
#   W1        the mix {pagerank-delta, wcc, sssp, bfs} of unmodified engines (run-jobs, O_DIRECT:
#             --mem-gb 0.25) on the parity copy through the mount (cache_size = --fraction x column,
#             readahead_mem --readahead-mem, as integrated.sh's `mount`): healthy, degraded (disk
#             --lost emptied), and degraded while graphfs-rebuild --rate --rate rebuilds that disk
#             onto the spare disk; wall time, disk bytes, the floors (disk bytes / the present disks'
#             bandwidth; the jobs' and daemon's CPU seconds / cores), the rebuild's own time, and
#             whether the jobs' results equal the healthy run's. --plain-mix 1 also runs W1 on the
#             copy without parity (healthy), for what parity costs the mix.
# Rounds: --repeat rounds of the reads (none / parity healthy, in an order that turns; then the
# degraded ones), --mix-repeat of each W1 run (a run of W1 takes minutes); medians at the end. A
# second rebuild round first loses the disk rebuilt in the first (the spare and the lost swap).
# Raw output: scripts/bench/results/parity-mount-STAMP-N*.log. DAEMON_BIN=DIR mounts the daemon of
# DIR (disks.sh's mount_graphfs), the tools staying --bin's: a daemon before a change against after.
#   scripts/bench/parity-mount.sh [--scale 22] [--disk-counts "4 6"] [--bps 100000000] [--parity 1]
#                                 [--unit ""] [--repeat 3] [--mix-repeat 1] [--rate 50M] [--lost 1] [--fraction 0.25]
#                                 [--readahead-mem 256M] [--plain-mix 0] [--no-mix] [--compress none] [--memory ""]
#                                 [--gen-dir /var/tmp/graphfs-gen] [--bin build/bin]
# Root; run it alone, under the machine's lock.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
-h|--help
--scale          SCALE          22
--disk-counts    DISK_COUNTS    "4 6"
--bps            BPS            100000000
--parity         PARITY         1
--unit           UNIT           ""
--repeat         REPEAT         3
--mix-repeat     MIX_REPEAT     1
--rate           RATE           50M
--lost           LOST           1
--fraction       FRACTION       0.25
--readahead-mem  READAHEAD_MEM  256M  bytes
--plain-mix      PLAIN_MIX      0
--no-mix         MIX            1     =0
--compress       COMPRESS       none
--memory         MEMORY         ""    bytes
--gen-dir        GEN_DIR        /var/tmp/graphfs-gen
--bin            GRAPHFS_BIN    "$GRAPHFS_BIN"
EOF
for b in graphfs graphfs-stripe graphfs-rebuild graphfs-index gen-rmat preprocess run-jobs; do
  [[ -x $GRAPHFS_BIN/$b ]] || { echo "parity-mount.sh: no $GRAPHFS_BIN/$b (build first)" >&2; exit 2; }
done
BENCH_ROOT=/var/tmp/graphfs-paritybench
# shellcheck disable=SC2034  # disks.sh's
BENCH_CGROUP=/sys/fs/cgroup/blkio/graphfs-paritybench
MIX_CGROUP=/sys/fs/cgroup/memory/graphfs-paritybench-mix
CPU_CGROUP=/sys/fs/cgroup/cpuacct/graphfs-paritybench-mix
bench_on_exit destroy_disks
bench_on_exit quietly cgroup_remove "$MIX_CGROUP" "$CPU_CGROUP"
bench_on_exit quietly unmount_graphfs "$BENCH_ROOT/mnt"
REBUILD_PID=""
stop_rebuild() { [[ -z $REBUILD_PID ]] || kill "$REBUILD_PID" 2>/dev/null || true; }
bench_on_exit stop_rebuild

bench_graph rmat "$SCALE" 1024x1024 "$GEN_DIR" 2M
BUDGET=$(cache_budget "$COLUMN" "$FRACTION")
GRAPH_BYTES=$(du -sb --exclude=.graphfs "$G" | cut -f1)
bench_results
CORES=$(nproc)
MNT=$BENCH_ROOT/mnt

# results LOG: the jobs' result lines (the apps' last words: ranks' sum, components, vertices
# reached and depth or distance, iterations; not their times), sorted, one line.
results() {
  grep -oE "(pagerank-delta: sum of ranks|wcc: [0-9]+ components|sssp: reached|bfs: discovered) [^\"]*" "$1" |
    sed 's/, [0-9]* passes in [0-9.]* s *$//; s/ *$//' | sort -u | paste -sd';'
}
# parts_bytes DIR...: bytes of the striped parts and sums files under the disks' directories.
parts_bytes() { local t=0 d; for d in "$@"; do [[ -d $d/parts ]] && t=$((t + $(du -sb "$d/parts" | cut -f1))); done; echo $t; }
# present_disks: the disks of the set a mount reads (N, or N - 1 while one is lost).
# read_column LABEL SRC PRESENT: one cold read of g/column through a fresh mount of SRC.
read_column() {
  local label=$1 src=$2 present=$3 before t0 t1 disk degraded
  mount_graphfs "$src" "$MNT" "io=perdisk${MEMORY:+,memory=$MEMORY}"
  degraded=$(python3 -c 'import json,sys; print(",".join(map(str, json.load(open(sys.argv[1])).get("degraded", []))) or "-")' "$MNT/.graphfs/stats")
  drop_caches
  before=$(loops_read "${LOOPS[@]}")
  t0=$(now)
  dd if="$MNT/g/column" of=/dev/null bs=24M iflag=direct status=none
  t1=$(now)
  disk=$(( $(loops_read "${LOOPS[@]}") - before ))
  if [[ -n $MEMORY ]]; then
    python3 - "$MNT/.graphfs/stats" "$label" "$ROUND" "$(daemon_peak_rss)" "$MEMORY" <<'PY' | tee -a "$LOG"
import json, sys
s = json.load(open(sys.argv[1]))
peak, budget = int(sys.argv[4] or 0), int(sys.argv[5])
share = s.get("degraded_share", {})
print("memory %s round %s: daemon peak RSS %.1f MiB, budget %.1f MiB (%.2f of it); degraded rows' blocks held at most %.1f MiB of %.1f MiB" % (
    sys.argv[2], sys.argv[3], peak / 2**20, budget / 2**20, peak / budget,
    share.get("peak_held_bytes", 0) / 2**20, share.get("capacity", 0) / 2**20))
PY
  fi
  # Per disk, from the daemon's stats: MB read, seconds busy, and the MB its extents' queue
  # started (a lost disk's units wait in the queue of the disk of their row's parity, when the
  # daemon says so): where a slow read's time went.
  python3 - "$MNT/.graphfs/stats" "$label" "$ROUND" <<'PY' | tee -a "$LOG"
import json, sys
s = json.load(open(sys.argv[1]))
disks = s.get("disks", [])
line = "disks %s round %s: MB read %s; busy s %s" % (sys.argv[2], sys.argv[3],
    " ".join("%d:%.0f" % (d["index"], d["bytes_read"] / 1e6) for d in disks),
    " ".join("%d:%.2f" % (d["index"], d["busy_seconds"]) for d in disks))
q = s.get("read_path", {}).get("extent_disks")
if q: line += "; extents' queues MB " + " ".join("%d:%.0f" % (i, b / 1e6) for i, b in enumerate(q["bytes"]))
print(line)
PY
  unmount_graphfs "$MNT"
  awk -v l="$label" -v r="$ROUND" -v a="$t0" -v b="$t1" -v c="$COLUMN" -v d="$disk" -v p="$present" -v bps="$BPS" -v g="$degraded" \
    'BEGIN { t = b - a; printf "read %s round %d: %.2f s %.1f MB/s disk_bytes %.0f floor %.2f s (present disks %d) degraded %s\n",
             l, r, t, c / t / 1e6, d, d / (p * bps), p, g }' | tee -a "$LOG"
}

# mix LABEL SRC PRESENT: W1 through a fresh mount of SRC (unmodified engines, O_DIRECT).
mix() {
  local label=$1 src=$2 present=$3 log res daemon_cpu
  log=$RESULTS/parity-mount-$STAMP-N$N-W1-$label-r$ROUND.log
  mount_graphfs "$src" "$MNT" "cache_size=$BUDGET,readahead_mem=$READAHEAD_MEM"
  [[ -z ${MIX_HOOK:-} ]] || "$MIX_HOOK"
  run_measured "$(mix_work W1)" "$log" "$log" "${LOOPS[@]}" -- \
    "$GRAPHFS_BIN/run-jobs" --graph "$MNT/g" --jobs "$(mix_jobs W1)" --mem-gb 0.25
  daemon_cpu=$(daemon_cpu_seconds)
  unmount_graphfs "$MNT"
  res=$(results "$log")
  [[ -n ${HEALTHY_RESULTS:-} ]] || HEALTHY_RESULTS=$res
  awk -v l="$label" -v r="$ROUND" -v w="$RUN_WALL" -v d="$RUN_DISK" -v p="$present" -v bps="$BPS" -v cpu="$RUN_CPU" \
      -v dc="$daemon_cpu" -v cores="$CORES" -v st="$RUN_STATUS" -v same="$([[ $res == "$HEALTHY_RESULTS" ]] && echo yes || echo NO)" \
    'BEGIN { printf "W1 %s round %d: %.2f s disk_bytes %.0f disk_floor %.2f s cpu_floor %.2f s (jobs %.1f + daemon %.1f CPU s / %d cores) %s results_equal_healthy %s\n",
             l, r, w, d, d / (p * bps), (cpu + dc) / cores, cpu, dc, cores, st, same }' | tee -a "$LOG"
  [[ $RUN_STATUS == ok ]] || { echo "W1 $label failed: $log" >&2; tail -20 "$log" >&2; }
}

# start_rebuild: graphfs-rebuild of disk LOST onto spare_dir in the background (REBUILD_PID),
# throttled like the daemon; its log (rebuild_log) ends with its exit status and seconds.
start_rebuild() {
  local t0
  t0=$(now)
  { rc=0
    run_throttled "$GRAPHFS_BIN/graphfs-rebuild" -q --disk "$LOST" --to "$spare_dir" --rate "$RATE" \
      "$BENCH_ROOT/src-parity/g" > "$rebuild_log" 2>&1 || rc=$?
    echo "exit $rc" >> "$rebuild_log"
    echo "seconds $(elapsed "$t0")" >> "$rebuild_log"; } &
  REBUILD_PID=$!
}

# lose DIR: the disk is lost: its parts, sums and identity gone (an empty disk in its place).
lose() { rm -rf "$1/parts" "$1/.graphfs-disk" "$1/.graphfs-rebuild.json"; }

for N in $DISK_COUNTS; do
  LOG=$RESULTS/parity-mount-$STAMP-N$N.log
  : > "$LOG"
  HEALTHY_RESULTS=""
  destroy_disks
  # Room per disk: the copy without parity (1/N of the graph) and the one with (1/(N-K)), sums,
  # the jobs' vertex state (ordinary files stay in the source directories, off these disks).
  make_disks $((N + 1)) $(( (GRAPH_BYTES / N + GRAPH_BYTES / (N - PARITY)) / (1 << 20) + 512 ))M
  for c in none parity; do
    mkdir -p "$BENCH_ROOT/src-$c"
    cp -a "$G" "$BENCH_ROOT/src-$c/g"
  done
  before=$(parts_bytes "${DISK_DIRS[@]:0:N}")
  "$GRAPHFS_BIN/graphfs-stripe" -q ${UNIT:+--unit "$UNIT"} --min-size 1M --parity 0 --compress "$COMPRESS" \
    --disks "$(disks_csv "$N")" "$BENCH_ROOT/src-none/g" >&2
  none_bytes=$(( $(parts_bytes "${DISK_DIRS[@]:0:N}") - before ))
  "$GRAPHFS_BIN/graphfs-stripe" ${UNIT:+--unit "$UNIT"} --min-size 1M --parity "$PARITY" --compress "$COMPRESS" \
    --disks "$(disks_csv "$N")" "$BENCH_ROOT/src-parity/g" > "$BENCH_ROOT/stripe-parity.log" 2>&1 ||
    { cat "$BENCH_ROOT/stripe-parity.log" >&2; exit 1; }
  say=$(grep -m1 "of the disks' space" "$BENCH_ROOT/stripe-parity.log" || true)
  parity_bytes=$(( $(parts_bytes "${DISK_DIRS[@]:0:N}") - before - none_bytes ))
  units=""
  for c in none parity; do
    units+="${units:+, }$c $(getfattr --only-values -n user.graphfs.stripe "$BENCH_ROOT/src-$c/g/column" 2>/dev/null |
      python3 -c 'import json,sys; m=json.loads(sys.stdin.read().rstrip("\0")); print(m["unit"] >> 20, "MiB")' 2>/dev/null || echo "?")"
  done
  throttle "$BPS" 0
  {
    echo "# $(date -u +%FT%TZ) parity through the mount: $NAME ($GRAPH_BYTES B of graph files, column $COLUMN B," \
         "unit $units), $N loop disks of $BPS B/s + 1 spare, parity $PARITY, disk $LOST lost when degraded," \
         "rebuild --rate $RATE, $REPEAT round(s), $CORES cores, --compress $COMPRESS"
    echo "space: $say"
    awk -v n="$none_bytes" -v p="$parity_bytes" 'BEGIN { printf "space: on the disks without parity %.0f B, with parity %.0f B (parts and sums): +%.1f%% of the data, parity and sums %.1f%% of the disks'"'"' bytes\n", n, p, 100 * (p - n) / n, 100 * (p - n) / p }'
  } | tee -a "$LOG"

  # 1. Sequential reads, healthy: without parity against with parity.
  for ((ROUND = 1; ROUND <= REPEAT; ROUND++)); do
    for c in $(rotate $((ROUND - 1)) none parity); do read_column "$c" "$BENCH_ROOT/src-$c" "$N"; done
  done
  if [[ $PLAIN_MIX == 1 && $MIX == 1 ]]; then
    for ((ROUND = 1; ROUND <= MIX_REPEAT; ROUND++)); do mix none-healthy "$BENCH_ROOT/src-none" "$N"; done
    HEALTHY_RESULTS=""  # the parity runs are compared with the parity copy's healthy run
  fi
  # 2. The parity copy: W1 healthy; disk LOST emptied: degraded reads, W1 degraded; W1 while the
  # disk is rebuilt onto the spare (the next such round loses the rebuilt disk again: the spare
  # and the lost directory swap).
  lost_dir=${DISK_DIRS[$LOST]} spare_dir=${DISK_DIRS[$N]}
  if ((MIX)); then for ((ROUND = 1; ROUND <= MIX_REPEAT; ROUND++)); do mix healthy "$BENCH_ROOT/src-parity" "$N"; done; fi
  lose "$lost_dir"
  for ((ROUND = 1; ROUND <= REPEAT; ROUND++)); do read_column degraded "$BENCH_ROOT/src-parity" $((N - 1)); done
  if ((MIX)); then
    for ((ROUND = 1; ROUND <= MIX_REPEAT; ROUND++)); do mix degraded "$BENCH_ROOT/src-parity" $((N - 1)); done
    for ((ROUND = 1; ROUND <= MIX_REPEAT; ROUND++)); do
      ((ROUND == 1)) || lose "$lost_dir"
      rebuild_log=$RESULTS/parity-mount-$STAMP-N$N-rebuild-r$ROUND.log
      # The rebuild starts with the jobs (MIX_HOOK runs right after the mount) and reads from the
      # same throttled disks; its time is its own.
      MIX_HOOK=start_rebuild mix rebuilding "$BENCH_ROOT/src-parity" $((N - 1))
      wait "$REBUILD_PID" || true
      REBUILD_PID=""
      rebuilt_bytes=$(parts_bytes "$spare_dir")
      echo "rebuild round $ROUND: $(awk '/^seconds/ {printf "%.2f", $2}' "$rebuild_log") s, $rebuilt_bytes B written," \
           "$(awk '/^exit/ {print "exit " $2}' "$rebuild_log") (--rate $RATE)" | tee -a "$LOG"
      grep -q '^exit 0' "$rebuild_log" || { echo "graphfs-rebuild failed:" >&2; cat "$rebuild_log" >&2; exit 1; }
      tmp=$lost_dir lost_dir=$spare_dir spare_dir=$tmp
    done
  fi

  # Medians and ratios.
  python3 - "$LOG" "$N" "$BPS" <<'PY'
import re, statistics, sys
log, n, bps = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
reads, mixes, rebuilds, rss = {}, {}, [], {}
for line in open(log):
    m = re.match(r"read (\S+) round \d+: ([\d.]+) s ([\d.]+) MB/s disk_bytes (\d+) floor ([\d.]+) s", line)
    if m: reads.setdefault(m[1], []).append((float(m[2]), float(m[3]), int(m[4]), float(m[5])))
    m = re.match(r"W1 (\S+) round \d+: ([\d.]+) s disk_bytes (\d+) disk_floor ([\d.]+) s cpu_floor ([\d.]+) s .* results_equal_healthy (\S+)", line)
    if m: mixes.setdefault(m[1], []).append((float(m[2]), int(m[3]), float(m[4]), float(m[5]), m[6]))
    m = re.match(r"memory (\S+) round \d+: daemon peak RSS ([\d.]+) MiB, budget ([\d.]+) MiB", line)
    if m: rss.setdefault(m[1], []).append((float(m[2]), float(m[3])))
    m = re.match(r"rebuild round \d+: ([\d.]+) s, (\d+) B", line)
    if m: rebuilds.append((float(m[1]), int(m[2])))
med = lambda xs: statistics.median(xs)
print(f"# summary, {n} disks: medians (runs)")
for k, v in reads.items():
    print(f"read {k:9s} {med([x[0] for x in v]):7.2f} s {med([x[1] for x in v]):7.1f} MB/s  disk {med([x[2] for x in v]) / 2**20:8.0f} MiB"
          f"  floor {med([x[3] for x in v]):6.2f} s   (MB/s: {' '.join('%.1f' % x[1] for x in v)})")
for k, v in rss.items():
    print(f"memory {k:9s} daemon peak RSS {med([x[0] for x in v]):7.1f} MiB (max {max(x[0] for x in v):.1f}) against memory= {v[0][1]:.1f} MiB")
def rate(k): return med([x[1] for x in reads[k]]) if k in reads else None
if rate("none") and rate("parity"):
    print(f"read parity / none:     {rate('parity') / rate('none'):.3f}  (target >= 0.97)")
if rate("parity") and rate("degraded"):
    print(f"read degraded / healthy: {rate('degraded') / rate('parity'):.3f}  (target >= 0.75; (N-1)/N = {(n - 1) / n:.3f})")
for k, v in mixes.items():
    print(f"W1 {k:11s} {med([x[0] for x in v]):7.2f} s  disk {med([x[1] for x in v]) / 2**20:8.0f} MiB  disk floor {med([x[2] for x in v]):6.2f} s"
          f"  cpu floor {med([x[3] for x in v]):6.2f} s  results equal: {','.join(x[4] for x in v)}   (s: {' '.join('%.2f' % x[0] for x in v)})")
if rebuilds:
    print(f"rebuild during W1: {med([r[0] for r in rebuilds]):.2f} s, {rebuilds[0][1] / 2**20:.0f} MiB written   (s: {' '.join('%.2f' % r[0] for r in rebuilds)})")
PY
done
