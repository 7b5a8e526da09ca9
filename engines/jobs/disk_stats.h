// Bytes read per disk, for run-jobs' report: block devices from
// /sys/block/NAME/stat, and graphfs's own per-disk counters from
// MOUNT/.graphfs/stats when the graph sits on a graphfs mount.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace graphfs::engine {

// The whole-disk block device (e.g. "loop3", "vda") holding `path`'s
// filesystem, or nullopt when it is not a block device (tmpfs, FUSE).
std::optional<std::string> BlockDeviceOf(const std::string& path, const std::string& sysfs = "/sys");

// Sectors read (field 3 of /sys/block/NAME/stat) times 512.
Result<uint64_t> DeviceBytesRead(const std::string& name, const std::string& sysfs = "/sys");

// The graphfs mount containing `dir`: the nearest ancestor (or dir itself)
// with a `.graphfs/stats` file.
std::optional<std::string> FindGraphfsMount(const std::string& dir);

struct GraphfsDiskCounters {
  int64_t index = -1;
  std::string path;
  std::optional<uint64_t> bytes_read;
  std::optional<uint64_t> bytes_written;
};

// Parses the "disks" array of a .graphfs/stats JSON document; missing keys
// stay empty rather than failing.
Result<std::vector<GraphfsDiskCounters>> ParseGraphfsStats(const std::string& json_text);

}  // namespace graphfs::engine
