#!/usr/bin/env bash
# shellcheck disable=SC2153  # the options' variables are set by bench_options (lib.sh)
# Issue 30's sweep: do sequential O_DIRECT readers of a striped file get the disks' summed rate
# through the mount, at every stripe unit and file size, with and without a chunk index?
# 4 loop disks throttled to BPS bytes/s each (physical limit 4 x BPS). Every measurement is cold:
# a fresh mount of the daemon with its default options (default cache_size, empty), then the page
# cache dropped. fio (psync, --direct=1) reads the file sequentially with READERS readers in reads
# of BS bytes: one reader reads it whole, four read a quarter each (offsets 0, 1/4, 1/2, 3/4 of the
# file, as fio --offset_increment would), at once. A reader whose share is not a multiple of BS
# ends with one shorter read (a second fio job of that reader, started when its first ends: fio
# itself never shortens a read); a share smaller than BS is read in one read of the share.
# Files, one per (kind, unit, units per disk), staged once and read in every round:
#   unindexed  random bytes, exactly PER_DISK x 4 x UNIT, striped with
#              graphfs-stripe --unit UNIT --min-size 1M
#   indexed    the `column` of a weighted R-MAT graph (gen-rmat --no-permute, preprocess
#              --sort-sources, graphfs-index --chunk-size 256K: the cache's units are 256 KiB
#              chunks), only `column` striped with --unit UNIT; a column is 192 x 2^scale bytes, so
#              each cell takes the scale whose column is closest to PER_DISK x 4 x UNIT (printed
#              with the actual units per disk). Graphs are generated once into GEN_DIR and kept.
# Each measurement prints one raw line: MB/s; its ratio to the disks' summed rate (floor time =
# bytes / (4 x BPS), over the time taken); and from the mount's stats (after the run minus before
# it): each disk's busy share of the run's time (disks[i].busy_seconds), idle-while-waiting
# seconds summed over the disks, read_path.reader_wait_seconds, the size bucket of the median disk
# request (disks[i].request_sizes; the mean from bytes_read / reads), bytes from the disks. A
# figure the daemon does not report (an older daemon) prints n/a. The time of a run is its slowest
# reader's (fio's read runtime, ms). At the end, per cell and daemon, medians over the rounds;
# with several daemons the ratio of the first daemon's median MB/s to each other's and the median
# of the per-round ratios (the runs of a round are adjacent in time: the steadier figure).
# Output goes to stdout only (progress of the staging to stderr); nothing is written to results/.
#
#   scripts/bench/readahead.sh [--bps 100000000] [--repeat 3] [--units "1 4 16"] [--per-disk "3 30"]
#                              [--readers "1 4"] [--bs "24M 1M"] [--kinds "unindexed indexed"]
#                              [--daemons "NAME=BIN_DIR NAME=BIN_DIR"] [--gen-dir /var/tmp/graphfs-bench-gen]
# --units: stripe units in MiB (or with a suffix: 512K). --daemons mounts each daemon (BIN_DIR
# holds its `graphfs`) in turn for every cell of every round, in an order that turns from round to
# round (disks.sh `rotate`); without it, build/bin's daemon (name `build`). The tools that stage
# the files come from GRAPHFS_BIN (default build/bin).
# Runtime: the default sweep is 48 cells (2 kinds x 3 units x 2 sizes x 2 reader counts x 2 read
# sizes) of about 21 GB per round; at 100 MB/s per disk that is ~1 min per round and daemon at the
# disks' limit, ~3 min at a third of it, plus ~1.5 s per measurement for the mount, the dropped
# caches and the unmount: ~10-15 min for one daemon at 3 rounds, ~20-30 min for two. The first
# run also generates the graphs of scales 16, 18, 19, 20, 21 and 23 (a few minutes; 6.8 GB in
# GEN_DIR) and every run stages ~7 GB (loop disks and copies under /var/tmp/graphfs-readahead).
# The simulated disks' throttle (cgroup-v1 blk-throttle) lets one slice's worth of bytes (BPS x 20
# to 100 ms) through at once when a disk starts from idle: cells of a few MiB per disk can read
# faster than the disks' rate (share > 1); their share says little.
# Needs root (loop devices, cgroup-v1 blkio) and fio.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_options "$@" <<'EOF'
-h|--help
--bps       BPS       100000000
--repeat    REPEAT    3
--units     UNITS     "1 4 16"
--per-disk  PER_DISK  "3 30"
--readers   READERS   "1 4"
--bs        BSS       "24M 1M"
--kinds     KINDS     "unindexed indexed"
--daemons   DAEMONS   ""
--gen-dir   GEN_DIR   /var/tmp/graphfs-bench-gen
EOF
CHUNK=256K
PARTITIONS=8
die() { echo "readahead: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "run as root (loop disks, cgroups)"
command -v fio >/dev/null || die "fio is missing (scripts/setup installs it)"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat: a positive number"
[[ $BPS =~ ^[1-9][0-9]*$ ]] || die "--bps: bytes per second"
for r in $READERS; do [[ $r =~ ^[1-9][0-9]*$ ]] || die "--readers: positive numbers, not $r"; done
for p in $PER_DISK; do [[ $p =~ ^[1-9][0-9]*$ ]] || die "--per-disk: positive numbers, not $p"; done
for k in $KINDS; do [[ $k == unindexed || $k == indexed ]] || die "--kinds: unindexed and/or indexed, not $k"; done
[ -n "$DAEMONS" ] || DAEMONS="build=$GRAPHFS_BIN"
for d in $DAEMONS; do
  [[ $d == *=* ]] || die "--daemons: NAME=BIN_DIR, not $d"
  [ -x "${d#*=}/graphfs" ] || die "no daemon at ${d#*=}/graphfs"
done
for t in graphfs-stripe gen-rmat preprocess graphfs-index; do
  [ -x "$GRAPHFS_BIN/$t" ] || { "$ROOT/scripts/setup" >&2; break; }
done

# size_bytes SIZE: MiB when a bare number (units), else numfmt's IEC (512K, 24M).
size_bytes() { if [[ $1 =~ ^[0-9]+$ ]]; then echo $(($1 << 20)); else numfmt --from=iec "$1"; fi; }
# size_label BYTES: 1M, 512K, 24M; 1.5G (numfmt) when not a whole number of K, M or G.
size_label() {
  local b=$1 u
  for u in G:30 M:20 K:10; do
    if (( b >= 1 << ${u#*:} && b % (1 << ${u#*:}) == 0 )); then echo "$((b >> ${u#*:}))${u%:*}"; return; fi
  done
  numfmt --to=iec "$b"
}

BENCH_ROOT=/var/tmp/graphfs-readahead
BENCH_CGROUP=/sys/fs/cgroup/blkio/graphfs-readahead
case "$(realpath -m "$GEN_DIR")/" in "$BENCH_ROOT"/*) die "--gen-dir must lie outside $BENCH_ROOT (removed at the end)" ;; esac
MNT=$BENCH_ROOT/mnt
bench_on_exit destroy_disks
bench_on_exit quietly unmount_graphfs "$MNT"

# 1. The layouts: one file per (kind, unit, units per disk).
LAYOUTS=()
declare -A L_KIND L_UNIT L_FILE L_BYTES L_DESC L_SCALE
for kind in $KINDS; do
  for u in $UNITS; do
    ub=$(size_bytes "$u")
    (( ub > 0 && ub % 4096 == 0 )) || die "--units: $u is not a multiple of 4K"
    for p in $PER_DISK; do
      id="${kind:0:1}-u$(size_label "$ub")-p$p"
      want=$((p * 4 * ub))
      LAYOUTS+=("$id")
      L_KIND[$id]=$kind
      L_UNIT[$id]=$ub
      if [ "$kind" = unindexed ]; then
        L_FILE[$id]=$id/data
        L_BYTES[$id]=$want
        L_DESC[$id]="unindexed unit $(size_label "$ub") ${p}/disk"
      else
        best=10
        for ((s = 10; s <= 30; s++)); do
          d1=$(( (192 << s) - want )); d2=$(( (192 << best) - want ))
          if (( ${d1#-} < ${d2#-} )); then best=$s; fi
        done
        L_SCALE[$id]=$best
        L_FILE[$id]=$id/column
        L_BYTES[$id]=$((192 << best))   # the generated column's size is checked below
      fi
    done
  done
done

# 2. The graphs of the indexed layouts, generated once into GEN_DIR (renamed into place when
# complete, so an interrupted generation starts over).
graph_dir() { echo "$GEN_DIR/rmat${1}l-p$PARTITIONS-c$CHUNK"; }
gen_graph() {
  local s=$1 dir
  dir=$(graph_dir "$s")
  if [ ! -d "$dir" ]; then
    echo "generating the weighted R-MAT graph of scale $s (once, into $dir)" >&2
    mkdir -p "$GEN_DIR"
    rm -rf "$dir.tmp" "$dir.tmp.bin"
    "$GRAPHFS_BIN/gen-rmat" --scale "$s" --weighted --seed 1 --no-permute -o "$dir.tmp.bin" >&2
    "$GRAPHFS_BIN/preprocess" -i "$dir.tmp.bin" -o "$dir.tmp" -v $((1 << s)) -p "$PARTITIONS" -t 1 --sort-sources >&2
    rm -f "$dir.tmp.bin"
    mv "$dir.tmp" "$dir"
  fi
  # Fast when the index is up to date; a stale one (or one of another chunk size) is rebuilt.
  "$GRAPHFS_BIN/graphfs-index" -q --chunk-size "$CHUNK" "$dir" >&2 ||
    "$GRAPHFS_BIN/graphfs-index" -q --force --chunk-size "$CHUNK" "$dir" >&2
}
declare -A GENERATED=()
for id in "${LAYOUTS[@]}"; do
  [ "${L_KIND[$id]}" = indexed ] || continue
  s=${L_SCALE[$id]}
  if [ -z "${GENERATED[$s]:-}" ]; then gen_graph "$s"; GENERATED[$s]=1; fi
  L_BYTES[$id]=$(stat -c %s "$(graph_dir "$s")/column")
  ub=${L_UNIT[$id]}
  L_DESC[$id]="indexed unit $(size_label "$ub") $(awk -v b="${L_BYTES[$id]}" -v u="$ub" 'BEGIN { printf "%.3g", b / 4 / u }')/disk (scale $s)"
done

# 3. Four disks with room for every layout's parts, then the files, striped.
per_disk=0
for id in "${LAYOUTS[@]}"; do
  ub=${L_UNIT[$id]}
  units=$(( (L_BYTES[$id] + ub - 1) / ub ))
  units=$(( (units + 3) / 4 ))   # on the disk that gets the most
  per_disk=$(( per_disk + units * ub ))
done
make_disks 4 $(( per_disk + per_disk / 8 + (512 << 20) ))
SRC=$BENCH_ROOT/src
mkdir -p "$SRC"
disk_list=$(disks_csv)
for id in "${LAYOUTS[@]}"; do
  ub=${L_UNIT[$id]}
  echo "staging $id: ${L_DESC[$id]}, ${L_BYTES[$id]} B" >&2
  if [ "${L_KIND[$id]}" = unindexed ]; then
    mkdir -p "$SRC/$id"
    head -c "${L_BYTES[$id]}" /dev/urandom > "$SRC/$id/data"
    "$GRAPHFS_BIN/graphfs-stripe" -q --parity 0 --compress none --unit "$ub" --min-size 1M --disks "$disk_list" "$SRC/$id" >&2
  else
    # cp -a keeps the mtimes: the index stays fresh. Only `column` is striped; the rest of the
    # graph stays in the source directory.
    cp -a "$(graph_dir "${L_SCALE[$id]}")" "$SRC/$id"
    "$GRAPHFS_BIN/graphfs-stripe" -q --parity 0 --compress none --unit "$ub" --min-size 1M --disks "$disk_list" "$SRC/$id/column" >&2
  fi
done
throttle "$BPS" 0

# 4. The measurements.
RECORDS=$BENCH_ROOT/records.jsonl
: > "$RECORDS"

# fio_job FILE BYTES READERS BS: a fio job file: READERS sections r0.. reading their share in reads
# of BS (at most the share), and for a share that is not a multiple of that, a section t<k> reading
# the rest in one read once r<k> is done. Shares are multiples of 4K (O_DIRECT); the last reader's
# runs to the file's last whole 4K.
fio_job() {
  local file=$1 bytes=$2 readers=$3 bs=$4 k share off len b main
  share=$(( bytes / readers / 4096 * 4096 ))
  printf '[global]\nfilename=%s\nrw=read\nioengine=psync\ndirect=1\n' "$file"
  for ((k = 0; k < readers; k++)); do
    off=$((k * share))
    len=$share
    if (( k == readers - 1 )); then len=$(( bytes / 4096 * 4096 - off )); fi
    b=$(( bs < len ? bs : len ))
    b=$(( b / 4096 * 4096 ))
    main=$(( len / b * b ))
    printf '[r%d]\noffset=%d\nsize=%d\nbs=%d\n' "$k" "$off" "$main" "$b"
    if (( len > main )); then
      printf '[t%d]\noffset=%d\nsize=%d\nbs=%d\nwait_for=r%d\n' "$k" $((off + main)) $((len - main)) $((len - main)) "$k"
    fi
  done
}

stats_snapshot() { cat "$MNT/.graphfs/stats" > "$1" 2>/dev/null || echo '{}' > "$1"; }

# measure LAYOUT READERS BS NAME=BIN_DIR ROUND: one cold run; a raw line on stdout, a record in RECORDS.
measure() {
  local id=$1 readers=$2 bs=$3 daemon=$4 round=$5 pid k
  DAEMON_BIN=${daemon#*=} mount_graphfs "$SRC" "$MNT" ""
  pid=$GRAPHFS_PID
  fio_job "$MNT/${L_FILE[$id]}" "${L_BYTES[$id]}" "$readers" "$bs" > "$BENCH_ROOT/job.fio"
  drop_caches
  stats_snapshot "$BENCH_ROOT/before.json"
  if ! fio --output-format=json "$BENCH_ROOT/job.fio" > "$BENCH_ROOT/fio.json" 2> "$BENCH_ROOT/fio.err"; then
    echo "fio failed on $id (${daemon%%=*}):" >&2
    cat "$BENCH_ROOT/fio.err" >&2
    echo '{"jobs": []}' > "$BENCH_ROOT/fio.json"
  fi
  stats_snapshot "$BENCH_ROOT/after.json"
  unmount_graphfs "$MNT"
  # The next mount starts after this daemon has gone.
  for ((k = 0; k < 100; k++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  CELL="${L_DESC[$id]}, $readers reader$([ "$readers" = 1 ] || echo s), bs $(size_label "$bs")" \
  DAEMON=${daemon%%=*} ROUND=$round BYTES=${L_BYTES[$id]} \
    python3 - "$HERE" "$BENCH_ROOT" "$RECORDS" "$BPS" <<'PY'
import json, os, sys
here, root, records, bps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, here)
import io_stats
fio = json.load(open(f"{root}/fio.json"))
per_reader, io_bytes = {}, 0
for j in fio.get("jobs", []):
    r = j["jobname"][1:]
    per_reader[r] = per_reader.get(r, 0) + j["read"]["runtime"] / 1000
    io_bytes += j["read"]["io_bytes"]
t = max(per_reader.values(), default=0)
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return {}
s = io_stats.summarize(load(f"{root}/after.json"), load(f"{root}/before.json"), t or None)
mbps = io_bytes / 1e6 / t if t else None
rec = {"cell": os.environ["CELL"], "daemon": os.environ["DAEMON"], "round": int(os.environ["ROUND"]),
       "bytes": int(os.environ["BYTES"]), "io_bytes": io_bytes, "seconds": t, "mbps": mbps,
       "ratio": mbps / (4 * bps / 1e6) if mbps else None,
       "busy": [d["busy_share"] for d in s["disks"]], "iww": s["idle_while_waiting_sum"],
       "wait": s["reader_wait_seconds"], "req": s["median_request"], "mean_req": s["mean_request"],
       "disk_bytes": s["bytes_read"]}
open(records, "a").write(json.dumps(rec) + "\n")
f = io_stats.fmt
short = "" if io_bytes == rec["bytes"] else f" (read {io_bytes} of {rec['bytes']} B)"
print(f"round {rec['round']}  {rec['cell']:<44} {rec['daemon']:>6}: {f(mbps, '7.1f')} MB/s  {f(rec['ratio'], '.3f')} of the disks"
      f" in {t:.3f} s (floor {io_bytes / (4 * bps):.3f} s){short}; busy {' '.join(io_stats.fmt_share(b) for b in rec['busy']) or 'n/a'};"
      f" idle while waiting {f(rec['iww'], '.2f')} s; readers waited {f(rec['wait'], '.2f')} s;"
      f" requests median {rec['req'] or 'n/a'} (mean {io_stats.kib(rec['mean_req'])} KiB);"
      f" {f(rec['disk_bytes'] / 2**20 if rec['disk_bytes'] is not None else None, '.1f')} MiB from the disks", flush=True)
PY
}

read -r -a DAEMON_LIST <<< "$DAEMONS"
ncells=$(( ${#LAYOUTS[@]} * $(wc -w <<< "$READERS") * $(wc -w <<< "$BSS") ))
echo "# readahead sweep: 4 disks x $BPS B/s (limit $((4 * BPS / 1000000)) MB/s), $ncells cells x $REPEAT round(s), daemons: $DAEMONS; cold runs, fio psync direct=1, default mount options"
for id in "${LAYOUTS[@]}"; do echo "#   $id: ${L_DESC[$id]}, ${L_BYTES[$id]} B"; done
for ((round = 1; round <= REPEAT; round++)); do
  for id in "${LAYOUTS[@]}"; do
    for readers in $READERS; do
      for bs in $BSS; do
        bsb=$(size_bytes "$bs")
        (( bsb > 0 && bsb % 4096 == 0 )) || die "--bs: $bs is not a multiple of 4K"
        # shellcheck disable=SC2046
        for d in $(rotate $((round - 1)) "${DAEMON_LIST[@]}"); do
          measure "$id" "$readers" "$bsb" "$d" "$round"
        done
      done
    done
  done
done

# 5. Medians per cell and daemon.
echo
echo "== medians of $REPEAT round(s): MB/s, share of the disks' summed rate (4 x $BPS B/s), each disk's busy share of the run's time, idle-while-waiting s (summed over disks), readers' wait s, median disk request"
python3 - "$RECORDS" "${DAEMON_LIST[@]%%=*}" <<'PY'
import json, statistics, sys
records, names = sys.argv[1], sys.argv[2:]
cells, rows = [], {}
for line in open(records):
    r = json.loads(line)
    if r["cell"] not in cells:
        cells.append(r["cell"])
    rows.setdefault((r["cell"], r["daemon"]), []).append(r)
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None
def f(x, spec):
    return "n/a" if x is None else format(x, spec)
LABELS = ["<=64K", "<=256K", "<=1M", "<=4M", "<=16M", "<=64M", ">64M"]
def med_label(xs):
    idx = [LABELS.index(x) for x in xs if x in LABELS]
    return LABELS[int(statistics.median_low(idx))] if idx else "n/a"
print(f"{'cell':<62} {'daemon':>6} {'MB/s':>7} {'share':>6}  {'busy per disk':<19} {'idle-w-w':>8} {'wait':>7} {'request':>7}  runs (MB/s)")
for cell in cells:
    first = None
    for n in names:
        rs = sorted(rows.get((cell, n), []), key=lambda r: r["round"])
        if not rs:
            continue
        m = med(r["mbps"] for r in rs)
        ndisks = max((len(r["busy"]) for r in rs), default=0)
        busy = " ".join(f(med(r["busy"][i] for r in rs if i < len(r["busy"])), ".0%") for i in range(ndisks))
        line = (f"{cell:<62} {n:>6} {f(m, '.1f'):>7} {f(med(r['ratio'] for r in rs), '.3f'):>6}  {busy or 'n/a':<19} "
                f"{f(med(r['iww'] for r in rs), '.2f'):>8} {f(med(r['wait'] for r in rs), '.2f'):>7} {med_label([r['req'] for r in rs]):>7}  "
                + " ".join(f(r["mbps"], ".0f") for r in rs))
        if first is None:
            first = (n, m, {r["round"]: r["mbps"] for r in rs})
        elif m:
            paired = med(first[2][r["round"]] / r["mbps"] for r in rs if r["mbps"] and first[2].get(r["round"]))
            line += f"   {first[0]}/{n} {f(first[1] / m if first[1] else None, '.2f')}x (per round {f(paired, '.2f')}x)"
        print(line)
PY
