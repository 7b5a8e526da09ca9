#!/usr/bin/python3
"""Bytes each job read per iteration: unmodified (iii), integrated with whole-chunk LPs (iv) and
with vertex-granular LPs (v).

usage: plot_integrated.py OUT.png RESULTS_PREFIX MIX [MIX...]
RESULTS_PREFIX is scripts/bench/results/integrated-STAMP; for each MIX it reads
PREFIX-MIX-CONFIG.iter.tsv (written by integrated_summary.py) for the configurations mount,
mount-integrated-chunk and mount-integrated that exist, and draws one panel per mix: per job,
the bytes it read in each iteration, solid for unmodified, dotted for chunk LPs, dashed for
vertex LPs (issue 5's runs had no chunk configuration; their mount-integrated was chunk LPs).
"""
import os
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def load(path):
    series = {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            series.setdefault(row["job"], []).append((int(row["iteration"]), int(row["bytes"]) / 2**30))
    return series


out, prefix, mixes = sys.argv[1], sys.argv[2], sys.argv[3:]
fig, axes = plt.subplots(1, len(mixes), figsize=(6 * len(mixes), 4.5), squeeze=False)
for ax, mix in zip(axes[0], mixes):
    colors = {}
    for config, style, label in (("mount", "-", "unmodified"), ("mount-integrated-chunk", ":", "chunk LPs"),
                                 ("mount-integrated", "--", "integrated")):
        path = f"{prefix}-{mix}-{config}.iter.tsv"
        if not os.path.exists(path):
            continue
        for job, points in sorted(load(path).items()):
            color = colors.setdefault(job, f"C{len(colors)}")
            xs, ys = zip(*sorted(points))
            ax.plot(xs, ys, style, color=color, marker="." if style == "--" else None, label=f"{job} {label}")
    ax.set_title(f"{mix}: bytes per iteration (solid unmodified, dotted chunk LPs, dashed vertex LPs)", fontsize=9)
    ax.set_xlabel("iteration")
    ax.set_ylabel("GiB read by the job")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
fig.tight_layout()
fig.savefig(out, dpi=110)
print(f"wrote {out}")
