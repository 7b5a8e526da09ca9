#!/usr/bin/env python3
"""Summary of scripts/bench/peer.sh: graphfs against GraphSO (and plain) at equal total memory.

usage: peer_summary.py RUNS.tsv --bps BYTES_PER_S --cores N [--target 0.8]
       peer_summary.py --line RUNS.tsv --bps BYTES_PER_S --cores N     (the last run, one line)
       peer_summary.py --graphso-results GRAPH_DIR VERTICES              (GraphSO's result files)

RUNS.tsv (written by peer.sh): round, side, wall_s, disk_bytes, cpu_s, jobs_cpu_s, daemon_cpu_s,
mem_limit, jobs_peak, daemon_peak, total, status, log.
Per side, the medians over the rounds of: wall time, bytes from the side's disks and the I/O floor
(bytes / BPS, the disks' summed bandwidth), CPU seconds and the CPU floor (CPU s / cores), the
memory limit and peak. Then graphfs / GraphSO: the ratio of the medians and the median of the
per-round ratios (a round's runs are adjacent in time), against the target. Then the equal-work
check: our jobs' result lines (run-jobs' table) beside GraphSO's results read from its files
(the --graphso-results line peer.sh writes into GraphSO's log) and GraphSO's per-iteration update
counts (its "ITER: ACTIVE" lines: the updates BFS, SSSP and WCC made in the iteration before).
"""
import argparse
import array
import csv
import os
import re
import statistics
import sys

MIB = 1 << 20


def read_runs(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def num(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def fmt_mib(value):
    v = num(value)
    return "-" if v is None else "%d" % (v / MIB)


def run_line(r, bps, cores):
    wall, disk, cpu = float(r["wall_s"]), float(r["disk_bytes"]), float(r["cpu_s"])
    text = (f"round {r['round']} {r['side']}: {wall:.2f} s, {disk / 1e9:.2f} GB from its disks (I/O floor "
            f"{disk / bps:.2f} s), CPU {cpu:.1f} s (floor {cpu / cores:.1f} s on {cores} cores"
            + (f"; jobs {float(r['jobs_cpu_s']):.1f} + daemon {float(r['daemon_cpu_s']):.1f}" if r["side"] == "graphfs" else "")
            + f"), memory limit {fmt_mib(r['mem_limit'])} MiB, peak {fmt_mib(r['jobs_peak'])} MiB")
    if r["side"] == "graphfs":
        text += f", daemon peak RSS {fmt_mib(r['daemon_peak'])} MiB: total {fmt_mib(r['total'])} MiB"
    if r["status"] != "ok":
        text += f"  [{r['status']}]"
    return text


# Result lines of our jobs (run-jobs' table) and of GraphSO (peer_summary --graphso-results).
OURS = {
    "pagerank": re.compile(r"pagerank: sum of ranks ([0-9.]+) over \d+ vertices after (\d+) iterations"),
    "wcc": re.compile(r"wcc: (\d+) components among \d+ vertices after (\d+) iterations"),
    "sssp": re.compile(r"sssp: reached (\d+) of \d+ vertices from -?\d+, max distance \S+, (\d+) iterations"),
    "bfs": re.compile(r"bfs: discovered (\d+) of \d+ vertices from -?\d+, depth (\d+)"),
}
PASSES = re.compile(r"^\d+\s+(\S+)\s.*?(\d+) passes in [0-9.]+ s", re.M)
GRAPHSO = re.compile(r"^graphso result: pagerank sum of ranks ([0-9.naif]+); wcc (\d+) components; "
                     r"sssp reached (\d+); bfs parents (\d+)", re.M)
GRAPHSO_ITER = re.compile(r"^\s*(\d+): (-?\d+)\s*$", re.M)
GRAPHSO_TIME = re.compile(r"^(\d+) iterations of concurrent jobs took ([0-9.]+) seconds", re.M)


def ours_results(log):
    text = open(log, errors="replace").read()
    out = {}
    for app, rx in OURS.items():
        m = rx.search(text)
        if m:
            out[app] = (m.group(1), m.group(2))
    passes = {m.group(1): int(m.group(2)) for m in PASSES.finditer(text)}
    return out, passes


def graphso_results(log):
    text = open(log, errors="replace").read()
    m = GRAPHSO.search(text)
    iters = [(int(a), int(b)) for a, b in GRAPHSO_ITER.findall(text)]
    t = GRAPHSO_TIME.search(text)
    return (m.groups() if m else None), iters, (float(t.group(2)) if t else None)


def equal_work(runs):
    lines = []
    fs = [r for r in runs if r["side"] == "graphfs" and os.path.exists(r["log"])]
    gs = [r for r in runs if r["side"] == "graphso" and os.path.exists(r["log"])]
    pl = [r for r in runs if r["side"] == "plain" and os.path.exists(r["log"])]
    pb = [r for r in runs if r["side"] == "plain-btrfs" and os.path.exists(r["log"])]
    ours = None
    for side, rs in (("graphfs", fs), ("plain", pl), ("plain-btrfs", pb)):
        if not rs:
            continue
        res, passes = ours_results(rs[0]["log"])
        if side == "graphfs":
            ours = res
        lines.append(f"  {side} (round {rs[0]['round']}): "
                     + "; ".join(f"{app} {' '.join(v)}" for app, v in res.items())
                     + ("   passes: " + ", ".join(f"{a} {p}" for a, p in passes.items()) if passes else ""))
    if gs:
        res, iters, own = graphso_results(gs[0]["log"])
        if res:
            lines.append(f"  graphso (round {gs[0]['round']}): pagerank sum of ranks {res[0]}; wcc {res[1]} components; "
                         f"sssp reached {res[2]}; bfs parents set {res[3]}" + (f"; its own time {own:.2f} s" if own else ""))
        if iters:
            last_iter, last_active = iters[-1]
            lines.append(f"  graphso iterations: {last_iter + 1} (each reads all of column: PageRank keeps every row "
                         f"active); BFS+SSSP+WCC updates per iteration: "
                         + " ".join(str(a) for _, a in iters[1:]) + " (the count printed at iteration i is "
                         f"iteration i-1's)")
            if last_active == 0:
                lines.append("  graphso: BFS, SSSP and WCC had converged before its last iteration (0 updates)")
            else:
                lines.append(f"  graphso: BFS/SSSP/WCC still made {last_active} updates in iteration {last_iter - 1}: "
                             f"they may be CUT at {last_iter + 1} iterations (less work than ours, which run to convergence)")
        if res and ours:
            checks = []
            if "pagerank" in ours:
                a, b = float(ours["pagerank"][0]), float(res[0])
                rel = abs(a - b) / max(abs(a), 1e-30)
                checks.append(f"pagerank sums {'agree' if rel < 1e-3 else 'DIFFER'} (rel. diff {rel:.1e}; "
                              f"{ours['pagerank'][1]} iterations each)")
            if "wcc" in ours:
                checks.append(f"wcc components {'equal' if ours['wcc'][0] == res[1] else 'DIFFER'} "
                              f"({ours['wcc'][0]} / {res[1]})")
            if "sssp" in ours:
                checks.append(f"sssp reached {'equal' if ours['sssp'][0] == res[2] else 'DIFFER'} "
                              f"({ours['sssp'][0]} / {res[2]})")
            if "bfs" in ours:
                checks.append(f"bfs: ours discovered {ours['bfs'][0]}, GraphSO set {res[3]} parents (its frontier "
                              f"starts with every vertex: not comparable)")
            lines.append("  check, graphfs / GraphSO: " + "; ".join(checks))
    return lines


def summary(runs, bps, cores, target):
    sides = [s for s in ("graphfs", "graphso", "plain", "plain-btrfs") if any(r["side"] == s for r in runs)]
    med = {}
    print("\n# peer summary: medians over the rounds (I/O floor = bytes / %.0f MB/s; CPU floor = CPU s / %d cores)"
          % (bps / 1e6, cores))
    print("%-11s %6s %9s %9s %10s %8s %10s %10s %9s %9s  %s" % ("side", "rounds", "wall_s", "disk_GB", "io_floor_s",
                                                              "cpu_s", "cpu_floor", "limit_MiB", "peak_MiB",
                                                              "total_MiB", "runs (wall s)"))
    for s in sides:
        rs = [r for r in runs if r["side"] == s and r["status"] == "ok"]
        bad = [r for r in runs if r["side"] == s and r["status"] != "ok"]
        if not rs:
            print(f"{s:<11} no successful run ({len(bad)} failed)")
            continue
        m = {k: statistics.median(float(r[k]) for r in rs) for k in ("wall_s", "disk_bytes", "cpu_s", "mem_limit",
                                                                     "jobs_peak")}
        totals = [num(r["total"]) for r in rs if num(r["total"]) is not None]
        m["total"] = statistics.median(totals) if totals else None
        med[s] = m
        print("%-11s %6d %9.2f %9.2f %10.2f %8.1f %10.1f %10s %9s %9s  %s%s" % (
            s, len(rs), m["wall_s"], m["disk_bytes"] / 1e9, m["disk_bytes"] / bps, m["cpu_s"], m["cpu_s"] / cores,
            fmt_mib(m["mem_limit"]), fmt_mib(m["jobs_peak"]), fmt_mib(m["total"]),
            " ".join("%.2f" % float(r["wall_s"]) for r in rs), f"  ({len(bad)} failed)" if bad else ""))
    if "graphfs" in med:
        print("  graphfs total = the jobs' cgroup peak + the daemon's peak RSS; the other sides' limit is the largest "
              "graphfs total measured before them")
    for other in ("graphso", "plain", "plain-btrfs"):
        if "graphfs" not in med or other not in med:
            continue
        rounds = {}
        for r in runs:
            if r["status"] == "ok":
                rounds.setdefault(r["round"], {})[r["side"]] = float(r["wall_s"])
        per_round = [v["graphfs"] / v[other] for v in rounds.values() if "graphfs" in v and other in v]
        ratio = med["graphfs"]["wall_s"] / med[other]["wall_s"]
        line = (f"graphfs / {other}: {ratio:.2f}x (ratio of medians), "
                f"{statistics.median(per_round):.2f}x (median of per-round ratios: "
                + " ".join("%.2f" % x for x in per_round) + ")")
        if other == "graphso":
            line += f" — target <= {target}: {'MET' if max(ratio, statistics.median(per_round)) <= target else 'NOT met'}"
        print(line)
    plains = [s for s in ("plain", "plain-btrfs") if s in med]
    if "graphfs" in med and plains:
        best = min(plains, key=lambda s: med[s]["wall_s"])
        print(f"graphfs / the better plain row ({best}): {med['graphfs']['wall_s'] / med[best]['wall_s']:.2f}x")
    print("equal work:")
    for line in equal_work(runs):
        print(line)


def graphso_files(path, vertices):
    def load(name, code):
        a = array.array(code)
        with open(os.path.join(path, name), "rb") as f:
            a.fromfile(f, vertices)
        return a
    rank = load("pagerank0", "f")
    label = load("label0", "i")
    depth = load("depth0", "i")
    parent = load("parent0", "i")
    total = sum(x for x in rank if x == x and abs(x) != float("inf"))
    components = sum(1 for v, l in enumerate(label) if l == v)
    reached = sum(1 for d in depth if d < 100000000)
    parents = sum(1 for p in parent if p != -1)
    print(f"graphso result: pagerank sum of ranks {total:.6f}; wcc {components} components; sssp reached {reached}; "
          f"bfs parents {parents}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="?")
    ap.add_argument("--line", metavar="RUNS")
    ap.add_argument("--graphso-results", nargs=2, metavar=("GRAPH_DIR", "VERTICES"))
    ap.add_argument("--bps", type=float, default=400e6)
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--target", type=float, default=0.8)
    a = ap.parse_args()
    if a.graphso_results:
        graphso_files(a.graphso_results[0], int(a.graphso_results[1]))
    elif a.line:
        runs = read_runs(a.line)
        print("  " + run_line(runs[-1], a.bps, a.cores))
    elif a.runs:
        summary(read_runs(a.runs), a.bps, a.cores, a.target)
    else:
        ap.error("RUNS.tsv, --line or --graphso-results")


if __name__ == "__main__":
    sys.exit(main())
