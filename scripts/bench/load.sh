#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 6 load run: JOBS concurrent engine jobs plus a random-operation writer for MINUTES on
# a striped graph, with the daemon's memory and descriptors sampled every 5 s.
#
#   scripts/bench/load.sh [--scale 21] [--minutes 10] [--jobs 16] [--bps 200000000]
#                         [--fraction 0.25] [--gen-dir DIR]
#
# The graph (weighted R-MAT, blocks sorted by source, indexed with 1M chunks) is striped over 4
# loop disks (unit 16M, BPS bytes/s each) next to a 64 MiB striped scratch file. Half the jobs
# are unmodified apps (MEM_GB 0.25: O_DIRECT through the cache), half integrated (logical
# partitions of 64M);
# each job slot reruns its app (bfs, sssp, wcc, pagerank-delta in turn) until the time is up.
# scripts/bench/load_writer.py does random operations on the scratch file and on ordinary files,
# checked against a model. Reported: job runs and failures, writer ops and errors, the daemon's
# RSS (first minute, median, max, last) against the cache budget, its threads, and its
# descriptors by kind at start, at the peak, after the load and after the kernel forgot inodes.
# Samples: results/load-STAMP.tsv; job logs: results/load-STAMP/.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--scale     SCALE     21
--minutes   MINUTES   10
--jobs      JOBS      16
--bps       BPS       200000000
--fraction  FRACTION  0.25
--gen-dir   GEN_DIR   /var/tmp/graphfs-gen
EOF
BENCH_ROOT=/var/tmp/graphfs-loadbench
MNT=$BENCH_ROOT/mnt
# At exit: the job slots, sampler and writer stopped, then the mount and the disks.
# shellcheck disable=SC2046  # the pids: words
stop_jobs() { kill $(jobs -p) 2>/dev/null || true; }
bench_on_exit destroy_disks
bench_on_exit quietly unmount_graphfs "$MNT"
bench_on_exit stop_jobs

# The graph of graphs.sh (family rmat, blocks sorted by source), indexed with 1M chunks.
PARTITIONS=16
bench_graph rmat "$SCALE" "" "$GEN_DIR" 1M
BUDGET=$(cache_budget "$COLUMN" "$FRACTION")

# Four striped disks (the fifth, plain, disk of stage_graph is not used here) with room for
# the scratch file and the writer's files.
stage_graph "$G" "$BPS" 1024
head -c $((64 << 20)) /dev/urandom > "$SRC/scratch"
"$GRAPHFS_BIN/graphfs-stripe" -q --parity 0 --compress none --unit 16M --disks "$(disks_csv 4)" "$SRC/scratch"
mount_graphfs "$SRC" "$MNT" "cache_size=$BUDGET,readahead_mem=256M,log=$BENCH_ROOT/daemon.log"
DAEMON=$(pgrep -f "graphfs -f $SRC $MNT" | head -1)

bench_results
LOGS=$RESULTS/load-$STAMP
mkdir -p "$LOGS"
SAMPLES=$RESULTS/load-$STAMP.tsv
END=$(( $(date +%s) + MINUTES * 60 ))
echo "# load run $STAMP: scale $SCALE, column $COLUMN B, cache budget $BUDGET B, $JOBS jobs + writer, $MINUTES min, daemon pid $DAEMON"

# job_slot K: reruns app K mod 4 until the end (each slot has its own --state-tag, so the
# slots' vertex state files do not collide); unmodified for even K, integrated for odd K.
job_slot() {
  local k=$1 run=0 flags=() app
  local -a apps=("bfs $FIRST" "sssp $FIRST" "wcc" "pagerank-delta 0.001")
  (( k % 2 )) && flags=(--graphfs --graphfs-partition 64M)
  while (( $(date +%s) < END )); do
    read -r -a app <<< "${apps[$(( (k / 2 + run) % 4 ))]}"
    if "$GRAPHFS_BIN/${app[0]}" "$MNT/g" "${app[@]:1}" 0.25 --state-tag "slot$k" "${flags[@]}" \
        > "$LOGS/slot$k-run$run.log" 2>&1; then
      echo ok >> "$LOGS/slot$k.status"
      rm -f "$LOGS/slot$k-run$run.log"
    else
      echo "failed ${app[*]} (slot$k-run$run.log)" >> "$LOGS/slot$k.status"
    fi
    run=$((run + 1))
  done
}

# The daemon's descriptors by kind, tab-separated: all, O_PATH (one per inode the kernel
# knows), open files, open directories, the rest (io_uring, /dev/fuse, eventfds, pipes).
fds_by_kind() {
  python3 - "$1" <<'PY'
import os, stat, sys
pid = sys.argv[1]
kinds = {"path": 0, "file": 0, "dir": 0, "other": 0}
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        flags = next(int(l.split()[1], 8) for l in open(f"/proc/{pid}/fdinfo/{fd}") if l.startswith("flags:"))
        mode = os.stat(f"/proc/{pid}/fd/{fd}").st_mode
    except (OSError, StopIteration):
        continue  # closed meanwhile
    if flags & 0o10000000:
        kinds["path"] += 1
    elif stat.S_ISREG(mode):
        kinds["file"] += 1
    elif stat.S_ISDIR(mode):
        kinds["dir"] += 1
    else:
        kinds["other"] += 1
print(sum(kinds.values()), kinds["path"], kinds["file"], kinds["dir"], kinds["other"], sep="\t")
PY
}

sample() {
  printf 't_s\trss_kb\tfds\tfds_path\tfds_file\tfds_dir\tfds_other\tthreads\tcache_bytes\n' > "$SAMPLES"
  local t0 now
  t0=$(date +%s)
  while kill -0 "$DAEMON" 2>/dev/null && (( $(date +%s) < END + 30 )); do
    now=$(date +%s)
    printf '%s\t%s\t%s\t%s\t%s\n' $((now - t0)) \
      "$(awk '/^VmRSS/ {print $2}' /proc/"$DAEMON"/status)" \
      "$(fds_by_kind "$DAEMON")" \
      "$(awk '/^Threads/ {print $2}' /proc/"$DAEMON"/status)" \
      "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cache"]["used"])' "$MNT/.graphfs/stats" 2>/dev/null || echo -)" \
      >> "$SAMPLES"
    sleep 5
  done
}

sample &
SAMPLER=$!
SLOTS=()
for ((k = 0; k < JOBS; k++)); do
  job_slot "$k" &
  SLOTS+=($!)
done
python3 "$HERE/load_writer.py" "$MNT/writer" "$MNT/scratch" "$END" 7 > "$LOGS/writer.log" 2>&1 &
WRITER=$!
WRITER_STATUS=0
wait "$WRITER" || WRITER_STATUS=$?
for pid in "${SLOTS[@]}"; do wait "$pid" || true; done
sleep 10  # idle samples after the load
kill "$SAMPLER" 2>/dev/null || true
# With the load gone, the kernel forgets the inodes it no longer needs (FORGET): the daemon
# must close their O_PATH descriptors, and nothing else may be left open.
FDS_IDLE=$(fds_by_kind "$DAEMON")
sync
echo 2 > /proc/sys/vm/drop_caches
sleep 3
FDS_FORGOT=$(fds_by_kind "$DAEMON")

ALIVE=yes
kill -0 "$DAEMON" 2>/dev/null || ALIVE=no
RUNS=$(cat "$LOGS"/slot*.status | wc -l)
FAILED=$(cat "$LOGS"/slot*.status | { grep -c failed || true; })
cp "$MNT/.graphfs/stats" "$LOGS/stats.json" 2>/dev/null || true
unmount_graphfs "$MNT"
python3 - "$SAMPLES" "$BUDGET" <<EOF
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
rows = [r for r in rows if r[1]]
budget = int(sys.argv[2])
rss = [int(r[1]) * 1024 for r in rows]
fds = [int(r[2]) for r in rows]
thr = [int(r[7]) for r in rows]
kinds = lambda r: f"{r[0]} (O_PATH {r[1]}, files {r[2]}, directories {r[3]}, other {r[4]})"
peak = max(rows, key=lambda r: int(r[2]))
first = [int(r[1]) * 1024 for r in rows if int(r[0]) <= 60]
mib = lambda b: f"{b / 2**20:.0f} MiB"
print(f"daemon alive at the end: $ALIVE")
print(f"job runs: $RUNS, failed: $FAILED; writer: $(tail -1 "$LOGS/writer.log") (exit $WRITER_STATUS)")
print(f"RSS: first minute max {mib(max(first))}, median {mib(statistics.median(rss))}, max {mib(max(rss))}, "
      f"last {mib(rss[-1])}; cache budget {mib(budget)}; max - budget = {mib(max(rss) - budget)}")
print(f"descriptors: start {kinds(rows[0][2:7])}; max {kinds(peak[2:7])}")
print(f"descriptors after the load: {kinds('$FDS_IDLE'.split())}; after the kernel forgot inodes: {kinds('$FDS_FORGOT'.split())}")
print(f"threads: start {thr[0]}, max {max(thr)}, end {thr[-1]}")
EOF
echo "grep -h failed $LOGS/slot*.status; daemon log: $BENCH_ROOT/daemon.log (removed at exit: copied to $LOGS)"
cp "$BENCH_ROOT/daemon.log" "$LOGS/" 2>/dev/null || true
