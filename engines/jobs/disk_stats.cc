#include "engines/jobs/disk_stats.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "grid/posix_io.h"

namespace graphfs::engine {

std::optional<std::string> BlockDeviceOf(const std::string& path, const std::string& sysfs) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const std::string link =
      sysfs + "/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  std::error_code ec;
  std::filesystem::path device = std::filesystem::canonical(link, ec);
  if (ec) return std::nullopt;
  // A partition's sysfs directory sits inside its disk's and has a
  // `partition` file; the disk's stat counts all partitions.
  if (std::filesystem::exists(device / "partition", ec)) device = device.parent_path();
  return device.filename().string();
}

Result<uint64_t> DeviceBytesRead(const std::string& name, const std::string& sysfs) {
  auto text = grid::ReadWholeFile(sysfs + "/block/" + name + "/stat");
  if (!text.ok()) return text.error();
  std::istringstream in(*text);
  uint64_t reads, merged, sectors;
  if (!(in >> reads >> merged >> sectors)) return Error(EINVAL, sysfs + "/block/" + name + "/stat: unexpected format");
  return sectors * 512;
}

std::optional<std::string> FindGraphfsMount(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(dir, ec);
  if (ec) return std::nullopt;
  p = p.lexically_normal();
  while (true) {
    if (std::filesystem::is_regular_file(p / ".graphfs" / "stats", ec)) {
      std::string s = p.string();
      if (s.size() > 1 && s.back() == '/') s.pop_back();
      return s;
    }
    if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
    p = p.parent_path();
  }
}

Result<std::vector<GraphfsDiskCounters>> ParseGraphfsStats(const std::string& json_text) {
  nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Error(EINVAL, ".graphfs/stats is not valid JSON");
  std::vector<GraphfsDiskCounters> disks;
  if (!doc.is_object() || !doc.contains("disks") || !doc["disks"].is_array()) return disks;
  int64_t position = 0;
  for (const auto& entry : doc["disks"]) {
    GraphfsDiskCounters disk;
    disk.index = position++;
    if (!entry.is_object()) continue;
    if (entry.contains("index") && entry["index"].is_number_integer()) disk.index = entry["index"].get<int64_t>();
    if (entry.contains("path") && entry["path"].is_string()) disk.path = entry["path"].get<std::string>();
    if (entry.contains("bytes_read") && entry["bytes_read"].is_number_unsigned()) {
      disk.bytes_read = entry["bytes_read"].get<uint64_t>();
    }
    if (entry.contains("bytes_written") && entry["bytes_written"].is_number_unsigned()) {
      disk.bytes_written = entry["bytes_written"].get<uint64_t>();
    }
    disks.push_back(std::move(disk));
  }
  return disks;
}

}  // namespace graphfs::engine
