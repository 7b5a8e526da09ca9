#include "engines/core/target_sums.h"

#include <algorithm>
#include <bit>

namespace graphfs::engine {

namespace {

// Words of the touched-groups bitmap of a window of `size` slots (64 groups a word).
uint64_t GroupWords(uint64_t size, uint64_t group_shift) {
  const uint64_t per_word = uint64_t{64} << group_shift;
  return (size + per_word - 1) / per_word;
}

void AddTo(double* sums, uint64_t target, double value) {
  std::atomic_ref<double>(sums[target]).fetch_add(value, std::memory_order_relaxed);
}

}  // namespace

TargetSums::TargetSums(double* sums, grid::PartitionRange ranges, int workers)
    : sums_(sums), ranges_(ranges), windows_(static_cast<size_t>(std::max(workers, 1))) {}

TargetSums::~TargetSums() { FlushAll(); }

bool TargetSums::Move(Window& w, uint32_t target) {
  if (target >= w.direct_begin && target < w.direct_end) return false;
  Flush(w);
  const grid::VertexRange range = ranges_.Range(ranges_.PartitionOf(target));
  if (range.size() > kMaxWindowVertices) {
    w.begin = 0;
    w.size = 0;
    w.direct_begin = range.begin;
    w.direct_end = range.end;
    return false;
  }
  if (w.capacity < range.size()) {
    // Every worker's windows get the size of the largest partition seen, once: value-initialized
    // (zeros), and kept zero by Flush.
    w.acc = std::make_unique<double[]>(range.size());
    w.groups = std::make_unique<uint64_t[]>(GroupWords(range.size(), kGroupShift));
    w.capacity = range.size();
  }
  w.begin = range.begin;
  w.size = range.size();
  return true;
}

void TargetSums::Flush(Window& w) {
  if (w.size == 0) return;
  double* acc = w.acc.get();
  const uint64_t words = GroupWords(w.size, kGroupShift);
  for (uint64_t word = 0; word < words; ++word) {
    for (uint64_t bits = w.groups[word]; bits != 0; bits &= bits - 1) {
      const uint64_t first = (word * 64 + static_cast<uint64_t>(std::countr_zero(bits))) << kGroupShift;
      const uint64_t end = std::min(first + (uint64_t{1} << kGroupShift), w.size);
      for (uint64_t i = first; i < end; ++i) {
        if (acc[i] != 0.0) {
          AddTo(sums_, w.begin + i, acc[i]);
          acc[i] = 0.0;
        }
      }
    }
    w.groups[word] = 0;
  }
}

void TargetSums::FlushAll() {
  for (Window& w : windows_) Flush(w);
}

uint64_t TargetSums::Pending() const {
  uint64_t pending = 0;
  for (const Window& w : windows_) {
    for (uint64_t i = 0; i < w.size; ++i) pending += w.acc[i] != 0.0;
  }
  return pending;
}

}  // namespace graphfs::engine
