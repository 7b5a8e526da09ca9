#!/usr/bin/env bash
# Benchmark 2 of issue 2: what the mount costs on an ordinary (not striped) file.
# One unthrottled loop disk; fio 1 MiB sequential reads through the mount vs the plain
# directory, cold cache: O_DIRECT with io_uring at iodepth 16, and buffered psync. Buffered
# reads also run through a second mount of the same directory with a 16M kernel read-ahead
# window (kernel_readahead=16M; the default leaves the kernel's 128K).
#   scripts/bench/passthrough.sh [--size 4G] [--repeat 3]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
GRAPHFS_BIN="$ROOT/build/bin"
# shellcheck source=disks.sh
. "$ROOT/scripts/bench/disks.sh"
SIZE=4G
REPEAT=3
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
"$ROOT/scripts/setup" >/dev/null
trap destroy_disks EXIT
trap 'exit 130' INT TERM
bytes=$(numfmt --from=iec "$SIZE")
make_disks 1 $((bytes + (1 << 30)))
SRC="${DISK_DIRS[0]}/source"
MNT="$BENCH_ROOT/mnt"
mkdir -p "$SRC"
head -c "$bytes" /dev/urandom > "$SRC/column"

# fio_mbps FILE ENGINE DIRECT DEPTH
fio_mbps() {
  drop_caches
  fio --name=seq --filename="$1" --rw=read --bs=1M --size="$bytes" --ioengine="$2" --direct="$3" \
      --iodepth="$4" --output-format=json 2>/dev/null |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["jobs"][0]["read"]["bw_bytes"]/1e6))'
}

MNT_RA=$BENCH_ROOT/mnt-ra16m
mount_graphfs "$SRC" "$MNT" ""
mount_graphfs "$SRC" "$MNT_RA" "kernel_readahead=16M"
printf '%-36s %10s %10s %8s\n' "fio 1 MiB sequential reads, $SIZE" "plain MB/s" "mount MB/s" "ratio"
for mode in "io_uring 1 16 $MNT" "psync 0 1 $MNT" "psync 0 1 $MNT_RA"; do
  set -- $mode
  plain=() mounted=()
  # Interleaved, so drift on this shared machine hits both sides alike.
  for ((i = 0; i < REPEAT; i++)); do
    plain+=("$(fio_mbps "$SRC/column" "$1" "$2" "$3")")
    mounted+=("$(fio_mbps "$4/column" "$1" "$2" "$3")")
  done
  p=$(median "${plain[@]}") m=$(median "${mounted[@]}")
  label="$1 direct=$2 iodepth=$3"
  [ "$4" = "$MNT_RA" ] && label+=" ra=16M"
  printf '%-36s %10s %10s %7.0f%%   (plain: %s; mount: %s)\n' "$label" "$p" "$m" "$(echo "100 * $m / $p" | bc -l)" \
    "${plain[*]}" "${mounted[*]}"
done
unmount_graphfs "$MNT_RA"
unmount_graphfs "$MNT"
echo "target: mount >= 85% of plain"
