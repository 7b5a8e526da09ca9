// What /proc/self/mountinfo says about a mountpoint: the daemon needs the device number of
// its own new mount (to set the kernel's read-ahead for it) and the filesystem type of a
// dead mount it finds in its place (to detach only a graphfs one).
#pragma once

#include <optional>
#include <string>

namespace graphfs {

struct MountEntry {
  std::string device;  // "MAJOR:MINOR"
  std::string type;    // "fuse.graphfs", "ext4", ...
};

// The newest of the mounts at `path` (the one on top when several are stacked).
std::optional<MountEntry> NewestMountAt(const std::string& path);

}  // namespace graphfs
