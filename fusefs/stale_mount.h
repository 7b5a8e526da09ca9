// A graphfs daemon killed without unmounting (kill -9, OOM killer, a crash) leaves its
// mountpoint behind as a dead FUSE mount: every access fails with ENOTCONN and a new
// mount on it fails too. Mounting again cleans up such a leftover, but only if it was a
// graphfs mount, so that another filesystem's dead mount is never detached by us.
// By hand: `fusermount3 -u -z MOUNTPOINT` (or `umount -l MOUNTPOINT` as root).
// A daemon whose connection was aborted (fusectl) cleans up its own mount the same way.
#pragma once

#include <string>

#include "common/result.h"

namespace graphfs {

// Ok if `mountpoint` is usable for a new mount: live, or a stale graphfs mount that was
// detached here (`*cleaned` set). An error names the problem and the command to run.
Status CleanStaleMount(const std::string& mountpoint, bool* cleaned);

}  // namespace graphfs
