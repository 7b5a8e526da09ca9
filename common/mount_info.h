// The lines of /proc/self/mountinfo, parsed once for everything that asks which mounts there
// are: the daemon (its own new mount's device, the type of a dead mount in its place:
// fusefs/mount_table.h) and the disk tools (the graphfs mount serving a graph:
// striping/live_mount.h).
#pragma once

#include <string>
#include <vector>

namespace graphfs {

struct MountInfo {
  std::string device;      // "MAJOR:MINOR"
  std::string mountpoint;  // as a path (the file's \ooo escapes of blanks and backslashes undone)
  std::string type;        // "fuse.graphfs", "ext4", ...
  std::string source;      // the filesystem's source (graphfs's: its SOURCE argument), unescaped
};

// Every mount of this process's namespace, in the file's order: a later one is a newer mount
// (on top of an earlier one at the same mountpoint). Empty when the file cannot be read.
std::vector<MountInfo> ReadMountInfo();

}  // namespace graphfs
