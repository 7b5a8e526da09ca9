#!/usr/bin/env python3
"""One summary line (TSV) of an integrated.sh run, and its per-iteration table.

usage: integrated_summary.py LOG MIX CONFIG DISK_BYTES
Reads LOG (run-jobs output with GRAPHFS_ENGINE_VERBOSE=1) and LOG.stats.json when present;
prints mix, config, wall_s, disk_bytes, edges_read, edges_active, active_share, find_s,
select_s, load_s, lps, bytes_loaded, bytes_delivered, loader_MBps (all the loader's bytes per second
of its own time), whole_MBps (whole-chunk bytes over the same time when no runs were loaded, else -),
chunks_whole, chunks_partial, mem_limit, mem_peak (the mix's cgroup), daemon_peak (the graphfs daemon's
peak RSS in a mount run, from LOG's "daemon: ... peak rss N" line; - otherwise), results; writes LOG's per-iteration
lines to LOG with .iter.tsv in place of .log (job, iteration, active, bytes, edges_read,
edges_active, seconds).
"""
import json
import os
import re
import sys

log, mix, config, disk_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(log).read()
wall = re.search(r"^total wall time: ([0-9.]+) s", text, re.M)
iteration = re.compile(r"^(\S+): iteration (\d+), (\d+) active, ([0-9.]+) s; (\d+) bytes, (\d+) edges read, "
                       r"(\d+) of active sources", re.M)
final = re.compile(r"^(\S+): streamed (\d+) edge bytes, \d+ O_DIRECT streams, (\d+) edges read, (\d+) of active", re.M)
edges_read = edges_active = 0
for m in final.finditer(text):
    edges_read += int(m.group(3))
    edges_active += int(m.group(4))
with open(log[:-4] + ".iter.tsv" if log.endswith(".log") else log + ".iter.tsv", "w") as out:
    out.write("job\titeration\tactive\tbytes\tedges_read\tedges_active\tseconds\n")
    for m in iteration.finditer(text):
        out.write("\t".join([m.group(1), m.group(2), m.group(3), m.group(5), m.group(6), m.group(7), m.group(4)]) + "\n")
failed = re.findall(r"^\d+\s+(\S+).*\s(exit \d+|signal \d+)\s", text, re.M)
results = ";".join(["FAILED " + " ".join(f) for f in failed] + sorted(re.findall(r"(sum of ranks [0-9.]+|[0-9]+ components|reached [0-9]+|discovered [0-9]+)", text)))
sched = {}
stats = log + ".stats.json"
if os.path.exists(stats):
    s = json.load(open(stats))
    if s.get("schedulers"):
        sched = s["schedulers"][0]
def g(key, fmt="%.2f"):
    return fmt % sched[key] if key in sched else "-"
share = "%.3f" % (edges_active / edges_read) if edges_read else "-"
loader = sched.get("loader", {})
gran = sched.get("granularity", {})
loader_mbps = "%.1f" % (loader["bytes_per_second"] / 1e6) if loader.get("seconds") else "-"
whole_mbps = ("%.1f" % (loader["whole_bytes"] / loader["seconds"] / 1e6)
              if loader.get("seconds") and loader.get("run_bytes", 0) == 0 else "-")
mem = re.search(r"^mix cgroup: limit (\d+), peak (\d+)", text, re.M)
daemon = re.search(r"^daemon: .*peak rss (\d+)", text, re.M)
print("\t".join([mix, config, wall.group(1) if wall else "-", str(disk_bytes), str(edges_read), str(edges_active), share,
                 g("find_seconds"), g("select_seconds"), g("load_seconds"), g("lps_built", "%d"),
                 g("bytes_loaded", "%d"), g("bytes_delivered", "%d"), loader_mbps, whole_mbps,
                 str(gran.get("chunks_whole", "-")), str(gran.get("chunks_partial", "-")),
                 mem.group(1) if mem else "-", mem.group(2) if mem else "-", daemon.group(1) if daemon else "-", results]))
