#include "cache/eviction_policy.h"

namespace graphfs::cache {

const std::vector<EvictionPolicyInfo>& EvictionPolicies() {
  static const std::vector<EvictionPolicyInfo> policies = {
      {"priority",
       "predicted next read from the jobs' streams, then visits in the window x mean source degree",
       [](const EvictionPolicyOptions& o) { return NewPriorityPolicy(o); }},
      {"lru", "least recently used (for comparison)", [](const EvictionPolicyOptions&) { return NewLruPolicy(); }},
  };
  return policies;
}

const std::vector<std::string>& EvictionPolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const EvictionPolicyInfo& p : EvictionPolicies()) n.push_back(p.name);
    return n;
  }();
  return names;
}

std::unique_ptr<EvictionPolicy> NewEvictionPolicy(const std::string& name, const EvictionPolicyOptions& options) {
  for (const EvictionPolicyInfo& p : EvictionPolicies())
    if (p.name == name) return p.make(options);
  return nullptr;
}

}  // namespace graphfs::cache
