#!/usr/bin/env python3
"""Runs one part of the Python client's pytest suite for ctest (clients/python/CMakeLists.txt):

    run_suite.py unit BIN_DIR    parsers, grid readers, views, pip install (no mount)
    run_suite.py mount BIN_DIR   the jobs protocol and the example engines through real mounts

Exit 77 (ctest's SKIP_RETURN_CODE) with the reason when the part cannot run here: numpy or
pytest missing, or, for `mount`, not root, no /dev/fuse, or the binaries not built. Otherwise
pytest's exit status; "no tests ran" (5) is a failure. SIGTERM (a ctest timeout) stops pytest
as Ctrl-C does, so the fixtures unmount.
"""

import os
import signal
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
UNIT = ["test_client.py", "test_grid.py", "test_install.py"]
MOUNT = ["test_mount_jobs.py", "test_mount_engines.py"]


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("unit", "mount"):
        print(__doc__, file=sys.stderr)
        return 2
    part, bin_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    os.environ["GRAPHFS_BIN_DIR"] = bin_dir
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the checkout
    sys.dont_write_bytecode = True
    try:
        import numpy  # noqa: F401
        import pytest
    except ImportError as e:
        print(f"SKIP: {e.name} is not installed for {sys.executable} (scripts/setup installs python3-numpy "
              "and python3-pytest)")
        return SKIP
    sys.path.insert(0, HERE)
    if part == "mount":
        from conftest import mount_unavailable
        why = mount_unavailable()
        if why:
            print(f"SKIP: {why}")
            return SKIP

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    files = [os.path.join(HERE, f) for f in (UNIT if part == "unit" else MOUNT)]
    code = pytest.main(["-p", "no:cacheprovider", "-rs", "-v", "--rootdir", os.path.dirname(HERE)] + files)
    return 1 if code == pytest.ExitCode.NO_TESTS_COLLECTED else int(code)


if __name__ == "__main__":
    sys.exit(main())
