#include "cache/stream_predictor.h"

#include <algorithm>
#include <limits>

namespace graphfs::cache {

namespace {
// A stream's rear reader (a thread reading behind the leading one) that read this recently is
// still on its segment.
constexpr int64_t kRearReaderIdleNs = 1'000'000'000;
// Whether a stream's process still exists is asked again after this long.
constexpr int64_t kAliveRecheckNs = 1'000'000'000;
}  // namespace

void StreamPredictor::Note(const UnitKey& key, uint64_t file_units, uint32_t pid, int64_t now) {
  uint64_t& n = file_units_[key.file];
  n = file_units != 0 ? file_units : std::max(n, key.index + 1);
  Stream& s = streams_[{key.file, pid}];
  const uint64_t idx = key.index;
  if (s.last_ns == 0 || now - s.last_ns > options_.stream_idle_ns) {
    s = Stream{idx, now, now, 0.0, true, 0, idx, 0};  // liveness asked at its first prediction
    return;
  }
  s.last_ns = now;
  if (idx == s.index) return;
  // Requests of one pass arrive out of order (one reader thread per segment): a short step
  // back is a rear reader, not a new pass.
  if (idx < s.index && s.index - idx < std::max<uint64_t>(2, n / 4)) {
    s.trail = idx;
    s.trail_ns = now;
    return;
  }
  const uint64_t step = idx > s.index ? idx - s.index : n - s.index + idx;
  const double pace = static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, now - s.entered_ns));
  s.units_per_ns = s.units_per_ns <= 0 ? pace : 0.8 * s.units_per_ns + 0.2 * pace;
  s.index = idx;
  s.entered_ns = now;
}

double StreamPredictor::NextUse(const UnitView& unit, int64_t now) {
  // A process between two requests inside the unit needs the rest of it now; its stream,
  // positioned on the unit, would otherwise predict its next read only one pass later.
  if (unit.PartWay(now)) return 0.0;
  const UnitKey& key = unit.key();
  double best = std::numeric_limits<double>::infinity();
  const uint64_t n = std::max<uint64_t>(file_units_[key.file], key.index + 1);
  for (auto it = streams_.lower_bound({key.file, 0}); it != streams_.end() && it->first.first == key.file; ++it) {
    Stream& s = it->second;
    if (s.units_per_ns <= 0 || now - s.last_ns > options_.stream_idle_ns) continue;
    if (options_.process_alive && (s.alive_checked_ns == 0 || now - s.alive_checked_ns > kAliveRecheckNs)) {
      s.alive = options_.process_alive(it->first.second);
      s.alive_checked_ns = now;
    }
    if (!s.alive) continue;
    const auto ahead = [n](uint64_t from, uint64_t to) { return to >= from ? to - from : n - from + to; };
    uint64_t dist = ahead(s.index, key.index);
    // Between the rear reader and the leading one, a unit this process has not taken in this
    // visit is what the rear reader reads next.
    if (s.trail_ns != 0 && now - s.trail_ns <= kRearReaderIdleNs && ahead(s.trail, key.index) < ahead(s.trail, s.index) &&
        !unit.TakenInVisit(it->first.second, now))
      dist = ahead(s.trail, key.index);
    if (dist == 0) dist = n;  // it is reading it now: the next pass
    best = std::min(best, static_cast<double>(dist) / s.units_per_ns);
  }
  return best;
}

void StreamPredictor::Age(int64_t now) {
  for (auto it = streams_.begin(); it != streams_.end();)
    it = now - it->second.last_ns > 10 * options_.stream_idle_ns ? streams_.erase(it) : std::next(it);
}

}  // namespace graphfs::cache
