// One mount's life in libfuse's session, as passthrough_hp.cc's main() runs it: mount, hook the
// channel, daemonize, start what must run after the fork, loop until unmounted, end in order.
// Three files: the session and its loop (session.cc), what starts after the fork
// (session_start.cc), and the end after the loop — an unmount told from an aborted connection,
// then everything stopped in order (session_end.cc).
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct GraphFs;

// Mounts `fs` (PrepareMount'ed, mount_setup.h) with libfuse's arguments and serves it until it is
// unmounted. Returns the exit status: 0 after a clean unmount, 1 when mounting or starting
// failed or the connection was aborted, 2 when libfuse refused its arguments.
int ServeMount(GraphFs& fs, std::vector<std::string>& libfuse_args);

// After the fork, before the loop: the daemon's nice value (`nice=`; a failure is logged, not
// fatal), the volume's threads, the memory-peak thread. An error: the volume could not start.
Status StartServing(GraphFs& fs);

// After the loop returned `ret`: unmounts, detaches the mount if the connection was aborted
// (then the end is an error), releases what the kernel left open and stops the jobs, then the
// volume. Returns `ret` as it then stands (0: a clean end).
int EndSession(GraphFs& fs, fuse_session* se, int ret);

}  // namespace graphfs
