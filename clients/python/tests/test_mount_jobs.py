"""The jobs protocol through a real mount: a job registers and is removed; every active record
is delivered once, as numpy views of the mapped shared LP memory (no copy, read-only) or, with
read_lps, from one read of lp-SEQ; the active set's forms agree; the errors the C++ client
reports come as their exceptions with its messages; a killed job's lease removes it."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import graphfs
from conftest import CLIENT_DIR, PARTITION, GraphfsMount, as_user, records_sorted, run, binary


def jobs_dir(world):
    return os.path.join(world.mountpoint, ".graphfs", "jobs")


def all_records(job, active=None):
    """One iteration's records (copied out), the LPs' count, whether they were mapped."""
    out, lps = [], []
    for lp in job.iteration(active):
        lps.append(lp)
        for a in lp.arrays():
            out.append(np.array(a))  # copy: the view is reused once the job is done with the LP
    return (np.concatenate(out) if out else np.zeros(0, dtype=job.edge_dtype)), lps


@pytest.mark.parametrize("family", ["rmat", "rmat-local", "grid"])
def test_every_record_once_as_views_of_the_shared_memory(world, family):
    fam = world.families[family]
    with graphfs.Job(fam.on(world.mountpoint), PARTITION) as job:
        assert job.vertices == fam.vertices
        assert job.edge_dtype == fam.column.dtype
        assert os.path.isdir(job.dir) and job.graph == family
        views = 0
        got = []
        for lp in job.iteration(None, read_map=True):
            assert lp.mapped and job.maps_lps
            memory = job.memory
            assert memory is not None and not memory.flags.writeable
            for a in lp.arrays():
                # Zero copy: every whole-record array is a view of the mapped memory, read-only.
                if np.shares_memory(a, memory):
                    views += len(a)
                    assert not a.flags.writeable
                    with pytest.raises(ValueError, match="read-only"):
                        a["source"][0] = 1
                got.append(np.array(a))
            # The map says which bytes of column each part of the view holds.
            flat = lp.edges().view(np.uint8)
            col = fam.column.view(np.uint8)
            for c in lp.chunks:
                lo, n, co = int(c["lp_offset"]), int(c["length"]), int(c["column_offset"])
                assert np.array_equal(flat[lo:lo + n], col[co:co + n])
        got = np.concatenate(got)
        assert np.array_equal(records_sorted(got), records_sorted(fam.column))
        assert views >= 0.99 * len(got), "records outside the mapped memory: copies"
        name = job.dir
    assert not os.path.exists(name), "the job is removed on leaving the with block"
    assert job.closed


def test_read_lps_reads_each_lp_once_into_one_buffer(world):
    fam = world.families["rmat-local"]
    before = world.mount.stats()["cpu"]["by_path"]["lp"]["read_bytes"]
    with graphfs.Job(fam.on(world.mountpoint), PARTITION, read_lps=True) as job:
        total = 0
        got = []
        for lp in job.iteration(None):
            assert not lp.mapped and lp.fd() >= 0
            arrays = lp.arrays()
            assert len(arrays) == 1 and lp.fd() == -1, "one read, then the file is closed"
            buf = lp.read()
            assert buf.size == lp.bytes and np.shares_memory(arrays[0], buf), "the array is the read buffer"
            assert arrays[0].flags.writeable and arrays[0].base is not None
            total += lp.bytes
            got.append(arrays[0].copy())
        assert not job.maps_lps
    after = world.mount.stats()["cpu"]["by_path"]["lp"]["read_bytes"]
    assert after - before == total == fam.column.nbytes, "the daemon served each byte once through READs"
    assert np.array_equal(records_sorted(np.concatenate(got)), records_sorted(fam.column))


def test_next_is_held_read_write_and_its_answers_carry_the_pieces(world, monkeypatch):
    """As the C++ client: `next` opened read-write answers "lp-SEQ BYTES" with the pieces and
    takes "done", so no lp-SEQ.pieces file and no `done` file is opened."""
    fam = world.families["rmat"]
    opened = []
    real_open = os.open

    def watching_open(path, flags, *args, **kwargs):
        opened.append(os.path.basename(path))
        return real_open(path, flags, *args, **kwargs)

    with graphfs.Job(fam.on(world.mountpoint), PARTITION) as job:
        assert fcntl.fcntl(job._next, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR
        monkeypatch.setattr(os, "open", watching_open)
        got, lps = all_records(job)
        monkeypatch.undo()
        assert lps and all(lp.mapped for lp in lps)
    assert np.array_equal(records_sorted(got), records_sorted(fam.column))
    assert not [f for f in opened if f.endswith(".pieces") or f == "done"], opened


def test_a_daemon_that_refuses_read_write_next_is_spoken_to_the_old_way(world, monkeypatch):
    """A daemon older than pieces in `next`'s answer refuses to open it read-write (EACCES):
    the client reads lp-SEQ.pieces and writes `done` as files, with the same records."""
    fam = world.families["rmat-local"]
    opened = []
    real_open = os.open

    def old_daemon_open(path, flags, *args, **kwargs):
        name = os.path.basename(path)
        opened.append(name)
        if name == "next" and flags & os.O_ACCMODE == os.O_RDWR:
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", old_daemon_open)
    with graphfs.Job(fam.on(world.mountpoint), PARTITION) as job:
        assert fcntl.fcntl(job._next, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY
        got, lps = all_records(job)
        assert lps and all(lp.mapped for lp in lps)
    monkeypatch.undo()
    assert np.array_equal(records_sorted(got), records_sorted(fam.column))
    assert opened.count("done") == len(lps) and len([f for f in opened if f.endswith(".pieces")]) == len(lps)


def test_without_passthrough_the_client_reads_lp_files(world, scratch):
    """A second mount of the same graphs with passthrough=off: `memory` cannot be opened, so the
    client falls back on lp-SEQ by itself, as the C++ client does."""
    world.mount.unmount()
    try:
        fam = world.families["grid"]
        with GraphfsMount(world.source, world.mountpoint, ["passthrough=off"]) as m:
            assert not m.stats()["passthrough"]["active"]
            with graphfs.Job(fam.on(world.mountpoint), PARTITION) as job:
                got, lps = all_records(job)
                assert lps and not any(lp.mapped for lp in lps) and not job.maps_lps
            assert np.array_equal(records_sorted(got), records_sorted(fam.column))
    finally:
        world.mount.mount()


@pytest.mark.parametrize("family", ["rmat", "rmat-local"])
def test_a_subset_delivers_every_edge_of_its_sources(world, family):
    fam = world.families[family]
    rng = np.random.default_rng(7)
    ids = rng.choice(fam.vertices, 40, replace=False)
    mask = np.zeros(fam.vertices, dtype=bool)
    mask[ids] = True
    want = fam.column[mask[fam.column["source"]]]
    with graphfs.Job(fam.on(world.mountpoint), PARTITION) as job:
        for form in (ids, mask, ids.tolist()):
            got, _ = all_records(job, form)
            assert job.status()["active_vertices"] == 40
            active = got[mask[got["source"]]]
            assert np.array_equal(records_sorted(active), records_sorted(want))
            if fam.sorted:  # vertex-granular LPs: only the active sources' edges
                assert len(got) == len(want)
            else:  # whole chunks: other sources' edges too, which the engine filters
                assert len(got) >= len(want)
        # The C++ client's word form and the text form select the same vertices.
        words = np.zeros((fam.vertices + 63) // 64, dtype=np.uint64)
        np.bitwise_or.at(words, ids // 64, np.uint64(1) << (ids % 64).astype(np.uint64))
        job.set_active_words(words)
        assert job.status()["active_vertices"] == 40
        job.set_active_list(ids)
        assert job.status()["active_vertices"] == 40
        got = np.concatenate([np.array(a) for lp in job.partitions() for a in lp.arrays()])
        assert np.array_equal(records_sorted(got[mask[got["source"]]]), records_sorted(want))
        # Whole chunks from the next active set on (granularity chunk).
        job.set_whole_chunks(True)
        whole, _ = all_records(job, ids)
        assert job.status()["granularity"] == "chunk"
        assert len(whole) >= len(want)


def test_errors_come_as_their_exceptions_with_the_c_client_messages(world):
    fam = world.families["rmat-local"]
    path = fam.on(world.mountpoint)
    jobs = jobs_dir(world)
    with graphfs.Job(path, PARTITION, name="taken") as job:
        with pytest.raises(graphfs.JobExistsError) as e:
            graphfs.Job(path, PARTITION, name="taken")
        assert e.value.errno == errno.EEXIST and isinstance(e.value, FileExistsError)
        assert str(e.value) == f"graphfs: mkdir {jobs}/taken: File exists"

        # The client's own check, before writing: a mask of the wrong size.
        with pytest.raises(graphfs.InvalidArgumentError) as e:
            job.set_active(np.zeros(fam.vertices - 1, dtype=bool))
        assert str(e.value) == (f"graphfs job taken: write active: a bitmap of {fam.vertices - 1} vertices, the graph "
                                f"has {fam.vertices}: Invalid argument (see {jobs}/taken/status)")
        with pytest.raises(graphfs.InvalidArgumentError, match="vertex 4096 is outside \\[0, 4096\\)"):
            job.set_active([1, 4096])
        # The daemon's refusals at close, with its reason from status's last_error.
        with pytest.raises(graphfs.InvalidArgumentError) as e:
            job.set_active_bitmap(b"\xff" * 10)
        assert e.value.errno == errno.EINVAL
        msg = str(e.value)
        assert msg.startswith("graphfs job taken: write active: Invalid argument: ")
        assert "expected a bitmap of 512 bytes" in msg and msg.endswith(f"(see {jobs}/taken/status)")
        with pytest.raises(graphfs.InvalidArgumentError, match="write active.list: Invalid argument"):
            job.set_active_list("1 -2")
        # EBUSY: the graph cannot change while the job maps its memory.
        for lp in job.iteration([fam.start]):
            pass
        assert job.maps_lps
        with pytest.raises(graphfs.BusyError, match="write graph: Device or resource busy"):
            job._write_control("graph", "grid\n")

    with pytest.raises(graphfs.InvalidArgumentError, match="graphfs: bad size '1.5G'"):
        graphfs.Job(path, "1.5G")
    with pytest.raises(graphfs.InvalidArgumentError, match="mkdir .*/.hidden: Invalid argument"):
        graphfs.Job(path, PARTITION, name=".hidden")
    # Not a graph (a directory with no meta): the daemon's ENOENT with its reason; the job the
    # client made is removed again.
    os.makedirs(os.path.join(world.source, "empty"), exist_ok=True)
    before = set(os.listdir(jobs))
    with pytest.raises(graphfs.NotFoundError, match="write graph: No such file or directory: .*not a graph directory"):
        graphfs.Job(os.path.join(world.mountpoint, "empty"), PARTITION)
    assert set(os.listdir(jobs)) == before


def test_an_unindexed_graph_is_refused_with_the_reason(world):
    fam = world.families["rmat-local"]
    d = os.path.join(world.source, "unindexed")
    run(["cp", "-a", fam.plain, d])  # the plain copy has no .graphfs/index
    try:
        with pytest.raises(graphfs.GraphfsError, match="write graph: .*graphfs-index"):
            graphfs.Job(os.path.join(world.mountpoint, "unindexed"), PARTITION)
    finally:
        run(["rm", "-rf", d])


def test_a_graph_the_caller_cannot_read_is_access_denied(world):
    """As nobody: the daemon refuses a graph whose column the writer cannot read (EACCES)."""
    fam = world.families["rmat-local"]
    d = os.path.join(world.source, "secret")
    run(["cp", "-a", fam.source, d])  # with its index (cp -a keeps the mtimes: still fresh)
    os.chmod(os.path.join(d, "column"), 0o600)
    code = (
        "import graphfs, sys\n"
        "try:\n"
        f"    graphfs.Job({os.path.join(world.mountpoint, 'secret')!r}, '64K')\n"
        "except graphfs.AccessDeniedError as e:\n"
        "    print('AccessDeniedError', e.errno, e); sys.exit(0)\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e); sys.exit(1)\n"
        "print('no error'); sys.exit(1)\n")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env={"PYTHONPATH": CLIENT_DIR, "PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ["PATH"]},
                           preexec_fn=as_user(65534, 65534), cwd="/")
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"AccessDeniedError {errno.EACCES} graphfs job" in r.stdout and "write graph: Permission denied" in r.stdout
    finally:
        run(["rm", "-rf", d])


def test_a_killed_job_is_removed_through_its_lease(world):
    fam = world.families["grid"]
    code = (
        "import graphfs, sys, time\n"
        f"job = graphfs.Job({fam.on(world.mountpoint)!r}, '64K', name='doomed')\n"
        "job.set_active([0])\n"
        "print(job.dir, flush=True)\n"
        "time.sleep(600)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env={"PYTHONPATH": CLIENT_DIR, "PYTHONDONTWRITEBYTECODE": "1"})
    try:
        d = p.stdout.readline().strip()
        assert d.endswith("/doomed") and os.path.isdir(d)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        for _ in range(200):
            if not os.path.exists(d):
                break
            time.sleep(0.05)
        assert not os.path.exists(d), "the daemon removes a job whose lease closed"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
