#!/usr/bin/env python3
"""Random-operation writer for the load run (scripts/bench/load.sh).

Until DEADLINE (a Unix time) it does random operations under DIR on the mount and checks each
against a model kept in memory: writes, reads, truncates and fsyncs of a striped file, and
create / write / read / rename / unlink / mkdir / rmdir / xattr / chmod on ordinary files.
Every mismatch or unexpected error is printed; the last line is a summary
"ops N errors E" and the exit status is 1 if E > 0.

usage: load_writer.py DIR STRIPED_FILE DEADLINE [SEED]
"""
import errno
import os
import random
import sys
import time


def main():
    root, striped_path, deadline = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    os.makedirs(root, exist_ok=True)
    ops = errors = 0

    def fail(what):
        nonlocal errors
        errors += 1
        print(f"load_writer: {what}", flush=True)

    # The striped file: a model of its bytes, checked by reads at random places.
    fd = os.open(striped_path, os.O_RDWR)
    with open(striped_path, "rb") as f:
        model = bytearray(f.read())
    files = {}  # name -> bytes, ordinary files under root
    dirs = set()
    while time.time() < deadline:
        ops += 1
        op = rng.random()
        try:
            if op < 0.25:  # write a block of the striped file (sometimes past its end)
                length = rng.randrange(1, 1 << 20)
                off = rng.randrange(0, len(model) + (1 << 20))
                data = rng.randbytes(length)
                if os.pwrite(fd, data, off) != length:
                    fail("short write to the striped file")
                if off > len(model):
                    model.extend(bytes(off - len(model)))
                model[off:off + length] = data
            elif op < 0.45:  # read back a range of the striped file
                off = rng.randrange(0, max(1, len(model)))
                length = rng.randrange(1, 4 << 20)
                got = os.pread(fd, length, off)
                if got != bytes(model[off:off + length]):
                    fail(f"striped file differs from the model at [{off}, {off + length})")
            elif op < 0.48:  # truncate the striped file (never below 16 MiB)
                size = rng.randrange(16 << 20, 80 << 20)
                os.ftruncate(fd, size)
                model = model[:size] + bytearray(max(0, size - len(model)))
            elif op < 0.50:
                os.fsync(fd)
                if os.fstat(fd).st_size != len(model):
                    fail(f"striped size {os.fstat(fd).st_size} != model {len(model)}")
            elif op < 0.62:  # create or overwrite an ordinary file
                name = f"f{rng.randrange(200)}"
                data = rng.randbytes(rng.randrange(0, 256 << 10))
                with open(os.path.join(root, name), "wb") as f:
                    f.write(data)
                files[name] = data
            elif op < 0.75 and files:  # read one back
                name = rng.choice(list(files))
                with open(os.path.join(root, name), "rb") as f:
                    if f.read() != files[name]:
                        fail(f"{name} differs from what was written")
            elif op < 0.80 and files:  # rename (over an existing name at times)
                a = rng.choice(list(files))
                b = f"f{rng.randrange(200)}"
                os.rename(os.path.join(root, a), os.path.join(root, b))
                files[b] = files.pop(a)
            elif op < 0.86 and files:
                name = rng.choice(list(files))
                os.unlink(os.path.join(root, name))
                del files[name]
            elif op < 0.90:
                d = f"d{rng.randrange(20)}"
                path = os.path.join(root, d)
                if d in dirs:
                    os.rmdir(path)
                    dirs.discard(d)
                else:
                    os.mkdir(path)
                    dirs.add(d)
            elif op < 0.95 and files:
                name = rng.choice(list(files))
                path = os.path.join(root, name)
                value = rng.randbytes(16)
                os.setxattr(path, "user.load", value)
                if os.getxattr(path, "user.load") != value:
                    fail(f"xattr of {name} differs")
            elif files:
                name = rng.choice(list(files))
                mode = rng.choice([0o600, 0o644, 0o640])
                os.chmod(os.path.join(root, name), mode)
                if os.stat(os.path.join(root, name)).st_mode & 0o777 != mode:
                    fail(f"chmod of {name} did not take")
        except OSError as e:
            fail(f"operation failed: {e}")
            if e.errno in (errno.ENOTCONN, errno.ECONNABORTED):
                break
    # Final check of everything.
    for name, data in files.items():
        with open(os.path.join(root, name), "rb") as f:
            if f.read() != data:
                fail(f"final check: {name} differs")
    os.fsync(fd)
    with open(striped_path, "rb") as f:
        if f.read() != bytes(model):
            fail("final check: the striped file differs from the model")
    os.close(fd)
    print(f"ops {ops} errors {errors}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
