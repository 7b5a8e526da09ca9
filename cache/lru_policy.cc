// Least recently used first (for comparison with the priority policy): every unit ranks
// the same, so the cache's order is recency alone.
#include "cache/eviction_policy.h"

namespace graphfs::cache {

namespace {

class LruPolicy final : public EvictionPolicy {
 public:
  const char* name() const override { return "lru"; }
  void NoteLookup(const UnitKey&, uint64_t, uint32_t, int64_t) override {}
  double Rank(int, double) const override { return 0.0; }
  void ChooseVictims(const EvictionCandidate&, const std::vector<EvictionCandidate>& residents, uint64_t need, int64_t,
                     std::vector<size_t>* victims) override {
    uint64_t freed = 0;
    for (size_t i = 0; i < residents.size() && freed < need; ++i) {
      victims->push_back(i);
      freed += residents[i].charge;
    }
  }
};

}  // namespace

std::unique_ptr<EvictionPolicy> NewLruPolicy() { return std::make_unique<LruPolicy>(); }

}  // namespace graphfs::cache
