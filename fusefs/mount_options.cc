#include "fusefs/mount_options.h"

#include <unistd.h>

#include <charconv>
#include <functional>

#include "common/size_parse.h"
#include "volume/volume_options.h"

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

// Parsers of one kind of value, storing into a field of MountOptions.
using Apply = std::function<Status(MountOptions&, const std::string& key, const std::string& value)>;

Apply Count(unsigned MountOptions::*field, unsigned lo, unsigned hi) {
  return [=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
    auto v = ParseCount(key, value, lo, hi);
    if (!v.ok()) return v.error();
    o.*field = *v;
    return Status::Ok();
  };
}

Apply Size(uint64_t MountOptions::*field, uint64_t max = UINT64_MAX, const char* max_text = nullptr) {
  return [=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
    auto v = ParseSize(value);
    if (!v.ok()) return v.error().Wrap("option " + key);
    if (*v > max) return Error(EINVAL, "option " + key + "=" + value + ": at most " + max_text);
    o.*field = *v;
    return Status::Ok();
  };
}

// A size of at least `min`; below it, "option KEY=VALUE: `why`".
Apply SizeAtLeast(uint64_t MountOptions::*field, uint64_t min, const char* why) {
  return [=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
    auto v = ParseSize(value);
    if (!v.ok()) return v.error().Wrap("option " + key);
    if (*v < min) return Error(EINVAL, "option " + key + "=" + value + ": " + why);
    o.*field = *v;
    return Status::Ok();
  };
}

Apply Text(std::string MountOptions::*field) {
  return [=](MountOptions& o, const std::string&, const std::string& value) -> Status {
    o.*field = value;
    return Status::Ok();
  };
}

// One of `names`, stored as given.
Apply OneOf(std::string MountOptions::*field, std::vector<std::string> names) {
  return [=](MountOptions& o, const std::string& key, const std::string& value) -> Status {
    for (const std::string& n : names)
      if (value == n) {
        o.*field = value;
        return Status::Ok();
      }
    std::string expected;
    for (size_t i = 0; i < names.size(); ++i)
      expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + key + "=" + names[i];
    return Error(EINVAL, "option " + key + "=" + value + ": expected " + expected);
  };
}

struct OptionSpec {
  const char* key;
  const char* help;  // the help lines, "    -o key=..." first
  Apply apply;
};

// graphfs's options: name, help and parser. Every one needs a value.
const std::vector<OptionSpec>& Options() {
  static const std::vector<OptionSpec> table = {
      {"cache_size",
       "    -o cache_size=SIZE|N%   shared chunk cache budget (default 25% of RAM; 0: read-ahead only)\n",
       [](MountOptions& o, const std::string&, const std::string& value) -> Status {
         auto v = ParseSizeOrPercent(value, 100);
         if (!v.ok()) return v.error().Wrap("option cache_size");
         o.cache_size = value;
         o.cache_size_given = true;
         return Status::Ok();
       }},
      {"memory",
       "    -o memory=SIZE|N%       one budget for graph bytes in the daemon: cache, staging, and each\n"
       "                            graph's LP window and index while it has jobs (the cache gets what\n"
       "                            the others leave, at least 1/8; staging and lp_memory at most 1/4\n"
       "                            each). Instead of cache_size (default: none, cache_size alone)\n",
       [](MountOptions& o, const std::string&, const std::string& value) -> Status {
         auto v = ParseSizeOrPercent(value, 100);
         if (!v.ok()) return v.error().Wrap("option memory");
         if (*v == 0) return Error(EINVAL, "option memory=" + value + ": a budget of nothing (leave memory= out for none)");
         o.memory = value;
         return Status::Ok();
       }},
      {"cache_policy",
       "    -o cache_policy=priority|lru  eviction: predicted next read, then readers in the window x mean\n"
       "                            source degree (default), or least recently used (for comparison)\n",
       OneOf(&MountOptions::cache_policy, volume::CachePolicyNames())},
      {"cache_window",
       "    -o cache_window=SECONDS how long a read counts towards a unit's priority (default 600; must\n"
       "                            cover an iteration of the slowest job, or the cache forgets too soon)\n",
       Count(&MountOptions::cache_window, 1, 86400)},
      {"cache_trace", "    -o cache_trace=FILE     append every cache unit lookup to FILE (time pid file unit bytes)\n",
       Text(&MountOptions::cache_trace)},
      {"threads", "    -o threads=N            FUSE worker threads at most (default 128: a reader\n"
       "                            blocked on a disk read holds one)\n",
       Count(&MountOptions::threads, 1, 1024)},
      {"passthrough",
       "    -o passthrough=auto|off ordinary (not striped) files are read and written by the kernel\n"
       "                            itself (FUSE passthrough, Linux >= 6.9, as root) where possible\n"
       "                            (default auto), or all through the daemon (off)\n",
       OneOf(&MountOptions::passthrough, {"auto", "off"})},
      {"io", "    -o io=perdisk|shared    one queue per disk (default), or one shared queue\n",
       OneOf(&MountOptions::io, {"perdisk", "shared"})},
      {"io_workers",
       "    -o io_workers=N         io_uring workers per disk (perdisk, default 1) or in the pool (shared,\n"
       "                            default: number of disks)\n",
       Count(&MountOptions::io_workers, 1, 256)},
      {"queue_depth", "    -o queue_depth=N        requests in flight per I/O worker (default 4)\n",
       Count(&MountOptions::queue_depth, 1, 1024)},
      {"nice",
       "    -o nice=N               the daemon's CPU priority, -20..19 (default -5: its I/O and LP loader\n"
       "                            threads wake ahead of the jobs' compute threads, so the disks do not\n"
       "                            idle while the jobs fill the cores; 0: as inherited)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         int v = 0;
         auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
         if (ec != std::errc() || ptr != value.data() + value.size() || v < -20 || v > 19)
           return Error(EINVAL, "option " + key + "=" + value + ": expected a whole number from -20 to 19");
         o.nice = v;
         return Status::Ok();
       }},
      {"readahead",
       "    -o readahead=N          stripe units read ahead of sequential readers (default: each\n"
       "                            disk's depth, 2 units or 0.1 s of its reading; 0 disables)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseCount(key, value, 0, 4096);
         if (!v.ok()) return v.error();
         o.readahead_off = *v == 0;
         o.readahead_units = *v;
         return Status::Ok();
       }},
      {"readahead_mem",
       "    -o readahead_mem=SIZE   ceiling of the memory for units loaded ahead of their readers: an\n"
       "                            equal share per stream, beyond it only for idle disks (default 1G)\n",
       Size(&MountOptions::readahead_mem)},
      {"kernel_readahead",
       "    -o kernel_readahead=SIZE  the kernel's read-ahead window for buffered readers of the\n"
       "                            mount (default and 0: the kernel's own, 128K)\n",
       Size(&MountOptions::kernel_readahead, 1ull << 30, "1G")},
      {"direct", "    -o direct=0|1           O_DIRECT on part files for aligned reads (default 1)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseBool(key, value);
         if (!v.ok()) return v.error();
         o.direct = *v;
         return Status::Ok();
       }},
      {"disks", "    -o disks=D0:D1:...      disk directories, overriding the registered paths (same order)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         o.disks = SplitList(value, ':');
         for (const auto& d : o.disks)
           if (d.empty()) return Error(EINVAL, "option " + key + "=" + value + ": empty disk path");
         return Status::Ok();
       }},
      {"lp",
       "    -o lp=vertex|chunk      logical partitions hold only the runs of active sources' edges of\n"
       "                            source-sorted chunks where the read-cost model favours it (default),\n"
       "                            or whole chunks\n",
       OneOf(&MountOptions::lp, {"vertex", "chunk"})},
      {"lp_loader",
       "    -o lp_loader=direct|cache  how the LP loader reads whole chunks that are not cached: straight\n"
       "                            from the disks, 16 MiB batches, eight in flight over the disks, then\n"
       "                            offered to the cache (default); or through the cache, unit by unit\n"
       "                            with read-ahead\n",
       OneOf(&MountOptions::lp_loader, {"direct", "cache"})},
      {"lp_diagonal",
       "    -o lp_diagonal=0|1      among chunks of equal priority, LPs take those of diagonal blocks\n"
       "                            (i, i) first, where reentry gains most (default 1)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseBool(key, value);
         if (!v.ok()) return v.error();
         o.lp_diagonal = *v;
         return Status::Ok();
       }},
      {"lp_memory",
       "    -o lp_memory=SIZE       memory for logical partitions loaded ahead and held by jobs: LPs\n"
       "                            load ahead while they fit, each at most a quarter of it (default 512M)\n",
       SizeAtLeast(&MountOptions::lp_memory, 64u << 10, "at least 64K (four LPs of 16K)")},
      {"disk_bandwidth",
       "    -o disk_bandwidth=SIZE  read-cost model: sequential bytes per second of one disk (default: what\n"
       "                            graphfs-calibrate stored on the disks, else 100M)\n",
       SizeAtLeast(&MountOptions::disk_bandwidth, 1, "must be above 0")},
      {"request_cost_us",
       "    -o request_cost_us=N    read-cost model: microseconds one more read request costs (default:\n"
       "                            graphfs-calibrate's, else 100)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseCount(key, value, 0, 10000000);
         if (!v.ok()) return v.error();
         o.request_cost_us = *v;
         return Status::Ok();
       }},
      {"log", "    -o log=FILE             log file (default: stderr; syslog-free)\n", Text(&MountOptions::log_file)},
      {"timeout", "    -o timeout=SECONDS      attribute and entry cache timeout (default 1)\n",
       [](MountOptions& o, const std::string& key, const std::string& value) -> Status {
         auto v = ParseCount(key, value, 0, 3600);
         if (!v.ok()) return v.error();
         o.timeout = *v;
         return Status::Ok();
       }},
  };
  return table;
}

}  // namespace

Result<bool> ApplyMountOption(MountOptions& o, const std::string& option) {
  const size_t eq = option.find('=');
  const std::string key = option.substr(0, eq);
  const bool has_value = eq != std::string::npos;
  const std::string value = has_value ? option.substr(eq + 1) : "";
  // libfuse needs these too; graphfs notes them.
  if (key == "ro" || key == "rw") {
    o.read_only = key == "ro";
    return false;
  }
  for (const OptionSpec& spec : Options()) {
    if (key != spec.key) continue;
    if (!has_value || value.empty()) return Error(EINVAL, "option " + key + " needs a value (" + key + "=...)");
    GRAPHFS_RETURN_IF_ERROR(spec.apply(o, key, value));
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
  if (!o.memory.empty()) {
    if (o.cache_size_given)
      return Error(EINVAL, "options memory= and cache_size= are two budgets for one cache: give one of them");
    auto m = ParseSizeOrPercent(o.memory, ram);
    if (!m.ok()) return m.error().Wrap("option memory");
    if (ram > 0 && *m > ram) return Error(EINVAL, "option memory=" + o.memory + " is larger than RAM");
    if (*m == 0) return Error(EINVAL, "option memory=" + o.memory + ": a budget of nothing");
    o.memory_bytes = *m;
  }
  return Status::Ok();
}

std::string MountOptionsHelp() {
  std::string help = "graphfs options (-o key=value, also in fstab):\n";
  for (const OptionSpec& spec : Options()) help += spec.help;
  help += "graphfs always adds default_permissions: the kernel checks permissions as ext4 would.\n";
  return help;
}

}  // namespace graphfs
