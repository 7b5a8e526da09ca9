#!/usr/bin/env python3
"""The logical-partition runs of an integrated.sh summary against the offline reference.

usage: lp_reference.py SUMMARY.tsv
For every run with scheduler stats (LOG.stats.json next to the summary), prints the disks'
bytes, what the LP selections planned to read, and the offline reference of the scheduler
(chunkindex/README.md): the cost model's plan per chunk and LP round for exactly the jobs that
took the chunk, knowing their active sets (`offline`), and the same without sharing between jobs
(`unshared`). The ratio disk / offline is the issue-16 target (<= 1.25).
"""
import csv
import json
import os
import sys

summary = sys.argv[1]
stamp_prefix = summary[:-4] if summary.endswith(".tsv") else summary
rows = list(csv.DictReader(open(summary), delimiter="\t"))
print("\t".join(["mix", "config", "disk_GB", "planned_GB", "offline_GB", "unshared_GB", "disk/offline",
                 "planned/offline", "loader_MBps"]))
for r in rows:
    stats = f"{stamp_prefix}-{r['mix']}-{r['config']}.log.stats.json"
    if not os.path.exists(stats):
        continue
    sched = json.load(open(stats)).get("schedulers") or []
    if not sched:
        continue
    g = sched[0].get("granularity", {})
    if "offline_disk_bytes" not in g:
        continue
    disk = int(r["disk_bytes"])
    offline = g["offline_disk_bytes"]
    planned = g["planned_disk_bytes"]
    gb = lambda v: "%.2f" % (v / 1e9)
    ratio = lambda a, b: "%.2f" % (a / b) if b else "-"
    print("\t".join([r["mix"], r["config"], gb(disk), gb(planned), gb(offline), gb(g["offline_unshared_disk_bytes"]),
                     ratio(disk, offline), ratio(planned, offline), r.get("loader_MBps", "-")]))
