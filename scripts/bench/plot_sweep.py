"""Plots read throughput against stripe unit (scripts/bench/striping.sh)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

csv_path, png_path, shared_512k, single = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
model = sys.argv[5] if len(sys.argv) > 5 else ""
rows = list(csv.DictReader(open(csv_path)))
units = [float(r["unit_mib"]) for r in rows]
mbps = [float(r["mb_per_s"]) for r in rows]
fig, ax = plt.subplots(figsize=(6.4, 4))
ax.plot(units, mbps, "o-", label="graphfs, per-disk queues")
ax.axhline(400, color="grey", linestyle=":", label="physical limit (4 x 100 MB/s)")
ax.axhline(shared_512k, color="tab:red", linestyle="--", label=f"unit 512 KiB, one shared queue ({shared_512k:.0f})")
ax.axhline(single, color="tab:green", linestyle="-.", label=f"one disk, no striping ({single:.0f})")
ax.set_xscale("log", base=2)
ax.set_xticks(units)
ax.set_xticklabels([f"{u:g}" for u in units])
ax.set_xlabel("stripe unit (MiB)")
ax.set_ylabel("MB/s (median of cold runs)")
ax.set_ylim(0, 450)
ax.set_title(f"fio 24 MiB reads, 4 readers, through graphfs ({model})", fontsize=10)
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
fig.savefig(png_path, dpi=120)
