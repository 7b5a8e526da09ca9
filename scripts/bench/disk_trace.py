#!/usr/bin/env python3
"""Per-second trace of the disks while a mix runs, and whether they were at their rate while readers waited.

usage: disk_trace.py record OUT MOUNT_OR_- LOOP...   (runs until killed: one line a second)
       disk_trace.py summary OUT --bps BYTES_PER_S [--print]

record: each second appends "time  bytes read per loop device...  reader_wait_seconds  cpu_busy"
(bytes from /sys/block/LOOP/stat; the reader wait from MOUNT/.graphfs/stats read_path, "-" for a
plain disk; cpu_busy: the machine's non-idle, non-iowait jiffies share since the last line).
summary: per second, each disk's delivered rate as a share of BPS. A second in which a reader of
the mount waited on a miss for at least 0.1 s is a waiting second; the line reports how many
waiting seconds had every disk at >= 95% of its rate (issue 30's target), the disks' mean share
in them, and the share of all seconds. Request-level busy time (stats disks[i].busy_seconds)
undercounts on the simulated disks: the cgroup throttle lets a request that follows an idle gap
through at once on credit, so a disk can deliver its full rate with gaps between requests; the
bytes each second are the disks' real utilization.
"""
import json
import sys
import time


def cpu_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def record(out, mount, loops):
    last = cpu_jiffies()
    with open(out, "a") as f:
        while True:
            row = [f"{time.time():.3f}"]
            for loop in loops:
                name = loop.rsplit("/", 1)[-1]
                with open(f"/sys/block/{name}/stat") as s:
                    row.append(str(int(s.read().split()[2]) * 512))
            wait = "-"
            if mount != "-":
                try:
                    with open(f"{mount}/.graphfs/stats") as s:
                        wait = str(json.load(s).get("read_path", {}).get("reader_wait_seconds", "-"))
                except (OSError, ValueError):
                    pass
            row.append(wait)
            now = cpu_jiffies()
            row.append(f"{(now[0] - last[0]) / max(1, now[1] - last[1]):.3f}")
            last = now
            f.write(" ".join(row) + "\n")
            f.flush()
            time.sleep(1)


def summary(out, bps, show):
    try:
        rows = [line.split() for line in open(out) if line.strip()]
    except FileNotFoundError:  # a run shorter than the recorder's start
        rows = []
    if len(rows) < 2:
        print("disk trace: fewer than two samples")
        return
    ndisks = len(rows[0]) - 3
    waiting = full = 0
    shares_waiting, shares_all = [], []
    for prev, cur in zip(rows, rows[1:]):
        dt = float(cur[0]) - float(prev[0])
        shares = [(int(cur[1 + d]) - int(prev[1 + d])) / dt / bps for d in range(ndisks)]
        shares_all.extend(shares)
        waited = cur[-2] != "-" and prev[-2] != "-" and float(cur[-2]) - float(prev[-2]) >= 0.1
        if waited:
            waiting += 1
            shares_waiting.extend(shares)
            full += all(s >= 0.95 for s in shares)
        if show:
            print(f"{float(cur[0]) - float(rows[0][0]):6.0f} s  " + " ".join(f"{100 * s:4.0f}%" for s in shares) +
                  f"  cpu {100 * float(cur[-1]):3.0f}%" + ("  reader waited" if waited else ""))
    mean = lambda v: sum(v) / len(v) if v else 0.0
    print(f"disk trace: {len(rows) - 1} s; every disk >= 95% of its rate in {full} of {waiting} seconds a reader waited; "
          f"the disks' mean share of their rate {100 * mean(shares_waiting):.0f}% in those, {100 * mean(shares_all):.0f}% overall")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "summary" and "--bps" in sys.argv:
        bps = float(sys.argv[sys.argv.index("--bps") + 1])
        summary(sys.argv[2], bps, "--print" in sys.argv)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
