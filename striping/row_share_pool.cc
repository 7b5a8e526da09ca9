#include "striping/row_share_pool.h"

#include <algorithm>

#include "striping/row_share.h"

namespace graphfs {

void RowSharePool::SetCapacity(uint64_t bytes) {
  capacity_.store(bytes, std::memory_order_relaxed);
  Trim(nullptr);
}

RowSharePool::Stats RowSharePool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {capacity(), held_.load(std::memory_order_relaxed), peak_.load(std::memory_order_relaxed), shares_.size()};
}

void RowSharePool::Join(RowShare* share) {
  std::lock_guard<std::mutex> lock(mu_);
  shares_.push_back(share);
}

void RowSharePool::Leave(RowShare* share) {
  std::lock_guard<std::mutex> lock(mu_);
  shares_.erase(std::remove(shares_.begin(), shares_.end(), share), shares_.end());
}

void RowSharePool::Hold(uint64_t bytes) {
  const uint64_t held = held_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (held > peak && !peak_.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
  }
}

void RowSharePool::Trim(const RowShare* self) {
  if (Over() == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (RowShare* s : shares_) {
    const uint64_t over = Over();
    if (over == 0) return;
    if (s != self) s->DropOldest(over);
  }
}

}  // namespace graphfs
