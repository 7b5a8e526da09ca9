#!/usr/bin/env python3
"""The side-by-side table of an integrated.sh run over several codecs (--compress "none CODEC ...").

usage: variants_summary.py SUMMARY.tsv BASE CODEC ...
SUMMARY's rows name their config as CONFIG@CODEC; the k-th row of a (mix, config, codec) is round
k. Per mix and config, each codec's median wall time and disk bytes, the ratio of BASE's median to
its median (> 1: faster than BASE), the median of the per-round ratios, and whether every round's
results equal BASE's.
"""
import csv
import statistics
import sys

summary, base, codecs = sys.argv[1], sys.argv[2], sys.argv[2:]
runs = {}  # (mix, config) -> codec -> [row, ...] in round order
for row in csv.DictReader(open(summary), delimiter="\t"):
    if "@" not in row["config"]:
        continue
    config, codec = row["config"].split("@", 1)
    runs.setdefault((row["mix"], config), {}).setdefault(codec, []).append(row)

print("mix\tconfig\tcodec\trounds\twall_s median\tdisk GB median\tspeedup (medians)\tspeedup (per round)\tresults")
for (mix, config), by_codec in runs.items():
    base_rows = by_codec.get(base, [])
    base_wall = [float(r["wall_s"]) for r in base_rows]
    for codec in codecs:
        rows = by_codec.get(codec, [])
        if not rows:
            continue
        wall = [float(r["wall_s"]) for r in rows]
        disk = [int(r["disk_bytes"]) / 1e9 for r in rows]
        paired = [b / w for b, w in zip(base_wall, wall)]
        same = all(r["results"] == b["results"] for r, b in zip(rows, base_rows)) and len(rows) == len(base_rows)
        print("\t".join([mix, config, codec, str(len(rows)), "%.2f" % statistics.median(wall),
                         "%.2f" % statistics.median(disk),
                         "%.2fx" % (statistics.median(base_wall) / statistics.median(wall)) if base_wall else "-",
                         "%.2fx" % statistics.median(paired) if paired else "-",
                         "same" if same else "DIFFER from " + base]))
