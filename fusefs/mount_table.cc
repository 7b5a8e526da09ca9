#include "fusefs/mount_table.h"

#include <fstream>
#include <sstream>

namespace graphfs {

std::optional<MountEntry> NewestMountAt(const std::string& path) {
  // Line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL FIELDS...] - TYPE SOURCE SUPER
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::optional<MountEntry> newest;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, majmin, root, mp, field;
    fields >> id >> parent >> majmin >> root >> mp;
    if (mp != path) continue;
    while (fields >> field && field != "-") {
    }
    MountEntry e;
    e.device = majmin;
    fields >> e.type;
    newest = e;  // later lines are newer mounts
  }
  return newest;
}

}  // namespace graphfs
