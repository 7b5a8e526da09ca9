// Units the caller loads itself (ChunkCache::Reserve → UnitLoad → Complete): the volume reads
// several neighbouring units of one disk in one request, straight into their buffers, so disk
// requests stay coarse whatever the unit size is; the cache only tracks the units.
#include <cstring>

#include "cache/cache_entry.h"

namespace graphfs::cache {

char* UnitLoad::buffer() const { return entry_->data(); }
uint64_t UnitLoad::skew() const { return entry_->skew; }
uint64_t UnitLoad::charge() const { return entry_->charge; }
uint64_t UnitLoad::offset() const { return entry_->offset; }
uint64_t UnitLoad::length() const { return entry_->length; }
const UnitKey& UnitLoad::key() const { return entry_->key_; }

ChunkCache::Presence ChunkCache::Find(const UnitKey& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = units_.find(key);
  if (it == units_.end() || it->second.entry == nullptr) return Presence::kAbsent;
  return it->second.entry->state == Entry::State::kLoading ? Presence::kLoading : Presence::kReady;
}

bool ChunkCache::StagingRoom(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (staged_bytes_ + bytes <= options_.staging_limit) return true;
  SweepStaged(NowNs(), /*pressed=*/true);
  return staged_bytes_ + bytes <= options_.staging_limit;
}

UnitLoad ChunkCache::Reserve(const UnitRequest& r, uint32_t pid, ReserveFor why, bool over_limit) {
  UnitLoad load;
  {
    std::lock_guard<std::mutex> lock(mu_);
    load = ReserveLocked(r, pid, why, over_limit);
  }
  TellStaged();  // before the caller reads into the buffer
  return load;
}

UnitLoad ChunkCache::ReserveLocked(const UnitRequest& r, uint32_t pid, ReserveFor why, bool over_limit) {
  if (stopping_) return UnitLoad();
  const int64_t now = NowNs();
  const bool reader = why == ReserveFor::kReader;
  if (reader) {
    if (NoteRead(r, pid, now).entry != nullptr) return UnitLoad();
  } else {
    auto it = units_.find(r.key);
    if (it != units_.end() && it->second.entry != nullptr) return UnitLoad();
  }
  // A request of an older file generation is never kept (UnitSource::Generation): a reader's
  // own load of it goes through Get; a prefetch planned before a write would stage a unit of
  // the old size (or a half-written one) that no invalidation would remove.
  if (r.source->Generation() != r.generation) {
    if (!reader) ++counters_.prefetches_skipped;
    return UnitLoad();
  }
  if (!reader && !over_limit) {
    const uint64_t charge = (r.offset % kAlign + r.length + kAlign - 1) / kAlign * kAlign;
    if (staged_bytes_ + charge > options_.staging_limit) {
      SweepStaged(now, /*pressed=*/true);
      if (staged_bytes_ + charge > options_.staging_limit) {
        ++counters_.prefetches_skipped;
        return UnitLoad();
      }
    }
  }
  if (reader) SweepStaged(now);
  std::shared_ptr<Entry> e = NewEntry(r);
  if (e == nullptr) {
    if (!reader) ++counters_.prefetches_skipped;
    return UnitLoad();
  }
  ProcessStats& ps = Process(pid);
  if (reader) {
    ++counters_.misses;
    ++ps.misses;
    e->pins = 1;  // Await's UnitRef takes this pin over
    e->touched_ns = now;
  } else {
    e->prefetched = true;
    ++counters_.prefetches;
  }
  CountLoad(r, ps);
  return UnitLoad(std::move(e));
}

void ChunkCache::Complete(const UnitLoad& load, Result<uint64_t> got) {
  std::lock_guard<std::mutex> lock(mu_);
  if (load.entry_ == nullptr || load.entry_->state != Entry::State::kLoading) return;
  FinishLoad(load.entry_, std::move(got));
}

Result<UnitRef> ChunkCache::Await(UnitLoad load, uint32_t pid) {
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<Entry> e = std::move(load.entry_);
  loaded_.wait(lock, [&] { return e->state != Entry::State::kLoading; });
  if (e->state == Entry::State::kFailed) {
    --e->pins;
    return Error(e->error_code, e->error_message);
  }
  return UnitRef(this, std::move(e), pid, false);
}

}  // namespace graphfs::cache
