#include "common/mount_info.h"

#include <fstream>
#include <sstream>

namespace graphfs {

namespace {

// mountinfo escapes blanks, tabs, newlines and backslashes in paths as \ooo.
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7' && s[i + 2] >= '0' &&
        s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::vector<MountInfo> ReadMountInfo() {
  std::vector<MountInfo> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL FIELDS...] - TYPE SOURCE SUPER_OPTIONS
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    size_t dash = 0;
    while (dash < w.size() && w[dash] != "-") ++dash;
    if (w.size() < 5 || dash + 2 >= w.size()) continue;
    mounts.push_back({w[2], Unescape(w[4]), w[dash + 1], Unescape(w[dash + 2])});
  }
  return mounts;
}

}  // namespace graphfs
