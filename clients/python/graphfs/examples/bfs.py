"""Breadth-first search in numpy, in graphfs's two modes, with the C++ app's results.

Unmodified (:func:`bfs_unmodified`): reads ``column`` through ``np.memmap`` as a GridGraph program
reads it through the mount, skipping the blocks whose source range has no active vertex.
Integrated (:func:`bfs_integrated`): a job on the mount says its frontier each iteration and
processes the logical partitions graphfs hands it (views of the shared LP memory, no copy).

Level-synchronous: iteration k processes the edges of the vertices reached in iteration k-1 and
gives every unreached target level k. The levels are the BFS levels, which the C++ bfs (a
relaxation by write-min, with or without reentry) also ends with, so ``bfs.level`` files are
byte-identical: int32 per vertex, -1 unreachable.

    python3 -m graphfs.examples.bfs PATH START [--graphfs [--graphfs-partition SIZE]] [-o FILE]
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

# GridGraph's largest read (IOSIZE): batches of the unmodified stream are at most this.
BATCH_BYTES = 24 << 20
# Pieces of an LP smaller than this are gathered before processing (the C++ engines' 1 MiB).
GATHER_BELOW = 1 << 20


@dataclass
class BfsResult:
    level: np.ndarray  # int32, -1 unreached
    start: int
    iterations: int  # passes over the active edges (the last finds nothing new)
    seconds: float
    edges_read: int = 0
    partitions: int = 0  # LPs (integrated)
    mapped: bool = False  # integrated: the LPs were read in the shared memory

    @property
    def discovered(self) -> int:
        return int(np.count_nonzero(self.level >= 0))

    @property
    def depth(self) -> int:
        return int(self.level.max()) if self.level.size else 0

    def line(self) -> str:
        """The C++ app's result line (its pass count is its own: reentry takes fewer)."""
        return (f"bfs: discovered {self.discovered} of {self.level.size} vertices from {self.start}, depth "
                f"{self.depth}, {self.iterations} passes in {self.seconds:.2f} s")


class _Frontier:
    """One level-synchronous step over batches of edge records."""

    def __init__(self, vertices: int, start: int):
        if start < 0 or start >= vertices:
            raise ValueError(f"start vertex {start} is out of range [0, {vertices})")
        self.vertices = vertices
        self.level = np.full(vertices, -1, dtype=np.int32)
        self.level[start] = 0
        self.current = np.zeros(vertices, dtype=bool)
        self.current[start] = True
        self.next = np.zeros(vertices, dtype=bool)
        self.depth = 0  # level of `current`
        self.edges_read = 0

    def apply(self, edges: np.ndarray, where: str) -> None:
        if edges.size == 0:
            return
        self.edges_read += edges.size
        s = edges["source"]
        t = edges["target"]
        # Ids as the C++ streams check them: every record read, active or not. As uint32 a
        # negative id is huge, so one comparison per field.
        if int(s.view(np.uint32).max()) >= self.vertices or int(t.view(np.uint32).max()) >= self.vertices:
            bad = np.flatnonzero((s.view(np.uint32) >= self.vertices) | (t.view(np.uint32) >= self.vertices))[0]
            raise GridFormatError(f"{where}: edge record {int(bad)} of a batch has ids ({int(s[bad])}, "
                                  f"{int(t[bad])}) outside [0, {self.vertices})")
        reached = t[self.current[s]]
        reached = reached[self.level[reached] < 0]
        self.level[reached] = self.depth + 1
        self.next[reached] = True

    def advance(self) -> int:
        """Ends an iteration: the vertices reached in it become the frontier; returns how many."""
        self.current, self.next = self.next, self.current
        self.next[:] = False
        self.depth += 1
        return int(np.count_nonzero(self.current))


def bfs_unmodified(graph_dir: str, start: int, batch_bytes: int = BATCH_BYTES) -> BfsResult:
    """BFS reading ``column`` through np.memmap; blocks (i, j) whose source range i holds no
    frontier vertex are skipped, the rest read in file order in batches of up to
    ``batch_bytes``."""
    began = time.monotonic()
    grid = Grid(graph_dir)
    state = _Frontier(grid.vertices, start)
    column = grid.column()
    batch = max(1, batch_bytes // grid.record_size)
    bounds = grid.bounds
    p = grid.partitions
    iterations = 0
    active = 1
    while active:
        iterations += 1
        # Source ranges with a frontier vertex (reduceat of an empty range is an element: masked).
        counts = np.logical_or.reduceat(state.current, np.minimum(bounds[:-1], grid.vertices - 1))
        active_ranges = counts & (np.diff(bounds) > 0)
        runs: list[list[int]] = []
        for j in range(p):
            for i in np.flatnonzero(active_ranges):
                b, e = grid.column_block(int(i), j)
                if b == e:
                    continue
                if runs and runs[-1][1] == b:
                    runs[-1][1] = e
                else:
                    runs.append([b, e])
        for b, e in runs:
            for k in range(b, e, batch):
                state.apply(column[k:min(e, k + batch)], grid.path("column"))
        active = state.advance()
    return BfsResult(state.level, start, iterations, time.monotonic() - began, state.edges_read)


def bfs_integrated(graph_dir: str, start: int, partition_size=DEFAULT_PARTITION_BYTES, read_lps=None,
                   gather_below: int = GATHER_BELOW) -> BfsResult:
    """BFS as a graphfs job: each iteration writes the frontier as the job's active set and
    processes every LP until ``end`` (LPs of whole chunks hold inactive sources' edges too:
    filtered by the frontier, as the C++ engines do)."""
    began = time.monotonic()
    with Job(graph_dir, partition_size, read_lps=read_lps) as job:
        state = _Frontier(job.vertices, start)
        iterations = 0
        partitions = 0
        active = 1
        while active:
            iterations += 1
            for lp in job.iteration(state.current):
                partitions += 1
                for edges in lp.arrays(gather_below=gather_below):
                    state.apply(edges, lp.path)
            active = state.advance()
        mapped = job.maps_lps
    return BfsResult(state.level, start, iterations, time.monotonic() - began, state.edges_read, partitions, mapped)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="graphfs.examples.bfs", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="graph directory (grid format; on a graphfs mount for --graphfs)")
    parser.add_argument("start", type=int, help="start vertex")
    parser.add_argument("--graphfs", action="store_true", help="integrated mode: read graphfs's logical partitions")
    parser.add_argument("--graphfs-partition", default=DEFAULT_PARTITION_BYTES, metavar="SIZE",
                        help=f"bytes per logical partition (K/M/G; default {DEFAULT_PARTITION_BYTES >> 20}M, the protocol's)")
    parser.add_argument("--read-lps", action="store_true", help="read lp-SEQ files instead of mapping the LP memory")
    parser.add_argument("-o", "--output", help="result file (int32 per vertex; default PATH/numpy.bfs.level)")
    parser.add_argument("--verbose", action="store_true", help="mode and counts on stderr")
    args = parser.parse_args(argv)
    try:
        if args.graphfs:
            result = bfs_integrated(args.path, args.start, args.graphfs_partition, read_lps=args.read_lps or None)
        else:
            result = bfs_unmodified(args.path, args.start)
    except (GraphfsError, ValueError) as e:
        print(f"bfs: error: {e}", file=sys.stderr)
        return 1
    output = args.output or os.path.join(args.path, "numpy.bfs.level")
    result.level.astype("<i4").tofile(output)
    print(result.line())
    if args.verbose:
        mode = "integrated" if args.graphfs else "unmodified"
        extra = f", {result.partitions} LPs ({'mapped' if result.mapped else 'read'})" if args.graphfs else ""
        print(f"bfs: {mode}: {result.edges_read} edge records read{extra}, results in {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
