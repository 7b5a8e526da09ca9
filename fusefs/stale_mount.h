// A graphfs daemon killed without unmounting (kill -9, OOM killer, a crash) leaves its
// mountpoint behind as a dead FUSE mount: every access fails with ENOTCONN and a new
// mount on it fails too. Mounting again cleans up such a leftover, but only if it was a
// graphfs mount, so that another filesystem's dead mount is never detached by us.
// By hand: `fusermount3 -u -z MOUNTPOINT` (or `umount -l MOUNTPOINT` as root).
#pragma once

#include <string>

#include "common/result.h"

namespace graphfs {

// Ok if `mountpoint` is usable for a new mount: live, or a stale graphfs mount that was
// detached here (`*cleaned` set). An error names the problem and the command to run.
Status CleanStaleMount(const std::string& mountpoint, bool* cleaned);

// For a daemon whose read of /dev/fuse failed with ECONNABORTED, which the kernel returns
// both when the connection was aborted (/sys/fs/fuse/connections/N/abort) and when an
// unmount ended it while a request (often a file's last RELEASE) was being read. True in
// the second case: nothing is attached at `mountpoint` any more, or a live mount is.
bool ConnectionEndedByUnmount(const std::string& mountpoint);

}  // namespace graphfs
