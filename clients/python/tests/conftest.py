"""Fixtures of the Python client's tests: the build's binaries, small graphs of the three
families, their C++ reference results, and real graphfs mounts that are unmounted on every path
(the fixtures' finalizers; the daemon also gets SIGTERM if this process dies, and unmounts).

Environment: GRAPHFS_BIN_DIR (default: the checkout's build/bin). The mount tests need root and
/dev/fuse; without them they skip with the reason.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(CLIENT_DIR))
if CLIENT_DIR not in sys.path:
    sys.path.insert(0, CLIENT_DIR)

BIN_DIR = os.environ.get("GRAPHFS_BIN_DIR", os.path.join(REPO, "build", "bin"))


def binary(name: str) -> str:
    return os.path.join(BIN_DIR, name)


def run(argv, timeout=300, **kwargs) -> str:
    """Runs argv, fails the test with its output unless it exits 0; returns stdout."""
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, **kwargs)
    if r.returncode != 0:
        pytest.fail(f"{' '.join(map(str, argv))} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def mount_unavailable() -> str:
    """Why a mount test cannot run here, or ''."""
    if os.geteuid() != 0:
        return "needs root (graphfs mounts, runs jobs as nobody)"
    try:
        os.close(os.open("/dev/fuse", os.O_RDWR))
    except OSError as e:
        return f"/dev/fuse cannot be opened: {e.strerror}"
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed"
    for tool in ("graphfs", "gen-rmat", "gen-grid", "preprocess", "graphfs-index", "graphfs-stripe", "bfs", "pagerank"):
        if not os.access(binary(tool), os.X_OK):
            return f"{binary(tool)} is not built (GRAPHFS_BIN_DIR={BIN_DIR})"
    return ""


def _die_with_parent():
    # PR_SET_PDEATHSIG = 1: SIGTERM when the test process goes; the daemon unmounts then.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


def is_mountpoint(path: str) -> bool:
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


class GraphfsMount:
    """The daemon in the foreground as a child; mount() waits until the mount is live,
    unmount() detaches it (lazily if busy) and checks that the daemon exited 0."""

    def __init__(self, source: str, mountpoint: str, options=()):
        self.source, self.mountpoint, self.options = source, mountpoint, list(options)
        self.proc = None
        self.out_path = mountpoint + ".out"

    def mount(self) -> "GraphfsMount":
        os.makedirs(self.mountpoint, exist_ok=True)
        argv = [binary("graphfs"), "-f", self.source, self.mountpoint, "-o", f"log={self.mountpoint}.log"]
        for o in self.options:
            argv += ["-o", o]
        with open(self.out_path, "wb") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        for _ in range(400):
            if is_mountpoint(self.mountpoint):
                try:
                    os.statvfs(self.mountpoint)
                    return self
                except OSError:
                    pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"graphfs exited {self.proc.returncode}: {self._output()}")
            time.sleep(0.025)
        self.unmount()
        raise RuntimeError(f"the mount did not come up in 10 s: {self._output()}")

    def _output(self) -> str:
        try:
            with open(self.out_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stats(self) -> dict:
        with open(os.path.join(self.mountpoint, ".graphfs", "stats")) as f:
            return json.load(f)

    def unmount(self, check: bool = True) -> None:
        """Detaches the mount (lazily if busy) and reaps the daemon. ``check``: fail unless the
        daemon exited 0 within 10 s. After a failed test its traceback may still hold numpy views
        of a job's mapped LP memory, which keeps a file of the lazily detached mount open and
        the daemon running: then (check False) it is killed without a second report."""
        if is_mountpoint(self.mountpoint):
            subprocess.run(["fusermount3", "-u", self.mountpoint], stderr=subprocess.DEVNULL)
            if is_mountpoint(self.mountpoint):
                subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], stderr=subprocess.DEVNULL)
        if self.proc is None:
            return
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            held = self._held()
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            if check:
                raise AssertionError(f"the graphfs daemon of {self.mountpoint} did not exit within 10 s of the "
                                     f"unmount; this process holds: {held or 'nothing of it'}") from None
            return
        self.proc = None
        out = self._output()
        if check and (code != 0 or "Sanitizer" in out or "runtime error:" in out):
            raise AssertionError(f"the graphfs daemon of {self.mountpoint} exited with {code}:\n{out}")

    def _held(self) -> list:
        """This process's descriptors and mappings of files of the mount (what keeps a lazily
        detached mount's daemon alive)."""
        held = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if "/.graphfs/" in target or target.startswith(self.mountpoint):
                held.append(f"fd {fd} -> {target}")
        with open("/proc/self/maps") as f:
            held += sorted({line.split(None, 5)[-1].strip() for line in f if "/.graphfs/jobs/" in line})
        return held

    def __enter__(self):
        return self.mount()

    def __exit__(self, exc_type, exc, tb):
        self.unmount(check=exc_type is None)


@dataclass
class Family:
    """A small graph of one family, on the mount and as a plain copy, with the C++ apps'
    results of the plain copy."""

    name: str
    gen: list
    vertices: int
    weighted: bool
    sorted: bool
    striped: bool
    start: int = 0
    plain: str = ""
    source: str = ""
    column: np.ndarray = None
    cpp: dict = field(default_factory=dict)  # result name -> bytes
    cpp_lines: dict = field(default_factory=dict)

    def on(self, mountpoint: str) -> str:
        return os.path.join(mountpoint, self.name)


# The three families of scripts/bench/graphs.sh at test scale (4096 vertices): R-MAT with ids
# permuted (whole-chunk LPs: blocks not sorted, and striped, so the unmodified engines map a
# striped column through the daemon), R-MAT with its own ids (locality; unweighted), and the
# road-like lattice (high diameter); the last two sorted by source (vertex-granular LPs).
FAMILIES = {
    "rmat": dict(gen=["gen-rmat", "--scale", "12", "--weighted", "--seed", "1"], vertices=4096, weighted=True,
                 sorted=False, striped=True),
    "rmat-local": dict(gen=["gen-rmat", "--scale", "12", "--seed", "1", "--no-permute"], vertices=4096,
                       weighted=False, sorted=True, striped=False),
    "grid": dict(gen=["gen-grid", "--width", "64", "--height", "64", "--drop", "0.1", "--weighted", "--seed", "1"],
                 vertices=4096, weighted=True, sorted=True, striped=False),
}
PAGERANK_ITERATIONS = 5
PARTITION = "96K"  # a few LPs per iteration


@dataclass
class World:
    root: str
    source: str
    mountpoint: str
    disks: list
    families: dict
    mount: GraphfsMount = None


def _build_family(name: str, spec: dict, root: str, source: str, disks: list) -> Family:
    fam = Family(name=name, **spec)
    edges = os.path.join(root, name + ".bin")
    run([binary(spec["gen"][0])] + spec["gen"][1:] + ["-o", edges])
    fam.start = int(np.fromfile(edges, dtype="<i4", count=1)[0])  # the source of the first edge
    fam.source = os.path.join(source, name)
    pre = [binary("preprocess"), "-i", edges, "-o", fam.source, "-v", str(fam.vertices), "-p", "4",
           "-t", "1" if fam.weighted else "0"]
    if fam.sorted:
        pre.append("--sort-sources")
    run(pre)
    run([binary("graphfs-index"), "-q", "--chunk-size", "16K", fam.source])
    fam.plain = os.path.join(root, "plain", name)
    shutil.copytree(fam.source, fam.plain, ignore=shutil.ignore_patterns(".graphfs"))
    if fam.striped:
        run([binary("graphfs-stripe"), "-q", "--unit", "64K", "--min-size", "128K", "--compress", "none",
             "--disks", ",".join(disks), fam.source])
    fam.column = np.fromfile(os.path.join(fam.plain, "column"),
                             dtype=[("source", "<i4"), ("target", "<i4")] + ([("weight", "<f4")] if fam.weighted else []))
    # The C++ apps on the plain copy: bfs (its default, reentry 5) and pagerank with one reader
    # thread (its sums then have one order: pagerank.py's module doc).
    fam.cpp_lines["bfs"] = run([binary("bfs"), fam.plain, str(fam.start)]).strip()
    fam.cpp_lines["pagerank"] = run([binary("pagerank"), fam.plain, str(PAGERANK_ITERATIONS), "--threads", "1"]).strip()
    for result in ("bfs.level", "pagerank.rank"):
        with open(os.path.join(fam.plain, result), "rb") as f:
            fam.cpp[result] = f.read()
    return fam


@pytest.fixture(scope="session")
def world(request):
    """The three graphs under one source directory, mounted once for the session (allow_other,
    for the test that runs a job as nobody). Unmounted and removed at the end, also after a
    failure."""
    why = mount_unavailable()
    if why:
        pytest.skip(why)
    root = tempfile.mkdtemp(prefix="graphfs-pytest-", dir="/var/tmp")
    os.chmod(root, 0o755)  # nobody reaches the mount through it
    w = World(root=root, source=os.path.join(root, "src"), mountpoint=os.path.join(root, "mnt"),
              disks=[os.path.join(root, f"disk{i}") for i in range(3)], families={})
    try:
        for d in [w.source] + w.disks:
            os.makedirs(d)
        for name, spec in FAMILIES.items():
            w.families[name] = _build_family(name, spec, root, w.source, w.disks)
        w.mount = GraphfsMount(w.source, w.mountpoint, ["allow_other"]).mount()
        yield w
    finally:
        try:
            if w.mount is not None:
                gc.collect()  # LP views in reference cycles keep a job's memory mapped
                w.mount.unmount(check=request.session.testsfailed == 0)
        finally:
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def scratch(world):
    """A directory for one test's outputs, outside the mount."""
    d = tempfile.mkdtemp(prefix="t-", dir=world.root)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def read_array(path: str, dtype) -> np.ndarray:
    return np.fromfile(path, dtype=dtype)


def records_sorted(edges: np.ndarray) -> np.ndarray:
    """The records as opaque byte strings, sorted: a multiset to compare."""
    raw = np.ascontiguousarray(edges).view(np.uint8).reshape(-1, edges.dtype.itemsize)
    return np.sort(raw.view(f"V{edges.dtype.itemsize}").ravel())


def as_user(uid: int, gid: int):
    """preexec_fn: drop to uid/gid with no supplementary groups."""
    def drop():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return drop


def owner_of(path: str) -> int:
    return os.stat(path).st_uid


def mode_of(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)
