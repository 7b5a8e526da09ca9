#include "volume/internal/memory_budget.h"

#include <algorithm>
#include <utility>

#include "cache/chunk_cache.h"

namespace graphfs::volume {

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    loan_ = std::exchange(other.loan_, false);
  }
  return *this;
}

void MemoryBudget::Reservation::Resize(uint64_t bytes) {
  if (budget_ == nullptr) return;  // set once, before the users that resize it start
  std::lock_guard<std::mutex> lock(budget_->mu_);  // bytes_ too: several threads resize one
  if (bytes == bytes_) return;
  uint64_t& sum = loan_ ? budget_->lent_ : budget_->reserved_;
  sum = sum - bytes_ + bytes;
  bytes_ = bytes;
  budget_->Apply();
}

void MemoryBudget::Reservation::Release() {
  if (budget_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(budget_->mu_);
    if (loan_) {
      budget_->lent_ -= bytes_;
    } else {
      budget_->reserved_ -= bytes_;
      --budget_->reservations_;
    }
    budget_->Apply();
  }
  budget_ = nullptr;
  bytes_ = 0;
}

void MemoryBudget::Attach(cache::ChunkCache* units, cache::ChunkCache* frames) {
  std::lock_guard<std::mutex> lock(mu_);
  // Without a total the cache is what it was made with (cache_size), unless said at construction.
  if (!enabled() && cache_bytes_ == 0 && units != nullptr) cache_bytes_ = units->capacity();
  units_ = units;
  frames_ = units != nullptr ? frames : nullptr;
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

MemoryBudget::Reservation MemoryBudget::Lend(uint64_t bytes) {
  Reservation r;
  if (enabled()) return r;
  std::lock_guard<std::mutex> lock(mu_);
  lent_ += bytes;
  r.budget_ = this;
  r.bytes_ = bytes;
  r.loan_ = true;
  Apply();
  return r;
}

void MemoryBudget::SetUnaccounted(uint64_t resident_bytes) {
  if (!enabled()) return;
  const uint64_t charge = resident_bytes > kUnaccountedAllowance ? resident_bytes - kUnaccountedAllowance : 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (charge == unaccounted_) return;
  unaccounted_ = charge;
  Apply();
}

uint64_t MemoryBudget::StagingCharge(uint64_t peak) const {
  const uint64_t ahead = (peak + kStagingHeadroom + kStagingStep - 1) / kStagingStep * kStagingStep;
  return std::min(ahead, std::max(staging_ceiling_, peak));
}

void MemoryBudget::SetStagingCharge(uint64_t charge) {
  if (charge == staging_) return;
  staging_ = charge;
  Apply();
}

void MemoryBudget::StagingGrew(uint64_t staged_bytes) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (staged_bytes > staging_) SetStagingCharge(StagingCharge(staged_bytes));
}

void MemoryBudget::FollowStaging() {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (units_ == nullptr) return;
  staging_samples_[staging_next_] = units_->staged();
  staging_next_ = (staging_next_ + 1) % kStagingWindow;
  staging_sampled_ = std::min(staging_sampled_ + 1, kStagingWindow);
  uint64_t peak = 0;
  for (size_t i = 0; i < staging_sampled_; ++i) peak = std::max(peak, staging_samples_[i]);
  SetStagingCharge(StagingCharge(peak));
}

void MemoryBudget::Rebalance() {
  std::lock_guard<std::mutex> lock(mu_);
  Apply();
}

void MemoryBudget::SetStanding(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  standing_ = bytes;
  Apply();
}

bool MemoryBudget::DecodedFileFits(uint64_t file, uint64_t file_bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (units_ == nullptr) return false;
  const uint64_t others = units_->used() - std::min(units_->used(), units_->used(file));
  return others + file_bytes <= units_->capacity();
}

uint64_t MemoryBudget::StandingRoom() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (units_ == nullptr) return 0;
  const uint64_t cache = CachePart();
  return cache - std::min(cache, std::max(cache / kInPlaceFloorDivisor, HeldCharge(units_->held())));
}

uint64_t MemoryBudget::CacheCapacity(uint64_t reserved) const {
  const uint64_t floor = total_ / 8;
  const uint64_t set_aside = staging_ + reserved + unaccounted_;  // staging_: its charge
  return std::max(floor, total_ > set_aside ? total_ - set_aside : 0);
}

uint64_t MemoryBudget::UnitsCapacity(uint64_t cache, uint64_t frames_used, uint64_t held) {
  return std::max(DecodedFloor(cache, held), cache > frames_used ? cache - frames_used : 0);
}

uint64_t MemoryBudget::CachePart() const { return enabled() ? CacheCapacity(reserved_) : cache_bytes_ + lent_; }

void MemoryBudget::Apply() {
  if (units_ == nullptr) return;
  // Staged bytes beyond the charge come back through StagingGrew (with a budget only).
  units_->SetStagingMark(enabled() ? staging_ : UINT64_MAX);
  const uint64_t part = CachePart();
  if (frames_ == nullptr) {
    units_->SetCapacity(part);
    return;
  }
  // Frames first (down at once when the cache shrank), then the decoded units get the rest.
  // (Taking all the decoded units hold outside their admitted ones — held units, idle buffers —
  // out of the frames' share was tried: at f = 1/2 of the demo the column's frames no longer fit
  // and it read 1,155 MiB instead of 262-301: docs/memory-as-cache.md. Only held units beyond the
  // decoded tier's eighth and the RSS target's slack are: the idle buffers are released when the
  // tier is over.)
  const uint64_t held = HeldCharge(units_->held());
  frames_->SetCapacity(FramesCapacity(part, held, standing_));
  units_->SetCapacity(UnitsCapacity(part, frames_->used(), held));
}

MemoryBudget::State MemoryBudget::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  State s{total_, staging_, reserved_, reservations_, staging_ceiling_, unaccounted_, CachePart(), 0, 0, 0, 0, lent_};
  if (frames_ != nullptr) {
    const uint64_t held = HeldCharge(units_->held());
    s.frames_capacity = FramesCapacity(s.cache_capacity, held, standing_);
    s.frames_used = frames_->used();
    s.standing = standing_;
    s.units_capacity = UnitsCapacity(s.cache_capacity, s.frames_used, held);
  } else {
    s.units_capacity = s.cache_capacity;
  }
  return s;
}

}  // namespace graphfs::volume
