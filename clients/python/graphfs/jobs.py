"""The jobs protocol of graphfs's control directory MOUNT/.graphfs/jobs/ (README.md, "The control
directory"), as the C++ client engines/graphfs_client.hpp speaks it.

A job registers on a graph (``mkdir jobs/NAME``, ``graph``, ``partition_size``, the ``lease`` held
open for its life), says which vertices are active (``active``: a bitmap of ceil(V/8) bytes;
``active.list``: ``all`` or ids), and reads logical partitions (LPs) until ``end``. ``next``, held
open read-write, answers ``lp-SEQ BYTES`` followed by the BYTES of ``lp-SEQ.pieces``, which say
where the job's view of the LP lies in the graph's shared LP memory (``memory``, mapped read-only
once per job), so the edges are numpy arrays over that mapping with no copy; ``done`` written to
the same ``next`` lets the daemon move on: two requests an LP. (A daemon older than that lets
``next`` be opened read-only alone: it answers ``lp-SEQ``, the pieces are read from
``lp-SEQ.pieces`` and ``done`` is a file of its own.) Where the memory cannot be mapped (no FUSE
passthrough), or with ``GRAPHFS_LP_READ=1``, the LP file ``lp-SEQ`` is read instead, in one read.
``rmdir`` removes the job (:meth:`Job.close`, the context manager, or the daemon when the lease's
last handle closes because the process died).
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
from typing import Iterator, Optional, Sequence, Union

import numpy as np

from .errors import GraphfsError, ProtocolError, error_for
from .grid import edge_dtype, read_meta
from .partition import Partition
from .protocol import (
    DEFAULT_PARTITION_BYTES,
    active_bitmap_bytes,
    check_pieces_in_memory,
    find_mount,
    parse_map,
    parse_next,
    parse_pieces,
    split_next_answer,
    parse_size,
    parse_status_vertices,
    words_bitmap_bytes,
)
from .protocol import _quote as _quote_answer

import errno as _errno

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
        self._next_carries_pieces = False
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
            # Read-write, ``next`` answers with the LP's pieces and takes "done": two requests an
            # LP. A daemon older than that lets it be opened read-only alone (EACCES).
            try:
                self._next = self._open_control("next", os.O_RDWR)
                self._next_carries_pieces = True
            except GraphfsError as e:
                if e.errno != _errno.EACCES:
                    raise
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
        answer = self._read_next_answer()
        split = split_next_answer(answer) if self._next_carries_pieces else None
        header, carried = split if split is not None else (answer, None)
        if self._next_carries_pieces and split is None and header[:3] == b"lp-":
            raise self._fail(_errno.EPROTO, f"read next: {_quote_answer(answer)} carries no pieces "
                                            "(want lp-SEQ BYTES)")
        try:
            end, seq = parse_next(header)
        except ProtocolError as e:
            raise self._fail(e.errno, "read next: " + e.message) from None
        lp = Partition(end=end, seq=seq, dtype=self.edge_dtype)
        if end:
            return lp
        name = f"lp-{seq}"
        lp.path = os.path.join(self.dir, name)
        self._current = lp
        if not self._read_lps:
            # Carried empty: the daemon had no pieces for it (as an older one has no pieces file).
            raw = carried or None
            if carried is None:
                try:
                    raw = self._read_control(name + ".pieces")
                except GraphfsError as e:
                    if e.errno != _errno.ENOENT:
                        raise
            if raw is None:
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
        if not self._next_carries_pieces:
            self._write_control("done", "\n")
            return
        try:
            n = os.pwrite(self._next, b"done\n", 0)
        except OSError as e:
            raise self._fail_explained(e.errno, "write done to next") from None
        if n != 5:
            raise self._fail_explained(_errno.EIO, "write done to next")

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

    # A read of ``next`` asks for as much as one FUSE request carries (max_read).
    _NEXT_READ_BYTES = 64 << 10

    def _read_next_answer(self) -> bytes:
        """The whole answer of a read of ``next``: the read at offset 0 asks for the LP (and
        blocks); an answer longer than it is read on from where it stopped, until a read comes
        back short."""
        parts = []
        have = 0
        want = self._NEXT_READ_BYTES if self._next_carries_pieces else 128
        while True:
            try:
                data = os.pread(self._next, want, have)  # (EINTR: Python asks again, PEP 475)
            except OSError as e:
                raise self._fail_explained(e.errno, "read next") from None
            parts.append(data)
            have += len(data)
            if len(data) < want:
                return b"".join(parts)
            want *= 2

    def _open_control(self, file: str, mode: int = os.O_RDONLY) -> int:
        try:
            return os.open(os.path.join(self.dir, file), mode | os.O_CLOEXEC)
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
