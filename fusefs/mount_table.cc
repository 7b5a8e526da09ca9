#include "fusefs/mount_table.h"

#include "common/mount_info.h"

namespace graphfs {

std::optional<MountEntry> NewestMountAt(const std::string& path) {
  std::optional<MountEntry> newest;
  for (const MountInfo& m : ReadMountInfo())
    if (m.mountpoint == path) newest = MountEntry{m.device, m.type};  // later lines are newer mounts
  return newest;
}

}  // namespace graphfs
