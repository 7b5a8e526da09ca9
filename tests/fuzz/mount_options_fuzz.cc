// Fuzzes the mount option parser (fusefs/mount_options.h) the way main.cc drives it: the
// input is an -o list, split on commas, each item given to ApplyMountOption; then the
// machine-dependent sizes are resolved. Checks: graphfs's keys are claimed and everything
// else is left to libfuse, refusals name the option, and whatever was accepted is within
// the documented ranges.
#include <unistd.h>

#include <set>
#include <string>

#include "common/size_parse.h"
#include "fusefs/mount_options.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

const std::set<std::string> kOurs = {"cache_size", "threads",      "cache_policy",   "cache_window",
                                     "cache_trace", "io",          "io_workers",     "queue_depth",
                                     "readahead",  "readahead_mem", "kernel_readahead", "direct",
                                     "disks",      "log",          "timeout",        "passthrough",
                                     "lp",         "lp_loader",    "lp_diagonal",    "lp_memory",    "disk_bandwidth", "request_cost_us",
                                     "memory",     "nice"};

void CheckRanges(const MountOptions& o) {
  FUZZ_CHECK(o.threads >= 1 && o.threads <= 1024, "threads=%u", o.threads);
  FUZZ_CHECK(o.cache_window >= 1 && o.cache_window <= 86400, "cache_window=%u", o.cache_window);
  FUZZ_CHECK(o.io_workers <= 256, "io_workers=%u", o.io_workers);
  FUZZ_CHECK(o.queue_depth >= 1 && o.queue_depth <= 1024, "queue_depth=%u", o.queue_depth);
  FUZZ_CHECK(o.readahead_units <= 4096 && (!o.readahead_off || o.readahead_units == 0),
             "readahead=%u", o.readahead_units);
  FUZZ_CHECK(o.kernel_readahead <= (1ull << 30), "kernel_readahead=%llu",
             static_cast<unsigned long long>(o.kernel_readahead));
  FUZZ_CHECK(o.timeout >= 0 && o.timeout <= 3600, "timeout=%f", o.timeout);
  for (const std::string& d : o.disks) FUZZ_CHECK(!d.empty(), "empty disk path accepted");
  FUZZ_CHECK(o.passthrough == "auto" || o.passthrough == "off", "passthrough=%s", Shown(o.passthrough).c_str());
  FUZZ_CHECK(o.lp == "vertex" || o.lp == "chunk", "lp=%s", Shown(o.lp).c_str());
  FUZZ_CHECK(o.request_cost_us >= -1 && o.request_cost_us <= 10000000, "request_cost_us=%lld",
             static_cast<long long>(o.request_cost_us));
  auto cache = ParseSizeOrPercent(o.cache_size, 100);
  FUZZ_CHECK(cache.ok(), "cache_size '%s' kept but unparsable", Shown(o.cache_size).c_str());
  FUZZ_CHECK(o.nice >= -20 && o.nice <= 19, "nice=%d", o.nice);
  if (!o.memory.empty()) {
    auto memory = ParseSizeOrPercent(o.memory, 100);
    FUZZ_CHECK(memory.ok() && *memory > 0, "memory '%s' kept but unparsable or 0", Shown(o.memory).c_str());
  }
}

}  // namespace
}  // namespace graphfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphfs;
  using namespace graphfs::fuzz;
  const std::string list(reinterpret_cast<const char*>(data), size);
  MountOptions o;
  for (const std::string& opt : SplitList(list, ',')) {
    if (opt.empty()) continue;  // as main.cc
    const std::string key = opt.substr(0, opt.find('='));
    auto ours = ApplyMountOption(o, opt);
    if (!ours.ok()) {
      // main.cc exits with status 2 and this message: it must say which option.
      CheckRefusal(ours.error(), EINVAL);
      FUZZ_CHECK(kOurs.count(key) == 1, "refused '%s', which is libfuse's", Shown(opt).c_str());
      FUZZ_CHECK(StartsWith(ours.error().message(), "option " + key), "'%s' refused with: %s", Shown(opt).c_str(),
                 Shown(ours.error().message()).c_str());
      return 0;
    }
    FUZZ_CHECK(*ours == (kOurs.count(key) == 1), "'%s' claimed=%d", Shown(opt).c_str(), *ours);
    if (key == "ro") FUZZ_CHECK(o.read_only, "ro not seen");
    if (key == "rw") FUZZ_CHECK(!o.read_only, "rw not seen");
    CheckRanges(o);
  }
  Status resolved = ResolveMountOptions(o);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t ram = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  if (resolved.ok()) {
    FUZZ_CHECK(o.cache_bytes <= ram, "cache of %llu bytes, RAM %llu", static_cast<unsigned long long>(o.cache_bytes),
               static_cast<unsigned long long>(ram));
    FUZZ_CHECK(o.memory_bytes <= ram && (o.memory.empty() == (o.memory_bytes == 0)), "memory of %llu bytes, RAM %llu",
               static_cast<unsigned long long>(o.memory_bytes), static_cast<unsigned long long>(ram));
  } else {
    CheckRefusal(resolved.error(), EINVAL);
    const std::string& m = resolved.error().message();
    FUZZ_CHECK(StartsWith(m, "option cache_size") || StartsWith(m, "option memory") ||
                   StartsWith(m, "options memory= and cache_size="),
               "%s", m.c_str());
  }
  return 0;
}
