#include "fusefs/mount_options.h"

#include <unistd.h>

#include <charconv>

#include "common/size_parse.h"

namespace graphfs {

namespace {

Result<unsigned> ParseCount(const std::string& key, const std::string& value, unsigned lo, unsigned hi) {
  unsigned v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || v < lo || v > hi)
    return Error(EINVAL, "option " + key + "=" + value + ": expected a whole number from " + std::to_string(lo) +
                             " to " + std::to_string(hi));
  return v;
}

Result<bool> ParseBool(const std::string& key, const std::string& value) {
  if (value == "1" || value == "yes" || value == "true" || value == "on") return true;
  if (value == "0" || value == "no" || value == "false" || value == "off") return false;
  return Error(EINVAL, "option " + key + "=" + value + ": expected 0 or 1");
}

}  // namespace

Result<bool> ApplyMountOption(MountOptions& o, const std::string& option) {
  const size_t eq = option.find('=');
  const std::string key = option.substr(0, eq);
  const bool has_value = eq != std::string::npos;
  const std::string value = has_value ? option.substr(eq + 1) : "";
  auto need_value = [&]() -> Status {
    if (!has_value || value.empty()) return Error(EINVAL, "option " + key + " needs a value (" + key + "=...)");
    return Status::Ok();
  };
  if (key == "ro") {
    o.read_only = true;
    return false;  // libfuse needs it too
  }
  if (key == "rw") {
    o.read_only = false;
    return false;
  }
  if (key == "cache_size") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseSizeOrPercent(value, 100);
    if (!v.ok()) return v.error().Wrap("option cache_size");
    o.cache_size = value;
    return true;
  }
  if (key == "threads") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseCount(key, value, 1, 1024);
    if (!v.ok()) return v.error();
    o.threads = *v;
    return true;
  }
  if (key == "cache_policy") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    if (value == "priority") o.cache_lru = false;
    else if (value == "lru") o.cache_lru = true;
    else return Error(EINVAL, "option cache_policy=" + value + ": expected cache_policy=priority or cache_policy=lru");
    return true;
  }
  if (key == "cache_window") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseCount(key, value, 1, 86400);
    if (!v.ok()) return v.error();
    o.cache_window = *v;
    return true;
  }
  if (key == "cache_trace") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    o.cache_trace = value;
    return true;
  }
  if (key == "io") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    if (value == "perdisk") o.shared_queue = false;
    else if (value == "shared") o.shared_queue = true;
    else return Error(EINVAL, "option io=" + value + ": expected io=perdisk or io=shared");
    return true;
  }
  if (key == "io_workers") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseCount(key, value, 1, 256);
    if (!v.ok()) return v.error();
    o.io_workers = *v;
    return true;
  }
  if (key == "queue_depth") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseCount(key, value, 1, 1024);
    if (!v.ok()) return v.error();
    o.queue_depth = *v;
    return true;
  }
  if (key == "readahead") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseCount(key, value, 0, 4096);
    if (!v.ok()) return v.error();
    o.readahead_off = *v == 0;
    o.readahead_units = *v;
    return true;
  }
  if (key == "readahead_mem") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseSize(value);
    if (!v.ok()) return v.error().Wrap("option readahead_mem");
    o.readahead_mem = *v;
    return true;
  }
  if (key == "kernel_readahead") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseSize(value);
    if (!v.ok()) return v.error().Wrap("option kernel_readahead");
    if (*v > (1ull << 30)) return Error(EINVAL, "option kernel_readahead=" + value + ": at most 1G");
    o.kernel_readahead = *v;
    return true;
  }
  if (key == "direct") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseBool(key, value);
    if (!v.ok()) return v.error();
    o.direct = *v;
    return true;
  }
  if (key == "disks") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    o.disks = SplitList(value, ':');
    for (const auto& d : o.disks)
      if (d.empty()) return Error(EINVAL, "option disks=" + value + ": empty disk path");
    return true;
  }
  if (key == "log") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    o.log_file = value;
    return true;
  }
  if (key == "timeout") {
    GRAPHFS_RETURN_IF_ERROR(need_value());
    auto v = ParseCount(key, value, 0, 3600);
    if (!v.ok()) return v.error();
    o.timeout = *v;
    return true;
  }
  return false;
}

Status ResolveMountOptions(MountOptions& o) {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint64_t ram = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  auto v = ParseSizeOrPercent(o.cache_size, ram);
  if (!v.ok()) return v.error().Wrap("option cache_size");
  if (ram > 0 && *v > ram) return Error(EINVAL, "option cache_size=" + o.cache_size + " is larger than RAM");
  o.cache_bytes = *v;
  return Status::Ok();
}

const char* MountOptionsHelp() {
  return "graphfs options (-o key=value, also in fstab):\n"
         "    -o cache_size=SIZE|N%   shared chunk cache budget (default 25% of RAM; 0: read-ahead only)\n"
         "    -o cache_policy=priority|lru  eviction: readers in the window x mean source degree (default),\n"
         "                            or least recently used (for comparison)\n"
         "    -o cache_window=SECONDS how long a read counts towards a unit's priority (default 600; must\n"
         "                            cover an iteration of the slowest job, or the cache forgets too soon)\n"
         "    -o cache_trace=FILE     append every cache unit lookup to FILE (time pid file unit bytes)\n"
         "    -o threads=N            FUSE worker threads at most (default 16)\n"
         "    -o io=perdisk|shared    one queue per disk (default), or one shared queue\n"
         "    -o io_workers=N         io_uring workers per disk (perdisk, default 1) or in the pool (shared,\n"
         "                            default: number of disks)\n"
         "    -o queue_depth=N        requests in flight per I/O worker (default 4)\n"
         "    -o readahead=N          stripe units read ahead of sequential readers (default: twice the\n"
         "                            number of disks; 0 disables)\n"
         "    -o readahead_mem=SIZE   memory for units loaded ahead of their readers (default 1G)\n"
         "    -o direct=0|1           O_DIRECT on part files for aligned reads (default 1)\n"
         "    -o kernel_readahead=SIZE  the kernel's read-ahead window for buffered readers of the\n"
         "                            mount (default and 0: the kernel's own, 128K)\n"
         "    -o disks=D0:D1:...      disk directories, overriding the registered paths (same order)\n"
         "    -o log=FILE             log file (default: stderr; syslog-free)\n"
         "    -o timeout=SECONDS      attribute and entry cache timeout (default 1)\n"
         "graphfs always adds default_permissions: the kernel checks permissions as ext4 would.\n";
}

}  // namespace graphfs
