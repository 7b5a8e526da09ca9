"""The client's pure parts, no mount: the protocol's parsers (as graphfs_client.hpp's), the
active bitmap's bit order, the errno -> exception mapping, and the views of an LP's pieces,
records cut between pieces included."""

from __future__ import annotations

import errno
import os
import struct
import tempfile

import numpy as np
import pytest

import graphfs
from graphfs import protocol


# ---- next, map, pieces, status ----

def test_next_answers():
    assert protocol.parse_next(b"lp-7\n") == (False, 7)
    assert protocol.parse_next(b"lp-18446744073709551615") == (False, 2**64 - 1)
    assert protocol.parse_next(b"end\n") == (True, 0)
    for bad in (b"lp-", b"lp-x1\n", b"LP-1", b"", b"lp-18446744073709551616", b"end\n\n", b"lp--1"):
        with pytest.raises(graphfs.ProtocolError) as e:
            protocol.parse_next(bad)
        assert e.value.errno == errno.EPROTO
        assert "want lp-SEQ or end" in str(e.value)


def test_next_answers_carrying_the_pieces():
    """`next` opened read-write: "lp-SEQ BYTES\\n" and the BYTES of lp-SEQ.pieces."""
    assert protocol.split_next_answer(b"lp-3 4\nabcd") == (b"lp-3", b"abcd")
    assert protocol.split_next_answer(b"lp-3 0\n") == (b"lp-3", b"")
    assert protocol.split_next_answer(b"lp-3 2\n\n\n") == (b"lp-3", b"\n\n")
    for not_carrying in (b"end\n", b"lp-3\n", b"lp-3 5\nabcd", b"lp-3 3\nabcd", b"lp-3 x\nabc", b"lp-3 4",
                         b"lp-3 -1\n", b""):
        assert protocol.split_next_answer(not_carrying) is None, not_carrying


def test_map_lines():
    m = protocol.parse_map(b"3 4096 8192 0\n\n 9\t0 12 8192 \n")
    assert m.dtype == graphfs.MAP_DTYPE
    assert m.tolist() == [(3, 4096, 8192, 0), (9, 0, 12, 8192)]
    assert protocol.parse_map(b"").size == 0
    with pytest.raises(graphfs.ProtocolError, match="line 2: want CHUNK_ID COLUMN_OFFSET LENGTH LP_OFFSET"):
        protocol.parse_map(b"1 2 3 4\n1 2 3\n")
    with pytest.raises(graphfs.ProtocolError, match="line 1"):
        protocol.parse_map(b"1 2 3 -4\n")


def pieces_file(memory_id, entries, view_bytes=None, count=None):
    total = sum(e[1] for e in entries) if view_bytes is None else view_bytes
    raw = b"GFSPIEC1" + struct.pack("<3Q", len(entries) if count is None else count, memory_id, total)
    for e in entries:
        raw += struct.pack("<3Q", *e)
    return raw


def test_pieces_file():
    p = protocol.parse_pieces(pieces_file(5, [(4096, 24, 0), (0, 12, 36)]))
    assert (p.memory_id, p.view_bytes) == (5, 36)
    assert p.entries.tolist() == [(4096, 24, 0), (0, 12, 36)]
    with pytest.raises(graphfs.ProtocolError, match="want the GFSPIEC1 header"):
        protocol.parse_pieces(b"GFSPIEC2" + bytes(24))
    with pytest.raises(graphfs.ProtocolError, match="does not hold the 3 pieces"):
        protocol.parse_pieces(pieces_file(5, [(0, 12, 0)], count=3))
    with pytest.raises(graphfs.ProtocolError, match="pieces add up to 12 bytes, the header says 24"):
        protocol.parse_pieces(pieces_file(5, [(0, 12, 0)], view_bytes=24))
    with pytest.raises(graphfs.ProtocolError, match="piece 1 at 4090\\+12 lies past the 4096-byte shared memory"):
        protocol.parse_pieces(pieces_file(5, [(0, 12, 0), (4090, 12, 12)]), memory_bytes=4096)
    # An LP not in shared memory (id 0): offsets unused, never checked.
    protocol.parse_pieces(pieces_file(0, [(1 << 60, 12, 0)]), memory_bytes=4096)


def test_status_vertices():
    assert protocol.parse_status_vertices(b'{"active": {"vertices": 3}, "vertices": 4096}') == 4096
    with pytest.raises(graphfs.ProtocolError, match="no top-level"):
        protocol.parse_status_vertices(b'{"active": {"vertices": 3}}')
    with pytest.raises(graphfs.ProtocolError, match="not a non-negative integer"):
        protocol.parse_status_vertices(b'{"vertices": -1}')
    with pytest.raises(graphfs.ProtocolError):
        protocol.parse_status_vertices(b'{"vertices": ')


def test_sizes():
    assert graphfs.parse_size("256M") == 256 << 20
    assert graphfs.parse_size("16MiB") == 16 << 20
    assert graphfs.parse_size("512k") == 512 << 10
    assert graphfs.parse_size(4096) == 4096
    for bad in ("lots", "-1", "1.5G", ""):
        with pytest.raises(graphfs.InvalidArgumentError):
            graphfs.parse_size(bad)


# ---- the active set ----

def test_bitmap_bit_order_is_the_protocols():
    """bit v = byte[v/8] >> (v%8) & 1, ceil(V/8) bytes, and the C++ client's word form gives
    the same bytes (little-endian words truncated, bits past V cleared)."""
    v = 77
    rng = np.random.default_rng(3)
    mask = rng.random(v) < 0.4
    raw = protocol.active_bitmap_bytes(mask, v)
    assert len(raw) == 10
    for k in range(v):
        assert (raw[k // 8] >> (k % 8)) & 1 == mask[k]
    words = np.zeros(2, dtype=np.uint64)
    for k in np.flatnonzero(mask):
        words[k // 64] |= np.uint64(1) << np.uint64(k % 64)
    words[1] |= np.uint64(1) << np.uint64(80 - 64)  # a bit past V: cleared
    assert protocol.words_bitmap_bytes(words, v) == raw
    with pytest.raises(ValueError):
        protocol.active_bitmap_bytes(mask[:-1], v)


# ---- errors ----

def test_each_errno_has_its_exception():
    expect = {
        errno.EEXIST: (graphfs.JobExistsError, FileExistsError),
        errno.EINVAL: (graphfs.InvalidArgumentError, ValueError),
        errno.EACCES: (graphfs.AccessDeniedError, PermissionError),
        errno.EPERM: (graphfs.AccessDeniedError, PermissionError),
        errno.ENOENT: (graphfs.NotFoundError, FileNotFoundError),
        errno.EBUSY: (graphfs.BusyError, OSError),
        errno.EOPNOTSUPP: (graphfs.NotSupportedError, OSError),
        errno.EPROTO: (graphfs.ProtocolError, OSError),
        errno.EIO: (graphfs.GraphfsError, OSError),
    }
    for code, (cls, builtin) in expect.items():
        e = graphfs.error_for(code, f"graphfs job j: write x: {os.strerror(code)} (see /m/.graphfs/jobs/j/status)")
        assert type(e) is cls, code
        assert isinstance(e, graphfs.GraphfsError) and isinstance(e, builtin) and isinstance(e, OSError)
        assert e.errno == code
        assert str(e) == e.message and str(e).startswith("graphfs job j: write x: ")


def test_a_directory_not_on_a_mount():
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(graphfs.NotOnMountError, match="is not on a graphfs mount") as e:
            graphfs.Job(d)
        assert e.value.errno == errno.ENOENT and isinstance(e.value, FileNotFoundError)
        with pytest.raises(graphfs.NotFoundError, match="No such file or directory"):
            graphfs.Job(os.path.join(d, "missing"))
        with pytest.raises(graphfs.InvalidArgumentError, match="partition size must be > 0"):
            graphfs.Job(d, 0)
    with pytest.raises(graphfs.InvalidArgumentError, match="not an absolute path"):
        graphfs.find_mount("relative/dir")


# ---- an LP's views ----

def fake_lp(view: bytes, cuts, dtype) -> tuple[graphfs.Partition, np.ndarray]:
    """A mapped Partition whose view is `view`, split at byte offsets `cuts`, its pieces placed
    out of order in a read-only 'memory'."""
    bounds = [0] + list(cuts) + [len(view)]
    spans = [view[a:b] for a, b in zip(bounds, bounds[1:])]
    memory = bytearray()
    offsets = []
    for s in reversed(spans):  # memory order differs from view order
        memory += b"\xee" * 5  # gaps between pieces
        offsets.append(len(memory))
        memory += s
    offsets.reverse()
    mem = np.frombuffer(bytes(memory), dtype=np.uint8)
    table = np.array([(o, len(s), a) for o, s, a in zip(offsets, spans, bounds)], dtype=graphfs.PIECE_DTYPE)
    lp = graphfs.Partition(seq=1, path="lp-1", bytes=len(view), dtype=dtype, table=table, memory=mem)
    assert [p.data.tobytes() for p in lp.pieces] == spans
    return lp, mem


@pytest.mark.parametrize("weighted", [False, True])
def test_arrays_are_views_and_gather_only_cut_records(weighted):
    dtype = graphfs.edge_dtype(weighted)
    rec = dtype.itemsize
    n = 50
    edges = np.zeros(n, dtype=dtype)
    edges["source"] = np.arange(n)
    edges["target"] = np.arange(n)[::-1]
    if weighted:
        edges["weight"] = np.arange(n) * 0.5
    view = edges.tobytes()
    cuts = [rec * 10, rec * 10 + 3, rec * 11 + 1, rec * 30, rec * 30 + rec - 2, rec * 45 + 5]
    lp, mem = fake_lp(view, cuts, dtype)
    assert lp.mapped
    arrays = lp.arrays()
    assert np.array_equal(np.concatenate(arrays), edges)
    assert np.array_equal(lp.edges(), edges)
    in_place = [a for a in arrays if np.shares_memory(a, mem)]
    copied = [a for a in arrays if not np.shares_memory(a, mem)]
    # Whole records stay where they are; only the records cut by a piece boundary are gathered:
    # 10 and 11 (a piece shorter than a record lies between them, gathered into one array), 30
    # and 45.
    assert sum(len(a) for a in in_place) == n - 4
    assert [a["source"].tolist() for a in copied] == [[10, 11], [30], [45]]
    assert all(not a.flags.writeable for a in in_place)
    # Gathering below a size copies the small pieces with their neighbours, order kept.
    gathered = lp.arrays(gather_below=rec * 16)
    assert np.array_equal(np.concatenate(gathered), edges)
    assert len(gathered) < len(arrays)
    assert any(np.shares_memory(a, mem) for a in gathered)  # records 11..29 and 31..44: in place


def test_a_released_lp_refuses_to_be_read():
    lp, _ = fake_lp(bytes(64), [16], graphfs.UNWEIGHTED_EDGE)
    arrays = lp.arrays()
    lp.release()  # what the job does at its next `next`, `done` or close
    assert lp.mapped and lp.memory is None and sum(len(a) for a in arrays) == 8
    with pytest.raises(graphfs.GraphfsError, match="lp-1: used after the job moved on") as e:
        lp.arrays()
    assert e.value.errno == errno.EBADF


def test_a_view_that_is_not_whole_records_is_refused():
    lp, _ = fake_lp(bytes(20), [4], graphfs.UNWEIGHTED_EDGE)
    with pytest.raises(graphfs.ProtocolError, match="not a whole number of 8-byte records"):
        lp.arrays()
