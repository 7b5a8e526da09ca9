# shellcheck shell=bash
# The bench scripts' shared library: every scripts/bench/*.sh sources this file first,
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# It sets ROOT (the checkout), HERE (scripts/bench) and GRAPHFS_BIN (the binaries: the
# environment's GRAPHFS_BIN, else build/bin), installs the exit handler, and sources its parts,
# one responsibility each:
#   disks.sh    simulated disks: loop devices with ext4 (or btrfs with zstd), the blkio throttle, the
#               graphfs daemon on them, dropping the page cache (scripts/demo sources it, cgroups.sh
#               and measure.sh on their own)
#   cgroups.sh  the jobs' cgroups: memory limit and peak, CPU accounting, running a command inside,
#               one measured run (run_measured), what engines are told of their memory
#   graphs.sh   the benchmark graphs: generated, preprocessed and indexed once into a GEN_DIR; the
#               job mixes over them
#   measure.sh  clocks, medians, round orders, paired summaries, cache budgets, CPU seconds, the
#               per-second disk trace
# This file holds the scripts' plumbing:
#   bench_options ARGS... <<TABLE  parses the command line against the script's option table:
#                                  sets each option's variable to its default, then to what the
#                                  command line says (the table's format is below)
#   bench_help                     prints the script's usage: its header comment, from line 2 to
#                                  `set -euo pipefail` (shellcheck directives left out)
#   bench_on_exit CMD [ARG...]     runs CMD ARG... (as given now) when the script exits, also on
#                                  Ctrl-C and TERM (exit status 130); the last registered runs
#                                  first; a failure does not stop the others
#   quietly CMD [ARG...]           runs CMD with its stderr discarded (for bench_on_exit)
#   bench_setup                    scripts/setup, quietly: installs missing packages and builds
#                                  build/; only the packages when GRAPHFS_BIN came from the
#                                  environment (the caller chose the binaries)
#   bench_results                  RESULTS=scripts/bench/results (made; git ignores it) and
#                                  STAMP, the UTC minute (20261125T0930Z), for the raw output's names

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/scripts/bench
BENCH_BIN_GIVEN=${GRAPHFS_BIN:+1}
GRAPHFS_BIN=${GRAPHFS_BIN:-$ROOT/build/bin}

# shellcheck source=disks.sh
. "$HERE/disks.sh"
# shellcheck source=cgroups.sh
. "$HERE/cgroups.sh"
# shellcheck source=graphs.sh
. "$HERE/graphs.sh"
# shellcheck source=measure.sh
. "$HERE/measure.sh"

# The option table (stdin of bench_options): one option a line, shell words, # comments:
#   FLAG VARIABLE DEFAULT [KIND]
# FLAG may list spellings (-n|--name); DEFAULT is expanded when the table is read ("${X:-}" keeps
# the environment's X). KIND:
#   (none)   the option takes a value: VARIABLE=value
#   bytes    a value with an IEC suffix (256M): VARIABLE=its bytes (numfmt --from=iec); the
#            default too
#   =TEXT    a switch, no value: VARIABLE=TEXT
#   +        the option is passed on: " FLAG value" appended to VARIABLE
#   +=       a switch passed on: " FLAG" appended to VARIABLE
# Two special lines: `-h|--help` alone (the script prints its usage: bench_help) and
# `... ARRAY` (the arguments that are not options go to the array ARRAY; without it they are
# refused). An unknown option, or one without its value, ends the script with status 2.
bench_options() {
  local _o_line _o_flag _o_words _o_var _o_kind _o_value _o_i _o_found _o_help=0 _o_rest=""
  local -a _o_row _o_flags=() _o_vars=() _o_kinds=()
  while IFS= read -r _o_line; do
    [[ $_o_line =~ ^[[:space:]]*(#|$) ]] && continue
    read -r _o_flag _o_words <<< "$_o_line"
    eval "_o_row=($_o_words)"  # VARIABLE DEFAULT KIND: the script's own words, expanded now
    case $_o_flag in
      -h\|--help) _o_help=1; continue ;;
      ...) _o_rest=${_o_row[0]}; eval "$_o_rest=()"; continue ;;
    esac
    ((${#_o_row[@]} >= 2)) || { echo "bench_options: '$_o_line': FLAG VARIABLE DEFAULT [KIND]" >&2; exit 2; }
    _o_flags+=("|$_o_flag|")
    _o_vars+=("${_o_row[0]}")
    _o_kinds+=("${_o_row[2]:-}")
    _o_value=${_o_row[1]}
    if [[ ${_o_row[2]:-} == bytes && -n $_o_value ]]; then _o_value=$(numfmt --from=iec "$_o_value"); fi
    printf -v "${_o_row[0]}" '%s' "$_o_value"
  done
  while (($# > 0)); do
    if [[ $1 != -* ]] && [[ -n $_o_rest ]]; then
      local -n _o_array=$_o_rest
      _o_array+=("$1")
      unset -n _o_array
      shift
      continue
    fi
    if ((_o_help)) && [[ $1 == -h || $1 == --help ]]; then bench_help; exit 0; fi
    _o_found=""
    for _o_i in "${!_o_flags[@]}"; do
      [[ ${_o_flags[_o_i]} == *"|$1|"* ]] && { _o_found=$_o_i; break; }
    done
    [[ -n $_o_found ]] || { echo "$(basename "$0"): unknown option $1" >&2; exit 2; }
    _o_var=${_o_vars[_o_found]}
    _o_kind=${_o_kinds[_o_found]}
    case $_o_kind in
      =*) printf -v "$_o_var" '%s' "${_o_kind#=}"; shift; continue ;;
      +=) printf -v "$_o_var" '%s %s' "${!_o_var}" "$1"; shift; continue ;;
    esac
    (($# >= 2)) || { echo "$(basename "$0"): $1 needs a value" >&2; exit 2; }
    case $_o_kind in
      "") _o_value=$2 ;;
      bytes) _o_value=$(numfmt --from=iec "$2") ;;
      +) _o_value="${!_o_var} $1 $2" ;;
      *) echo "bench_options: unknown kind '$_o_kind' of $1" >&2; exit 2 ;;
    esac
    printf -v "$_o_var" '%s' "$_o_value"
    shift 2
  done
}

bench_help() { sed -n '2,/^set -euo pipefail/p' "$0" | sed '$d; /^# shellcheck /d; s/^# \{0,1\}//'; }

BENCH_EXIT=()
bench_on_exit() { BENCH_EXIT+=("$(printf '%q ' "$@")"); }
bench_exit() {
  local i
  for ((i = ${#BENCH_EXIT[@]} - 1; i >= 0; i--)); do
    eval "${BENCH_EXIT[i]}" || true
  done
}
quietly() { "$@" 2>/dev/null; }
trap bench_exit EXIT
trap 'exit 130' INT TERM

bench_setup() {
  if [[ -n $BENCH_BIN_GIVEN ]]; then
    "$ROOT/scripts/setup" --no-build >/dev/null
  else
    "$ROOT/scripts/setup" >/dev/null
  fi
}

# shellcheck disable=SC2034  # RESULTS and STAMP are the scripts'
bench_results() {
  RESULTS=$HERE/results
  mkdir -p "$RESULTS"
  STAMP=$(date -u +%Y%m%dT%H%MZ)
}
