// What volume_options.h says of the cache's policies, from the cache's registry, and of the I/O
// engine's defaults, from the engine's constants (kept out of the header, so that option parsers
// see nothing of cache/ or striping/; the mount-option fuzzer compiles this file with the option
// table alone).
#include "volume/volume_options.h"

#include "cache/eviction_policy.h"
#include "striping/io_engine.h"

namespace graphfs::volume {

unsigned DefaultQueueDepth() { return graphfs::kDefaultQueueDepth; }
unsigned MaxQueueDepth() { return graphfs::kMaxQueueDepth; }
unsigned DefaultIoWorkersPerDisk() { return graphfs::kDefaultWorkersPerDisk; }

const std::vector<std::string>& CachePolicyNames() { return cache::EvictionPolicyNames(); }

std::vector<std::pair<std::string, std::string>> CachePolicySummaries() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const cache::EvictionPolicyInfo& p : cache::EvictionPolicies()) out.emplace_back(p.name, p.summary);
  return out;
}

}  // namespace graphfs::volume
