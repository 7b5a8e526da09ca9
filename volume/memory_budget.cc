#include "volume/memory_budget.h"

#include <algorithm>
#include <utility>

#include "cache/chunk_cache.h"

namespace graphfs::volume {

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryBudget::Reservation::Release() {
  if (budget_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(budget_->mu_);
    budget_->reserved_ -= bytes_;
    --budget_->reservations_;
    budget_->Apply();
  }
  budget_ = nullptr;
  bytes_ = 0;
}

void MemoryBudget::Attach(cache::ChunkCache* cache) {
  std::lock_guard<std::mutex> lock(mu_);
  cache_ = cache;
  Apply();
}

MemoryBudget::Reservation MemoryBudget::Reserve(uint64_t bytes) {
  Reservation r;
  if (!enabled()) return r;
  std::lock_guard<std::mutex> lock(mu_);
  reserved_ += bytes;
  ++reservations_;
  r.budget_ = this;
  r.bytes_ = bytes;
  Apply();
  return r;
}

uint64_t MemoryBudget::CacheCapacity(uint64_t reserved) const {
  const uint64_t floor = total_ / 8;
  const uint64_t set_aside = staging_ + reserved;
  return std::max(floor, total_ > set_aside ? total_ - set_aside : 0);
}

void MemoryBudget::Apply() {
  if (enabled() && cache_ != nullptr) cache_->SetCapacity(CacheCapacity(reserved_));
}

MemoryBudget::State MemoryBudget::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {total_, staging_, reserved_, reservations_, enabled() ? CacheCapacity(reserved_) : 0};
}

}  // namespace graphfs::volume
