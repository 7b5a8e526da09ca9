#!/usr/bin/env python3
"""scripts/bench/python.sh's driver (issue 33): a numpy BFS as a graphfs job (LPs as zero-copy
views of the shared LP memory) against the C++ bfs as a job and against the numpy BFS reading
`column` through np.memmap (unmodified), on one graph under one mount, side by side.

Per state (warm: every side run once unmeasured first, graph bytes in the page cache and the
daemon's memory; cold: the daemon remounted and the page cache dropped before every run), REPEAT
rounds, the sides' order turning from round to round. Each run: wall time, CPU seconds of the
engine process and of the daemon, bytes read from the disk under the source (/sys/block), and
the result checked against the C++ bfs run unmodified on the plain graph. The floors beside each
time: CPU seconds / cores, and disk bytes / the disk's bandwidth (measured once here with an
O_DIRECT read of column). Medians, the ratio of medians to the C++ job's, and the median of the
per-round ratios.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import statistics
import subprocess
import sys
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
CORES = os.cpu_count() or 1


def log(f, text=""):
    print(text, flush=True)
    f.write(text + "\n")
    f.flush()


def _die_with_parent():
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def is_mountpoint(path):
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


class Mount:
    def __init__(self, bin_dir, source, mountpoint, options):
        self.argv = [os.path.join(bin_dir, "graphfs"), "-f", source, mountpoint, "-o", f"log={mountpoint}.log"]
        for o in options:
            self.argv += ["-o", o]
        self.mountpoint = mountpoint
        self.proc = None

    def up(self):
        os.makedirs(self.mountpoint, exist_ok=True)
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)
        for _ in range(400):
            if is_mountpoint(self.mountpoint):
                return
            if self.proc.poll() is not None:
                raise SystemExit(f"graphfs exited {self.proc.returncode}; see {self.mountpoint}.log")
            time.sleep(0.025)
        raise SystemExit("the mount did not come up")

    def down(self):
        if is_mountpoint(self.mountpoint):
            subprocess.run(["fusermount3", "-u", self.mountpoint], stderr=subprocess.DEVNULL)
            if is_mountpoint(self.mountpoint):
                subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], stderr=subprocess.DEVNULL)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def cpu_seconds(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stats(self):
        with open(os.path.join(self.mountpoint, ".graphfs", "stats")) as f:
            return json.load(f)


def disk_of(path):
    """The whole-disk device under `path` (for /sys/block/NAME/stat)."""
    dev = os.stat(path).st_dev
    link = os.path.realpath(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    name = os.path.basename(link)
    if not os.path.exists(f"/sys/block/{name}"):
        name = os.path.basename(os.path.dirname(link))  # a partition: its disk
    return name


def disk_read_bytes(disk):
    with open(f"/sys/block/{disk}/stat") as f:
        return int(f.read().split()[2]) * 512


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def run_side(argv, env):
    """Runs argv; returns (wall seconds, CPU seconds of the process and its children, stdout)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = p.communicate()
    wall = time.monotonic() - t0
    # The child is reaped by communicate(): its rusage is in RUSAGE_CHILDREN's delta.
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}:\n{out.decode()}{err.decode()}")
    return wall, out.decode().strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--client", required=True, help="clients/python")
    ap.add_argument("--source", required=True, help="the mount's source directory (holds the graph)")
    ap.add_argument("--graph", required=True, help="the graph's name in it")
    ap.add_argument("--plain", required=True, help="a plain copy of the graph (the C++ reference run)")
    ap.add_argument("--mountpoint", required=True)
    ap.add_argument("--start", type=int, required=True)
    ap.add_argument("--partition", default="64M")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--states", default="warm cold")
    ap.add_argument("--sides", default="numpy-int cpp-int numpy-unmod cpp-unmod")
    ap.add_argument("--log", required=True)
    ap.add_argument("--header", default="")
    args = ap.parse_args()

    env = dict(os.environ, PYTHONPATH=args.client, PYTHONDONTWRITEBYTECODE="1")
    graph = os.path.join(args.mountpoint, args.graph)
    out_dir = os.path.dirname(args.log)
    py = sys.executable
    sides = {
        "numpy-int": [py, "-m", "graphfs.examples.bfs", graph, str(args.start), "--graphfs", "--graphfs-partition",
                      args.partition, "-o", os.path.join(out_dir, "numpy-int.level")],
        "cpp-int": [os.path.join(args.bin, "bfs"), graph, str(args.start), "--graphfs", "--graphfs-partition",
                    args.partition, "--state-tag", "pybench"],
        "numpy-unmod": [py, "-m", "graphfs.examples.bfs", graph, str(args.start), "-o",
                        os.path.join(out_dir, "numpy-unmod.level")],
        "cpp-unmod": [os.path.join(args.bin, "bfs"), graph, str(args.start), "--state-tag", "pybench-unmod"],
    }
    results = {
        "numpy-int": os.path.join(out_dir, "numpy-int.level"),
        # Through the mount (a file removed beneath a live mount would stay in its caches).
        "cpp-int": os.path.join(graph, "pybench.bfs.level"),
        "numpy-unmod": os.path.join(out_dir, "numpy-unmod.level"),
        "cpp-unmod": os.path.join(graph, "pybench-unmod.bfs.level"),
    }
    chosen = args.sides.split()
    preload = [py, "-c", "import numpy, graphfs.examples.bfs"]
    disk = disk_of(args.source)

    with open(args.log, "a") as f:
        log(f, args.header)
        # The reference: the C++ bfs unmodified on the plain copy.
        ref_line = subprocess.run([os.path.join(args.bin, "bfs"), args.plain, str(args.start)], check=True,
                                  capture_output=True, text=True).stdout.strip()
        with open(os.path.join(args.plain, "bfs.level"), "rb") as r:
            reference = r.read()
        log(f, f"reference (C++ bfs, unmodified, plain copy): {ref_line}")
        # The disk's bandwidth: one O_DIRECT sequential read of column, page cache dropped.
        drop_caches()
        column = os.path.join(args.plain, "column")
        t0 = time.monotonic()
        subprocess.run(["dd", f"if={column}", "of=/dev/null", "bs=16M", "iflag=direct"], check=True,
                       capture_output=True)
        bandwidth = os.path.getsize(column) / (time.monotonic() - t0)
        log(f, f"disk {disk}: {bandwidth / 1e6:.0f} MB/s (dd of column, O_DIRECT); cores {CORES}")

        mount = Mount(args.bin, args.source, args.mountpoint, [])
        mount.up()
        try:
            table = {}
            for state in args.states.split():
                if state == "warm":
                    for side in chosen:  # warm-up, unmeasured
                        run_side(sides[side], env)
                runs = {s: [] for s in chosen}
                for rnd in range(args.repeat):
                    order = chosen[rnd % len(chosen):] + chosen[:rnd % len(chosen)]
                    for side in order:
                        if state == "cold":
                            mount.down()
                            drop_caches()
                            mount.up()
                            # The programs themselves warm (the interpreter, numpy, the binary):
                            # cold is the graph's bytes, not the libraries'.
                            subprocess.run(preload, env=env, check=True, capture_output=True)
                            subprocess.run([sides["cpp-int"][0], "--help"], capture_output=True)
                        if os.path.exists(results[side]):
                            os.remove(results[side])
                        d0, c0 = mount.cpu_seconds(), disk_read_bytes(disk)
                        lp0 = mount.stats()["cpu"]["by_path"]["lp"]
                        u0 = os.times()
                        wall, line = run_side(sides[side], env)
                        u1 = os.times()
                        engine_cpu = (u1.children_user - u0.children_user) + (u1.children_system - u0.children_system)
                        daemon_cpu = mount.cpu_seconds() - d0
                        disk_bytes = disk_read_bytes(disk) - c0
                        lp1 = mount.stats()["cpu"]["by_path"]["lp"]
                        lp_bytes, lp_read = lp1["bytes"] - lp0["bytes"], lp1["read_bytes"] - lp0["read_bytes"]
                        with open(results[side], "rb") as r:
                            same = r.read() == reference
                        if not same:
                            raise SystemExit(f"{side}: the levels differ from the C++ bfs's ({line})")
                        runs[side].append(dict(wall=wall, engine_cpu=engine_cpu, daemon_cpu=daemon_cpu,
                                               disk=disk_bytes, lp=lp_bytes, lp_read=lp_read))
                        f.write(f"  {state} {side} round {rnd}: {wall:.3f} s, engine CPU {engine_cpu:.2f} s, "
                                f"daemon CPU {daemon_cpu:.2f} s, disk {disk_bytes} B, LP views {lp_bytes} B "
                                f"(through READs {lp_read} B), levels = C++'s; {line}\n")
                        f.flush()
                table[state] = runs

            log(f)
            log(f, "median of the runs (min-max); CPU = the engine's + the daemon's; floors: CPU / "
                   f"{CORES} cores, disk bytes / {bandwidth / 1e6:.0f} MB/s; x cpp-int: ratio of the medians, "
                   "then the median of the per-round ratios")
            log(f, f"{'state':5} {'side':12} {'wall s':>7} {'(min-max)':>13} {'CPU s':>6} {'floor':>6} "
                   f"{'disk MB':>8} {'floor':>6} {'x cpp-int':>9} {'paired':>7}")
            for state, runs in table.items():
                base = runs.get("cpp-int")
                for side in chosen:
                    rs = runs[side]
                    walls = [r["wall"] for r in rs]
                    cpu = statistics.median(r["engine_cpu"] + r["daemon_cpu"] for r in rs)
                    disk_b = statistics.median(r["disk"] for r in rs)
                    ratio = paired = "-"
                    if base:
                        ratio = f"{statistics.median(walls) / statistics.median(b['wall'] for b in base):.2f}x"
                        paired = f"{statistics.median(r['wall'] / b['wall'] for r, b in zip(rs, base)):.2f}x"
                    log(f, f"{state:5} {side:12} {statistics.median(walls):7.2f} "
                           f"{f'({min(walls):.2f}-{max(walls):.2f})':>13} {cpu:6.2f} {cpu / CORES:6.2f} "
                           f"{disk_b / 1e6:8.0f} {disk_b / bandwidth:6.2f} {ratio:>9} {paired:>7}")
            log(f, f"passthrough {mount.stats()['passthrough']['active']}; LP views handed to a run (median MB), "
                   "of them through READs of lp-SEQ (the rest mapped in place):")
            for state, runs in table.items():
                for side in chosen:
                    if side.endswith("-int"):
                        rs = runs[side]
                        log(f, f"  {state} {side}: {statistics.median(r['lp'] for r in rs) / 1e6:.0f} MB, "
                               f"{statistics.median(r['lp_read'] for r in rs) / 1e6:.0f} MB read")
            t0 = time.monotonic()
            subprocess.run(preload, env=env, check=True)
            log(f, f"python3 -c 'import numpy, graphfs.examples.bfs' (in every numpy run): "
                   f"{time.monotonic() - t0:.2f} s")
        finally:
            mount.down()


if __name__ == "__main__":
    main()
