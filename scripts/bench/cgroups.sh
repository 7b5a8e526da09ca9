# shellcheck shell=bash
# The jobs' cgroups, cgroup v1 (sourced through lib.sh), beside the disks' blkio cgroup
# (disks.sh: BENCH_CGROUP, which run_throttled uses). A CG is a cgroup's directory, e.g.
# /sys/fs/cgroup/memory/graphfs-cachebench-mix.
#   memcg_create CG LIMIT        makes the memory cgroup CG (if missing), limited to LIMIT bytes,
#                                its peak reset
#   cpucg_create CG              makes the cpuacct cgroup CG (if missing), its usage reset
#   run_in_cgroups CG... -- CMD...
#                                runs CMD inside every CG: a shell joins them, then execs CMD
#   memcg_peak CG                the peak memory use of CG in bytes (memory.max_usage_in_bytes)
#   memcg_oom_kills CG           how many processes the OOM killer killed in CG
#   cpucg_seconds CG             CPU seconds used in CG (cpuacct.usage), two decimals
#   cgroup_remove CG...          removes the cgroups (they must be empty: the jobs gone); one
#                                that refuses is tried again after 1 s; a missing one is skipped
#   gib_floor BYTES              BYTES in GiB, two decimals, rounded down, at least 0.01 (run-jobs
#                                --mem-gb)
#   told_mem_gb LIMIT [MARGIN]   what engines with a memory cgroup of LIMIT bytes are told, as
#                                their users tell them (--mem-gb): LIMIT less MARGIN (default
#                                MEM_MARGIN, else 64 MiB) for what is not graph data, in GiB
#   run_measured LIMIT OUT ERR LOOP... -- CMD...
#                                one measured run: the page cache dropped (disks.sh), CMD inside
#                                BENCH_CGROUP (the disks' throttle; skipped when empty), the memory
#                                cgroup MIX_CGROUP limited to LIMIT bytes and, when CPU_CGROUP is
#                                set, that cpuacct cgroup; stdout to OUT, stderr to ERR (may be OUT).
#                                Sets RUN_RC (CMD's exit status), RUN_STATUS (ok, or failed when
#                                RUN_RC != 0 or a job's line says exit/signal), RUN_WALL (OUT's
#                                "total wall time:", else the clock's), RUN_DISK (bytes read from
#                                the LOOP devices), RUN_PEAK (the memory cgroup's peak), RUN_OOM
#                                (its OOM kills), RUN_CPU (the cpuacct seconds, "" without
#                                CPU_CGROUP); the cgroups are removed after

memcg_create() {
  mkdir -p "$1"
  echo "$2" > "$1/memory.limit_in_bytes"
  echo 0 > "$1/memory.max_usage_in_bytes"
}

cpucg_create() {
  mkdir -p "$1"
  echo 0 > "$1/cpuacct.usage"
}

run_in_cgroups() {
  local -a cgs=()
  while (($# > 0)) && [[ $1 != -- ]]; do cgs+=("$1"); shift; done
  shift
  # shellcheck disable=SC2016  # $$ and the loop are the inner shell's
  sh -c 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs"; shift; n=$((n - 1)); done; exec "$@"' \
    sh "${#cgs[@]}" "${cgs[@]}" "$@"
}

memcg_peak() { cat "$1/memory.max_usage_in_bytes"; }

memcg_oom_kills() { awk '$1 == "oom_kill" {print $2}' "$1/memory.oom_control"; }

cpucg_seconds() { awk '{printf "%.2f", $1 / 1e9}' "$1/cpuacct.usage"; }

cgroup_remove() {
  local cg
  for cg in "$@"; do
    [[ -d $cg ]] || continue
    rmdir "$cg" 2>/dev/null || { sleep 1; rmdir "$cg"; }
  done
}

gib_floor() { awk -v b="$1" 'BEGIN { g = int(b / 1073741824 * 100) / 100; printf "%.2f\n", g < 0.01 ? 0.01 : g }'; }

told_mem_gb() { gib_floor $(( $1 - ${2:-${MEM_MARGIN:-$((64 << 20))}} )); }

# shellcheck disable=SC2034  # the RUN_ variables are the callers'
run_measured() {
  local limit=$1 out=$2 err=$3 before t0 t1
  shift 3
  local -a loops=() cgs=()
  while (($# > 0)) && [[ $1 != -- ]]; do loops+=("$1"); shift; done
  shift
  [[ -z ${BENCH_CGROUP:-} ]] || cgs+=("$BENCH_CGROUP")
  memcg_create "$MIX_CGROUP" "$limit"
  cgs+=("$MIX_CGROUP")
  if [[ -n ${CPU_CGROUP:-} ]]; then cpucg_create "$CPU_CGROUP"; cgs+=("$CPU_CGROUP"); fi
  drop_caches
  before=$(loops_read "${loops[@]}")
  t0=$(date +%s.%N)
  RUN_RC=0
  if [[ $err == "$out" ]]; then
    run_in_cgroups "${cgs[@]}" -- "$@" > "$out" 2>&1 || RUN_RC=$?
  else
    run_in_cgroups "${cgs[@]}" -- "$@" > "$out" 2> "$err" || RUN_RC=$?
  fi
  t1=$(date +%s.%N)
  RUN_DISK=$(( $(loops_read "${loops[@]}") - before ))
  RUN_PEAK=$(memcg_peak "$MIX_CGROUP")
  RUN_OOM=$(memcg_oom_kills "$MIX_CGROUP")
  RUN_CPU=""
  [[ -z ${CPU_CGROUP:-} ]] || RUN_CPU=$(cpucg_seconds "$CPU_CGROUP")
  cgroup_remove "$MIX_CGROUP" ${CPU_CGROUP:+"$CPU_CGROUP"}
  RUN_STATUS=ok
  if ((RUN_RC != 0)) || grep -qE ' (exit|signal) [0-9]' "$out"; then RUN_STATUS=failed; fi
  RUN_WALL=$(awk '/^total wall time:/ {print $4; exit}' "$out")
  [[ -n $RUN_WALL ]] || RUN_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
}
