"""GridGraph's grid format (grid/README.md, grid/grid_layout.h), read with numpy.

A preprocessed graph directory holds::

    meta           "EDGE_TYPE VERTICES EDGES PARTITIONS" (edge type 0: 8-byte records, 1: 12-byte)
    column         the blocks column-major (for target range j: for source range i: block-i-j)
    column_offset  P*P+1 little-endian int64; entry j*P+i is the byte where block (i, j) starts
    row            the blocks row-major;  row_offset entry i*P+j
    block-i-j      the edges with source in range i and target in range j

Edge records are packed little-endian ``int32 source, int32 target[, float32 weight]``:
:data:`UNWEIGHTED_EDGE` and :data:`WEIGHTED_EDGE` are their numpy dtypes. V vertices are split
into P ranges as GridGraph's ``get_partition_range`` does: the first ``V % P`` ranges hold one
vertex more.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass

import numpy as np

from .errors import GridFormatError

UNWEIGHTED_EDGE = np.dtype([("source", "<i4"), ("target", "<i4")])
WEIGHTED_EDGE = np.dtype([("source", "<i4"), ("target", "<i4"), ("weight", "<f4")])

# GridGraph writes meta as one short line; anything much longer is not a meta.
MAX_META_BYTES = 4096
_INT_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_INTEGER = re.compile(r"-?[0-9]+\Z")


def edge_dtype(weighted: bool) -> np.dtype:
    """The numpy dtype of one edge record."""
    return WEIGHTED_EDGE if weighted else UNWEIGHTED_EDGE


@dataclass(frozen=True)
class GridMeta:
    edge_type: int  # 0 unweighted, 1 weighted
    vertices: int
    edges: int
    partitions: int

    @property
    def weighted(self) -> bool:
        return self.edge_type == 1

    @property
    def edge_dtype(self) -> np.dtype:
        return edge_dtype(self.weighted)

    @property
    def record_size(self) -> int:
        return self.edge_dtype.itemsize

    def format(self) -> str:
        """The exact text GridGraph writes (no trailing newline)."""
        return f"{self.edge_type} {self.vertices} {self.edges} {self.partitions}"

    @staticmethod
    def parse(text: str, where: str = "meta") -> "GridMeta":
        """Four blank-separated decimal integers, read strictly and checked as
        grid/grid_layout.cc does; ``where`` names the file in errors."""
        shown = text[:200] + "..." if len(text) > 200 else text
        fields = text.split()
        if len(fields) != 4 or not all(_INTEGER.match(f) for f in fields):
            raise GridFormatError(f"{where}: expected \"EDGE_TYPE VERTICES EDGES PARTITIONS\", got '{shown}'")
        values = [int(f) for f in fields]
        if any(v > _INT64_MAX or v < -_INT64_MAX - 1 for v in values):
            raise GridFormatError(f"{where}: number out of range in '{shown}'")
        edge_type, vertices, edges, partitions = values
        if edge_type not in (0, 1):
            raise GridFormatError(f"{where}: edge type must be 0 or 1, got {edge_type}")
        if vertices < 1 or vertices > _INT_MAX:
            raise GridFormatError(f"{where}: bad vertex count {vertices}")
        max_edges = _INT64_MAX // (12 if edge_type == 1 else 8)
        if edges < 0 or edges > max_edges:
            raise GridFormatError(f"{where}: bad edge count {edges} (0 to {max_edges} for this edge type)")
        if partitions < 1 or partitions > _INT_MAX:
            raise GridFormatError(f"{where}: bad partition count {partitions}")
        return GridMeta(edge_type, vertices, edges, partitions)


def read_meta(graph_dir: str) -> GridMeta:
    """Reads and checks ``graph_dir/meta``."""
    path = os.path.join(graph_dir, "meta")
    st = _regular(path)
    if st.st_size > MAX_META_BYTES:
        raise GridFormatError(f"{path}: {st.st_size} bytes, too large for a meta file (at most {MAX_META_BYTES})")
    with open(path, "rb") as f:
        raw = f.read(MAX_META_BYTES + 1)
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        text = raw.decode("ascii", "replace")
    if "\0" in text:
        raise GridFormatError(f"{path}: expected \"EDGE_TYPE VERTICES EDGES PARTITIONS\", got a NUL byte")
    return GridMeta.parse(text, path)


def read_offsets(path: str, partitions: int, file_bytes: int) -> np.ndarray:
    """An offsets table (``column_offset`` or ``row_offset``): P*P+1 little-endian int64 from 0
    to ``file_bytes`` (the edge file's size), never decreasing. Returned as an int64 array."""
    count = partitions * partitions + 1
    st = _regular(path)
    if st.st_size != count * 8:
        raise GridFormatError(f"{path}: has {st.st_size} bytes, expected {count * 8} (P*P+1 int64 offsets)")
    with open(path, "rb") as f:
        raw = f.read(count * 8)
    if len(raw) != count * 8:
        raise GridFormatError(f"{path}: read {len(raw)} bytes, expected {count * 8}")
    offsets = np.frombuffer(raw, dtype="<i8").astype(np.int64)
    if offsets[0] != 0 or offsets[-1] != file_bytes:
        raise GridFormatError(f"{path}: offsets span {offsets[0]}..{offsets[-1]}, expected 0..{file_bytes} "
                              "(the size of the edge files)")
    drops = np.flatnonzero(offsets[1:] < offsets[:-1])
    if drops.size:
        k = int(drops[0]) + 1
        raise GridFormatError(f"{path}: offsets decrease at entry {k} ({offsets[k - 1]} then {offsets[k]})")
    return offsets


def partition_bounds(vertices: int, partitions: int) -> np.ndarray:
    """The P+1 boundaries of GridGraph's vertex ranges: range i is [bounds[i], bounds[i+1])."""
    small, big = divmod(vertices, partitions)
    sizes = np.full(partitions, small, dtype=np.int64)
    sizes[:big] += 1
    return np.concatenate(([0], np.cumsum(sizes)))


def _regular(path: str) -> os.stat_result:
    try:
        st = os.stat(path)
    except OSError as e:
        raise GridFormatError(f"{path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise GridFormatError(f"{path}: not a regular file")
    return st


class Grid:
    """A graph directory in the grid format: ``meta`` and both offset tables read and checked
    against the sizes of ``column`` and ``row`` (block files are not looked at). The edge files
    are mapped on demand with ``np.memmap`` (read-only): an unmodified engine reads them the
    way a GridGraph program does, through the page cache, also on a graphfs mount."""

    def __init__(self, graph_dir: str):
        self.dir = graph_dir
        self.meta = read_meta(graph_dir)
        self.edge_dtype = self.meta.edge_dtype
        self.record_size = self.meta.record_size
        file_bytes = self.meta.edges * self.record_size
        for name in ("column", "row"):
            path = os.path.join(graph_dir, name)
            size = _regular(path).st_size
            if size != file_bytes:
                raise GridFormatError(
                    f"{path}: has {size} bytes, but meta says {self.meta.edges} edges of {self.record_size} B "
                    f"(edge type {self.meta.edge_type}) = {file_bytes} bytes")
        p = self.meta.partitions
        self.column_offset = read_offsets(os.path.join(graph_dir, "column_offset"), p, file_bytes)
        self.row_offset = read_offsets(os.path.join(graph_dir, "row_offset"), p, file_bytes)
        self.bounds = partition_bounds(self.meta.vertices, p)
        self._maps: dict[str, np.ndarray] = {}

    @property
    def vertices(self) -> int:
        return self.meta.vertices

    @property
    def edges(self) -> int:
        return self.meta.edges

    @property
    def partitions(self) -> int:
        return self.meta.partitions

    @property
    def weighted(self) -> bool:
        return self.meta.weighted

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def edge_file(self, name: str) -> np.ndarray:
        """``column`` or ``row`` as a read-only structured array over an ``np.memmap``."""
        if name not in ("column", "row"):
            raise ValueError(f"edge files are column and row, not {name!r}")
        if name not in self._maps:
            if self.edges == 0:
                self._maps[name] = np.zeros(0, dtype=self.edge_dtype)
            else:
                self._maps[name] = np.memmap(self.path(name), dtype=self.edge_dtype, mode="r", shape=(self.edges,))
        return self._maps[name]

    def column(self) -> np.ndarray:
        return self.edge_file("column")

    def row(self) -> np.ndarray:
        return self.edge_file("row")

    def column_block(self, i: int, j: int) -> tuple[int, int]:
        """Record range [begin, end) of block (i, j) (sources in range i, targets in range j)
        in ``column``."""
        k = j * self.partitions + i
        return int(self.column_offset[k]) // self.record_size, int(self.column_offset[k + 1]) // self.record_size

    def row_block(self, i: int, j: int) -> tuple[int, int]:
        """Record range [begin, end) of block (i, j) in ``row``."""
        k = i * self.partitions + j
        return int(self.row_offset[k]) // self.record_size, int(self.row_offset[k + 1]) // self.record_size

    def column_range(self, j: int) -> tuple[int, int]:
        """Record range of every edge whose target is in range j (blocks (0..P-1, j))."""
        return self.column_block(0, j)[0], self.column_block(self.partitions - 1, j)[1]

    def partition_of(self, v):
        """The range of vertex (or vertex array) ``v``."""
        return np.searchsorted(self.bounds, v, side="right") - 1

    def check_ids(self, edges: np.ndarray, where: str) -> None:
        """Every record's source and target in [0, V), as the C++ streams check them; raises
        GridFormatError naming ``where`` and the first bad record otherwise."""
        if edges.size == 0:
            return
        v = self.vertices
        for field in ("source", "target"):
            ids = edges[field]
            if int(ids.min()) < 0 or int(ids.max()) >= v:
                k = int(np.flatnonzero((ids < 0) | (ids >= v))[0])
                raise GridFormatError(f"{where}: record {k} has {field} {int(ids[k])}, outside [0, {v})")

    def close(self) -> None:
        self._maps.clear()

    def __enter__(self) -> "Grid":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_grid(graph_dir: str) -> Grid:
    return Grid(graph_dir)
