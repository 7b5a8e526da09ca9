"""The files of graphfs's jobs protocol as bytes (README.md, "The control directory"): the
answers of ``next``, ``lp-SEQ.map`` and ``lp-SEQ.pieces`` parsed, the active set encoded as the
bitmap ``active`` takes, sizes, a job's ``status``, and which mount a directory is on. Pure
functions, as the C++ header's (engines/graphfs_client.hpp), exposed for tests and other engines;
:mod:`graphfs.jobs` does the I/O.
"""

from __future__ import annotations

import errno as _errno
import json
import os
import re
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from .errors import NotOnMountError, ProtocolError, error_for

# The protocol's default LP size, common/jobs_protocol.h's (the daemon's and the C++ client's):
# written again here, checked against it by JobsDefaults.ThePythonClientsPartitionSizeIsTheProtocols.
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


def split_next_answer(answer: bytes) -> Optional[tuple[bytes, bytes]]:
    """The answer of a read of ``next`` opened read-write: ``lp-SEQ BYTES\\n`` and then the BYTES
    of ``lp-SEQ.pieces``. Returns (``lp-SEQ``, those bytes), or None when the answer is not of
    that form (as ``end\\n`` is not) or its length is not what it says."""
    eol = answer.find(b"\n")
    if eol < 0:
        return None
    header, space, length = answer[:eol].partition(b" ")
    if not space or not length.isdigit() or len(length) > 20 or int(length) != len(answer) - eol - 1:
        return None
    return header, answer[eol + 1:]


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
