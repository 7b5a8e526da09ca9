# shellcheck shell=bash
# Measuring and summarizing (sourced through lib.sh):
#   now                    the clock: seconds since the epoch, with nanoseconds
#   elapsed T0 [T1]        T1 (default: now) - T0 in seconds, as bc -l prints it (.25 below one)
#   median X...            the median of the numbers (the mean of the middle two for an even count)
#   median_low X...        the lower middle one for an even count
#   rotate N A B C ...     the arguments rotated left by N, one a line: the sides of a round in an
#                          order that changes from round to round, so that no side always runs first
#   paired_summary LOG PREFIX LABEL rate|time
#                          one table row from the runs of the sides plain, auto and off in LOG
#   cache_budget BYTES FRACTION
#                          FRACTION x BYTES rounded down to whole 4 KiB pages (a cache_size);
#                          FRACTION may be a quotient (1/4)
#   machine_cpu_seconds    the whole machine's busy CPU seconds so far (/proc/stat: all but idle
#                          and iowait): kernel threads too (loop workers, btrfs decompression),
#                          and whatever else runs on the machine
#   trace_start OUT MOUNT|- LOOP...
#                          scripts/bench/disk_trace.py recording in the background (one line a
#                          second: the loops' bytes, the mount's reader wait, CPU); trace_stop
#                          ends it (register `bench_on_exit trace_stop`: a background job ignores
#                          Ctrl-C)

now() { date +%s.%N; }

elapsed() { echo "${2:-$(now)} - $1" | bc -l; }

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

median_low() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

rotate() {
  local n=$1
  shift
  local k
  for ((k = 0; k < $#; k++)); do
    local i=$(((k + n) % $# + 1))
    echo "${!i}"
  done
}

# paired_summary LOG PREFIX LABEL rate|time: one table row from the runs logged in LOG as
# "PREFIX<side> round <n>: <value> ..." for the sides plain, auto and off: each side's median,
# its ratio to plain's median, and the median of the per-round ratios to plain (the runs of a
# round are adjacent in time and share the machine's mood: on a noisy disk that is the
# steadier figure). rate: higher is better, ratios in %; time: ratios as ×.
paired_summary() {
  python3 - "$@" <<'PY'
import re, statistics, sys
log, prefix, label, style = sys.argv[1:5]
rounds = {}
for line in open(log):
    if line.startswith(prefix):
        m = re.search(r"(\w+) round (\d+): ([\d.]+)", line[len(prefix):])
        rounds.setdefault(int(m[2]), {})[m[1]] = float(m[3])
sides = ("plain", "auto", "off")
med = {s: statistics.median(r[s] for r in rounds.values()) for s in sides}
pair = {s: statistics.median(r[s] / r["plain"] for r in rounds.values()) for s in sides}
ratio = (lambda x: "%6.0f%%" % (100 * x)) if style == "rate" else (lambda x: "%6.2fx" % x)
value = (lambda x: "%9.0f" % x) if style == "rate" else (lambda x: "%9.2f" % x)
runs = " | ".join(s + ": " + " ".join("%.6g" % r[s] for r in rounds.values()) for s in sides)
print(label, value(med["plain"]), *(value(med[s]) + " " + ratio(med[s] / med["plain"]) + " " + ratio(pair[s])
                                    for s in sides[1:]), "  (" + runs + ")")
PY
}

cache_budget() { python3 -c "print(int($1 * $2) // 4096 * 4096)"; }

machine_cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i; printf "%.2f\n", (t - $5 - $6) / hz; exit }' /proc/stat
}

TRACER=""
trace_start() {
  python3 "$HERE/disk_trace.py" record "$@" &
  TRACER=$!
}
trace_stop() {
  [[ -n $TRACER ]] || return 0
  kill "$TRACER" 2>/dev/null || true
  wait "$TRACER" 2>/dev/null || true
  TRACER=""
}
