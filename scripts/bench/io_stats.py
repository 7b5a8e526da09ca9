#!/usr/bin/env python3
"""The disks' and the read path's figures of a graphfs mount's stats (MOUNT/.graphfs/stats, JSON).

usage: io_stats.py [--before FILE] [--wall SECONDS] [--bps RATE] [--format line|table|kv] [--label TEXT] STATS

Figures are those of STATS minus those of BEFORE (a snapshot of the same mount taken earlier) when
--before is given, else since the mount:
  rate share          per disk, bytes read / (RATE x WALL): the share of its rate the disk delivered
                      (RATE: --bps, else the rate the daemon took from graphfs-calibrate) — the
                      disk's real utilization on the simulated disks, whose throttle lets a request
                      after an idle gap through at once on credit
  busy                per disk, seconds with at least one read or write queued or in flight in
                      graphfs's I/O engine (disks[i].busy_seconds), and their share of WALL
  idle while waiting  per disk, seconds with nothing queued or in flight while at least one reader
                      of the mount was blocked on a cache miss (disks[i].idle_while_waiting_seconds)
  request sizes       read requests issued to each disk by size (disks[i].request_sizes), and the
                      bucket that holds the median request; the mean size (bytes_read / reads)
  reader wait         read_path.reader_wait_seconds (time at least one reader was blocked on a
                      miss) and read_path.waits
A figure the daemon does not report (an older daemon) prints n/a; nothing fails on it.
Formats: line (one line), table (one row per disk with its histogram, then the read path),
kv (key=value words for scripts). Also imported by scripts/bench/readahead.sh (summarize()).
"""
import argparse
import json
import sys

NA = "n/a"


def size_label(b):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift}{unit}"
    return str(b)


def bucket_labels(le_bytes):
    return [f"<={size_label(b)}" for b in le_bytes] + [f">{size_label(le_bytes[-1])}" if le_bytes else "all"]


def _num(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _delta(after, before, key):
    """after[key] - before[key]; after's alone when there is no snapshot before (None); None when
    either side does not report it."""
    a = _num(after.get(key))
    if before is None:
        return a
    b = _num(before.get(key))
    return None if a is None or b is None else a - b


def summarize(after, before=None, wall=None, bps=None):
    """A dict of the figures (None where the daemon does not report one)."""
    disks = []
    if bps is None:  # the disks' rate the daemon knows (graphfs-calibrate's), for the delivered share
        bps = _num((after.get("read_path") or {}).get("disk_bytes_per_second")) or None
    before_disks = {d.get("index", i): d for i, d in enumerate((before or {}).get("disks", []))}
    for i, d in enumerate(after.get("disks", [])):
        b = before_disks.get(d.get("index", i)) if before is not None else None
        if before is not None and b is None:
            b = {}

        def field(key):
            return _delta(d, b, key)

        hist = None
        rs = d.get("request_sizes")
        if isinstance(rs, dict) and isinstance(rs.get("counts"), list):
            counts = list(rs["counts"])
            if before is not None:
                brs = b.get("request_sizes")
                if isinstance(brs, dict) and isinstance(brs.get("counts"), list) and len(brs["counts"]) == len(counts):
                    counts = [x - y for x, y in zip(counts, brs["counts"])]
                else:
                    counts = None
            if counts is not None:
                hist = {"le_bytes": list(rs.get("le_bytes", [])), "counts": counts}
        busy = field("busy_seconds")
        bytes_read = field("bytes_read")
        disks.append({
            "index": d.get("index", i),
            "path": d.get("path", ""),
            "bytes_read": bytes_read,
            "reads": field("reads"),
            "busy_seconds": busy,
            "busy_share": busy / wall if busy is not None and wall else None,
            "rate_share": bytes_read / (bps * wall) if bps and wall and bytes_read is not None else None,
            "idle_while_waiting_seconds": field("idle_while_waiting_seconds"),
            "request_sizes": hist,
        })
    rp, brp = after.get("read_path"), (before or {}).get("read_path")
    rp = rp if isinstance(rp, dict) else {}
    brp = brp if isinstance(brp, dict) else ({} if before is not None else None)

    out = {"wall": wall, "disks": disks,
           "reader_wait_seconds": _delta(rp, brp, "reader_wait_seconds"), "waits": _delta(rp, brp, "waits")}
    iww = [d["idle_while_waiting_seconds"] for d in disks]
    out["idle_while_waiting_sum"] = sum(iww) if disks and None not in iww else None
    br = [d["bytes_read"] for d in disks]
    rd = [d["reads"] for d in disks]
    out["bytes_read"] = sum(br) if disks and None not in br else None
    out["reads"] = sum(rd) if disks and None not in rd else None
    out["mean_request"] = out["bytes_read"] / out["reads"] if out["reads"] else None
    hists = [d["request_sizes"] for d in disks]
    if disks and None not in hists and len({len(h["counts"]) for h in hists}) == 1:
        total = [sum(c) for c in zip(*(h["counts"] for h in hists))]
        out["request_sizes"] = {"le_bytes": hists[0]["le_bytes"], "counts": total}
        out["median_request"] = median_bucket(hists[0]["le_bytes"], total)
    else:
        out["request_sizes"] = None
        out["median_request"] = None
    # The daemon's CPU over the run, and per read path its CPU-seconds per GB handed to readers.
    cpu, bcpu = after.get("cpu"), (before or {}).get("cpu")
    if isinstance(cpu, dict):
        bcpu = bcpu if isinstance(bcpu, dict) else ({} if before is not None else None)
        out["cpu_user"] = _delta(cpu, bcpu, "user_seconds")
        out["cpu_system"] = _delta(cpu, bcpu, "system_seconds")
        per_gb = {}
        for name, p in (cpu.get("by_path") or {}).items():
            bp = ((bcpu or {}).get("by_path") or {}).get(name, {}) if bcpu is not None else None
            b = _delta(p, bp, "bytes")
            c = [_delta(p, bp, k) for k in ("read_cpu_seconds", "load_cpu_seconds")]
            if b and None not in c:
                per_gb[name] = (sum(c) / (b / 1e9), b)
        out["cpu_per_gb"] = per_gb
    # Logical partitions (integrated jobs), summed over the graphs' schedulers: the seconds some job
    # waited with no LP loading, of them with the window full, and the window's peak bytes.
    scheds = after.get("schedulers") or []
    bscheds = {x.get("graph"): x for x in ((before or {}).get("schedulers") or [])}
    if scheds:
        def sched_sum(key):
            # A scheduler opened during the run (none before it) counts from zero.
            vals = [_delta(x, bscheds.get(x.get("graph")), key) for x in scheds]
            return None if None in vals else sum(vals)
        out["lp_idle_while_waiting"] = sched_sum("loader_idle_while_waiting_seconds")
        out["lp_full_while_waiting"] = sched_sum("window_full_while_waiting_seconds")
        out["lp_loader_busy"] = sched_sum("loader_busy_seconds")
        peaks = [_num((x.get("window") or {}).get("peak_bytes")) for x in scheds]
        out["lp_window_peak"] = None if None in peaks else max(peaks)
        shared = [x.get("shared_memory") or {} for x in scheds]
        if any(m.get("active") for m in shared):
            out["lp_shared_peak"] = max(_num(m.get("peak_used_bytes")) or 0 for m in shared)
            out["lp_shared_punched"] = sum(_num(m.get("punched_bytes")) or 0 for m in shared)
    # The daemon's memory split at its peak (stats.memory.at_peak), MiB by use.
    at_peak = (after.get("memory") or {}).get("at_peak") or {}
    if at_peak.get("by_use"):
        out["at_peak_rss"] = _num(at_peak.get("peak_rss"))
        out["at_peak"] = {k: _num(v) for k, v in at_peak["by_use"].items()}
        if isinstance(at_peak.get("lps"), dict):
            out["at_peak_lps"] = {k: _num(v) for k, v in at_peak["lps"].items()}
    return out


def median_bucket(le_bytes, counts):
    """The label of the bucket holding the median request ("-" when there were none)."""
    total = sum(counts)
    if total <= 0:
        return "-"
    labels = bucket_labels(le_bytes)
    seen = 0
    for k, c in enumerate(counts):
        seen += c
        if 2 * seen >= total:
            return labels[k] if k < len(labels) else f"bucket{k}"
    return labels[-1]


def fmt(x, spec=".2f", suffix=""):
    return NA if x is None else format(x, spec) + suffix


def fmt_share(x):
    return NA if x is None else f"{100 * x:.0f}%"


def kib(x):
    return NA if x is None else f"{x / 1024:.0f}"


def line(s):
    d = s["disks"]
    busy = " ".join(fmt_share(x["busy_share"]) if s["wall"] else fmt(x["busy_seconds"], ".1f", "s") for x in d)
    rate = " ".join(fmt_share(x["rate_share"]) for x in d)
    iww = " ".join(fmt(x["idle_while_waiting_seconds"], ".2f") for x in d)
    wall = f" of {s['wall']:.1f} s" if s["wall"] else ""
    return (f"disks delivered {rate} of their rate, had requests out {busy}{wall}; idle while a reader waited {iww} s (sum {fmt(s['idle_while_waiting_sum'])}); "
            f"readers waited {fmt(s['reader_wait_seconds'])} s in {fmt(s['waits'], '.0f')} waits; "
            f"disk requests median {s['median_request'] or NA} (mean {kib(s['mean_request'])} KiB)"
            + (f"; LPs: loader busy {fmt(s['lp_loader_busy'], '.1f')} s, idle while a job waited {fmt(s['lp_idle_while_waiting'])} s"
               f" (window full {fmt(s['lp_full_while_waiting'])} s), window peak {fmt((s['lp_window_peak'] or 0) / 2**20, '.0f')} MiB"
               if "lp_idle_while_waiting" in s else "")
            + (f"; daemon CPU {fmt(s['cpu_user'], '.1f')} s user + {fmt(s['cpu_system'], '.1f')} s system, per GB delivered: "
               + (", ".join(f"{k} {v[0]:.2f} s ({v[1] / 1e9:.1f} GB)" for k, v in s["cpu_per_gb"].items()) or "n/a")
               if "cpu_user" in s else "")
            + (f"; LPs in shared memory: peak {s['lp_shared_peak'] / 2**20:.0f} MiB, punched {s['lp_shared_punched'] / 2**30:.1f} GiB"
               if "lp_shared_peak" in s else "")
            + (f"; daemon at its peak ({(s['at_peak_rss'] or 0) / 2**20:.0f} MiB): "
               + ", ".join(f"{k} {(v or 0) / 2**20:.0f}" for k, v in s["at_peak"].items()) + " MiB"
               if "at_peak" in s else "")
            + ("; its LPs then (window footprints): "
               + ", ".join(f"{k} {(v or 0) / 2**20:.0f}" for k, v in s["at_peak_lps"].items()) + " MiB"
               if "at_peak_lps" in s else ""))


def table(s):
    rows = []
    le = next((x["request_sizes"]["le_bytes"] for x in s["disks"] if x["request_sizes"]), None)
    labels = bucket_labels(le) if le is not None else []
    head = (f"{'disk':>4} {'rate share':>10} {'busy (s)':>9} {'busy share':>10} {'idle while waiting (s)':>22} "
            f"{'reads':>8} {'mean KiB':>8}")
    if labels:
        head += "   requests by size: " + " ".join(f"{l:>7}" for l in labels)
    else:
        head += "   requests by size: n/a"
    rows.append(head)
    for x in s["disks"]:
        mean = x["bytes_read"] / x["reads"] if x["reads"] else None
        row = (f"{x['index']:>4} {fmt_share(x['rate_share']):>10} {fmt(x['busy_seconds'], '.1f'):>9} {fmt_share(x['busy_share']):>10} "
               f"{fmt(x['idle_while_waiting_seconds'], '.2f'):>22} {fmt(x['reads'], '.0f'):>8} {kib(mean):>8}")
        if labels:
            hist = x["request_sizes"]
            row += "                      " + (" ".join(f"{c:>7}" for c in hist["counts"]) if hist else NA)
        rows.append(row)
    rows.append(f"idle while waiting, summed over the disks: {fmt(s['idle_while_waiting_sum'])} s; "
                f"readers blocked on a miss (read_path.reader_wait_seconds): {fmt(s['reader_wait_seconds'])} s "
                f"in {fmt(s['waits'], '.0f')} waits; median disk request {s['median_request'] or NA}")
    return "\n".join(rows)


def kv(s):
    d = s["disks"]
    words = {
        "busy_share": ",".join(fmt(x["busy_share"], ".3f") for x in d),
        "busy_s": ",".join(fmt(x["busy_seconds"], ".3f") for x in d),
        "iww_s": ",".join(fmt(x["idle_while_waiting_seconds"], ".3f") for x in d),
        "iww_sum": fmt(s["idle_while_waiting_sum"], ".3f"),
        "reader_wait_s": fmt(s["reader_wait_seconds"], ".3f"),
        "waits": fmt(s["waits"], ".0f"),
        "req_median": s["median_request"] or NA,
        "req_mean_kib": kib(s["mean_request"]),
        "disk_bytes": fmt(s["bytes_read"], ".0f"),
    }
    return " ".join(f"{k}={v}" for k, v in words.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before")
    ap.add_argument("--wall", type=float)
    ap.add_argument("--format", choices=("line", "table", "kv"), default="line")
    ap.add_argument("--label", default="")
    ap.add_argument("--bps", type=float, help="one disk's rate (default: the daemon's, read_path.disk_bytes_per_second)")
    ap.add_argument("stats")
    a = ap.parse_args()
    try:
        after = json.load(open(a.stats))
    except (OSError, ValueError) as e:
        print(f"{a.label}stats: n/a ({e})")
        return 0
    before = None
    if a.before:
        try:
            before = json.load(open(a.before))
        except (OSError, ValueError) as e:
            print(f"{a.label}(no stats before the run: {e}; figures since the mount)")
    s = summarize(after, before, a.wall, a.bps)
    print(a.label + {"line": line, "table": table, "kv": kv}[a.format](s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
