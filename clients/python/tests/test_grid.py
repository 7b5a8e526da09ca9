"""The grid format's readers: meta parsed strictly and checked as grid/grid_layout.cc does, the
offset tables and the edge files checked against it, GridGraph's vertex ranges; on a graph the
build's preprocess wrote (when the binaries are there), the blocks lie where the offsets say."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import graphfs
from graphfs.grid import GridMeta, partition_bounds

from conftest import binary


def test_meta_is_parsed_strictly():
    m = GridMeta.parse("1 4096 65536 4\n")
    assert (m.edge_type, m.vertices, m.edges, m.partitions) == (1, 4096, 65536, 4)
    assert m.weighted and m.record_size == 12 and m.edge_dtype == graphfs.WEIGHTED_EDGE
    assert m.format() == "1 4096 65536 4"
    assert GridMeta.parse("0 10 0 1").edge_dtype == graphfs.UNWEIGHTED_EDGE
    cases = {
        "1 4096 65536": "expected \"EDGE_TYPE VERTICES EDGES PARTITIONS\"",
        "1 4096 65536 4 5": "expected",
        "1 4096 0x10 4": "expected",
        "+1 4096 10 4": "expected",
        "2 4096 10 4": "edge type must be 0 or 1, got 2",
        "0 0 10 4": "bad vertex count 0",
        "0 2147483648 10 4": "bad vertex count",
        "0 10 -1 4": "bad edge count -1",
        "1 10 768614336404564651 4": "bad edge count",
        "0 10 10 0": "bad partition count 0",
        "0 10 99999999999999999999 1": "number out of range",
    }
    for text, message in cases.items():
        with pytest.raises(graphfs.GridFormatError, match=message) as e:
            GridMeta.parse(text, "g/meta")
        assert str(e.value).startswith("g/meta: ")
        assert isinstance(e.value, ValueError) and isinstance(e.value, graphfs.GraphfsError)


def test_partition_ranges_are_gridgraphs():
    # The first V % P ranges hold one vertex more.
    assert partition_bounds(10, 4).tolist() == [0, 3, 6, 8, 10]
    assert partition_bounds(4096, 4).tolist() == [0, 1024, 2048, 3072, 4096]
    assert partition_bounds(3, 4).tolist() == [0, 1, 2, 3, 3]


def write_graph(d, meta, column_offset, row_offset, edges_bytes):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "meta"), "w") as f:
        f.write(meta)
    np.asarray(column_offset, dtype="<i8").tofile(os.path.join(d, "column_offset"))
    np.asarray(row_offset, dtype="<i8").tofile(os.path.join(d, "row_offset"))
    for name in ("column", "row"):
        with open(os.path.join(d, name), "wb") as f:
            f.write(bytes(edges_bytes))


def test_damaged_graphs_are_named(tmp_path):
    d = str(tmp_path / "g")
    write_graph(d, "0 4 3 2", [0, 8, 8, 16, 24], [0, 8, 8, 16, 24], 24)
    g = graphfs.Grid(d)
    assert g.column_offset.tolist() == [0, 8, 8, 16, 24]
    assert g.column().shape == (3,) and g.column().dtype == graphfs.UNWEIGHTED_EDGE

    write_graph(d, "0 4 3 2", [0, 8, 8, 16], [0, 8, 8, 16, 24], 24)
    with pytest.raises(graphfs.GridFormatError, match="column_offset: has 32 bytes, expected 40"):
        graphfs.Grid(d)
    write_graph(d, "0 4 3 2", [0, 8, 16, 8, 24], [0, 8, 8, 16, 24], 24)
    with pytest.raises(graphfs.GridFormatError, match="offsets decrease at entry 3 \\(16 then 8\\)"):
        graphfs.Grid(d)
    write_graph(d, "0 4 3 2", [0, 8, 8, 16, 20], [0, 8, 8, 16, 24], 24)
    with pytest.raises(graphfs.GridFormatError, match="offsets span 0..20, expected 0..24"):
        graphfs.Grid(d)
    write_graph(d, "1 4 3 2", [0, 8, 8, 16, 24], [0, 8, 8, 16, 24], 24)
    with pytest.raises(graphfs.GridFormatError, match="column: has 24 bytes, but meta says 3 edges of 12 B"):
        graphfs.Grid(d)
    os.remove(os.path.join(d, "meta"))
    os.mkdir(os.path.join(d, "meta"))
    with pytest.raises(graphfs.GridFormatError, match="meta: not a regular file"):
        graphfs.Grid(d)


@pytest.mark.skipif(not os.access(binary("preprocess"), os.X_OK), reason="the build's preprocess is not there")
def test_blocks_lie_where_the_offsets_say(tmp_path):
    edges = str(tmp_path / "e.bin")
    g = str(tmp_path / "g")
    subprocess.run([binary("gen-rmat"), "--scale", "10", "--weighted", "--seed", "2", "-o", edges], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([binary("preprocess"), "-i", edges, "-o", g, "-v", "1024", "-p", "3", "-t", "1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    grid = graphfs.Grid(g)
    assert grid.weighted and grid.vertices == 1024 and grid.partitions == 3
    column, row = grid.column(), grid.row()
    for i in range(3):
        for j in range(3):
            block = np.fromfile(os.path.join(g, f"block-{i}-{j}"), dtype=grid.edge_dtype)
            b, e = grid.column_block(i, j)
            assert np.array_equal(column[b:e], block)
            b, e = grid.row_block(i, j)
            assert np.array_equal(row[b:e], block)
            assert np.all(grid.partition_of(block["source"]) == i)
            assert np.all(grid.partition_of(block["target"]) == j)
