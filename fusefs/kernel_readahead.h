// The kernel's read-ahead window for buffered readers of the mount (-o kernel_readahead).
//
// The kernel starts a FUSE mount's window at 128 KiB. By default graphfs leaves it there:
// on this project's machine windows of 1-16 MiB read no faster, buffered 1 MiB and 24 MiB
// reads were 8-15% slower at 16 MiB (BENCHMARKS.md, issue 6). The option is for machines
// where that differs. The window is the sysfs knob of the mount's bdi. It must be written
// after the kernel has processed the INIT reply: the kernel then lowers the window to the
// max_readahead of the reply, which cannot exceed the 128 KiB it offered, so a knob written
// right after mount(2) is undone a moment later.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace graphfs {

struct GraphFs;

// Writes `bytes` to the read-ahead knob of the newest mount at `mountpoint` (needs root).
Status SetKernelReadAhead(const std::string& mountpoint, uint64_t bytes);

// Sets the window of `fs`'s mount once, on the first open of a file: INIT has been answered
// by then, and the kernel sizes a file's read-ahead after our open reply, so the first file
// already gets it. Failures are logged once; reads then work with the kernel's window.
void ApplyKernelReadAheadOnce(GraphFs& fs);

}  // namespace graphfs
