"""PageRank in numpy as the C++ app (engines/apps/pagerank.cc, GridGraph's) computes it.

Every vertex starts with rank 1; an iteration streams every edge and sets
``rank = 0.15 + 0.85 * sum(in-neighbour rank / out-degree)`` (ranks sum to about V). Out-degrees
come from one pass over ``row``. The result file is float64 per vertex (``pagerank.rank``), and
the result line is the C++ app's.

Float arithmetic: the same IEEE double operations as the C++ app, in the same order where the
order is defined. A vertex's sum is accumulated edge by edge in the order the edges are
streamed; the C++ app does that with atomic adds from its reader threads, so its own last bits
depend on which thread adds first — with ``--threads 1`` they do not, and then
:func:`pagerank_unmodified` is **bit-identical** to it: every edge of target range j lies in
``column``'s stretch of range j, so one ``np.bincount`` over that stretch adds each vertex's
in-edges from 0.0 in file order, exactly the single thread's sequence.
:func:`pagerank_integrated` adds in the order graphfs hands out the logical partitions
(``np.add.at``: sequential, the order of the LP views), which the daemon's scheduler chooses
(chunk priorities, what is cached, other jobs), so it matches another run only to rounding
(relative 1e-12 on the test graphs), as the C++ app's integrated runs do.

    python3 -m graphfs.examples.pagerank PATH ITERATIONS [--graphfs [--graphfs-partition SIZE]] [-o FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

from ..errors import GraphfsError, GridFormatError
from ..grid import Grid
from ..jobs import Job
from ..protocol import DEFAULT_PARTITION_BYTES

BATCH_BYTES = 24 << 20
GATHER_BELOW = 1 << 20


@dataclass
class PageRankResult:
    rank: np.ndarray  # float64
    iterations: int
    total: float  # sum of the ranks, added in vertex order as the C++ app's one thread does
    seconds: float
    passes: int
    partitions: int = 0
    mapped: bool = False

    def line(self) -> str:
        return (f"pagerank: sum of ranks {self.total:.6f} over {self.rank.size} vertices after {self.iterations} "
                f"iterations, {self.passes} passes in {self.seconds:.2f} s")


def _check_ids(edges: np.ndarray, vertices: int, where: str) -> None:
    for name in ("source", "target"):
        ids = edges[name].view(np.uint32)
        if ids.size and int(ids.max()) >= vertices:
            k = int(np.flatnonzero(ids >= vertices)[0])
            raise GridFormatError(f"{where}: edge record {k} of a batch has {name} {int(edges[name][k])}, "
                                  f"outside [0, {vertices})")


def out_degrees(grid: Grid, batch_bytes: int = BATCH_BYTES) -> np.ndarray:
    """Out-degree of every vertex (uint32) from one pass over ``row`` through np.memmap."""
    row = grid.row()
    batch = max(1, batch_bytes // grid.record_size)
    degree = np.zeros(grid.vertices, dtype=np.int64)
    for k in range(0, grid.edges, batch):
        edges = row[k:k + batch]
        _check_ids(edges, grid.vertices, grid.path("row"))
        degree += np.bincount(edges["source"], minlength=grid.vertices)
    return degree.astype(np.uint32)


def _scaled(r: np.ndarray, degree: np.ndarray) -> np.ndarray:
    """r / out-degree, 0 where the degree is 0 (the C++ `degree[v] != 0 ? r / degree[v] : 0.0`)."""
    out = np.zeros_like(r)
    np.divide(r, degree.astype(np.float64), out=out, where=degree != 0)
    return out


def _finish(sums: np.ndarray, degree: np.ndarray, last: bool):
    r = 0.15 + 0.85 * sums
    total = float(np.cumsum(r)[-1]) if r.size else 0.0  # left to right, as one thread adds them
    return (r if last else _scaled(r, degree)), total


def pagerank_unmodified(graph_dir: str, iterations: int) -> PageRankResult:
    """PageRank reading ``row`` (out-degrees) and ``column`` through np.memmap, one target range
    of ``column`` at a time (bit-identical to the C++ app with one thread: module doc)."""
    if iterations < 1:
        raise ValueError(f"ITERATIONS must be >= 1, got {iterations}")
    began = time.monotonic()
    grid = Grid(graph_dir)
    n = grid.vertices
    degree = out_degrees(grid)
    rank = _scaled(np.ones(n), degree)  # between iterations: rank / out-degree
    column = grid.column()
    total = 0.0
    for it in range(iterations):
        sums = np.zeros(n)
        sequential = False  # after a record outside its block's target range: add edge by edge
        for j in range(grid.partitions):
            b, e = grid.column_range(j)
            if b == e:
                continue
            edges = column[b:e]
            _check_ids(edges, n, grid.path("column"))
            s = edges["source"]
            t = edges["target"]
            lo, hi = int(grid.bounds[j]), int(grid.bounds[j + 1])
            local = t.astype(np.int64) - lo
            if not sequential and (local.min() < 0 or local.max() >= hi - lo):
                sequential = True
            if sequential:
                np.add.at(sums, t, rank[s])
            else:
                # sums[lo:hi] is still 0.0: bincount adds each vertex's in-edges in file order.
                sums[lo:hi] += np.bincount(local, weights=rank[s], minlength=hi - lo)
        rank, total = _finish(sums, degree, it + 1 == iterations)
    return PageRankResult(rank, iterations, total, time.monotonic() - began, iterations + 1)


def pagerank_integrated(graph_dir: str, iterations: int, partition_size=DEFAULT_PARTITION_BYTES, read_lps=None,
                        gather_below: int = GATHER_BELOW) -> PageRankResult:
    """PageRank as a graphfs job: every vertex active (``all``) each iteration, the LPs' edges
    added in the order they arrive; out-degrees from ``row`` as in the unmodified mode (as the
    C++ app's integrated mode reads them)."""
    if iterations < 1:
        raise ValueError(f"ITERATIONS must be >= 1, got {iterations}")
    began = time.monotonic()
    grid = Grid(graph_dir)
    n = grid.vertices
    partitions = 0
    with Job(graph_dir, partition_size, read_lps=read_lps) as job:
        if job.vertices != n:
            raise GridFormatError(f"graphfs job {job.name}: graphfs says {graph_dir} has {job.vertices} vertices, "
                                  f"its meta says {n}")
        degree = out_degrees(grid)
        rank = _scaled(np.ones(n), degree)
        total = 0.0
        for it in range(iterations):
            sums = np.zeros(n)
            for lp in job.iteration(None):
                partitions += 1
                for edges in lp.arrays(gather_below=gather_below):
                    _check_ids(edges, n, lp.path)
                    np.add.at(sums, edges["target"], rank[edges["source"]])
            rank, total = _finish(sums, degree, it + 1 == iterations)
        mapped = job.maps_lps
    return PageRankResult(rank, iterations, total, time.monotonic() - began, iterations + 1, partitions, mapped)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="graphfs.examples.pagerank", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="graph directory (grid format; on a graphfs mount for --graphfs)")
    parser.add_argument("iterations", type=int)
    parser.add_argument("--graphfs", action="store_true", help="integrated mode: read graphfs's logical partitions")
    parser.add_argument("--graphfs-partition", default=DEFAULT_PARTITION_BYTES, metavar="SIZE",
                        help=f"bytes per logical partition (K/M/G; default {DEFAULT_PARTITION_BYTES >> 20}M, the protocol's)")
    parser.add_argument("--read-lps", action="store_true", help="read lp-SEQ files instead of mapping the LP memory")
    parser.add_argument("-o", "--output", help="result file (float64 per vertex; default PATH/numpy.pagerank.rank)")
    args = parser.parse_args(argv)
    try:
        if args.graphfs:
            result = pagerank_integrated(args.path, args.iterations, args.graphfs_partition,
                                         read_lps=args.read_lps or None)
        else:
            result = pagerank_unmodified(args.path, args.iterations)
    except (GraphfsError, ValueError) as e:
        print(f"pagerank: error: {e}", file=sys.stderr)
        return 1
    output = args.output or os.path.join(args.path, "numpy.pagerank.rank")
    result.rank.astype("<f8").tofile(output)
    print(result.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
