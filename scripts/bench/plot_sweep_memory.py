#!/usr/bin/env python3
"""The memory sweep's table and plot (scripts/bench/sweep.sh).

usage: plot_sweep_memory.py TSV PNG [--title TEXT]

Reads sweep.sh's runs (one row per run: round, f, config, ...) and prints, per f and
configuration, the medians over the rounds: wall time with its floors beside it (disk: bytes / the
side's bandwidth; CPU: CPU seconds / cores), disk MiB read, the memory (limit / peak: for graphfs,
the mount's budget and the jobs' peak + the daemon's peak RSS), what the apps were told, their
O_DIRECT streams, and the wall time's ratio to the better plain row (plain, plain-btrfs) at that f
— for graphfs integrated, the figure issue 42 asks for. A run stopped by sweep.sh's --max-wall
(status "stopped") has a lower bound for its time: its wall is printed "> T", a ratio to it
"< R" (an upper bound) and its own ratio to a plain row that finished "> R". Then whether every run's results equal the
plain ext4 run's of the same round and f. Draws PNG: wall time (solid; disk floor dotted) and disk
MiB read against f, one line per configuration.
"""
import argparse
import csv
import statistics
from collections import defaultdict
from fractions import Fraction

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ORDER = ["integrated", "integrated-alt", "unmodified", "plain", "plain-btrfs"]
PLAIN = ("plain", "plain-btrfs")
LABEL = {"integrated": "graphfs integrated", "unmodified": "graphfs unmodified",
         "integrated-alt": "graphfs integ. alt",
         "plain": "plain ext4", "plain-btrfs": "plain btrfs zstd:1"}

ap = argparse.ArgumentParser()
ap.add_argument("tsv")
ap.add_argument("png")
ap.add_argument("--title", default="")
args = ap.parse_args()

rows = list(csv.DictReader(open(args.tsv), delimiter="\t"))
runs = defaultdict(list)
for r in rows:
    runs[(r["f"], r["config"])].append(r)
fractions = sorted({r["f"] for r in rows}, key=lambda f: Fraction(f))
configs = sorted({r["config"] for r in rows}, key=lambda c: ORDER.index(c) if c in ORDER else len(ORDER))


def med(f, c, key):
    vals = [float(r[key]) for r in runs[(f, c)] if r[key] not in ("", "-")]
    return statistics.median(vals) if vals else None


def stopped(f, c):
    return any(r["status"] == "stopped" for r in runs[(f, c)])


def mib(x):
    return "-" if x is None else str(int(x) >> 20)


print(f"{'f':>5} {'config':<20} {'runs':>4} {'wall s':>9} {'floors: disk':>12} {'cpu':>6} {'disk MiB':>9} "
      f"{'memory MiB: limit / peak':>26} {'told GiB':>9} {'O_DIRECT':>8} {'vs best plain':>13}")
for f in fractions:
    walls = {c: med(f, c, "wall_s") for c in configs if runs[(f, c)]}
    plains = [walls[c] for c in PLAIN if walls.get(c) is not None]
    best = min(plains) if plains else None
    best_bound = any(stopped(f, c) and walls[c] == best for c in PLAIN if walls.get(c) is not None)
    for c in configs:
        if not runs[(f, c)]:
            continue
        graphfs = c not in PLAIN
        limit = (f"mem={mib(med(f, c, 'memory'))}" if graphfs else mib(med(f, c, "mem_limit")))
        peak = med(f, c, "total_peak")
        if graphfs:
            mem = f"{limit} / {mib(med(f, c, 'jobs_peak'))}+{mib(med(f, c, 'daemon_peak'))}={mib(peak)}"
        else:
            mem = f"{limit} / {mib(peak)}"
        told = runs[(f, c)][0]["mem_gb"]
        ratio = "-"
        if best and walls[c] is not None and not (best_bound and stopped(f, c)):  # two bounds: no ratio
            ratio = ("< " if best_bound else "> " if stopped(f, c) else "") + f"{walls[c] / best:.2f}x"
        cpu = med(f, c, "cpu_floor_s")
        wall = ("> " if stopped(f, c) else "") + f"{walls[c]:.2f}"
        print(f"{f:>5} {LABEL.get(c, c):<20} {len(runs[(f, c)]):>4} {wall:>9} {med(f, c, 'disk_floor_s'):>12.2f} "
              f"{'-' if cpu is None else f'{cpu:.2f}':>6} {mib(med(f, c, 'disk_bytes')):>9} {mem:>26} {told:>9} "
              f"{med(f, c, 'direct_streams'):>8.0f} {ratio:>13}")
print("(floors: disk = bytes read / the side's disks' summed bandwidth; cpu = CPU seconds / cores, the jobs' "
      "cpuacct cgroup + the daemon's CPU; graphfs memory: the mount's budget / the jobs' cgroup peak + the daemon's "
      "peak RSS; plain: the cgroup's limit / peak, the apps told the limit less the margin)")

# The jobs' results against plain ext4's of the same round and f: bfs, wcc and sssp exactly,
# pagerank-delta's sum of ranks within 1e-6 relative (as scripts/demo compares it): the order of
# its float sums follows how the reads split the file, and the same engines on plain ext4 and
# plain btrfs differ by 2e-8 at scale 24 (BENCHMARKS.md, the sweep's row 2).
RANKS = "sum of ranks "


def same_results(a, b):
    pa, pb = a.split(";"), b.split(";")
    if len(pa) != len(pb):
        return False
    for x, y in zip(pa, pb):
        if x.startswith(RANKS) and y.startswith(RANKS):
            try:
                u, v = float(x[len(RANKS):]), float(y[len(RANKS):])
            except ValueError:
                return False
            if abs(u - v) > 1e-6 * max(abs(u), abs(v)):
                return False
        elif x != y:
            return False
    return True


ref = {(r["round"], r["f"]): r["results"] for r in rows if r["config"] == "plain" and r["status"] != "stopped"}
bad = [r for r in rows if r["status"] != "stopped" and (r["round"], r["f"]) in ref
       and not same_results(r["results"], ref[(r["round"], r["f"])])]
failed = [r for r in rows if r["status"] not in ("ok", "stopped")]
if not ref:
    print("results: no plain ext4 run to compare with")
elif bad:
    for r in bad:
        print(f"results DIFFER from plain ext4's: round {r['round']} f={r['f']} {r['config']}: {r['results']} "
              f"(plain: {ref[(r['round'], r['f'])]})")
else:
    print(f"results: every run's equal plain ext4's of its round and f ({len(rows)} runs; pagerank-delta's sum of "
          "ranks within 1e-6 relative)")
for r in failed:
    print(f"FAILED: round {r['round']} f={r['f']} {r['config']} ({r['log']})")
for r in rows:
    if r["status"] == "stopped":
        print(f"STOPPED by --max-wall after {float(r['wall_s']):.0f} s: round {r['round']} f={r['f']} {r['config']} ({r['log']})")

fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(11, 4.2))
xs = [float(Fraction(f)) for f in fractions]
for i, c in enumerate(configs):
    pts = [(x, med(f, c, "wall_s"), med(f, c, "disk_floor_s"), med(f, c, "disk_bytes"))
           for x, f in zip(xs, fractions) if runs[(f, c)]]
    if not pts:
        continue
    color = f"C{i}"
    ax_t.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=LABEL.get(c, c))
    ax_t.plot([p[0] for p in pts], [p[2] for p in pts], ":", color=color, alpha=0.7)
    ax_b.plot([p[0] for p in pts], [p[3] / 2**20 for p in pts], "o-", color=color, label=LABEL.get(c, c))
for ax in (ax_t, ax_b):
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels(fractions)
    ax.set_xlabel("f: memory / the graph's raw column + row bytes")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
ax_t.set_ylabel("wall time, s (median; dotted: disk floor)")
ax_b.set_ylabel("MiB read from the disks (median)")
ax_t.legend(fontsize=8)
fig.suptitle(f"memory sweep at equal total memory{': ' + args.title if args.title else ''}", fontsize=10)
fig.tight_layout()
fig.savefig(args.png, dpi=120)
print(f"# plot: {args.png}")
