#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issues 5 and 16 benchmark: logical partitions (integrated engines), chunk- and vertex-granular,
# against the same jobs unmodified, on 4 throttled disks.
#
#   scripts/bench/integrated.sh [--family rmat|rmat-local|grid] [--scale 24] [--grid 1024x1024] [--partitions 16]
#                               [--mem-gb G]
#                               [--mixes "W1 W4 W5 P16"] [--configs "seq-plain plain plain-btrfs mount mount-integrated-chunk mount-integrated"]
#                               [--bps 100000000] [--iops N] [--request-us N] [--fraction 0.25] [--partition 256M]
#                               [--chunk-size 2M] [--readahead-mem 256M] [--gen-dir DIR] [--skip "W4:plain ..."]
#                               [--reentry N] [--diagonal-first] [--tag TAG] [--compress "CODEC ..."] [--repeat N]
#                               [--base-bin DIR] [--mount-opts OPTS] [--memory SIZE]
#                               [--base-same-opts 0|1] [--base-mount-opts OPTS]
#
# A weighted graph (generated once into --gen-dir, preprocessed with --sort-sources, indexed with
# --chunk-size), striped over 4 loop disks of BPS bytes/s each (unit: STRIPE_UNIT, else graphfs-stripe's
# choice per file — 16M for the R-MAT graphs of scale 24); a plain copy on a fifth
# loop disk of 4 x BPS, and (for plain-btrfs) another on a sixth, btrfs compress-force=zstd:1, also
# 4 x BPS. Families: rmat (Graph500 R-MAT, ids permuted: no locality), rmat-local
# (gen-rmat --no-permute: R-MAT's own ids, hubs low), grid (gen-grid W x H, 10% of edges dropped:
# a road-like lattice, ids in row-major order). Mixes:
#   W1 {pagerank-delta, wcc, sssp, bfs}    W4 {sssp x 4, random starts}    W5 {bfs x 4, random starts}
#   S1 {bfs} and S2 {pagerank-delta}: a single job
#   P16 {16 jobs: 4 each of bfs, sssp, wcc, pagerank-delta}, Poisson arrivals (mean gap 5 s, seed 16)
# The read-cost model of vertex-granular LPs is measured on the throttled disks by graphfs-calibrate
# (--request-us N instead sets request_cost_us=N). --iops N also limits each disk to N requests per
# second (the HDD-like model: a cost per request, which graphfs-calibrate then measures).
# Configurations (the jobs of a mix in one memory cgroup, cgroup v1; WORK = 64 B per vertex + the
# jobs' read buffers):
#   seq-plain         (i)   the plain copy, one job after another (run-jobs --sequential), cgroup limit
#                           JOBS + DAEMON: equal total memory (DESIGN.md), and the apps are told that
#                           memory as their users tell them (--mem-gb: the limit less 64 MiB), so they
#                           read buffered where the active edges fit in it (O_DIRECT, as GridGraph,
#                           where they do not) and the page cache keeps what fits. JOBS is the
#                           jobs' own memory (vertex state, read buffers) measured as the cgroup peak of the
#                           mix's `mount` run, the same unmodified apps; DAEMON is the graphfs daemon's
#                           largest measured peak RSS in the mix's graphfs runs so far, mount or integrated
#                           (VmHWM of /proc/PID/status read before the unmount: cache, staging, index, LP
#                           buffers and the rest; the daemon lives outside the jobs' cgroup): the page cache
#                           gets what the hungriest graphfs configuration used. Each graphfs run prints its
#                           total (jobs + daemon). Until the mix's `mount` run has measured JOBS (the
#                           integrated apps' peak is lower and is not used) the estimate WORK stands in,
#                           and until a graphfs run of the mix has measured DAEMON, cache_size +
#                           readahead_mem (said on stderr)
#   plain             (ii)  the plain copy, the jobs together, same limits
#   plain-btrfs             (ii) on the btrfs copy (compress-force=zstd:1, a disk of 4 x BPS): the
#                           plain row for compressed storage, same limit and --mem-gb as plain
#   mount             (iii) the striped graph through graphfs with cache_size = FRACTION x column,
#                           readahead_mem (default 256M; at most the graph's memory share: a small
#                           graph such as the grid gets --readahead-mem = its cache budget, or the
#                           staging area would hold all of it), the unmodified apps together, O_DIRECT
#                           (MEM_GB 0.25), limit WORK
#   mount-integrated-chunk (iv) the same mount with lp=chunk, the apps in integrated mode
#                           (--graphfs, logical partitions of PARTITION bytes of whole chunks)
#   mount-integrated  (v)   the same with lp=vertex: LPs hold only the runs of active sources
#   mount-integrated-base   (v) with the daemon of --base-bin DIR (e.g. a build of an older commit):
#                           today's path beside the new one, in the same run
#   mount-integrated-read   (v) with the jobs reading lp-SEQ through the daemon (GRAPHFS_LP_READ=1)
#                           instead of mapping the LPs' shared memory
# --memory SIZE mounts with one memory budget (memory=SIZE: cache, staging, LP windows and
# indexes) instead of cache_size = FRACTION x column (not the base configuration's daemon).
# --mount-opts OPTS adds graphfs mount options to every mount configuration but the base one
# (e.g. lp_memory=256M). --base-same-opts 1 gives the base one --memory and --mount-opts too
# (an A/B of two builds that both know them). --base-mount-opts OPTS gives it --memory and OPTS
# instead (an A/B of two mount options: --base-bin the same build, e.g. compute_slots=0 against
# --mount-opts compute_slots=2).
# --mem-gb G gives every configuration's apps G GiB (run-jobs --mem-gb) instead of 0.25 on the mount
# and, plain, their cgroup limit less 64 MiB. Below the plain limit the plain rows' engines are told
# less than they have: below the graph's edge bytes they read O_DIRECT (a weaker baseline, named as
# such on stderr: "plain, O_DIRECT").
# Each run is traced every second (scripts/bench/disk_trace.py: the disks' bytes, the mount's reader
# wait, CPU; results/...log.trace) and summarized: in how many seconds a reader waited every disk
# delivered >= 95% of its rate.
# Per run: wall time, bytes read from the loop disks, edges the jobs read and how many of those had
# an active source, for (iv) the scheduler's costs (active-chunk queries, LP selection, loads), and
# for the mount runs the daemon's peak RSS (daemon_peak) and, on a line of its own from the mount's
# stats over the run (scripts/bench/io_stats.py; n/a where the daemon does not report a figure):
# each disk's busy share of the wall time, its seconds idle while some reader waited on a miss,
# read_path.reader_wait_seconds, and the size bucket of the median disk request (mean in KiB).
# Per-iteration lines of every job go to results/integrated-STAMP-MIX-CONFIG.iter.tsv (plot:
# scripts/bench/plot_integrated.py). --reentry N and --diagonal-first are passed to run-jobs in every
# configuration (issue 17: the relaxation apps re-enter loaded edges; integrated jobs with reentry
# ask for whole chunks); --tag TAG is added to the results' names. --compress CODEC stores the
# striped copy with that codec (default auto, graphfs-stripe's own default since issue 31: each
# file compressed where a codec delivers it faster than the 4 disks; none: raw; the plain copy
# stays as it is).
# --compress "none CODEC ..." stages one striped copy per codec (none: uncompressed) on the same
# disks and runs every mount configuration on each, side by side; --repeat N runs N rounds (the
# copies in an order that turns from round to round). The end table gives each copy's median wall
# time and disk bytes, the ratio of medians to the first codec's, the median of the per-round
# ratios (the runs of a round are adjacent in time: the steadier figure on a noisy machine), and
# whether the jobs' results equal the first codec's (scripts/bench/variants_summary.py).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# --reentry and --diagonal-first are passed on to run-jobs (APP_FLAGS), in the order given.
bench_options "$@" <<'EOF'
--scale           SCALE          24
--partitions      PARTITIONS     "${PARTITIONS:-}"
--mem-gb          MEM_GB         "${MEM_GB:-}"
--family          FAMILY         rmat
--grid            GRID           1024x1024
--request-us      REQUEST_US     ""
--iops            IOPS           0
--mixes           MIXES          "W1 W4 W5"
--configs         CONFIGS        "mount-integrated mount-integrated-chunk mount plain plain-btrfs seq-plain"
--bps             BPS            100000000
--fraction        FRACTION       0.25
--partition       PARTITION      256M
--chunk-size      CHUNK          2M
--readahead-mem   READAHEAD_MEM  "${READAHEAD_MEM:-256M}"  bytes
--gen-dir         GEN_DIR        /var/tmp/graphfs-gen
--skip            SKIP           ""
--reentry         APP_FLAGS      ""  +
--diagonal-first  APP_FLAGS      ""  +=
--tag             TAG            ""
--compress        CODECS         ""
--repeat          REPEAT         1
--base-bin        BASE_BIN       ""
--mount-opts      MOUNT_OPTS     ""
--memory          MEMORY         ""
--base-same-opts  BASE_SAME_OPTS 0
--base-mount-opts BASE_MOUNT_OPTS ""
EOF
TAG=${TAG:+-$TAG}
# The striped copies: the first codec's is $SRC/g (as before), the others' $SRC/g-CODEC.
read -r -a VARIANTS <<< "${CODECS:-auto}"
export STRIPE_COMPRESS=${VARIANTS[0]}
variant_dir() { if [[ $1 == "${VARIANTS[0]}" ]]; then echo g; else echo "g-${1//:/-}"; fi; }
BENCH_ROOT=/var/tmp/graphfs-lpbench
MIX_CGROUP=/sys/fs/cgroup/memory/graphfs-lpbench-mix
bench_on_exit destroy_disks
bench_on_exit quietly cgroup_remove "$MIX_CGROUP"
bench_on_exit trace_stop
bench_on_exit quietly unmount_graphfs "$BENCH_ROOT/mnt"

# 1. The graph, generated and indexed once (the index's chunk size is part of its identity):
# scripts/bench/graphs.sh.
bench_graph "$FAMILY" "$SCALE" "$GRID" "$GEN_DIR" "$CHUNK"
# The mixes (mix_jobs) and WORK, the mount runs' jobs' limit (mix_work): graphs.sh.
BUDGET=$(cache_budget "$COLUMN" "$FRACTION")

# 2. Four striped disks and one plain disk with the same total bandwidth, with room for the
# jobs' vertex state next to the graph: the largest mix's (jobs_disk_room, graphs.sh).
ROOM_MIB=0
for mix in $MIXES; do
  room=$(jobs_disk_room "$(mix_jobs "$mix")")
  if ((room > ROOM_MIB)); then ROOM_MIB=$room; fi
done
stage_graph "$G" "$BPS" "$ROOM_MIB"
# The btrfs copy (plain-btrfs), only when some configuration reads it.
BTRFS_DISK=""
if [[ " $CONFIGS " == *" plain-btrfs "* ]]; then
  make_btrfs_disk "$G" "$BPS" "$ROOM_MIB"
  echo "# plain-btrfs: the plain copy on btrfs (compress-force=zstd:1) takes $((BTRFS_DATA_BYTES >> 20)) MiB of data on its disk ($((GRAPH_BYTES >> 20)) MiB raw)"
fi
for v in "${VARIANTS[@]:1}"; do
  cp -a "$G" "$SRC/$(variant_dir "$v")"
  "$GRAPHFS_BIN/graphfs-stripe" -q ${STRIPE_UNIT:+--unit "$STRIPE_UNIT"} --min-size 1M --parity 0 \
    --compress "$v" --disks "$(disks_csv 4)" "$SRC/$(variant_dir "$v")"
done
if [[ $IOPS -gt 0 ]]; then
  throttle "$BPS" "$IOPS"
  throttle_disk 4 $((4 * BPS)) $((4 * IOPS))
  [[ -z $BTRFS_DISK ]] || throttle_disk "$BTRFS_DISK" $((4 * BPS)) $((4 * IOPS))
fi
# The read-cost model: measured on the throttled disks (the daemon reads it at mount), or given.
COST_OPTS=""
if [[ -n $REQUEST_US ]]; then
  COST_OPTS=",disk_bandwidth=$BPS,request_cost_us=$REQUEST_US"
else
  calibrate_disks
fi

bench_results
STAMP=$STAMP$TAG
SUMMARY=$RESULTS/integrated-$STAMP.tsv
printf 'mix\tconfig\twall_s\tdisk_bytes\tedges_read\tedges_active\tactive_share\tfind_s\tselect_s\tload_s\tlps\tbytes_loaded\tbytes_delivered\tloader_MBps\twhole_MBps\tchunks_whole\tchunks_partial\tmem_limit\tmem_peak\tdaemon_peak\tresults\n' > "$SUMMARY"
echo "# integrated benchmark $STAMP: family $FAMILY ($NAME, $VERTICES vertices), column $COLUMN B, chunks $CHUNK, budget $BUDGET B, readahead_mem $READAHEAD_MEM B, partition $PARTITION, $BPS B/s x 4 disks${REQUEST_US:+, request cost $REQUEST_US us}$( [[ $IOPS -gt 0 ]] && echo ", $IOPS iops per disk")${APP_FLAGS:+, apps:$APP_FLAGS}${CODECS:+, codecs: $CODECS}, $REPEAT round(s)"

# run MIX CONFIG GRAPH_DIR MEM_GB LIMIT "RUN-JOBS FLAGS" LOOPS...
# (CONFIG is config@codec when several codecs run side by side; ROUND > 1 is added to the log's name)
run() {
  local mix=$1 config=$2 dir=$3 memgb=$4 limit=$5 flags=$6; shift 6
  local jobs log wall mounted=0
  jobs=$(mix_jobs "$mix")
  log=$RESULTS/integrated-$STAMP-$mix-${config//:/-}$(if ((ROUND > 1)); then echo "-r$ROUND"; fi).log
  mountpoint -q "$BENCH_ROOT/mnt" && mounted=1
  # The mount's stats before the run: the figures printed below are the run's (after minus before).
  if ((mounted)); then cat "$BENCH_ROOT/mnt/.graphfs/stats" > "$log.stats-before.json" 2>/dev/null || true; fi
  # Per second: the disks' bytes, the mount's reader wait, CPU (disk_trace.py; summarized below).
  # The page cache is dropped first (run_measured drops it again, at once), so the trace starts
  # with the run.
  drop_caches
  trace_start "$log.trace" "$( ((mounted)) && echo "$BENCH_ROOT/mnt" || echo -)" "$@"
  # The page cache dropped, the jobs in the throttle's and the mix's memory cgroups (cgroups.sh).
  # shellcheck disable=SC2046,SC2086  # RUN_ENV, the flags: words
  run_measured "$limit" "$log" "$log" "$@" -- env GRAPHFS_ENGINE_VERBOSE=1 ${RUN_ENV:-} \
    "$GRAPHFS_BIN/run-jobs" --graph "$dir" --jobs "$jobs" --mem-gb "$memgb" $flags $APP_FLAGS $(mix_arrivals "$mix")
  ((RUN_RC == 0)) || { echo "$mix $config failed (the summary line says so):"; tail -20 "$log"; }
  trace_stop
  LAST_PEAK=$RUN_PEAK
  echo "mix cgroup: limit $limit, peak $LAST_PEAK" >> "$log"
  LAST_DAEMON_PEAK=""
  if ((mounted)); then
    cp "$BENCH_ROOT/mnt/.graphfs/stats" "$log.stats.json" || true
    # The daemon's peak RSS since its mount (each mount run mounts afresh): what graphfs used.
    LAST_DAEMON_PEAK=$(daemon_peak_rss "${GRAPHFS_PID:-}")
    echo "daemon: pid ${GRAPHFS_PID:-?}, peak rss ${LAST_DAEMON_PEAK:--}, cpu $(daemon_cpu_seconds "${GRAPHFS_PID:-}") s" >> "$log"
  fi
  python3 "$HERE/integrated_summary.py" "$log" "$mix" "$config" "$RUN_DISK" >> "$SUMMARY" || true
  tail -1 "$SUMMARY"
  if ((mounted)); then
    wall=$(awk '/^total wall time:/ {print $4; exit}' "$log")
    echo "  $mix $config: daemon peak RSS $([[ -n $LAST_DAEMON_PEAK ]] && echo "$((LAST_DAEMON_PEAK >> 20)) MiB" || echo n/a), CPU since its mount $(daemon_cpu_seconds "${GRAPHFS_PID:-}") s"
    python3 "$HERE/io_stats.py" --before "$log.stats-before.json" ${wall:+--wall "$wall"} --label "  $mix $config: " "$log.stats.json" || true
  fi
  echo -n "  $mix $config: "
  python3 "$HERE/disk_trace.py" summary "$log.trace" --bps "$( ((mounted)) && echo "$BPS" || echo $((4 * BPS)))" || true
}

# plain_mem_gb LIMIT: what the plain rows' apps are told: their limit less the margin (told_mem_gb,
# cgroups.sh), as users of plain storage tell GridGraph-style engines their memory; --mem-gb G
# instead, said on stderr when it is below the limit (the engines are then told less than they
# have: O_DIRECT below the graph's edge bytes, a weaker baseline than the fair one).
plain_mem_gb() {
  local limit=$1
  if [[ -z $MEM_GB ]]; then told_mem_gb "$limit"; return; fi
  if awk -v g="$MEM_GB" -v l="$limit" 'BEGIN {exit !(g * 1073741824 < l)}'; then
    if awk -v g="$MEM_GB" -v c="$COLUMN" 'BEGIN {exit !(g * 1073741824 < c)}'; then
      echo "# --mem-gb $MEM_GB is below the plain rows' limit ($((limit >> 20)) MiB) and the column ($((COLUMN >> 20)) MiB): their engines read O_DIRECT (plain, O_DIRECT: not the fair baseline)" >&2
    else
      echo "# --mem-gb $MEM_GB is below the plain rows' limit ($((limit >> 20)) MiB): their engines are told less memory than they have" >&2
    fi
  fi
  echo "$MEM_GB"
}

# plain_limit MIX: equal total memory: the jobs' own memory (measured in the mix's mount run) + the
# largest daemon peak RSS of the mix's graphfs runs so far (estimates until one has run).
plain_limit() {
  local jobs=${JOBS_MEM[$1]:-} daemon=${DAEMON_MEM[$1]:-}
  if [[ -z $jobs ]]; then
    echo "# $1: no mount run measured the jobs' memory first; the plain limit uses the estimate" >&2
    jobs=$(mix_work "$1")
  fi
  if [[ -z $daemon ]]; then
    echo "# $1: no mount run measured the daemon's peak RSS first; the plain limit uses cache_size + readahead_mem" >&2
    daemon=$(( BUDGET + READAHEAD_MEM ))
  fi
  echo "# $1 plain limit: jobs $((jobs >> 20)) MiB + graphfs daemon $((daemon >> 20)) MiB" >&2
  echo $(( jobs + daemon ))
}
declare -A JOBS_MEM=() DAEMON_MEM=()
for ((ROUND = 1; ROUND <= REPEAT; ROUND++)); do
for mix in $MIXES; do
  # The configurations in an order that turns from round to round (the first round as given:
  # `mount` measures the memory the plain runs then get).
  # shellcheck disable=SC2086  # the configurations: words
  for config in $(rotate $((ROUND - 1)) $CONFIGS); do
    [[ " $SKIP " == *" $mix:$config "* ]] && continue
    case $config in
      seq-plain) [[ $mix == P16 ]] && continue
                 limit=$(plain_limit "$mix")
                 run "$mix" "$config" "${DISK_DIRS[4]}/g" "$(plain_mem_gb "$limit")" "$limit" "--sequential" "${LOOPS[4]}" ;;
      plain) limit=$(plain_limit "$mix")
             run "$mix" "$config" "${DISK_DIRS[4]}/g" "$(plain_mem_gb "$limit")" "$limit" "" "${LOOPS[4]}" ;;
      plain-btrfs)
        limit=$(plain_limit "$mix")
        run "$mix" "$config" "${DISK_DIRS[BTRFS_DISK]}/g" "$(plain_mem_gb "$limit")" "$limit" "" "${LOOPS[BTRFS_DISK]}" ;;
      mount | mount-integrated | mount-integrated-chunk | mount-integrated-base | mount-integrated-read)
        daemon_bin=""
        if [[ $config == mount-integrated-base ]]; then
          [[ -x $BASE_BIN/graphfs ]] || { echo "mount-integrated-base needs --base-bin DIR holding a graphfs daemon" >&2; exit 2; }
          daemon_bin=$BASE_BIN
        fi
        lp=vertex
        [[ $config == mount-integrated-chunk ]] && lp=chunk
        flags=""
        [[ $config != mount ]] && flags="--integrated --partition $PARTITION"
        for v in $(rotate $((ROUND - 1)) "${VARIANTS[@]}"); do
          name=$config
          ((${#VARIANTS[@]} > 1)) && name=$config@$v
          extra=""
          current_opts=$([[ -z $daemon_bin || $BASE_SAME_OPTS == 1 || -n $BASE_MOUNT_OPTS ]] && echo 1)
          opts=$MOUNT_OPTS
          [[ -n $daemon_bin && -n $BASE_MOUNT_OPTS ]] && opts=$BASE_MOUNT_OPTS
          [[ -n $opts && -n $current_opts ]] && extra=",$opts"
          cache_opt="cache_size=$BUDGET"
          [[ -n $MEMORY && -n $current_opts ]] && cache_opt="memory=$MEMORY"
          DAEMON_BIN=$daemon_bin mount_graphfs "$SRC" "$BENCH_ROOT/mnt" "$cache_opt,readahead_mem=$READAHEAD_MEM,lp=$lp$COST_OPTS$extra"
          RUN_ENV=$(if [[ $config == mount-integrated-read ]]; then echo GRAPHFS_LP_READ=1; fi) \
            run "$mix" "$name" "$BENCH_ROOT/mnt/$(variant_dir "$v")" "${MEM_GB:-0.25}" "$(mix_work "$mix")" "$flags" "${LOOPS[@]:0:4}"
          # The unmodified apps' own peak (read buffers included) is what the plain runs' jobs need:
          # only the mix's `mount` run measures it (the integrated apps need less: their peak
          # would starve plain); without one, plain gets the estimate WORK, which is more.
          # The daemon's share is the largest peak RSS any graphfs configuration of the mix has
          # had so far (integrated runs hold LP buffers too): the plain runs never get less
          # memory than some graphfs run of the mix used.
          if [[ $config == mount ]]; then JOBS_MEM[$mix]=$LAST_PEAK; fi
          if [[ -n $LAST_DAEMON_PEAK ]] && ((LAST_DAEMON_PEAK > ${DAEMON_MEM[$mix]:-0})); then
            DAEMON_MEM[$mix]=$LAST_DAEMON_PEAK
          fi
          [[ -n $LAST_DAEMON_PEAK ]] &&
            echo "  $mix $name: total memory: jobs $((LAST_PEAK >> 20)) MiB + graphfs daemon $((LAST_DAEMON_PEAK >> 20)) MiB = $(((LAST_PEAK + LAST_DAEMON_PEAK) >> 20)) MiB"
          unmount_graphfs "$BENCH_ROOT/mnt"
        done ;;
      *) echo "unknown config $config" >&2; exit 2 ;;
    esac
  done
done
done
echo "# summary: $SUMMARY"
column -t -s $'\t' "$SUMMARY"
if ((${#VARIANTS[@]} > 1)); then python3 "$HERE/variants_summary.py" "$SUMMARY" "${VARIANTS[@]}"; fi
