// The priority policy (the default): forward-looking first, an online approximation of
// Belady's MIN. The unit the stream predictor (stream_predictor.h) expects to be read
// furthest in the future goes first, and a newcomer read later than every resident is not
// admitted. Between units with no prediction (no live stream will reach them) or equal
// ones, the static rank decides: visits within the cache's window × the unit's weight (mean
// source degree of an indexed chunk: GraphSO's hub-heavy chunks first; 1 for a block), then
// recency. A newcomer must beat a resident to evict it, so a scan larger than the cache
// keeps the cache's content instead of flushing it, as LRU would. At an equal rank it beats
// a resident nobody read since the newcomer's own previous visit: a unit read again after
// another one was last read is the likelier of the two to be read again (the second half of
// LRU-2). In a cyclic scan every unit the pass has not reached yet was read after the
// newcomer in the pass before, so the part kept stays; a file read once (a degree pass) is
// not read after anything a later pass returns to, so its units give way at the second pass
// rather than when their visits leave the window.
#include <algorithm>

#include "cache/eviction_policy.h"
#include "cache/stream_predictor.h"

namespace graphfs::cache {

namespace {

class PriorityPolicy final : public EvictionPolicy {
 public:
  explicit PriorityPolicy(const EvictionPolicyOptions& options)
      : streams_(options), predict_(options.predict_streams) {}

  const char* name() const override { return "priority"; }

  void NoteLookup(const UnitKey& key, uint64_t file_units, uint32_t pid, int64_t now) override {
    if (predict_) streams_.Note(key, file_units, pid, now);
  }

  double Rank(int visits, double weight) const override { return visits * weight; }

  void ChooseVictims(const EvictionCandidate& newcomer, const std::vector<EvictionCandidate>& residents, uint64_t need,
                     int64_t now, std::vector<size_t>* victims) override {
    // Read furthest in the future first (no prediction = never), then lowest static rank;
    // only units the newcomer beats.
    struct Scored {
      double next_use;
      size_t at;
    };
    std::vector<Scored> order;
    order.reserve(residents.size());
    // Without streams every unit's next use is the same: the static rank decides.
    auto next_use = [&](const UnitView& unit) { return predict_ ? streams_.NextUse(unit, now) : 0.0; };
    for (size_t i = 0; i < residents.size(); ++i) order.push_back({next_use(*residents[i].unit), i});
    std::stable_sort(order.begin(), order.end(), [](const Scored& a, const Scored& b) { return a.next_use > b.next_use; });
    const double mine = next_use(*newcomer.unit);
    const auto beaten = [&](const EvictionCandidate& resident) {
      if (resident.rank != newcomer.rank) return resident.rank < newcomer.rank;
      return newcomer.last_visit_ns != 0 && resident.last_visit_ns < newcomer.last_visit_ns;
    };
    uint64_t freed = 0;
    for (const Scored& c : order) {
      if (freed >= need) break;
      if (c.next_use < mine) break;
      if (c.next_use == mine && !beaten(residents[c.at])) break;
      victims->push_back(c.at);
      freed += residents[c.at].charge;
    }
  }

  void Age(int64_t now) override { streams_.Age(now); }

 private:
  StreamPredictor streams_;
  const bool predict_;
};

}  // namespace

std::unique_ptr<EvictionPolicy> NewPriorityPolicy(const EvictionPolicyOptions& options) {
  return std::make_unique<PriorityPolicy>(options);
}

}  // namespace graphfs::cache
