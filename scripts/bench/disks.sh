# shellcheck shell=bash
# Simulated disks for benchmarks (sourced through lib.sh by the bench scripts; scripts/demo sources
# this file, cgroups.sh and measure.sh without lib.sh). N loop devices, each with its own ext4 (one
# may be btrfs: make_btrfs_disk) on a sparse file under BENCH_ROOT,
# throttled with the cgroup-v1 blkio controller; processes that should feel the throttle run inside
# BENCH_CGROUP (run_throttled), the graphfs daemon among them. Set BENCH_ROOT and BENCH_CGROUP
# (defaults below) before make_disks. LOOPS holds the devices, DISK_DIRS their mount points.
#   make_disks COUNT SIZE        creates and mounts COUNT loop disks of SIZE bytes each, unthrottled
#   throttle BPS [IOPS]          read and write limits of every disk (0: none)
#   throttle_disk I BPS [IOPS]   the limits of disk I alone (IOPS omitted: its IOPS limits stay)
#   disks_csv [COUNT]            the first COUNT (all) disk directories, comma-separated
#                                (graphfs-stripe --disks)
#   dir_disks PREFIX COUNT       COUNT plain directories PREFIX0.. made as "disks" (no loop device,
#                                no throttle), comma-separated
#   run_throttled CMD...         runs CMD inside BENCH_CGROUP (directly when BENCH_CGROUP is empty)
#   calibrate_disks              graphfs-calibrate on disks 0-3, throttled (the read-cost model)
#   disk_read_bytes DEV          bytes read from a loop device so far; loops_read DEV...: summed
#   drop_caches                  sync, then drops the page cache, dentries and inodes
#   mount_graphfs SRC MNT OPTS   the graphfs daemon (DAEMON_BIN, else GRAPHFS_BIN) mounted,
#                                throttled; sets GRAPHFS_PID; its log is MNT.log
#   daemon_peak_rss [PID]        the daemon's peak RSS in bytes; daemon_cpu_seconds [PID]: its CPU
#   unmount_graphfs MNT          unmounts (lazily if busy) when mounted
#   destroy_disks                unmounts everything under BENCH_ROOT, detaches its loop devices,
#                                kills what is left in BENCH_CGROUP and removes it, removes BENCH_ROOT
#   stage_graph DIR BPS HEADROOM_MB
#                                five disks: the graph striped over 0-3 (BPS each), a plain copy on 4
#                                (4 x BPS); sets SRC and GRAPH_BYTES
#   make_btrfs_disk DIR BPS HEADROOM_MB
#                                one more disk (the next index, BTRFS_DISK: 5 after stage_graph) with
#                                btrfs mounted compress-force=zstd:1 holding a plain copy of DIR at
#                                g/, throttled to 4 x BPS as the plain ext4 disk; sets BTRFS_DISK and
#                                BTRFS_DATA_BYTES (the copy's data on the disk, compressed).
#                                disk_read_bytes of its loop device counts what btrfs read from it:
#                                compressed data extents and the metadata (trees, checksums)

BENCH_ROOT="${BENCH_ROOT:-/var/tmp/graphfs-bench}"
BENCH_CGROUP="${BENCH_CGROUP:-/sys/fs/cgroup/blkio/graphfs-bench}"
LOOPS=()
DISK_DIRS=()

# make_disks COUNT SIZE: creates and mounts COUNT loop disks of SIZE (sparse) each.
make_disks() {
  local count=$1 size=$2 i img dev
  mkdir -p "$BENCH_ROOT"
  for ((i = 0; i < count; i++)); do
    img="$BENCH_ROOT/disk$i.img"
    rm -f "$img"
    truncate -s "$size" "$img"
    dev=$(losetup -f --show "$img")
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
    mkdir -p "$BENCH_ROOT/d$i"
    mount "$dev" "$BENCH_ROOT/d$i"
    LOOPS+=("$dev")
    DISK_DIRS+=("$BENCH_ROOT/d$i")
  done
  mkdir -p "$BENCH_CGROUP"
  # Limits are kept per device number, and loop numbers are reused: start unthrottled.
  throttle 0 0
}

# throttle BYTES_PER_SEC [IOPS]: read and write limits on every disk (0 removes a limit).
# A bandwidth limit alone has no cost per request; an IOPS limit adds one, like the seek
# an HDD pays for each request that does not continue the previous one.
throttle() {
  local bps=$1 iops=${2:-0} dev mm
  for dev in "${LOOPS[@]}"; do
    mm=$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ')
    echo "$mm $bps" > "$BENCH_CGROUP/blkio.throttle.read_bps_device"
    echo "$mm $bps" > "$BENCH_CGROUP/blkio.throttle.write_bps_device"
    echo "$mm $iops" > "$BENCH_CGROUP/blkio.throttle.read_iops_device"
    echo "$mm $iops" > "$BENCH_CGROUP/blkio.throttle.write_iops_device"
  done
}

# throttle_disk I BPS [IOPS]: read and write limits on disk I alone (IOPS omitted: left as they are).
throttle_disk() {
  local mm k
  mm=$(lsblk -dno MAJ:MIN "${LOOPS[$1]}" | tr -d ' ')
  for k in read write; do
    [ -z "${3:-}" ] || echo "$mm $3" > "$BENCH_CGROUP/blkio.throttle.${k}_iops_device"
    echo "$mm $2" > "$BENCH_CGROUP/blkio.throttle.${k}_bps_device"
  done
}

# disks_csv [COUNT]: the first COUNT disk directories (all by default), comma-separated.
disks_csv() { local IFS=,; echo "${DISK_DIRS[*]:0:${1:-${#DISK_DIRS[@]}}}"; }

# dir_disks PREFIX COUNT: directories PREFIX0 .. PREFIX<COUNT-1> (made) standing in for disks,
# comma-separated: striping without loop devices or throttle.
dir_disks() { local l="" k; for k in $(seq 0 $(($2 - 1))); do mkdir -p "$1$k"; l+="${l:+,}$1$k"; done; echo "$l"; }

# run_throttled CMD...: runs CMD inside the throttled cgroup (directly when BENCH_CGROUP is empty:
# a script without simulated disks).
run_throttled() {
  if [ -z "$BENCH_CGROUP" ]; then "$@"; return; fi
  # shellcheck disable=SC2016  # $$ is the inner shell's
  sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$BENCH_CGROUP" "$@"
}

# calibrate_disks: graphfs-calibrate on the striped disks 0-3, throttled: the read-cost model the
# daemon reads at mount.
calibrate_disks() {
  # shellcheck disable=SC2153  # GRAPHFS_BIN is the sourcing script's
  run_throttled "$GRAPHFS_BIN/graphfs-calibrate" --probe-size 128M --random-reads 300 "${DISK_DIRS[@]:0:4}"
}

# sectors read from a loop device so far (512-byte units).
disk_read_bytes() { awk '{printf "%.0f\n", $3 * 512}' "/sys/block/$(basename "$1")/stat"; }

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# mount_graphfs SOURCE MOUNTPOINT OPTIONS: daemon inside the throttled cgroup. Sets GRAPHFS_PID
# to the daemon's pid (for daemon_peak_rss).
GRAPHFS_PID=""
mount_graphfs() {
  local src=$1 mnt=$2 opts=$3 i bg
  mkdir -p "$mnt"
  # DAEMON_BIN (default GRAPHFS_BIN): where the daemon comes from, for before/after comparisons.
  run_throttled "${DAEMON_BIN:-$GRAPHFS_BIN}/graphfs" -f "$src" "$mnt" -o "$opts" >"$mnt.log" 2>&1 &
  bg=$!
  for ((i = 0; i < 200; i++)); do
    if mountpoint -q "$mnt"; then
      # The background job is a subshell; run_throttled's sh, its child, exec'd the daemon.
      GRAPHFS_PID=$(pgrep -P "$bg" -x graphfs | head -1 || true)
      [ -n "$GRAPHFS_PID" ] || GRAPHFS_PID=$bg
      return 0
    fi
    sleep 0.05
  done
  echo "mount of $src failed:" >&2
  cat "$mnt.log" >&2
  return 1
}

# daemon_peak_rss [PID]: peak resident memory (VmHWM) of the daemon (default: the one mounted
# last, GRAPHFS_PID) in bytes so far; empty when it is gone. Read it before unmounting.
daemon_peak_rss() {
  local pid=${1:-$GRAPHFS_PID}
  [ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 0
  awk '/^VmHWM:/ {printf "%.0f\n", $2 * 1024}' "/proc/$pid/status" 2>/dev/null || true
}

# daemon_cpu_seconds [PID]: the daemon's user + system CPU seconds since it started (/proc; works
# for any daemon version, also one without stats.cpu).
daemon_cpu_seconds() {
  local pid=${1:-$GRAPHFS_PID}
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 0
  awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz}' "/proc/$pid/stat" 2>/dev/null || true
}

# unmount_graphfs MNT: unmounts MNT if it is mounted (lazily when busy).
unmount_graphfs() {
  local mnt=$1
  mountpoint -q "$mnt" && { fusermount3 -u "$mnt" || fusermount3 -u -z "$mnt"; }
  sleep 0.2
}

destroy_disks() {
  local m dev pid mounts
  mapfile -t mounts < <(awk -v r="$BENCH_ROOT" '$2 ~ "^"r {print $2}' /proc/mounts | sort -r)
  for m in "${mounts[@]}"; do
    case "$(awk -v m="$m" '$2 == m {print $3}' /proc/mounts)" in
      fuse*) fusermount3 -u -z "$m" 2>/dev/null || true ;;
      *) umount -l "$m" 2>/dev/null || true ;;
    esac
  done
  # Every loop device backed by a file of ours, including those of an earlier, killed run. A btrfs
  # one is also dropped from the kernel's list of btrfs devices (make_btrfs_disk), or the entry
  # would outlive the device.
  for dev in $(losetup -a | grep -F "$BENCH_ROOT/" | cut -d: -f1); do
    if [[ $(blkid -o value -s TYPE "$dev" 2>/dev/null) == btrfs ]]; then
      btrfs device scan --forget "$dev" >/dev/null 2>&1 || true
    fi
    losetup -d "$dev" 2>/dev/null || true
  done
  LOOPS=()
  DISK_DIRS=()
  # A cgroup with processes cannot be removed, and would keep its limits for the next run.
  if [ -d "$BENCH_CGROUP" ]; then
    local pids
    mapfile -t pids < "$BENCH_CGROUP/cgroup.procs"
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    sleep 0.2
    rmdir "$BENCH_CGROUP" 2>/dev/null || echo "bench: could not remove $BENCH_CGROUP" >&2
  fi
  rm -rf "$BENCH_ROOT"
}

# Bytes read from the given loop devices, summed.
loops_read() { local t=0 d; for d in "$@"; do t=$((t + $(disk_read_bytes "$d"))); done; echo $t; }

# stage_graph GRAPH_DIR BPS HEADROOM_MB: five loop disks (the graph's size, GRAPH_BYTES, +
# HEADROOM_MB each, sparse). The graph is copied to $SRC/g (SRC=$BENCH_ROOT/src; cp -a keeps the mtimes, so its
# index stays fresh) and striped over disks 0-3 (BPS each; the unit STRIPE_UNIT, or each file's
# own as graphfs-stripe chooses it); a plain copy without the index goes on disk 4, throttled to
# 4 x BPS: the same total bandwidth, no striping.
stage_graph() {
  local g=$1 bps=$2 headroom=$3
  GRAPH_BYTES=$(du -sb --exclude=.graphfs "$g" | cut -f1)
  make_disks 5 $(( (GRAPH_BYTES >> 20) + headroom ))M
  SRC=$BENCH_ROOT/src
  mkdir -p "$SRC"
  rm -rf "$SRC/g"  # a run killed while copying leaves a partial copy, which cp -a would copy into
  cp -a "$g" "$SRC/g"
  cp -a "$g" "${DISK_DIRS[4]}/g"
  rm -rf "${DISK_DIRS[4]}/g/.graphfs"
  # STRIPE_UNIT=SIZE stripes every file in that unit; unset, graphfs-stripe chooses each file's
  # (a power of two from 1M to 16M: at least 4 units per disk of the file, at most the engines'
  # 24M request; the disks are not calibrated yet here, so their cost per request is left out).
  # Every file of at least 1M is striped, so no graph file stays off the disks.
  # STRIPE_COMPRESS=CODEC|auto|none: graphfs-stripe --compress (default auto, the tool's: each
  # file compressed where a codec delivers it faster than the disks; column and row cut at the
  # index's chunks); none keeps the raw bytes. STRIPE_MEMORY=SIZE: auto is told the memory the
  # graph will be read under (graphfs-stripe --memory).
  # --parity 0: the tables these runs fill compare with plain copies, and were measured without
  # parity (the tool's default is 1 on 3 disks or more; parity-mount.sh measures what it costs).
  "$GRAPHFS_BIN/graphfs-stripe" -q ${STRIPE_UNIT:+--unit "$STRIPE_UNIT"} --min-size 1M --parity 0 \
    --compress "${STRIPE_COMPRESS:-auto}" ${STRIPE_MEMORY:+--memory "$STRIPE_MEMORY"} \
    --disk-bandwidth $((4 * bps)) --disks "$(disks_csv 4)" "$SRC/g"
  throttle "$bps" 0
  throttle_disk 4 $((4 * bps))
}

# make_btrfs_disk GRAPH_DIR BPS HEADROOM_MB: the plain row for compressed storage (DESIGN.md, "Where
# the time must go"): one more loop disk, btrfs mounted with compress-force=zstd:1, holding a plain
# copy of GRAPH_DIR (without its index) at DISK_DIRS[BTRFS_DISK]/g, throttled to 4 x BPS like the
# plain ext4 disk of stage_graph. Its image is under BENCH_ROOT, so destroy_disks removes it.
# shellcheck disable=SC2034  # BTRFS_DISK and BTRFS_DATA_BYTES are the callers'
make_btrfs_disk() {
  local g=$1 bps=$2 headroom=$3 i=${#LOOPS[@]} img dev bytes size
  command -v mkfs.btrfs > /dev/null ||
    { echo "make_btrfs_disk: mkfs.btrfs is missing (Debian package btrfs-progs; scripts/setup installs it)" >&2; return 1; }
  bytes=$(du -sb --exclude=.graphfs "$g" | cut -f1)
  size=$(( (bytes >> 20) + headroom ))
  ((size >= 256)) || size=256   # btrfs's own floor is about 110 MiB
  mkdir -p "$BENCH_ROOT" "$BENCH_CGROUP"
  img=$BENCH_ROOT/disk$i.img
  rm -f "$img"
  truncate -s "${size}M" "$img"
  dev=$(losetup -f --show "$img")
  LOOPS+=("$dev")
  DISK_DIRS+=("$BENCH_ROOT/d$i")
  mkfs.btrfs -q -f "$dev" > /dev/null
  mkdir -p "$BENCH_ROOT/d$i"
  mount -o compress-force=zstd:1 "$dev" "$BENCH_ROOT/d$i"
  throttle_disk "$i" 0 0   # loop numbers are reused: no limits of an earlier disk while copying
  cp -a "$g" "$BENCH_ROOT/d$i/g"
  rm -rf "$BENCH_ROOT/d$i/g/.graphfs"
  sync
  BTRFS_DATA_BYTES=$(btrfs filesystem df -b "$BENCH_ROOT/d$i" | awk -F'used=' '/^Data/ {printf "%.0f\n", $2 + 0; exit}')
  throttle_disk "$i" $((4 * bps))
  BTRFS_DISK=$i
}
