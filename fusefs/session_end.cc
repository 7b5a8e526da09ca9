// The end of a mount, after the loop (session.h, EndSession): an unmount told from an aborted
// connection, the handles and unlinked files the kernel left, then the jobs, then the volume.
#include <cerrno>
#include <string>

#include "fusefs/graphfs.h"
#include "fusefs/session.h"
#include "fusefs/stale_mount.h"

namespace graphfs {

int EndSession(GraphFs& fs, fuse_session* se, int ret) {
  fuse_session_unmount(se);
  // The loop ends the same way when an unmount ended the connection and when it was
  // aborted (/sys/fs/fuse/connections/N/abort); libfuse then takes the mount for gone.
  // Only an aborted one is still attached, dead: detach it, and the exit is an error.
  bool detached = false;
  if (Status s = CleanStaleMount(fs.mountpoint, &detached); !s.ok()) {
    LogError("the connection was aborted: " + s.error().message());
    ret = -ECONNABORTED;
  } else if (detached) {
    LogError("the connection was aborted; detached the dead mount at " + fs.mountpoint);
    ret = -ECONNABORTED;
  } else if (ret == -ECONNABORTED) {
    // The kernel says so to a read that was copying a request when an unmount ended
    // the connection (libfuse printed "reading device: Software caused connection abort").
    LogError("the kernel ended the connection as " + fs.mountpoint + " was unmounted; a clean end");
    ret = 0;
  }
  if (size_t left = ReleaseLeftHandles(fs); left > 0) {
    LogError("released " + std::to_string(left) + " handle(s) the kernel left open at unmount");
  }
  DisposeUnlinkedAtUnmount(fs);
  fs.memory_peak.Stop();  // it reads the volume's and the jobs' stats
  fs.jobs.Shutdown();   // answers waiting jobs; no new LP loads
  fs.volume->Stop();    // schedules, then cache, then I/O: before the inodes (and their files) go
  return ret;
}

}  // namespace graphfs
