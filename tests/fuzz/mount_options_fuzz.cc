// Fuzzes the mount option parser (fusefs/mount_options.h) the way the command line
// (fusefs/command_line.cc) drives it: the input is an -o list, split on commas, each item given
// to ApplyMountOption; then the machine-dependent sizes are resolved. Checks: graphfs's keys are
// claimed and everything else is left to libfuse, refusals name the option, and whatever was
// accepted is within the documented ranges.
#include <unistd.h>

#include <set>
#include <string>

#include "common/size_parse.h"
#include "fusefs/mount_options.h"
#include "tests/fuzz/fuzz_check.h"

namespace graphfs::fuzz {
namespace {

// The table's own keys (a second list here once missed two new options).
const std::set<std::string>& Ours() {
  static const std::set<std::string> keys = [] {
    std::set<std::string> k;
    for (const std::string& key : MountOptionKeys()) k.insert(key);
    return k;
  }();
  return keys;
}

void CheckRanges(const MountOptions& o) {
  const volume::VolumeOptions& v = o.volume;
  FUZZ_CHECK(o.threads >= 1 && o.threads <= 1024, "threads=%u", o.threads);
  FUZZ_CHECK(v.cache_window >= 1 && v.cache_window <= 86400, "cache_window=%u", v.cache_window);
  FUZZ_CHECK(v.io_workers <= 256, "io_workers=%u", v.io_workers);
  FUZZ_CHECK(v.queue_depth >= 1 && v.queue_depth <= volume::MaxQueueDepth(), "queue_depth=%u", v.queue_depth);
  FUZZ_CHECK(v.read_ahead.units <= 4096 && (!v.read_ahead.off || v.read_ahead.units == 0), "readahead=%llu",
             static_cast<unsigned long long>(v.read_ahead.units));
  FUZZ_CHECK(o.kernel_readahead <= (1ull << 30), "kernel_readahead=%llu",
             static_cast<unsigned long long>(o.kernel_readahead));
  FUZZ_CHECK(o.timeout >= 0 && o.timeout <= 3600, "timeout=%f", o.timeout);
  for (const std::string& d : v.disks) FUZZ_CHECK(!d.empty(), "empty disk path accepted");
  FUZZ_CHECK(o.passthrough == PassthroughMode::kAuto || o.passthrough == PassthroughMode::kOff, "passthrough=%d",
             static_cast<int>(o.passthrough));
  FUZZ_CHECK(v.lp_granularity == volume::LpGranularity::kVertex || v.lp_granularity == volume::LpGranularity::kChunk,
             "lp=%d", static_cast<int>(v.lp_granularity));
  FUZZ_CHECK(v.seconds_per_request == -1 || (v.seconds_per_request >= 0 && v.seconds_per_request <= 10.0),
             "request_cost_us gave %f s", v.seconds_per_request);
  FUZZ_CHECK(v.seq_bytes_per_second >= 0, "disk_bandwidth gave %f", v.seq_bytes_per_second);
  FUZZ_CHECK(v.lp_memory >= (64u << 10), "lp_memory=%llu", static_cast<unsigned long long>(v.lp_memory));
  FUZZ_CHECK(!o.cache_size.percent || o.cache_size.value <= 100, "cache_size=%s", Shown(o.cache_size.text).c_str());
  FUZZ_CHECK(o.nice >= -20 && o.nice <= 19, "nice=%d", o.nice);
  if (o.memory) {
    FUZZ_CHECK(o.memory->value > 0 && (!o.memory->percent || o.memory->value <= 100), "memory '%s' kept but 0 or above 100%%",
               Shown(o.memory->text).c_str());
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
    if (opt.empty()) continue;  // as command_line.cc
    const std::string key = opt.substr(0, opt.find('='));
    auto ours = ApplyMountOption(o, opt);
    if (!ours.ok()) {
      // graphfs exits with status 2 and this message: it must say which option.
      CheckRefusal(ours.error(), EINVAL);
      FUZZ_CHECK(Ours().count(key) == 1, "refused '%s', which is libfuse's", Shown(opt).c_str());
      FUZZ_CHECK(StartsWith(ours.error().message(), "option " + key), "'%s' refused with: %s", Shown(opt).c_str(),
                 Shown(ours.error().message()).c_str());
      return 0;
    }
    FUZZ_CHECK(*ours == (Ours().count(key) == 1), "'%s' claimed=%d", Shown(opt).c_str(), *ours);
    if (key == "ro") FUZZ_CHECK(o.volume.read_only, "ro not seen");
    if (key == "rw") FUZZ_CHECK(!o.volume.read_only, "rw not seen");
    CheckRanges(o);
  }
  Status resolved = ResolveMountOptions(o);
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t ram = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  if (resolved.ok()) {
    FUZZ_CHECK(o.volume.cache_bytes <= ram, "cache of %llu bytes, RAM %llu",
               static_cast<unsigned long long>(o.volume.cache_bytes), static_cast<unsigned long long>(ram));
    FUZZ_CHECK(o.volume.memory_bytes <= ram && (!o.memory == (o.volume.memory_bytes == 0)), "memory of %llu bytes, RAM %llu",
               static_cast<unsigned long long>(o.volume.memory_bytes), static_cast<unsigned long long>(ram));
  } else {
    CheckRefusal(resolved.error(), EINVAL);
    const std::string& m = resolved.error().message();
    FUZZ_CHECK(StartsWith(m, "option cache_size") || StartsWith(m, "option memory") ||
                   StartsWith(m, "options memory= and cache_size="),
               "%s", m.c_str());
  }
  return 0;
}
