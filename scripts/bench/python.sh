#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 33: the Python client. A numpy BFS as a graphfs job (graphfs.examples.bfs --graphfs: the
# LPs' edges as zero-copy numpy views of the shared LP memory) against the C++ bfs as a job
# (--graphfs), the numpy BFS reading column through np.memmap of the mount (unmodified), and the
# C++ bfs unmodified, on one graph under one mount, side by side in one run (python_bench.py).
#   scripts/bench/python.sh [--family rmat-local|rmat|grid] [--scale 20] [--grid 1024x1024]
#                           [--partitions 16] [--chunk 2M] [--partition 64M] [--repeat 3]
#                           [--states "warm cold"] [--sides "numpy-int cpp-int numpy-unmod cpp-unmod"] [--keep]
# The graph (weighted, blocks sorted by source, indexed) is made in /var/tmp/graphfs-pybench/gen
# and removed at the end unless --keep; the mount's source is a copy of it on the same disk.
# warm: each side run once unmeasured first; cold: the daemon remounted and the page cache
# dropped before every run. Every run's levels are checked against the C++ bfs's on a plain copy.
# Binaries: GRAPHFS_BIN (default build/bin; on a shared machine copy them first and point
# GRAPHFS_BIN at the copy). The Python client: GRAPHFS_CLIENT (default clients/python; another
# checkout's, to compare two versions of it). Root (mounts, drop_caches). Raw output:
# /var/tmp/graphfs-pybench/results/python-STAMP.log (kept).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
--family     FAMILY      rmat-local
--scale      SCALE       20
--grid       GRID        1024x1024
--partitions PARTITIONS  16
--chunk      CHUNK       2M
--partition  PARTITION   64M
--repeat     REPEAT      3
--states     STATES      "warm cold"
--sides      SIDES       "numpy-int cpp-int numpy-unmod cpp-unmod"
--keep       KEEP        0  =1
-h|--help
EOF
[[ $(id -u) == 0 ]] || { echo "python.sh: needs root (mounts, drop_caches)" >&2; exit 1; }
PYTHON=/usr/bin/python3
"$PYTHON" -c 'import numpy' || { echo "python.sh: needs python3-numpy (scripts/setup installs it)" >&2; exit 1; }

BENCH_ROOT=/var/tmp/graphfs-pybench
GEN=$BENCH_ROOT/gen
SRC=$BENCH_ROOT/src
MNT=$BENCH_ROOT/mnt
RESULTS=$BENCH_ROOT/results
STAMP=$(date -u +%Y%m%dT%H%MZ)
mkdir -p "$GEN" "$RESULTS"
cleanup() {
  if mountpoint -q "$MNT"; then fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT" 2>/dev/null || true; fi
  rm -rf "$SRC" "$MNT" "$MNT".log "$RESULTS"/*.level
  ((KEEP)) || rm -rf "$GEN"
}
bench_on_exit cleanup

bench_graph "$FAMILY" "$SCALE" "$GRID" "$GEN" "$CHUNK" >/dev/null  # NAME, G, VERTICES, EDGES, FIRST
rm -rf "$SRC"
mkdir -p "$SRC"
cp -a "$G" "$SRC/$NAME"  # cp -a keeps the mtimes: the index stays fresh
LOG=$RESULTS/python-$STAMP.log
CLIENT=${GRAPHFS_CLIENT:-$ROOT/clients/python}
[ -f "$CLIENT/graphfs/jobs.py" ] || { echo "python.sh: GRAPHFS_CLIENT=$CLIENT holds no graphfs/jobs.py" >&2; exit 1; }
"$PYTHON" "$ROOT/scripts/bench/python_bench.py" --bin "$GRAPHFS_BIN" --client "$CLIENT" \
  --source "$SRC" --graph "$NAME" --plain "$G" --mountpoint "$MNT" --start "$FIRST" \
  --partition "$PARTITION" --repeat "$REPEAT" --states "$STATES" --sides "$SIDES" --log "$LOG" \
  --header "python.sh $STAMP: $FAMILY $NAME ($VERTICES vertices, $EDGES edges, weighted, sorted, P=$PARTITIONS, chunks $CHUNK), start $FIRST, partition $PARTITION, repeat $REPEAT, numpy $("$PYTHON" -c 'import numpy; print(numpy.__version__)'), kernel $(uname -r), commit $(git -C "$ROOT" rev-parse --short HEAD), client $CLIENT"
echo "log: $LOG"
