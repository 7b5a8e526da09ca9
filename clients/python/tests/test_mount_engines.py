"""The numpy example engines against the C++ apps on the three graph families, through a real
mount: BFS levels byte-identical in both modes (integrated mapped and read, unmodified through
np.memmap of the mount's column); PageRank unmodified bit-identical to the C++ app with one
reader thread, integrated within 1e-12 (why not bit-identical: below)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import CLIENT_DIR, PAGERANK_ITERATIONS, PARTITION, binary, run
from graphfs.examples import bfs, pagerank

FAMILIES = ["rmat", "rmat-local", "grid"]


def without_time(line: str) -> str:
    """A result line up to its pass count and time ("..., N passes in T s"), which differ
    between the engines (the C++ bfs re-enters loaded edges and so takes fewer passes)."""
    return line.rsplit(", ", 1)[0]


def relative_difference(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a), 1e-300))) if a.size else 0.0


@pytest.mark.parametrize("family", FAMILIES)
def test_bfs_levels_are_the_cpp_apps(world, family):
    fam = world.families[family]
    want = np.frombuffer(fam.cpp["bfs.level"], dtype="<i4")
    assert (want >= 0).sum() > 1000, "the start reaches much of the graph"
    path = fam.on(world.mountpoint)
    results = {
        "unmodified (np.memmap of the mount's column)": bfs.bfs_unmodified(path, fam.start),
        "integrated, mapped LPs": bfs.bfs_integrated(path, fam.start, PARTITION),
        "integrated, lp-SEQ read": bfs.bfs_integrated(path, fam.start, PARTITION, read_lps=True),
    }
    assert results["integrated, mapped LPs"].mapped and not results["integrated, lp-SEQ read"].mapped
    assert results["integrated, mapped LPs"].partitions >= results["integrated, mapped LPs"].iterations
    for mode, r in results.items():
        assert r.level.dtype == np.int32
        assert r.level.astype("<i4").tobytes() == fam.cpp["bfs.level"], mode
        # "bfs: discovered X of V vertices from S, depth D"
        assert r.line().split(", depth")[0] == fam.cpp_lines["bfs"].split(", depth")[0], mode
        assert r.line().split(", ")[1] == fam.cpp_lines["bfs"].split(", ")[1], mode
    # The C++ app integrated on the same mount agrees too (its own tests compare it to its
    # unmodified runs).
    run([binary("bfs"), path, str(fam.start), "--graphfs", "--graphfs-partition", PARTITION, "--state-tag", "cppint"])
    with open(os.path.join(path, "cppint.bfs.level"), "rb") as f:
        assert f.read() == fam.cpp["bfs.level"]


@pytest.mark.parametrize("family", FAMILIES)
def test_pagerank_unmodified_is_bit_identical_to_the_cpp_app(world, family):
    """Same IEEE double operations in the same order as the C++ app with one reader thread:
    each vertex's in-edges added from 0.0 in column order (pagerank.py's module doc)."""
    fam = world.families[family]
    r = pagerank.pagerank_unmodified(fam.on(world.mountpoint), PAGERANK_ITERATIONS)
    assert r.rank.astype("<f8").tobytes() == fam.cpp["pagerank.rank"]
    assert without_time(r.line()) == without_time(fam.cpp_lines["pagerank"])


@pytest.mark.parametrize("family", FAMILIES)
def test_pagerank_integrated_matches_the_cpp_app_to_rounding(world, family):
    """Not bit-identical, and cannot be: a vertex's sum adds its in-edges in the order the LPs
    arrive, which graphfs's scheduler chooses per run (chunk priorities, what is cached, other
    jobs) — two runs of the C++ app in integrated mode differ in their last bits too. Double
    rounding over a few thousand in-edges and five iterations stays far below 1e-12 relative;
    a wrong or missing edge moves ranks by more than 1e-4."""
    fam = world.families[family]
    want = np.frombuffer(fam.cpp["pagerank.rank"], dtype="<f8")
    path = fam.on(world.mountpoint)
    mapped = pagerank.pagerank_integrated(path, PAGERANK_ITERATIONS, PARTITION)
    read = pagerank.pagerank_integrated(path, PAGERANK_ITERATIONS, PARTITION, read_lps=True)
    assert mapped.mapped and not read.mapped
    run([binary("pagerank"), path, str(PAGERANK_ITERATIONS), "--threads", "1", "--graphfs", "--graphfs-partition",
         PARTITION, "--state-tag", "cppint"])
    cpp_integrated = np.fromfile(os.path.join(path, "cppint.pagerank.rank"), dtype="<f8")
    for r in (mapped, read):
        assert relative_difference(r.rank, want) <= 1e-12
        assert relative_difference(r.rank, cpp_integrated) <= 1e-12
        assert without_time(r.line()) == without_time(fam.cpp_lines["pagerank"])


def test_the_example_commands_write_the_cpp_apps_result_files(world, scratch):
    fam = world.families["grid"]
    path = fam.on(world.mountpoint)
    env = dict(os.environ, PYTHONPATH=CLIENT_DIR, PYTHONDONTWRITEBYTECODE="1")
    for mode in ([], ["--graphfs", "--graphfs-partition", PARTITION]):
        out = os.path.join(scratch, "bfs.level")
        line = subprocess.run([sys.executable, "-m", "graphfs.examples.bfs", path, str(fam.start), "-o", out] + mode,
                              env=env, check=True, capture_output=True, text=True).stdout.strip()
        assert line.split(", depth")[0] == fam.cpp_lines["bfs"].split(", depth")[0]
        with open(out, "rb") as f:
            assert f.read() == fam.cpp["bfs.level"]
    out = os.path.join(scratch, "pagerank.rank")
    line = subprocess.run([sys.executable, "-m", "graphfs.examples.pagerank", path, str(PAGERANK_ITERATIONS), "-o", out],
                          env=env, check=True, capture_output=True, text=True).stdout.strip()
    assert without_time(line) == without_time(fam.cpp_lines["pagerank"])
    with open(out, "rb") as f:
        assert f.read() == fam.cpp["pagerank.rank"]
    r = subprocess.run([sys.executable, "-m", "graphfs.examples.bfs", path, str(fam.vertices)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "start vertex 4096 is out of range [0, 4096)" in r.stderr
