#!/usr/bin/env python3
"""How much of a graph's `column` an iteration's active sources need, at three granularities.

    /usr/bin/python3 scripts/bench/run_blocks.py GRAPH_DIR ITER:ACTIVE:EDGES ... [--chunk 2097144]
        [--block 65536] [--page 4096] [--seed 1]

GRAPH_DIR is a preprocessed graph (GridGraph layout: `column` of 12-byte weighted edges, sources
sorted within each block, as `preprocess --sort-sources` writes). Each ITER:ACTIVE:EDGES comes
from an integrated job's line ("pagerank-delta: iteration ITER, ACTIVE active, ...; EDGES edges
read"): the job's active set is not logged, so ACTIVE sources are drawn at random among those
whose out-degree is within 2x of EDGES / ACTIVE (the sample's own edge count is printed beside the
run's). For each, the count of `column`'s chunks (the frames a compressed graph is read and decoded
in), of BLOCK-byte blocks and of PAGE-byte pages that hold at least one edge of those sources: what
an LP of them reads and decodes with whole frames, with frames cut in independently decodable
blocks, and with raw pages (docs/memory-as-cache.md, fourteenth part). Reads the file once (numpy).
"""
import argparse
import sys

import numpy as np

EDGE = 12


def touched(positions, granule):
    """Granules of `granule` bytes that hold a byte of an edge starting at one of `positions`."""
    return np.union1d(np.unique(positions // granule), np.unique((positions + EDGE - 1) // granule)).size


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("iterations", nargs="+", metavar="ITER:ACTIVE:EDGES")
    ap.add_argument("--chunk", type=int, default=2097144)
    ap.add_argument("--block", type=int, default=65536)
    ap.add_argument("--page", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rows = []
    for spec in a.iterations:
        try:
            it, active, edges = (int(x) for x in spec.split(":"))
            if active <= 0 or edges < 0:
                raise ValueError
        except ValueError:
            sys.exit(f"run_blocks.py: '{spec}' is not ITER:ACTIVE:EDGES with ACTIVE > 0")
        rows.append((it, active, edges))
    try:
        column = np.memmap(a.graph + "/column", dtype=np.uint32, mode="r")
    except (OSError, ValueError) as e:
        sys.exit(f"run_blocks.py: {a.graph}/column: {e}")
    if column.size % 3:
        sys.exit(f"run_blocks.py: {a.graph}/column is not a whole number of 12-byte edges")
    src = np.array(column.reshape(-1, 3)[:, 0])
    degree = np.bincount(src)
    position = np.arange(src.size, dtype=np.int64) * EDGE
    chunks = (src.size * EDGE + a.chunk - 1) // a.chunk
    rng = np.random.default_rng(a.seed)
    print(f"{a.graph}/column: {src.size} edges, {chunks} chunks of {a.chunk} B")
    print("iter\tactive\tedges (run)\tedges (sample)\tchunks\tchunk MB\tblocks\tblock MB\tpages\tpage MB")
    for it, active, edges in rows:
        mean = edges / active
        candidates = np.nonzero((degree >= mean / 2) & (degree <= mean * 2))[0]
        if candidates.size == 0:
            sys.exit(f"run_blocks.py: no source has an out-degree within 2x of {mean:.0f}")
        chosen = np.zeros(degree.size, dtype=bool)
        chosen[rng.choice(candidates, size=min(active, candidates.size), replace=False)] = True
        mask = chosen[src]
        at = position[mask]
        c, b, p = touched(at, a.chunk), touched(at, a.block), touched(at, a.page)
        print(f"{it}\t{active}\t{edges}\t{int(mask.sum())}\t{c}\t{c * a.chunk / 1e6:.0f}\t{b}\t{b * a.block / 1e6:.0f}"
              f"\t{p}\t{p * a.page / 1e6:.0f}")


if __name__ == "__main__":
    main()
