// Which admitted unit leaves the cache when a newcomer needs room: a policy behind one
// interface, one file per policy (lru_policy.cc, priority_policy.cc), chosen by name
// (`cache_policy=` of the mount) through NewEvictionPolicy.
//
// The cache keeps its admitted units in one order, lowest first: (Rank, recency). A policy
// sets the first field and may reorder the candidates further when it picks victims (the
// priority policy puts the units read furthest in the future first). The cache calls a
// policy only under its own lock: policies need no locking of their own.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace graphfs::cache {

struct UnitKey {
  uint64_t file = 0;   // cache-wide file id (stable across opens: a hash of the striped file's id)
  uint64_t index = 0;  // unit number inside the file
  auto operator<=>(const UnitKey&) const = default;
};

// For hash maps keyed by unit.
struct UnitKeyHash {
  size_t operator()(const UnitKey& k) const noexcept { return k.file * 0x9E3779B97F4A7C15ull ^ k.index; }
};

// What a policy may ask about a unit in memory.
class UnitView {
 public:
  virtual ~UnitView() = default;
  virtual const UnitKey& key() const = 0;
  // Some process took part of the unit, not all of it, and read from it within the last
  // second: it is in use now.
  virtual bool PartWay(int64_t now_ns) const = 0;
  // `pid` took bytes of the unit in its current visit (one pass over the unit).
  virtual bool TakenInVisit(uint32_t pid, int64_t now_ns) const = 0;
};

struct EvictionCandidate {
  const UnitView* unit = nullptr;
  double rank = 0;      // Rank() when it was last scored
  uint64_t charge = 0;  // bytes it frees (a newcomer: it needs)
  // When some process last read it: a resident's latest visit; a newcomer's visit before the
  // one that brought it in. 0: none known.
  int64_t last_visit_ns = 0;
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  virtual const char* name() const = 0;
  // A lookup of `key` by process `pid` (a hit, a miss, or a read around the cache).
  // `file_units`: units in the file, 0 if unknown.
  virtual void NoteLookup(const UnitKey& key, uint64_t file_units, uint32_t pid, int64_t now_ns) = 0;
  // The first field of a unit's place in the eviction order (lower goes first; equal ranks
  // fall back to recency): `visits` are the passes of processes over the unit within the
  // cache's window, `weight` the unit's own (mean source degree of an indexed chunk).
  virtual double Rank(int visits, double weight) const = 0;
  // Picks from `residents` (unpinned admitted units, lowest in the order first) the units
  // to evict so that `need` bytes are freed for `newcomer` (its rank as the cache weighs it);
  // appends their positions in `residents` to `victims`. It may free fewer bytes: the
  // newcomer is then refused and nothing is evicted.
  virtual void ChooseVictims(const EvictionCandidate& newcomer, const std::vector<EvictionCandidate>& residents,
                             uint64_t need, int64_t now_ns, std::vector<size_t>* victims) = 0;
  // Called now and then (at most every eighth of the cache's window): forget what is stale.
  virtual void Age(int64_t now_ns) { (void)now_ns; }
};

struct EvictionPolicyOptions {
  // Priority policy: a stream that read nothing this long is gone.
  int64_t stream_idle_ns = 10'000'000'000;
  // Priority policy: whether a reading process still exists (a stream of an exited job
  // predicts nothing). Null: every process counts as alive.
  std::function<bool(uint32_t pid)> process_alive;
  // Priority policy: follow the readers' streams (CacheOptions::predict_streams); false: the
  // static rank alone.
  bool predict_streams = true;
};

// The policies by name, the default first: what the factory makes, and what help texts say.
struct EvictionPolicyInfo {
  std::string name;
  std::string summary;  // one line, for help texts
  std::function<std::unique_ptr<EvictionPolicy>(const EvictionPolicyOptions&)> make;
};
const std::vector<EvictionPolicyInfo>& EvictionPolicies();

// The policy called `name` (one of EvictionPolicies()); null for an unknown name.
std::unique_ptr<EvictionPolicy> NewEvictionPolicy(const std::string& name, const EvictionPolicyOptions& options);
// The names NewEvictionPolicy knows, the default first.
const std::vector<std::string>& EvictionPolicyNames();

// The policies (one file each).
std::unique_ptr<EvictionPolicy> NewLruPolicy();
std::unique_ptr<EvictionPolicy> NewPriorityPolicy(const EvictionPolicyOptions& options);

}  // namespace graphfs::cache
