#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# What parity costs the CPU (issue 44, docs/parity.md): single-thread GB/s of encoding a stripe
# row's K parity units, rebuilding one and K lost data units (ISA-L Reed-Solomon), and XXH3 unit
# checksums, per disk count (parity-bench). No disks; pinned to one CPU (the last) so the figure
# is per core. Run it on an otherwise idle machine, under the machine's lock.
#   scripts/bench/parity.sh [--bin build/bin] [--unit 4M] [--disks 3,4,6,8] [--seconds 1]
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'OPTIONS'
-h|--help
--bin      BIN      "$GRAPHFS_BIN"
--unit     UNIT     4M
--disks    DISKS    3,4,6,8
--seconds  SECONDS  1
OPTIONS
[ -x "$BIN/parity-bench" ] || { echo "parity.sh: no $BIN/parity-bench (build it first)" >&2; exit 2; }
cpu=$(( $(nproc) - 1 ))
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), CPU $cpu"
taskset -c "$cpu" "$BIN/parity-bench" --unit "$UNIT" --disks "$DISKS" --seconds "$SECONDS"
