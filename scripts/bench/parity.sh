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
# With --rebuild: graphfs-rebuild's throughput on the simulated disks (../shared/DESIGN.md,
# "Simulated disks"; root): a --size file striped with --parity K over --read-disks loop disks
# throttled to --bps each, one of them emptied (lost), then rebuilt onto one more disk of the same
# throttle, cold; prints seconds — in all, rebuilding (the others' reads, the writes) and reading
# the rebuilt parts back (the new disk's reads; what is left of it after the last write, since it
# overlaps the rebuild), as the tool times them —, the bytes written
# against one disk's bandwidth over the whole run and over the rebuilding alone (the issue's
# target: >= 0.8 when idle) and the bytes read from the disks. With --rate R, a second rebuild (of the rebuilt disk, back onto the emptied one) runs
# rate-limited. The new disk's buffered writes are flushed by the kernel's writeback, which the
# cgroup-v1 blkio throttle does not charge to the cgroup: its fsyncs are in the time, its
# bandwidth limit is not.
# With --writes: what the row journal costs writes through the mount (docs/parity.md, "Writes"):
# two files of --size striped over --read-disks loop disks throttled to --bps each, one with
# --parity K and one without (plain striping, no sums), each overwritten with sequential 1 MiB
# writes (dd, fsync at the end) and then given --random 4 KiB writes at random aligned offsets
# (fsync at the end); prints seconds, MB/s of the caller's bytes, the bytes the disks wrote
# (loop devices' counters, after a sync) and the floor: those bytes / (disks x --bps). The
# cgroup-v1 blkio throttle does not charge the kernel's writeback, so the floor is a floor of the
# throttle's model, not of what these loop disks delivered.
# With --marks: what the write-intent marks cost writes with a disk lost (docs/parity.md, "Writes
# with a disk lost"): one file of --size with --parity K striped in --unit units over --read-disks
# loop disks, given --random 4 KiB writes at random aligned offsets (fsync at the end) three
# times at the same offsets: healthy; then with disk 1 missing (its identity moved aside), when the
# first write of each row marks it (one fsync per present disk, beside the journal's); then again,
# every row marked already. Prints seconds, writes per second, the rows the records mark after
# the pass, the disks' bytes and the floor: the pass with the rows marked already (the same
# degraded writes without the marks).
#   scripts/bench/parity.sh [--bin build/bin] [--unit 4M] [--disks 3,4,6,8] [--seconds 1]
#   scripts/bench/parity.sh --reads [--dir /var/tmp/parity-read-bench] [--size 1G] [--unit 4M]
#                           [--read-disks 4] [--parity 1] [--request 16M] [--passes 3]
#   scripts/bench/parity.sh --rebuild [--size 1G] [--unit 4M] [--read-disks 4] [--parity 1]
#                           [--bps 100000000] [--rate ""]
#   scripts/bench/parity.sh --writes [--size 256M] [--unit 4M] [--read-disks 4] [--parity 1]
#                           [--bps 100000000] [--random 2000]
#   scripts/bench/parity.sh --marks [--size 256M] [--unit 64K] [--read-disks 4] [--parity 1]
#                           [--bps 100000000] [--random 2000]
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
--rebuild  REBUILD  "" =1
--bps      BPS      100000000
--rate     RATE     ""
--writes   WRITES   "" =1
--random   RANDOM_WRITES 2000
--marks    MARKS    "" =1
OPTIONS
# Bytes written to the loop devices so far (sectors written, /sys/block/loopN/stat).
loops_written() {
  local t=0 d
  for d in "$@"; do t=$((t + $(awk '{printf "%.0f", $7 * 512}' "/sys/block/$(basename "$d")/stat"))); done
  echo $t
}
# random_writes FILE COUNT SIZE: COUNT 4 KiB pwrites at aligned offsets below SIZE (the same offsets
# every time), then one fsync.
random_writes() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, random, sys
path, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(44)
fd = os.open(path, os.O_WRONLY)
block = os.urandom(4096)
for _ in range(count):
    os.pwrite(fd, block, rng.randrange(size // 4096) * 4096)
os.fsync(fd)
os.close(fd)
PY
}
# marked_rows DISK_DIR: the rows the write-intent records on that disk mark (bits set past each
# record's 4 KiB header), summed over its records.
marked_rows() {
  python3 - "$1/parts" <<'PY'
import os, sys
n = 0
for name in os.listdir(sys.argv[1]):
    if ".stale-" in name:
        with open(os.path.join(sys.argv[1], name), "rb") as f:
            n += sum(bin(b).count("1") for b in f.read()[4096:])
print(n)
PY
}
if [ -n "$MARKS" ]; then
  bench_setup
  bench_on_exit destroy_disks
  bytes=$(numfmt --from=iec "$SIZE")
  n=$READ_DISKS
  make_disks "$n" $(((2 * bytes / (n - PARITY) + (512 << 20)) >> 20 << 20))
  throttle "$BPS"
  src=$BENCH_ROOT/source/g
  mnt=$BENCH_ROOT/mnt
  mkdir -p "$src"
  head -c "$bytes" /dev/urandom >"$src/p$PARITY"
  "$BIN/graphfs-stripe" -q --parity "$PARITY" --compress none --unit "$UNIT" --min-size 1M --disks "$(disks_csv "$n")" "$src/p$PARITY" >&2
  echo "# $(date -u +%FT%TZ) write-intent marks: $SIZE, unit $UNIT, parity $PARITY, over $n loop disks of $BPS B/s;" \
       "$RANDOM_WRITES x 4 KiB pwrite at the same offsets each pass, then fsync"
  printf '%-16s %9s %9s %12s %14s\n' pass seconds "writes/s" "rows marked" "disk bytes"
  bench_on_exit quietly unmount_graphfs "$mnt"
  for pass in healthy degraded-first degraded-again; do
    if [ "$pass" = degraded-first ]; then
      mv "${DISK_DIRS[1]}/.graphfs-disk" "${DISK_DIRS[1]}/.graphfs-disk.away"
      bench_on_exit quietly mv "${DISK_DIRS[1]}/.graphfs-disk.away" "${DISK_DIRS[1]}/.graphfs-disk"
    fi
    mount_graphfs "$BENCH_ROOT/source" "$mnt" "readahead=0"
    sync
    before=$(loops_written "${LOOPS[@]}")
    start=$(date +%s.%N)
    random_writes "$mnt/g/p$PARITY" "$RANDOM_WRITES" "$bytes"
    end=$(date +%s.%N)
    unmount_graphfs "$mnt"
    sync
    written=$(( $(loops_written "${LOOPS[@]}") - before ))
    awk -v s="$start" -v e="$end" -v c="$RANDOM_WRITES" -v m="$(marked_rows "${DISK_DIRS[0]}")" -v w="$written" -v p="$pass" \
      'BEGIN { t = e - s; printf "%-16s %9.2f %9.1f %12d %14.0f\n", p, t, c / t, m, w }'
  done
  exit 0
fi
if [ -n "$WRITES" ]; then
  bench_setup
  bench_on_exit destroy_disks
  bytes=$(numfmt --from=iec "$SIZE")
  n=$READ_DISKS
  make_disks "$n" $((2 * bytes + 4 * bytes / (n - PARITY) + (512 << 20)))
  throttle "$BPS"
  src=$BENCH_ROOT/source/g
  mnt=$BENCH_ROOT/mnt
  mkdir -p "$src"
  echo "generating two $SIZE files" >&2
  head -c "$bytes" /dev/urandom >"$BENCH_ROOT/source/data"
  cp "$BENCH_ROOT/source/data" "$src/p0"
  cp "$BENCH_ROOT/source/data" "$src/p$PARITY"
  "$BIN/graphfs-stripe" -q --parity 0 --compress none --unit "$UNIT" --min-size 1M --disks "$(disks_csv "$n")" "$src/p0" >&2
  "$BIN/graphfs-stripe" -q --parity "$PARITY" --compress none --unit "$UNIT" --min-size 1M --disks "$(disks_csv "$n")" "$src/p$PARITY" >&2
  mount_graphfs "$BENCH_ROOT/source" "$mnt" "readahead=0"
  bench_on_exit quietly unmount_graphfs "$mnt"
  echo "# $(date -u +%FT%TZ) writes through the mount: $SIZE files over $n loop disks of $BPS B/s, unit $UNIT;" \
       "sequential: dd bs=1M conv=notrunc,fsync; random: $RANDOM_WRITES x 4 KiB pwrite, then fsync"
  printf '%-10s %-7s %9s %9s %14s %14s %9s\n' write parity seconds "MB/s" "caller bytes" "disk bytes" floor
  for k in 0 "$PARITY"; do
    f=$mnt/g/p$k
    sync
    before=$(loops_written "${LOOPS[@]}")
    start=$(date +%s.%N)
    dd if="$BENCH_ROOT/source/data" of="$f" bs=1M conv=notrunc,fsync status=none
    end=$(date +%s.%N)
    sync
    written=$(( $(loops_written "${LOOPS[@]}") - before ))
    awk -v s="$start" -v e="$end" -v b="$bytes" -v w="$written" -v k="$k" -v bps="$BPS" -v n="$n" \
      'BEGIN { t = e - s; printf "%-10s %-7s %9.2f %9.1f %14.0f %14.0f %9.2f\n", "seq 1M", k, t, b / t / 1e6, b, w, w / (n * bps) }'
    before=$(loops_written "${LOOPS[@]}")
    start=$(date +%s.%N)
    random_writes "$f" "$RANDOM_WRITES" "$bytes"
    end=$(date +%s.%N)
    sync
    written=$(( $(loops_written "${LOOPS[@]}") - before ))
    awk -v s="$start" -v e="$end" -v b=$((RANDOM_WRITES * 4096)) -v w="$written" -v k="$k" -v bps="$BPS" -v n="$n" \
      'BEGIN { t = e - s; printf "%-10s %-7s %9.2f %9.1f %14.0f %14.0f %9.2f\n", "random 4K", k, t, b / t / 1e6, b, w, w / (n * bps) }'
  done
  unmount_graphfs "$mnt"
  if ! "$BIN/graphfs-scrub" -q --no-repair "$src" >&2; then
    echo "parity.sh: graphfs-scrub --no-repair found damage after the writes" >&2
    exit 1
  fi
  exit 0
fi
if [ -n "$REBUILD" ]; then
  bench_setup
  bench_on_exit destroy_disks
  bytes=$(numfmt --from=iec "$SIZE")
  n=$READ_DISKS
  make_disks $((n + 1)) $((bytes / (n - PARITY) + bytes / 32 + (256 << 20)))
  throttle "$BPS"
  src=$BENCH_ROOT/source/g
  mkdir -p "$src"
  echo "generating a $SIZE file" >&2
  head -c "$bytes" /dev/urandom >"$src/column"
  "$BIN/graphfs-stripe" -q --parity "$PARITY" --compress none --unit "$UNIT" --min-size 1M --disks "$(disks_csv "$n")" "$src" >&2
  lost=1
  echo "# $(date -u +%FT%TZ) graphfs-rebuild: $SIZE striped over $n disks of $BPS B/s, parity $PARITY, unit $UNIT;" \
       "disk $lost lost, rebuilt onto a new disk"
  printf '%-10s %9s %9s %9s %12s %10s %10s %14s %14s %8s\n' rate seconds rebuild "read back" written "x one disk" \
    "(rebuild)" "read (others)" "read (new)" "floor s"
  from=${DISK_DIRS[$lost]} to=${DISK_DIRS[$n]} to_i=$n from_i=$lost
  for rate in "" $RATE; do
    rm -rf "$from/parts" "$from/.graphfs-disk"  # the disk is lost: no identity, no parts
    drop_caches
    before=$(loops_read "${LOOPS[@]}") new_before=$(loops_read "${LOOPS[$to_i]}")
    start=$(date +%s.%N)
    out=$(run_throttled "$BIN/graphfs-rebuild" -q --disk "$lost" --to "$to" ${rate:+--rate "$rate"} "$src")
    end=$(date +%s.%N)
    # The tool's two phases: "written in X s, read back and checked as written (Y s more after the
    # last write)"; a tool older than the overlapped read back says "... checked in Y s" (--bin of main).
    phases=$(sed -n -e 's/.* written in \([0-9.]*\) s, read back and checked as written (\([0-9.]*\) s more.*/\1 \2/p' \
                    -e 's/.* written in \([0-9.]*\) s, read back and checked in \([0-9.]*\) s.*/\1 \2/p' <<<"$out")
    new_read=$(( $(loops_read "${LOOPS[$to_i]}") - new_before ))
    read=$(( $(loops_read "${LOOPS[@]}") - before - new_read ))
    written=$(du -sb --apparent-size "$to/parts" | cut -f1)
    # The floor: the others' reads over their n - 1 disks' bandwidth, the new disk's writes and its
    # reads each over its own (the throttle limits a disk's reads and writes separately).
    awk -v r="${rate:-none}" -v s="$start" -v e="$end" -v w="$written" -v b="$BPS" -v rd="$read" -v nr="$new_read" \
        -v p="$phases" -v n="$n" \
      'BEGIN { t = e - s; split(p, ph, " "); f = rd / ((n - 1) * b); if (w / b > f) f = w / b; if (nr / b > f) f = nr / b;
               printf "%-10s %9.2f %9.2f %9.2f %12d %10.2f %10.2f %14d %14d %8.2f\n", r, t, ph[1], ph[2], w, w / t / b,
                      w / ph[1] / b, rd, nr, f }'
    tmp=$from from=$to to=$tmp tmp_i=$from_i from_i=$to_i to_i=$tmp_i  # the next round loses the disk just rebuilt
  done
  exit 0
fi
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
