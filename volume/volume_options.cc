// What volume_options.h says of the cache's policies, from the cache's registry (kept out of
// the header, so that option parsers see nothing of cache/; the mount-option fuzzer compiles
// this file with the option table alone).
#include "volume/volume_options.h"

#include "cache/eviction_policy.h"

namespace graphfs::volume {

const std::vector<std::string>& CachePolicyNames() { return cache::EvictionPolicyNames(); }

std::vector<std::pair<std::string, std::string>> CachePolicySummaries() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const cache::EvictionPolicyInfo& p : cache::EvictionPolicies()) out.emplace_back(p.name, p.summary);
  return out;
}

}  // namespace graphfs::volume
