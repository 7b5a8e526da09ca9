// The write-intent records' names, and the scan for a disk's records (stale_rows.h): apart from
// the records' reading and writing, since DiskSet::Open asks whether a disk that came back is
// stale — and the parsers' fuzzer links DiskSet without the disks' backends.
#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "striping/stale_rows.h"

namespace graphfs {

namespace {
constexpr const char* kSuffix = ".stale-";
}  // namespace

std::string StaleRecordName(const std::string& file_id, uint32_t lost_disk) {
  return file_id + kSuffix + std::to_string(lost_disk);
}

std::optional<uint32_t> StaleRecordDisk(const std::string& name) {
  const size_t at = name.rfind(kSuffix);
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::string digits = name.substr(at + std::strlen(kSuffix));
  if (digits.empty() || digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(digits));
}

bool AnyStaleRecordFor(const DiskSet& disks, uint32_t lost) {
  for (uint32_t d = 0; d < disks.size(); ++d) {
    if (d == lost || disks.state(d) == DiskState::kMissing) continue;
    DIR* dir = ::opendir((disks.path(d) + "/parts").c_str());
    if (dir == nullptr) continue;
    bool found = false;
    while (const dirent* e = ::readdir(dir)) {
      if (StaleRecordDisk(e->d_name) == lost) {
        found = true;
        break;
      }
    }
    ::closedir(dir);
    if (found) return true;
  }
  return false;
}

}  // namespace graphfs
