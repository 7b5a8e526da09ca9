"""`pip install` from the checkout works offline: into a fresh venv that sees the system's numpy
(--system-site-packages), with no index and no build isolation (nothing is downloaded: the
build backend, setuptools, is the system's). The installed package, not the checkout, is what
then imports, and its example engine gives the C++ app's BFS levels."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import CLIENT_DIR, binary

OFFLINE = {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
           "PYTHONDONTWRITEBYTECODE": "1"}


def test_pip_install_from_the_checkout(tmp_path):
    try:
        import ensurepip  # noqa: F401  (python3-venv)
    except ImportError:
        pytest.skip("python3-venv is not installed")
    # A copy of the folder, so that the in-tree build leaves nothing in the checkout.
    src = tmp_path / "src"
    shutil.copytree(CLIENT_DIR, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), **OFFLINE}
    r = subprocess.run([python, "-m", "pip", "install", "--no-index", "--no-build-isolation", str(src)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Successfully installed graphfs-0.1.0" in r.stdout, r.stdout
    r = subprocess.run([python, "-c", "import graphfs, numpy; print(graphfs.__file__); print(graphfs.__version__)"],
                       env=env, cwd="/", capture_output=True, text=True, check=True)
    where, version = r.stdout.split()
    assert where.startswith(str(venv)) and "site-packages" in where, where
    assert version == "0.1.0"
    r = subprocess.run([python, "-m", "pip", "show", "graphfs"], env=env, capture_output=True, text=True, check=True)
    assert "Requires: numpy" in r.stdout

    if not os.access(binary("gen-rmat"), os.X_OK):
        return  # the example's run needs the build's tools
    edges, g = str(tmp_path / "e.bin"), str(tmp_path / "g")
    subprocess.run([binary("gen-rmat"), "--scale", "10", "--seed", "4", "-o", edges], check=True, capture_output=True)
    subprocess.run([binary("preprocess"), "-i", edges, "-o", g, "-v", "1024", "-p", "2", "-t", "0"], check=True,
                   capture_output=True)
    start = str(int(np.fromfile(edges, dtype="<i4", count=1)[0]))
    cpp = subprocess.run([binary("bfs"), g, start], check=True, capture_output=True, text=True).stdout
    py = subprocess.run([python, "-m", "graphfs.examples.bfs", g, start], env=env, cwd="/", check=True,
                        capture_output=True, text=True).stdout
    assert py.split(", depth")[0] == cpp.split(", depth")[0]
    with open(os.path.join(g, "bfs.level"), "rb") as a, open(os.path.join(g, "numpy.bfs.level"), "rb") as b:
        assert a.read() == b.read()
