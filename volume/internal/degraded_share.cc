#include "volume/internal/degraded_share.h"

#include <algorithm>

#include "striping/striped_file.h"

namespace graphfs::volume {

uint64_t DegradedShare::BudgetedBytes(uint64_t staging) { return std::clamp(staging, kMinBytes, kDefaultBytes); }

DegradedShare::DegradedShare(MemoryBudget& budget, uint64_t staging)
    : budget_(budget),
      bytes_(budget.enabled() ? BudgetedBytes(staging) : kDefaultBytes),
      // Under a budget nothing is kept until the budget has set the capacity aside (Opened).
      pool_(std::make_shared<RowSharePool>(budget.enabled() ? 0 : kDefaultBytes)) {}

void DegradedShare::Opened(const StripedFile& file) {
  if (!file.degraded() || !budget_.enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (reserved_) return;
  reserved_ = true;
  reservation_ = budget_.Reserve(bytes_);  // the cache shrinks first, then the pool may fill
  pool_->SetCapacity(bytes_);
}

void DegradedShare::Release(const std::function<bool()>& degraded) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!reserved_ || degraded()) return;
  // The blocks first, then the bytes: the budget never counts on memory the pool still holds.
  pool_->SetCapacity(0);
  reservation_.Release();
  reserved_ = false;
}

DegradedShare::State DegradedShare::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {pool_->stats(), reservation_.bytes()};
}

}  // namespace graphfs::volume
