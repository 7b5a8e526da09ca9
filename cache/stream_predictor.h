// When will a unit be read next? Graph jobs stream a file in passes, each at its own pace,
// so the predictor follows every reading process's position and pace in each file and
// answers with the time until the nearest live stream behind a unit reaches it (wrapping
// around at the end of the file). Engines read one pass with several threads, each on its
// own segment: a stream's `index` follows the leading reader (the pace is measured on it),
// `trail` the rearmost one, whose reads step back. The priority policy's forward half
// (priority_policy.cc); not thread-safe (the cache calls it under its lock).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "cache/eviction_policy.h"

namespace graphfs::cache {

class StreamPredictor {
 public:
  explicit StreamPredictor(const EvictionPolicyOptions& options) : options_(options) {}

  // A lookup of unit `key` by `pid`; `file_units` as in EvictionPolicy::NoteLookup.
  void Note(const UnitKey& key, uint64_t file_units, uint32_t pid, int64_t now);
  // Nanoseconds until `unit` is read next: 0 while a process is part-way through it, else
  // when the nearest live stream behind it reaches it; +inf if none will.
  double NextUse(const UnitView& unit, int64_t now);
  // Forgets streams idle for ten times the idle limit.
  void Age(int64_t now);

 private:
  struct Stream {
    uint64_t index = 0;
    int64_t entered_ns = 0, last_ns = 0;
    double units_per_ns = 0;
    bool alive = true;
    int64_t alive_checked_ns = 0;
    uint64_t trail = 0;
    int64_t trail_ns = 0;  // 0: no rear reader seen
  };
  const EvictionPolicyOptions options_;
  std::map<std::pair<uint64_t, uint32_t>, Stream> streams_;  // (file, pid)
  std::unordered_map<uint64_t, uint64_t> file_units_;
};

}  // namespace graphfs::cache
