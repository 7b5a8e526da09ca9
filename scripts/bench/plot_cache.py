#!/usr/bin/python3
"""Plots the cache's byte hit ratio against its budget from scripts/bench/cache.sh summaries.

    scripts/bench/plot_cache.py OUT.png SUMMARY.tsv[:LABEL] [SUMMARY.tsv[:LABEL] ...] [--title TEXT]

Each mount-POLICY row of the summaries gives a point (budget fraction, byte hit ratio); plain
runs are skipped. Rows of summaries with a LABEL (e.g. the code version measured) form the
series "POLICY (LABEL)". A fraction measured more than once in a series is plotted at the median.
"""
import argparse
import collections
import csv
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("summaries", nargs="+")
    ap.add_argument("--title", default="graphfs cache: byte hit ratio vs budget (4-job mix)")
    a = ap.parse_args()
    points = collections.defaultdict(lambda: collections.defaultdict(list))
    for arg in a.summaries:
        path, _, label = arg.partition(":")
        with open(path) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if not row["config"].startswith("mount-") or row["byte_hit_ratio"] in ("", "-"):
                    continue
                series = row["config"][len("mount-"):] + (" (%s)" % label if label else "")
                points[series][float(row["fraction"])].append(float(row["byte_hit_ratio"]))
    fig, ax = plt.subplots(figsize=(6, 4))
    for policy, by_fraction in sorted(points.items()):
        xs = sorted(by_fraction)
        ys = [statistics.median(by_fraction[x]) for x in xs]
        ax.plot([100 * x for x in xs], ys, marker="o", label=policy)
        for x, y in zip(xs, ys):
            ax.annotate("%.2f" % y, (100 * x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("cache budget (% of the column file the jobs stream)")
    ax.set_ylabel("byte hit ratio (1 - loaded / served)")
    ax.set_ylim(bottom=0)
    ax.set_title(a.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
