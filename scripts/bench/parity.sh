#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# What parity costs the CPU (issue 44, docs/parity.md): single-thread GB/s of encoding a stripe
# row's K parity units, rebuilding one and K lost data units (ISA-L Reed-Solomon), and XXH3 unit
# checksums, per disk count (parity-bench). No disks; pinned to one CPU (the last) so the figure
# is per core. Run it on an otherwise idle machine, under the machine's lock.
# With --reads: instead, what verifying block sums costs StripedFile's reads (parity-read-bench):
# the same file striped over --read-disks directories under --dir without sums and with parity K,
# read whole from the page cache (so the CPU is what is measured), GB/s and CPU s per GB; also
# with one disk's part removed (rebuilt from parity). Not pinned: the disks' I/O workers are
# threads of their own.
#   scripts/bench/parity.sh [--bin build/bin] [--unit 4M] [--disks 3,4,6,8] [--seconds 1]
#   scripts/bench/parity.sh --reads [--dir /var/tmp/parity-read-bench] [--size 1G] [--unit 4M]
#                           [--read-disks 4] [--parity 1] [--request 16M] [--passes 3]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'OPTIONS'
-h|--help
--bin      BIN      "$GRAPHFS_BIN"
--unit     UNIT     4M
--disks    DISKS    3,4,6,8
--seconds  SECONDS  1
--reads    READS    "" =1
--dir      DIR      /var/tmp/parity-read-bench
--size     SIZE     1G
--read-disks READ_DISKS 4
--parity   PARITY   1
--request  REQUEST  16M
--passes   PASSES   3
OPTIONS
if [ -n "$READS" ]; then
  [ -x "$BIN/parity-read-bench" ] || { echo "parity.sh: no $BIN/parity-read-bench (build it first)" >&2; exit 2; }
  echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs"
  exec "$BIN/parity-read-bench" --dir "$DIR" --size "$SIZE" --unit "$UNIT" --disks "$READ_DISKS" \
    --parity "$PARITY" --request "$REQUEST" --passes "$PASSES"
fi
[ -x "$BIN/parity-bench" ] || { echo "parity.sh: no $BIN/parity-bench (build it first)" >&2; exit 2; }
cpu=$(( $(nproc) - 1 ))
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), CPU $cpu"
taskset -c "$cpu" "$BIN/parity-bench" --unit "$UNIT" --disks "$DISKS" --seconds "$SECONDS"
