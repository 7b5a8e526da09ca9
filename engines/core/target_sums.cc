#include "engines/core/target_sums.h"

#include <algorithm>

namespace graphfs::engine {

namespace {

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
    w.capacity = range.size();
    // Past an eighth of the window, scanning it at the flush costs less than the list.
    w.touched_limit = std::max<uint64_t>(64, w.capacity / 8);
    w.touched.reserve(w.touched_limit);
  }
  w.begin = range.begin;
  w.size = range.size();
  return true;
}

void TargetSums::Flush(Window& w) {
  if (w.size == 0) return;
  double* acc = w.acc.get();
  if (w.all) {
    for (uint64_t i = 0; i < w.size; ++i) {
      if (acc[i] != 0.0) {
        AddTo(sums_, w.begin + i, acc[i]);
        acc[i] = 0.0;
      }
    }
  } else {
    // A slot listed twice (it went back to zero in between) is moved once: the second sees 0.
    for (uint32_t i : w.touched) {
      if (acc[i] != 0.0) {
        AddTo(sums_, w.begin + i, acc[i]);
        acc[i] = 0.0;
      }
    }
  }
  w.touched.clear();
  w.all = false;
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
