// Before mounting: everything that can be wrong with SOURCE, its disks (and io_uring), the log
// file and the mountpoint is found here, so that a bad mount fails with a message and a non-zero
// exit instead of serving wrong bytes.
#pragma once

#include <cstdio>

#include "fusefs/command_line.h"

namespace graphfs {

struct GraphFs;

// Fills `fs` from the command line: the options resolved, SOURCE's root inode, the passthrough
// choice, the opened volume (its threads start after the fork, session_start.cc); opens -o log=
// into `*log` (the caller closes it) and detaches a stale graphfs mount at the mountpoint.
// Returns 0, or the exit status with the message printed: 2 for a bad option, 1 for the rest.
int PrepareMount(GraphFs& fs, const CommandLine& cl, FILE** log);

}  // namespace graphfs
