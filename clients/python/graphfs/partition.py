"""What :meth:`graphfs.Job.next` hands out: a :class:`Partition` (one answer of ``next``: the
end of the iteration, or an LP) and its :class:`Piece` s, the job's view of the LP as read-only
numpy arrays over the mapped shared LP memory (no copy) or from one read of ``lp-SEQ``.
"""

from __future__ import annotations

import errno as _errno
import os
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .errors import ProtocolError, error_for
from .grid import edge_dtype
from .protocol import PIECE_DTYPE

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
