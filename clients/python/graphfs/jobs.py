"""The jobs protocol of graphfs's control directory MOUNT/.graphfs/jobs/ (README.md, "The control
directory"), as the C++ client engines/graphfs_client.hpp speaks it.

A job registers on a graph (``mkdir jobs/NAME``, ``graph``, ``partition_size``, the ``lease`` held
open for its life), says which vertices are active (``active``: a bitmap of ceil(V/8) bytes;
``active.list``: ``all`` or ids), and reads logical partitions (LPs) until ``end``: ``next`` answers
``lp-SEQ``; ``lp-SEQ.pieces`` says where the job's view of the LP lies in the graph's shared LP
memory (``memory``, mapped read-only once per job), so the edges are numpy arrays over that
mapping with no copy; where it cannot be mapped (no FUSE passthrough), or with
``GRAPHFS_LP_READ=1``, the LP file ``lp-SEQ`` is read instead, in one read. ``done`` lets the
daemon move on; ``rmdir`` removes the job (:meth:`Job.close`, the context manager, or the daemon
when the lease's last handle closes because the process died).
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
import re
from dataclasses import dataclass, field
from typing import Iterator, Optional, Sequence, Union

import numpy as np

from .errors import GraphfsError, NotOnMountError, ProtocolError, error_for
from .grid import edge_dtype, read_meta

import errno as _errno

DEFAULT_PARTITION_BYTES = 256 << 20

# One line of lp-SEQ.map: `length` bytes of `column` at `column_offset` (in chunk CHUNK_ID: all
# of it, or a run of its sources' edges), stored at `lp_offset` in the LP.
MAP_DTYPE = np.dtype([("chunk_id", "<u8"), ("column_offset", "<u8"), ("length", "<u8"), ("lp_offset", "<u8")])
# lp-SEQ.pieces' per-piece entries: offset in `memory`, length, offset in `column`.
PIECE_DTYPE = np.dtype([("memory_offset", "<u8"), ("length", "<u8"), ("column_offset", "<u8")])
PIECES_MAGIC = b"GFSPIEC1"

_SIZE = re.compile(r"\s*([0-9]+)\s*([KMGTP]?)(?:i?B)?\s*\Z", re.IGNORECASE)
_SHIFT = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40, "P": 50}
_U64_MAX = 2**64 - 1


def parse_size(text: Union[int, str]) -> int:
    """"4096", "16M", "16MiB", "1G", "512k": binary suffixes (K = 1024), as graphfs's ParseSize."""
    if isinstance(text, (int, np.integer)):
        return int(text)
    m = _SIZE.match(text)
    if not m:
        raise error_for(_errno.EINVAL, f"graphfs: bad size {text!r} (want bytes with an optional K/M/G/T suffix)")
    value = int(m.group(1)) << _SHIFT[m.group(2).upper()]
    if value > _U64_MAX:
        raise error_for(_errno.EINVAL, f"graphfs: size {text!r} does not fit 64 bits")
    return value


# ---- pure helpers (no I/O; as the C++ header's, exposed for tests and other engines) ----

def _quote(raw: bytes) -> str:
    out = []
    for b in raw[:80]:
        if b == 0x0A:
            out.append("\\n")
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\x{b:02x}")
        else:
            out.append(chr(b))
    return "'" + "".join(out) + ("..." if len(raw) > 80 else "") + "'"


def parse_next(answer: bytes) -> tuple[bool, int]:
    """The answer of a read of ``next``: ``lp-SEQ\\n`` or ``end\\n`` (the newline optional).
    Returns (end, seq)."""
    text = answer[:-1] if answer.endswith(b"\n") else answer
    if text == b"end":
        return True, 0
    digits = text[3:]
    if text[:3] == b"lp-" and 0 < len(digits) <= 20 and digits.isdigit() and int(digits) <= _U64_MAX:
        return False, int(digits)
    raise ProtocolError(_errno.EPROTO, f"unexpected answer {_quote(answer)} (want lp-SEQ or end)")


def parse_map(text: bytes) -> np.ndarray:
    """``lp-SEQ.map``: one extent per line, ``CHUNK_ID COLUMN_OFFSET LENGTH LP_OFFSET``, decimal,
    blank-separated (blank lines ignored); as an array of :data:`MAP_DTYPE`."""
    rows = []
    for line_no, line in enumerate(text.split(b"\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4 or not all(f.isdigit() and len(f) <= 20 and int(f) <= _U64_MAX for f in fields):
            raise ProtocolError(_errno.EPROTO, f"line {line_no}: want CHUNK_ID COLUMN_OFFSET LENGTH LP_OFFSET, "
                                               f"got {_quote(line)}")
        rows.append(tuple(int(f) for f in fields))
    return np.array(rows, dtype=MAP_DTYPE) if rows else np.zeros(0, dtype=MAP_DTYPE)


@dataclass
class PiecesFile:
    """``lp-SEQ.pieces``: little-endian u64s ``GFSPIEC1``, the piece count, the id of the shared
    memory (0: this LP is not in it, read ``lp-SEQ``), the view's bytes; then per piece its offset
    in ``memory``, its length and its offset in ``column`` (:data:`PIECE_DTYPE`)."""

    memory_id: int
    view_bytes: int
    entries: np.ndarray


def check_pieces_in_memory(pieces: PiecesFile, memory_bytes: int) -> None:
    """Raises ProtocolError unless every piece lies in ``memory_bytes`` of shared memory (an LP not
    in shared memory, memory_id 0, always passes)."""
    if pieces.memory_id == 0 or pieces.entries.size == 0:
        return
    off = pieces.entries["memory_offset"]
    length = pieces.entries["length"]
    bad = (off > memory_bytes) | (length > np.uint64(memory_bytes) - np.minimum(off, np.uint64(memory_bytes)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ProtocolError(_errno.EPROTO, f"piece {i} at {int(off[i])}+{int(length[i])} lies past the "
                                           f"{memory_bytes}-byte shared memory")


def parse_pieces(raw: bytes, memory_bytes: Optional[int] = None) -> PiecesFile:
    """Parses ``lp-SEQ.pieces`` (layout at :class:`PiecesFile`); with ``memory_bytes``, every
    piece is checked to lie in that much shared memory."""
    if len(raw) < 32 or raw[:8] != PIECES_MAGIC:
        raise ProtocolError(_errno.EPROTO, f"not a pieces file ({len(raw)} bytes, want the GFSPIEC1 header)")
    count, memory_id, view_bytes = (int(x) for x in np.frombuffer(raw, dtype="<u8", count=3, offset=8))
    if len(raw) % 8 != 0 or (len(raw) // 8 - 4) % 3 != 0 or (len(raw) // 8 - 4) // 3 != count:
        raise ProtocolError(_errno.EPROTO, f"pieces file of {len(raw)} bytes does not hold the {count} pieces "
                                           "its header counts")
    entries = np.frombuffer(raw, dtype=PIECE_DTYPE, count=count, offset=32).copy()
    total = int(entries["length"].sum(dtype=np.uint64)) if count else 0
    if total != view_bytes:
        raise ProtocolError(_errno.EPROTO, f"pieces add up to {total} bytes, the header says {view_bytes}")
    pieces = PiecesFile(memory_id, view_bytes, entries)
    if memory_bytes is not None:
        check_pieces_in_memory(pieces, memory_bytes)
    return pieces


def active_bitmap_bytes(active: np.ndarray, vertices: int) -> bytes:
    """What ``active`` must receive: exactly ceil(V/8) bytes, bit v = byte[v/8] >> (v%8) & 1, the
    bits past V cleared (the daemon refuses them). ``active`` is a bool array of V entries."""
    mask = np.asarray(active, dtype=bool)
    if mask.shape != (vertices,):
        raise ValueError(f"want a bool array of {vertices} entries, got shape {mask.shape}")
    return np.packbits(mask, bitorder="little").tobytes()


def words_bitmap_bytes(words: np.ndarray, vertices: int) -> bytes:
    """The C++ client's ActiveBitmapBytes: bit v = words[v/64] >> (v%64) & 1, as ceil(V/8)
    little-endian bytes with the bits past V cleared."""
    nbytes = (vertices + 7) // 8
    raw = bytearray(np.ascontiguousarray(words, dtype="<u8").tobytes()[:nbytes])
    if len(raw) != nbytes:
        raise ValueError(f"{len(words)} words hold fewer than the {vertices} bits of the graph")
    if vertices % 8:
        raw[-1] &= (1 << (vertices % 8)) - 1
    return bytes(raw)


def parse_status_vertices(text: Union[bytes, str]) -> int:
    """The top-level ``vertices`` field of a job's ``status`` (JSON): the graph's V."""
    try:
        status = json.loads(text)
    except ValueError as e:
        raise ProtocolError(_errno.EPROTO, f"status is not JSON: {e}") from None
    if not isinstance(status, dict) or "vertices" not in status:
        raise ProtocolError(_errno.EPROTO, "no top-level \"vertices\" field")
    v = status["vertices"]
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ProtocolError(_errno.EPROTO, "\"vertices\" is not a non-negative integer")
    return v


def find_mount(directory: str) -> str:
    """The mount root above an absolute directory: the nearest ancestor (or the directory itself)
    that has ``.graphfs/jobs/``."""
    if not directory.startswith("/"):
        raise error_for(_errno.EINVAL, f"graphfs: {directory} is not an absolute path")
    current = directory.rstrip("/") or "/"
    while True:
        if os.path.isdir(os.path.join(current, ".graphfs", "jobs")):
            return current
        if current == "/":
            break
        current = os.path.dirname(current)
    raise NotOnMountError(_errno.ENOENT, f"graphfs: {directory} is not on a graphfs mount "
                                         "(no .graphfs/jobs/ in it or any parent)")


# ---- what Job.next() hands out ----

@dataclass
class Piece:
    """Bytes of the job's view of an LP in shared memory: ``length`` bytes of ``column`` at
    ``column_offset``, lying at ``memory_offset`` in ``memory``. ``data`` is a read-only uint8
    view of the mapping (no copy)."""

    memory_offset: int
    length: int
    column_offset: int
    data: np.ndarray


@dataclass
class Partition:
    """One answer of ``next``. ``end``: the iteration is over (no LP). Otherwise LP ``seq``: its
    view either in the mapped shared memory (``mapped``: ``table``, the entries of
    ``lp-SEQ.pieces``, over ``memory``, the mapping as a uint8 array) or as the file ``path``
    (``lp-SEQ``, read once by :meth:`read` / :meth:`arrays`). ``chunks`` is ``lp-SEQ.map`` when
    asked for.

    The arrays point into memory the daemon reuses once the job is done with the LP: use them
    before the next :meth:`Job.next` or :meth:`Job.done` (copy what must outlive that)."""

    end: bool = False
    seq: int = 0
    path: str = ""
    bytes: int = 0
    dtype: np.dtype = field(default_factory=lambda: edge_dtype(False))
    chunks: Optional[np.ndarray] = None
    table: Optional[np.ndarray] = None  # PIECE_DTYPE entries, in view order (mapped)
    memory: Optional[np.ndarray] = None  # the mapped shared memory (mapped)
    mapped: bool = False  # the view lies in the shared memory (else: lp-SEQ)
    _fd: Optional[int] = None
    _read: Optional[np.ndarray] = None
    _released: bool = False

    def __post_init__(self):
        self.mapped = self.mapped or (not self.end and self.table is not None)

    def release(self) -> None:
        """Ends this object's use of the LP (the job calls it at the next ``next``, ``done`` or
        ``close``): the lp-SEQ file is closed and the reference to the shared memory dropped, so
        a Partition kept around does not keep the mapping alive. Arrays already made stay
        valid memory, but their bytes may be reused by the daemon."""
        self.close()
        self.table = self.memory = None
        self._released = True

    def _check_live(self) -> None:
        if self._released and self._read is None:
            raise error_for(_errno.EBADF, f"graphfs: {self.path}: used after the job moved on (next, done or "
                                          "close): copy what must outlive the LP")

    @property
    def pieces(self) -> list:
        """The view's pieces (:class:`Piece`, each with its bytes as a view of the memory), in
        view order; empty when not mapped."""
        if not self.mapped:
            return []
        self._check_live()
        mem = self.memory
        return [Piece(o, n, c, mem[o:o + n]) for o, n, c in self.table.tolist()]

    def fd(self) -> int:
        """The open lp-SEQ file (not mapped, not read yet), else -1."""
        return -1 if self._fd is None else self._fd

    def read(self) -> np.ndarray:
        """The whole view as one uint8 array: of an lp-SEQ file, read with one read into a
        fresh buffer (kept for the next calls); of a mapped LP, the pieces concatenated (a copy)."""
        if self.end:
            return np.zeros(0, dtype=np.uint8)
        if self._read is not None:
            return self._read
        self._check_live()
        if self.mapped:
            return _gather(self.memory, self.table["memory_offset"], self.table["length"])
        if self._fd is None:
            raise error_for(_errno.EBADF, f"graphfs: {self.path}: closed before it was read (the job moved on)")
        buf = np.empty(self.bytes, dtype=np.uint8)
        view = memoryview(buf)
        done = 0
        while done < self.bytes:
            n = os.preadv(self._fd, [view[done:]], done)
            if n == 0:
                raise error_for(_errno.EIO, f"graphfs: {self.path}: ends at {done} of its {self.bytes} bytes")
            done += n
        self._read = buf
        self.close()
        return buf

    def arrays(self, gather_below: int = 0) -> list:
        """The view's edge records as structured arrays of the graph's edge dtype, in view order.

        Mapped: the whole records of each piece as one read-only array over the shared memory,
        no copy; the bytes between them — a record cut between two pieces (where the daemon's
        memory blocks meet), pieces holding no whole record — are gathered (copied) into arrays of
        their own, in place in the order. With ``gather_below``, pieces of fewer whole-record bytes
        than that are gathered too, as the C++ engines do below 1 MiB: numpy's per-call cost over
        thousands of small pieces (a vertex-granular LP has a piece per run) exceeds the copy.
        Not mapped: one array over the one read of ``lp-SEQ``."""
        rec = self.dtype.itemsize
        if self.bytes % rec:
            raise ProtocolError(_errno.EPROTO, f"graphfs: {self.path}: a view of {self.bytes} bytes is not a "
                                               f"whole number of {rec}-byte records")
        if self.end or self.bytes == 0:
            return []
        self._check_live()
        if not self.mapped:
            return [self.read().view(self.dtype)]
        off = self.table["memory_offset"].astype(np.int64)
        length = self.table["length"].astype(np.int64)
        view_end = np.cumsum(length)
        view_start = view_end - length
        whole_start = -(-view_start // rec) * rec  # the first record starting in the piece
        whole_end = view_end // rec * rec  # the end of the last record ending in it
        whole = np.maximum(whole_end - whole_start, 0)
        in_place = whole >= max(gather_below, 1)
        # Each piece's bytes to gather: all of it, or (in place) its head before the whole
        # records and its tail after them. In view order: head_k, [piece k in place], tail_k.
        head_end = np.where(in_place, off + (whole_start - view_start), off + length)
        tail_start = np.where(in_place, off + (whole_end - view_start), off + length)
        starts = np.stack([off, tail_start], axis=1).ravel()
        ends = np.stack([head_end, off + length], axis=1).ravel()
        gathered = _gather(self.memory, starts, ends - starts)
        # Where each in-place piece falls in the gathered stream: after the bytes gathered up to
        # its head's end (a whole number of records, as its view offset is).
        seg_end = np.cumsum(ends - starts)
        places = np.flatnonzero(in_place)
        cut_at = seg_end[2 * places]
        out = []
        prev = 0
        mem = self.memory
        for k, at in zip(places.tolist(), cut_at.tolist()):
            if at > prev:
                out.append(gathered[prev:at].view(self.dtype))
            prev = at
            o = int(off[k] + (whole_start[k] - view_start[k]))
            out.append(mem[o:o + int(whole[k])].view(self.dtype))
        if gathered.size > prev:
            out.append(gathered[prev:].view(self.dtype))
        return out

    def edges(self) -> np.ndarray:
        """The view as one array: no copy when it is one mapped piece of whole records, else the
        records concatenated (a copy), or the one read of lp-SEQ."""
        arrays = self.arrays()
        if len(arrays) == 1:
            return arrays[0]
        if not arrays:
            return np.zeros(0, dtype=self.dtype)
        return np.concatenate(arrays)

    def close(self) -> None:
        """Closes the lp-SEQ file (the arrays already read stay valid)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _gather(memory: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The byte ranges [start, start + length) of ``memory`` concatenated into a new array."""
    keep = np.flatnonzero(lengths > 0)
    if keep.size == 0:
        return np.zeros(0, dtype=np.uint8)
    begin = starts[keep].tolist()
    end = (starts[keep] + lengths[keep]).tolist()
    return np.concatenate([memory[a:b] for a, b in zip(begin, end)])


# ---- the job ----

_counter = itertools.count()


def _program_name() -> str:
    try:
        with open("/proc/self/comm", "rb") as f:
            name = f.read(64).split(b"\n")[0].decode("ascii", "replace")
    except OSError:
        name = ""
    clean = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in name).lstrip(".")[:32]
    return clean or "job"


ActiveSet = Union[None, np.ndarray, Sequence[int]]


class Job:
    """A job on one graph, as graphfs_client::Job: registers at construction, removed by
    :meth:`close` (or ``with``; or by the daemon when the process dies: the lease).

    ``graph_dir``: a directory inside a graphfs mount (made absolute and resolved here); the
    graph must be indexed (graphfs-index). ``partition_size``: bytes per LP (int or "256M").
    ``name``: empty means "<program>-<pid>-<counter>". ``read_lps``: read lp-SEQ files instead of
    mapping the shared memory (default: the environment's ``GRAPHFS_LP_READ=1``)."""

    def __init__(self, graph_dir: str, partition_size: Union[int, str] = DEFAULT_PARTITION_BYTES,
                 name: Optional[str] = None, *, read_lps: Optional[bool] = None):
        self.dir = ""
        self.name = name or ""
        self._lease = self._next = None
        self._memory = self._memory_mmap = None
        self._memory_bytes = self._memory_id = 0
        self._current: Optional[Partition] = None
        partition_bytes = parse_size(partition_size)
        if partition_bytes <= 0:
            raise error_for(_errno.EINVAL, "graphfs: the partition size must be > 0")
        try:
            real = os.path.realpath(graph_dir, strict=True)
        except OSError as e:
            raise error_for(e.errno, f"graphfs: {graph_dir}: {os.strerror(e.errno)}") from None
        self.mount = find_mount(real)
        self.graph = "." if real == self.mount else real[len(self.mount) + (0 if self.mount == "/" else 1):]
        default_name = not name
        for attempt in itertools.count():
            if default_name:
                name = f"{_program_name()}-{os.getpid()}-{next(_counter)}"
            path = os.path.join(self.mount, ".graphfs", "jobs", name)
            try:
                os.mkdir(path, 0o755)
            except OSError as e:
                # A default name can collide with a job of a process that had our pid (and
                # died with its directory still there): take the next counter.
                if e.errno == _errno.EEXIST and default_name and attempt < 1000:
                    continue
                raise error_for(e.errno, f"graphfs: mkdir {path}: {os.strerror(e.errno)}") from None
            break
        self.name = name
        self.dir = path
        try:
            self._write_control("graph", self.graph + "\n")
            self._write_control("partition_size", f"{partition_bytes}\n")
            # Held open for the job's life: if the process dies, the kernel closes it and the
            # daemon drops the job, so no other job waits on a dead one.
            self._lease = self._open_control("lease")
            try:
                self.vertices = parse_status_vertices(self._read_control("status"))
            except ProtocolError as e:
                raise self._fail(e.errno, "read status: " + e.message) from None
            self._next = self._open_control("next")
            # The records' dtype (the daemon accepted the graph, so its meta is sound).
            self.meta = read_meta(real)
        except BaseException:
            self.close()
            raise
        self.edge_dtype = self.meta.edge_dtype
        self.partition_bytes = partition_bytes
        if read_lps is None:
            read_lps = os.environ.get("GRAPHFS_LP_READ") == "1"
        self._read_lps = read_lps

    # ---- the active set ----

    def set_active(self, active: ActiveSet) -> None:
        """The active vertices of the coming iteration, committed by the daemon at close:

        - a bool array of V entries (a mask), sent as the bitmap;
        - an integer array or sequence of vertex ids, each in [0, V) (else InvalidArgumentError),
          sent as the bitmap;
        - None: every vertex (``active.list`` ``all``)."""
        if active is None:
            self.set_all_active()
            return
        arr = np.asarray(active)
        if arr.dtype == bool:
            if arr.shape != (self.vertices,):
                raise self._fail(_errno.EINVAL, f"write active: a bitmap of {arr.size} vertices, the graph has "
                                                f"{self.vertices}")
            self._write_control("active", active_bitmap_bytes(arr, self.vertices))
            return
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"active: want a bool mask or integer vertex ids, got dtype {arr.dtype}")
        ids = arr.reshape(-1).astype(np.int64, copy=False)
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= self.vertices):
            bad = int(ids[(ids < 0) | (ids >= self.vertices)][0])
            raise self._fail(_errno.EINVAL, f"write active: vertex {bad} is outside [0, {self.vertices})")
        mask = np.zeros(self.vertices, dtype=bool)
        mask[ids] = True
        self._write_control("active", active_bitmap_bytes(mask, self.vertices))

    def set_active_words(self, words: np.ndarray, vertices: Optional[int] = None) -> None:
        """As the C++ SetActive: bit v = words[v/64] >> (v%64) & 1; ``vertices`` must be V."""
        vertices = self.vertices if vertices is None else vertices
        if vertices != self.vertices:
            raise self._fail(_errno.EINVAL, f"write active: a bitmap of {vertices} vertices, the graph has "
                                            f"{self.vertices}")
        self._write_control("active", words_bitmap_bytes(words, vertices))

    def set_active_bitmap(self, raw: bytes) -> None:
        """The ``active`` file's bytes as they are (the daemon checks size and bits past V)."""
        self._write_control("active", bytes(raw))

    def set_active_list(self, ids: Union[str, Sequence[int], np.ndarray]) -> None:
        """The text form, ``active.list``: ids separated by white space (the daemon checks them),
        or ``"all"``."""
        text = ids if isinstance(ids, str) else " ".join(str(int(v)) for v in np.asarray(ids).reshape(-1))
        self._write_control("active.list", text + "\n")

    def set_all_active(self) -> None:
        """Every vertex active (PageRank-style iterations)."""
        self._write_control("active.list", "all\n")

    def set_whole_chunks(self, whole: bool) -> None:
        """What the job's LPs hold from its next active set on: only its active sources' edges
        (False, the default) or the whole chunks with an active source (True: ``granularity``
        ``chunk``, for engines that apply loaded edges again)."""
        self._write_control("granularity", "chunk\n" if whole else "vertex\n")

    # ---- logical partitions ----

    @property
    def maps_lps(self) -> bool:
        """Whether LPs come as pieces of the mapped shared memory (known after the first LP)."""
        return self._memory is not None

    @property
    def memory(self) -> Optional[np.ndarray]:
        """The mapped shared LP memory as a read-only uint8 array (None until mapped): every
        mapped LP's arrays are views of it (``np.shares_memory``)."""
        return self._memory

    def next(self, read_map: bool = True) -> Partition:
        """Blocks until the next LP holding chunks active for this job is ready, or the
        iteration is over (``Partition.end``). Reading ``next`` again also ends the job's use
        of the LP it held. ``read_map`` False leaves ``Partition.chunks`` None."""
        self._release_current()
        try:
            answer = os.pread(self._next, 128, 0)
        except OSError as e:
            raise self._fail_explained(e.errno, "read next") from None
        try:
            end, seq = parse_next(answer)
        except ProtocolError as e:
            raise self._fail(e.errno, "read next: " + e.message) from None
        lp = Partition(end=end, seq=seq, dtype=self.edge_dtype)
        if end:
            return lp
        name = f"lp-{seq}"
        lp.path = os.path.join(self.dir, name)
        self._current = lp
        if not self._read_lps:
            try:
                raw = self._read_control(name + ".pieces")
            except GraphfsError as e:
                if e.errno != _errno.ENOENT:
                    raise
                raw = None
                self._read_lps = True  # a daemon older than shared LP memory: read lp-SEQ
            if raw is not None:
                try:
                    pieces = parse_pieces(raw)
                except ProtocolError as e:
                    raise self._fail(e.errno, f"read {name}.pieces: {e.message}") from None
                if pieces.memory_id != 0 and self._map_memory(pieces.memory_id):
                    try:
                        check_pieces_in_memory(pieces, self._memory_bytes)
                    except ProtocolError as e:
                        raise self._fail(e.errno, f"read {name}.pieces: {e.message}") from None
                    lp.bytes = pieces.view_bytes
                    lp.table = pieces.entries
                    lp.memory = self._memory
                    lp.mapped = True
                    return self._read_map(lp, name) if read_map else lp
        lp._fd = self._open_control(name)
        lp.bytes = os.fstat(lp._fd).st_size
        return self._read_map(lp, name) if read_map else lp

    def done(self) -> None:
        """Done with the LP last returned by next (optional: next implies it, but saying so
        early lets the daemon move on while this job computes)."""
        self._release_current()
        self._write_control("done", "\n")

    def partitions(self, read_map: bool = False) -> Iterator[Partition]:
        """The LPs of the current iteration until ``end``, each followed by ``done`` once the
        loop body asks for the next one."""
        while True:
            lp = self.next(read_map=read_map)
            if lp.end:
                return
            yield lp
            self.done()

    def iteration(self, active: ActiveSet, read_map: bool = False) -> Iterator[Partition]:
        """One iteration: sets the active vertices (None: all), then yields its LPs."""
        self.set_active(active)
        return self.partitions(read_map=read_map)

    def status(self) -> dict:
        """The job's ``status`` (JSON) as a dict."""
        raw = self._read_control("status")
        try:
            return json.loads(raw)
        except ValueError as e:
            raise self._fail(_errno.EPROTO, f"read status: not JSON: {e}") from None

    # ---- removal ----

    def close(self) -> None:
        """Removes the job (best effort: the daemon may have dropped it already) and unmaps the
        shared memory — unless numpy arrays of mapped LPs are still referenced: they keep the
        mapping (and so the open ``memory`` file, not the job) until the last of them goes."""
        self._release_current()
        self._unmap_memory()
        if self._next is not None:
            os.close(self._next)
            self._next = None
        if self.dir:
            try:
                os.rmdir(self.dir)
            except OSError:
                pass
            self.dir = ""
        if self._lease is not None:
            os.close(self._lease)
            self._lease = None

    @property
    def closed(self) -> bool:
        return not self.dir

    def __enter__(self) -> "Job":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"<graphfs.Job {self.name!r} on {self.graph!r} of {self.mount!r}>"

    # ---- control files ----

    def _fail(self, code: int, what: str, reason: str = "") -> GraphfsError:
        text = f"graphfs job {self.name}: {what}"
        if code != _errno.EPROTO:
            text += f": {os.strerror(code)}"
        if reason:
            text += f": {reason}"
        return error_for(code, text + f" (see {self.dir}/status)")

    def _fail_explained(self, code: int, what: str) -> GraphfsError:
        """For errors the daemon explains in status's last_error (a refused commit, a failed
        next): the message carries the explanation too."""
        reason = ""
        try:
            with open(os.path.join(self.dir, "status"), "rb") as f:
                status = json.loads(f.read())
            if isinstance(status, dict) and isinstance(status.get("last_error"), str):
                reason = status["last_error"]
        except (OSError, ValueError):
            pass
        return self._fail(code, what, reason)

    def _open_control(self, file: str) -> int:
        try:
            return os.open(os.path.join(self.dir, file), os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise self._fail(e.errno, "open " + file) from None

    def _read_control(self, file: str) -> bytes:
        """Control files may report any size (FUSE): read to EOF."""
        fd = self._open_control(file)
        try:
            chunks = []
            while True:
                try:
                    data = os.read(fd, 256 << 10)
                except OSError as e:
                    raise self._fail(e.errno, "read " + file) from None
                if not data:
                    return b"".join(chunks)
                chunks.append(data)
        finally:
            os.close(fd)

    def _write_control(self, file: str, data: Union[str, bytes]) -> None:
        """One open, the data (in one write unless the kernel takes less), one close. The daemon
        checks and commits at close, so close's error is the answer."""
        if isinstance(data, str):
            data = data.encode()
        try:
            fd = os.open(os.path.join(self.dir, file), os.O_WRONLY | os.O_CLOEXEC)
        except OSError as e:
            raise self._fail(e.errno, "open " + file) from None
        view = memoryview(data)
        try:
            while view:
                n = os.write(fd, view)
                if n <= 0:
                    raise OSError(_errno.EIO, os.strerror(_errno.EIO))
                view = view[n:]
        except OSError as e:
            os.close(fd)
            raise self._fail_explained(e.errno, "write " + file) from None
        try:
            os.close(fd)
        except OSError as e:
            raise self._fail_explained(e.errno, "write " + file) from None

    def _read_map(self, lp: Partition, name: str) -> Partition:
        try:
            chunks = parse_map(self._read_control(name + ".map"))
        except ProtocolError as e:
            raise self._fail(e.errno, f"read {name}.map: {e.message}") from None
        past = (chunks["lp_offset"] > lp.bytes) | (
            chunks["length"] > np.uint64(lp.bytes) - np.minimum(chunks["lp_offset"], np.uint64(lp.bytes)))
        if past.any():
            c = chunks[int(np.flatnonzero(past)[0])]
            raise self._fail(_errno.EPROTO, f"read {name}.map: chunk {int(c['chunk_id'])} at {int(c['lp_offset'])}+"
                                            f"{int(c['length'])} lies past the {lp.bytes}-byte LP")
        lp.chunks = chunks
        return lp

    def _map_memory(self, memory_id: int) -> bool:
        """Maps the graph's LP memory (once per job): False where it cannot be (no passthrough),
        and from then on the job reads lp-SEQ files."""
        if self._memory is not None and self._memory_id == memory_id:
            return True
        self._unmap_memory()
        try:
            fd = self._open_control("memory")
        except GraphfsError:
            self._read_lps = True
            return False
        try:
            size = os.fstat(fd).st_size
            if size <= 0:
                raise OSError(_errno.EINVAL, "empty")
            # ACCESS_READ: PROT_READ and MAP_SHARED, and a read-only buffer, so numpy's views
            # refuse writes instead of faulting on them.
            mm = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            self._read_lps = True
            return False
        finally:
            os.close(fd)  # the mapping keeps the file
        self._memory_mmap = mm
        self._memory = np.frombuffer(mm, dtype=np.uint8)
        assert not self._memory.flags.writeable
        self._memory_bytes = size
        self._memory_id = memory_id
        return True

    def _unmap_memory(self) -> None:
        if self._memory_mmap is not None:
            self._memory = None
            try:
                self._memory_mmap.close()
            except BufferError:
                pass  # arrays still refer to it: the mapping goes with the last of them
            self._memory_mmap = None
        self._memory_bytes = self._memory_id = 0

    def _release_current(self) -> None:
        if self._current is not None:
            self._current.release()  # close the LP file before it disappears; drop the mapping
            self._current = None
