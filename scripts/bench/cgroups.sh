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
