#include "cache/eviction_policy.h"

namespace graphfs::cache {

const std::vector<std::string>& EvictionPolicyNames() {
  static const std::vector<std::string> names = {"priority", "lru"};
  return names;
}

std::unique_ptr<EvictionPolicy> NewEvictionPolicy(const std::string& name, const EvictionPolicyOptions& options) {
  if (name == "priority") return NewPriorityPolicy(options);
  if (name == "lru") return NewLruPolicy();
  return nullptr;
}

}  // namespace graphfs::cache
