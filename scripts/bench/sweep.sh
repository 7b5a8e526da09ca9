#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 42 benchmark: the memory sweep. graphfs against plain storage at equal TOTAL memory, at
# several memory sizes (DESIGN.md, "Where the time must go": compare across memory sizes, not at
# one point).
#
#   scripts/bench/sweep.sh [--family rmat-local|rmat|grid] [--scale 20] [--grid 1024x1024] [--partitions 16]
#                          [--mix W1] [--fractions "1/8 1/4 1/2 1 2"]
#                          [--configs "integrated unmodified plain plain-btrfs"] [--repeat 3]
#                          [--bps 100000000] [--partition 256M] [--chunk-size 2M] [--mount-mem-gb G]
#                          [--margin 64M] [--compress auto|none|CODEC] [--stripe-memory f|SIZE] [--mount-opts OPTS]
#                          [--alt-mount-opts OPTS]
#                          [--request-us N] [--plain-limit SIZE] [--max-wall SECONDS]
#                          [--gen-dir DIR] [--tag TAG]
#
# The graph (scripts/bench/graphs.sh: generated, preprocessed with --sort-sources and indexed once
# into --gen-dir) is striped over 4 loop disks of BPS bytes/s each (compressed where graphfs-stripe's
# --compress auto says it pays); a plain copy lies on a fifth disk of 4 x BPS (ext4) and another on a
# sixth of 4 x BPS (btrfs mounted compress-force=zstd:1): the same total bandwidth on every side.
# For each fraction f of --fractions (quotients allowed), M = f x the graph's raw column + row
# bytes, the mix's jobs (graphs.sh: W1 {pagerank-delta, wcc, sssp, bfs}, W4, W5, S1, S2, P16) run in
# each configuration:
#   integrated    a fresh graphfs mount with ONE memory budget, memory=M (cache, staging, LP
#                 windows and indexes), lp=vertex; run-jobs --integrated --partition PARTITION (the
#                 daemon caps each LP at a quarter of its LP window); the jobs' memory cgroup is
#                 generous (64 B per vertex + 512 MiB: mix_work), their TOTAL = the cgroup's peak +
#                 the daemon's peak RSS (VmHWM: cache, staging, LP buffers, index and the rest)
#   unmodified    the same mount, the apps unmodified with --mount-mem-gb (default: the smaller of
#                 0.25 GiB and half the column, so that they stream with O_DIRECT through the
#                 mount and use the daemon's memory, not the page cache's); TOTAL as above
#   plain         the plain ext4 copy, the jobs in a memory cgroup of LIMIT = the larger TOTAL the
#                 graphfs configurations measured at this f (in this round or an earlier one), told
#                 that memory as their users tell them: --mem-gb = LIMIT less --margin, so they
#                 read buffered where the active edges fit in it (GridGraph's rule) and the page
#                 cache keeps what fits
#   plain-btrfs   the same on the btrfs copy (zstd level 1): the plain row for compressed storage
#   integrated-alt  integrated, its mount given --alt-mount-opts instead of --mount-opts: a mount
#                 option measured against the default in the same sweep (e.g. compute_slots=2)
# --plain-limit SIZE: the plain configurations' LIMIT where no graphfs configuration of this sweep
# measured one (a graphfs TOTAL from an earlier sweep of the same graph and mix): then --configs may
# hold plain rows only.
# --max-wall SECONDS: a run still going after that long is stopped (run-jobs is sent SIGTERM and
# stops its jobs; SIGKILL a minute later); its status is "stopped" and its wall time a lower bound,
# which the table prints as "> T" (and a ratio to it as "< R"). For mixes where a plain side takes
# many times graphfs's time, so that the bound alone decides the target.
# --repeat N runs N rounds; in each the configurations of an f run in an order that turns from round
# to round, but round 1 runs the graphfs configurations first (they measure the plain ones' LIMIT).
# Every run starts with the page cache dropped and is traced every second (disk_trace.py).
# Per run (results/sweep-STAMP.tsv): wall time, bytes read from the side's disks, the floors beside
# it — disk: bytes / the side's summed bandwidth (4 x BPS everywhere); CPU: CPU seconds / cores, the
# jobs' cpuacct cgroup plus, on the mount, the daemon's CPU (kernel threads such as btrfs's
# decompression workers are in neither; machine_cpu_s, the whole machine's busy CPU over the run,
# holds them and whatever else ran) — the memory limit and peaks, what the apps were told, their
# O_DIRECT streams, edges read and the jobs' results. At the end: the medians as a table, the ratio
# of graphfs integrated to the better plain row at each f, whether every configuration's results
# equal plain's, and a plot (results/sweep-STAMP.png: time and disk bytes against f;
# scripts/bench/plot_sweep_memory.py).
# --stripe-memory: graphfs-stripe --compress auto is told the memory the graph will be read under
# (`--memory`: with little memory the smallest frames win, with much the fastest decoder:
# striping/auto_codec.h) — SIZE, or `f`: the M of the one fraction given (an admin stripes the
# graph for the machine's memory). Unset: the tool's default model.
# Needs root (loop disks, cgroup-v1 blkio, memory and cpuacct controllers, drop_caches) and
# btrfs-progs (scripts/setup installs it); leaves nothing mounted or attached, also on Ctrl-C.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
-h|--help
--family        FAMILY        rmat-local
--scale         SCALE         20
--grid          GRID          1024x1024
--partitions    PARTITIONS    "${PARTITIONS:-}"
--mix           MIX           W1
--fractions     FRACTIONS     "1/8 1/4 1/2 1 2"
--configs       CONFIGS       "integrated unmodified plain plain-btrfs"
--repeat        REPEAT        3
--bps           BPS           100000000
--partition     PARTITION     256M
--chunk-size    CHUNK         2M
--mount-mem-gb  MOUNT_MEM_GB  ""
--margin        MEM_MARGIN    64M  bytes
--compress      COMPRESS      auto
--stripe-memory STRIPE_MEMORY ""
--mount-opts    MOUNT_OPTS    ""
--alt-mount-opts ALT_MOUNT_OPTS ""
--request-us    REQUEST_US    ""
--plain-limit   PLAIN_LIMIT   ""  bytes
--max-wall      MAX_WALL      ""
--gen-dir       GEN_DIR       /var/tmp/graphfs-gen
--tag           TAG           ""
EOF
[[ $(id -u) == 0 ]] || { echo "sweep.sh: run as root (loop disks, cgroups, drop_caches)" >&2; exit 2; }
for c in $CONFIGS; do
  case $c in integrated | integrated-alt | unmodified | plain | plain-btrfs) ;; *) echo "sweep.sh: unknown config $c" >&2; exit 2 ;; esac
done
if [[ " $CONFIGS " == *" integrated-alt "* && -z $ALT_MOUNT_OPTS ]]; then
  echo "sweep.sh: integrated-alt is the integrated run with --alt-mount-opts: give them" >&2
  exit 2
fi
if [[ " $CONFIGS " =~ \ plain && ! " $CONFIGS " =~ \ (integrated|integrated-alt|unmodified)\  && -z $PLAIN_LIMIT ]]; then
  echo "sweep.sh: the plain configurations get the memory a graphfs configuration measured at the same f: add integrated or unmodified, or give --plain-limit" >&2
  exit 2
fi
[[ -z $MAX_WALL || $MAX_WALL =~ ^[1-9][0-9]*$ ]] || { echo "sweep.sh: --max-wall wants whole seconds, not '$MAX_WALL'" >&2; exit 2; }
for f in $FRACTIONS; do
  [[ $f =~ ^[0-9]+(\.[0-9]+)?(/[0-9]+)?$ ]] || { echo "sweep.sh: fraction '$f' is not a number or a quotient (1/4)" >&2; exit 2; }
done
for b in graphfs run-jobs gen-rmat gen-grid preprocess graphfs-index graphfs-stripe graphfs-calibrate; do
  [[ -x $GRAPHFS_BIN/$b ]] || { echo "sweep.sh: $GRAPHFS_BIN/$b is missing (build graphfs first)" >&2; exit 2; }
done
TAG=${TAG:+-$TAG}
export STRIPE_COMPRESS=$COMPRESS
if [[ $STRIPE_MEMORY == f ]]; then
  read -ra _fs <<< "$FRACTIONS"
  ((${#_fs[@]} == 1)) || { echo "sweep.sh: --stripe-memory f needs exactly one fraction (the graph is striped once)" >&2; exit 2; }
elif [[ -n $STRIPE_MEMORY ]]; then
  STRIPE_MEMORY=$(numfmt --from=iec "$STRIPE_MEMORY" 2> /dev/null) ||
    { echo "sweep.sh: --stripe-memory wants f or a size (192M)" >&2; exit 2; }
fi

BENCH_ROOT=/var/tmp/graphfs-sweep
BENCH_CGROUP=/sys/fs/cgroup/blkio/graphfs-sweep
MIX_CGROUP=/sys/fs/cgroup/memory/graphfs-sweep-mix
CPU_CGROUP=/sys/fs/cgroup/cpuacct/graphfs-sweep-jobs
MNT=$BENCH_ROOT/mnt
bench_on_exit destroy_disks
bench_on_exit quietly cgroup_remove "$MIX_CGROUP" "$CPU_CGROUP"
bench_on_exit quietly unmount_graphfs "$MNT"
bench_on_exit trace_stop

# 1. The graph (once into GEN_DIR) and its raw column + row bytes, the unit of f.
bench_graph "$FAMILY" "$SCALE" "$GRID" "$GEN_DIR" "$CHUNK"
RAW=$(( $(stat -c %s "$G/column") + $(stat -c %s "$G/row") ))
JOBS=$(mix_jobs "$MIX")
[[ -n $MOUNT_MEM_GB ]] || MOUNT_MEM_GB=$(gib_floor $(( COLUMN / 2 < (256 << 20) ? COLUMN / 2 : (256 << 20) )))
NCPU=$(nproc)
BANDWIDTH=$((4 * BPS))   # every side's disks together

# 2. The disks: 4 x BPS striped, 1 x 4 x BPS ext4 plain, 1 x 4 x BPS btrfs zstd plain.
if [[ $STRIPE_MEMORY == f ]]; then
  STRIPE_MEMORY=$(cache_budget "$RAW" "$FRACTIONS")
fi
export STRIPE_MEMORY
# Each disk's room beside the graph holds the jobs' vertex state files (plain jobs write them there).
HEADROOM_MIB=$(jobs_disk_room "$JOBS")
stage_graph "$G" "$BPS" "$HEADROOM_MIB"
PLAIN=${DISK_DIRS[4]}/g
BTRFS_DISK=""
if [[ " $CONFIGS " == *" plain-btrfs "* ]]; then make_btrfs_disk "$G" "$BPS" "$HEADROOM_MIB"; fi
COST_OPTS=""
if [[ -n $REQUEST_US ]]; then
  COST_OPTS=",disk_bandwidth=$BPS,request_cost_us=$REQUEST_US"
else
  calibrate_disks > /dev/null
fi

bench_results
STAMP=$STAMP$TAG
TSV=$RESULTS/sweep-$STAMP.tsv
PNG=$RESULTS/sweep-$STAMP.png
printf 'round\tf\tconfig\tmemory\twall_s\tdisk_bytes\tdisk_floor_s\tcpu_s\tcpu_floor_s\tmachine_cpu_s\tmem_limit\tjobs_peak\tdaemon_peak\ttotal_peak\tmem_gb\tdirect_streams\tedges_read\tedges_active\tresults\tstatus\tlog\n' > "$TSV"
echo "# memory sweep $STAMP: $NAME ($FAMILY, $VERTICES vertices, $EDGES edges), column + row $((RAW >> 20)) MiB raw" \
  "(column $((COLUMN >> 20)) MiB); striped over 4 x $((BPS / 1000000)) MB/s (compress $COMPRESS${STRIPE_MEMORY:+ for $((STRIPE_MEMORY >> 20)) MiB of memory}); plain ext4 copy" \
  "on 1 x $((BANDWIDTH / 1000000)) MB/s${BTRFS_DISK:+; plain btrfs copy (zstd:1, $((BTRFS_DATA_BYTES >> 20)) MiB of data) on 1 x $((BANDWIDTH / 1000000)) MB/s}"
echo "# mix $MIX {$JOBS}; fractions $FRACTIONS; configs $CONFIGS; $REPEAT round(s); mount apps --mem-gb $MOUNT_MEM_GB," \
  "integrated --partition $PARTITION; plain apps told their limit less $((MEM_MARGIN >> 20)) MiB; $NCPU cores"

fsub() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {printf "%.2f", a - b}'; }
fdiv() { awk -v a="${1:-0}" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

# sweep_run ROUND F CONFIG: one run, one TSV row. A graphfs configuration sets LAST_TOTAL.
declare -A TOTAL=()
sweep_run() {
  local round=$1 f=$2 config=$3 log memory=- limit memgb dir flags="" mounted=0 dpeak=- dpeak_n=0 dcpu0=0 dcpu1=0 cpu m0 m1
  local -a loops
  log=$RESULTS/sweep-$STAMP-f${f//\//_}-$config-r$round.log
  case $config in
    integrated | integrated-alt | unmodified)
      memory=$(cache_budget "$RAW" "$f")
      local opts=$MOUNT_OPTS
      [[ $config == integrated-alt ]] && opts=$ALT_MOUNT_OPTS
      mount_graphfs "$SRC" "$MNT" "memory=$memory,lp=vertex$COST_OPTS${opts:+,$opts}"
      mounted=1
      dcpu0=$(daemon_cpu_seconds "$GRAPHFS_PID")
      dir=$MNT/g
      loops=("${LOOPS[@]:0:4}")
      limit=$(mix_work "$MIX")
      memgb=$MOUNT_MEM_GB
      [[ $config == integrated* ]] && flags="--integrated --partition $PARTITION" ;;
    plain | plain-btrfs)
      limit=${TOTAL[$f]:-$PLAIN_LIMIT}
      memgb=$(told_mem_gb "$limit")
      if [[ $config == plain ]]; then
        dir=$PLAIN
        loops=("${LOOPS[4]}")
      else
        dir=${DISK_DIRS[BTRFS_DISK]}/g
        loops=("${LOOPS[BTRFS_DISK]}")
      fi ;;
  esac
  drop_caches   # run_measured drops it again, at once: the trace starts with the run
  trace_start "$log.trace" "$( ((mounted)) && echo "$MNT" || echo -)" "${loops[@]}"
  m0=$(machine_cpu_seconds)
  local -a limiter=()
  [[ -z $MAX_WALL ]] || limiter=(timeout --signal=TERM --kill-after=60 "$MAX_WALL")
  # shellcheck disable=SC2046,SC2086  # the flags: words
  run_measured "$limit" "$log" "$log" "${loops[@]}" -- "${limiter[@]}" env GRAPHFS_ENGINE_VERBOSE=1 \
    "$GRAPHFS_BIN/run-jobs" --graph "$dir" --jobs "$JOBS" --mem-gb "$memgb" $flags $(mix_arrivals "$MIX")
  # timeout exits 124 when it stopped the run with SIGTERM, 137 when it had to SIGKILL it — and
  # also when run-jobs died of a SIGKILL of its own (the OOM killer) before the limit: a failure.
  if [[ -n $MAX_WALL ]] && { ((RUN_RC == 124)) || { ((RUN_RC == 137)) && awk -v w="$RUN_WALL" -v m="$MAX_WALL" 'BEGIN {exit !(w >= m)}'; }; }; then
    RUN_STATUS=stopped
    echo "stopped after --max-wall $MAX_WALL s: the run's wall time is more than that" >> "$log"
    echo "  f=$f $config stopped after $MAX_WALL s (--max-wall): its time is a lower bound"
  fi
  m1=$(machine_cpu_seconds)
  trace_stop
  cpu=$RUN_CPU
  if ((mounted)); then
    dpeak=$(daemon_peak_rss "$GRAPHFS_PID")
    if [[ -z $dpeak ]]; then
      echo "  f=$f $config: the daemon's peak RSS is unknown (it is gone): its memory budget stands in"
      dpeak=$memory
    fi
    dpeak_n=$dpeak
    dcpu1=$(daemon_cpu_seconds "$GRAPHFS_PID")
    cpu=$(awk -v a="$RUN_CPU" -v b="$dcpu1" -v c="$dcpu0" 'BEGIN {printf "%.2f", a + b - c}')
    cp "$MNT/.graphfs/stats" "$log.stats.json" 2>/dev/null || true
    unmount_graphfs "$MNT"
    LAST_TOTAL=$((RUN_PEAK + dpeak_n))
  fi
  echo "mix cgroup: limit $limit, peak $RUN_PEAK, oom kills $RUN_OOM; daemon: peak rss $dpeak, cpu $(fsub "$dcpu1" "$dcpu0") s" >> "$log"
  if [[ $RUN_STATUS == failed ]]; then
    echo "  f=$f $config failed (OOM kills in its cgroup: $RUN_OOM):"
    tail -5 "$log"
  fi
  local fields direct
  # edges read, of active sources, the jobs' results: integrated_summary.py's fields 5, 6, 21
  fields=$(python3 "$HERE/integrated_summary.py" "$log" "$MIX" "$config" "$RUN_DISK" | cut -f5,6,21)
  direct=$(awk '/: streamed .* O_DIRECT streams/ {for (i = 1; i <= NF; i++) if ($i == "O_DIRECT") n += $(i-1)} END {print n + 0}' "$log")
  local -a row=("$round" "$f" "$config" "$memory" "$RUN_WALL" "$RUN_DISK" "$(fdiv "$RUN_DISK" "$BANDWIDTH")"
                "$cpu" "$(fdiv "$cpu" "$NCPU")" "$(fsub "$m1" "$m0")" "$limit" "$RUN_PEAK" "$dpeak"
                "$((RUN_PEAK + dpeak_n))" "$memgb" "$direct" "$fields" "$RUN_STATUS" "$log")
  (IFS=$'\t'; echo "${row[*]}") >> "$TSV"
  printf '  round %s f=%-4s %-12s wall %6.2f s (floors: disk %s s, cpu %s s), disk %5d MiB, memory %s, O_DIRECT streams %s, %s\n' \
    "$round" "$f" "$config" "$RUN_WALL" "$(fdiv "$RUN_DISK" "$BANDWIDTH")" "$(fdiv "$cpu" "$NCPU")" $((RUN_DISK >> 20)) \
    "$(if ((mounted)); then echo "jobs $((RUN_PEAK >> 20)) + daemon $((dpeak_n >> 20)) = $(((RUN_PEAK + dpeak_n) >> 20)) MiB (memory=$((memory >> 20)) MiB)"
       else echo "peak $((RUN_PEAK >> 20)) of limit $((limit >> 20)) MiB, told ${memgb} GiB"; fi)" "$direct" "$RUN_STATUS"
}

read -r -a CONFIG_LIST <<< "$CONFIGS"
for ((ROUND = 1; ROUND <= REPEAT; ROUND++)); do
  for f in $FRACTIONS; do
    mapfile -t order < <(rotate $((ROUND - 1)) "${CONFIG_LIST[@]}")
    # Until this f has a measured TOTAL, the graphfs configurations go first.
    if [[ -z ${TOTAL[$f]:-} ]]; then
      first=() rest=()
      for config in "${order[@]}"; do
        if [[ $config == integrated* || $config == unmodified ]]; then first+=("$config"); else rest+=("$config"); fi
      done
      order=("${first[@]}" "${rest[@]}")
    fi
    for config in "${order[@]}"; do
      sweep_run "$ROUND" "$f" "$config"
      if [[ $config == integrated* || $config == unmodified ]] && ((LAST_TOTAL > ${TOTAL[$f]:-0})); then
        TOTAL[$f]=$LAST_TOTAL
      fi
    done
  done
done

echo "# runs: $TSV"
/usr/bin/python3 "$HERE/plot_sweep_memory.py" "$TSV" "$PNG" --title "$NAME, mix $MIX, $((RAW >> 20)) MiB column + row, disks $((BANDWIDTH / 1000000)) MB/s per side"
