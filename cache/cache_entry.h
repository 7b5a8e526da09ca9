// The cache's internals shared by its own files (chunk_cache.cc: lookups, loads, admission;
// staging.cc: prefetches and the staging area; unit_load.cc: units the caller loads): a unit in
// memory, its record, a load task.
// Not a public header: nothing outside cache/ includes it.
#pragma once

#include <atomic>

#include <memory>
#include <string>
#include <vector>

#include "cache/chunk_cache.h"
#include "common/clock.h"

namespace graphfs::cache {

inline constexpr uint64_t kAlign = 4096;
// A reader that took part of a unit and then left it alone for this long is done with it.
inline constexpr int64_t kServedIdleNs = 2'000'000'000;
// A prefetched unit nobody came for within this long is given up.
inline constexpr int64_t kUnreadIdleNs = 30'000'000'000;
// ... or within this long when staging is full and a newer prefetch wants the room: a stream
// that jumped away leaves its read-ahead behind, and it must not keep the others' out.
inline constexpr int64_t kUnreadPressedNs = 3'000'000'000;
// A process that took part of a unit in this visit and read from it this recently is still
// reading it: the unit is in use now, whatever the process's stream position says.
inline constexpr int64_t kPartWayIdleNs = 1'000'000'000;
// Finished staged units are looked at no more often than this (unless memory is short).
inline constexpr int64_t kSweepIntervalNs = 20'000'000;
// Readers load their own misses whatever staging holds (they cannot go on without the unit),
// but when staging is full only this many at once: the kernel's read-ahead of one sequential
// reader sends a dozen READs to as many FUSE threads, and each loaded a unit (and its frame)
// beyond the ceiling — the daemon's RSS rose 30-44 MiB for a few milliseconds, over its
// target at memory=192M (docs/memory-as-cache.md, eighth part). The others wait for one of
// those loads to finish, or at most kReaderRoomWaitNs (a disk that hangs holds no one long).
inline constexpr uint64_t kMaxReaderLoadsOver = 4;
inline constexpr int64_t kReaderRoomWaitNs = 100'000'000;
inline constexpr size_t kMaxProcesses = 512;

struct UnitRef::Entry final : UnitView {
  UnitKey key_;
  uint64_t offset = 0, length = 0;
  double weight = 1.0;
  AlignedBuffer buffer;  // from `pool`, given back when the last handle goes
  std::shared_ptr<BufferPool> pool;
  SharedBytes shared;    // instead of `buffer`: in the graph's shared memory (UnitRequest::arena),
                         // also given back to `pool` (kept resident for the next unit of its arena)
  uint64_t skew = 0;    // the unit starts this far into the (4 KiB aligned) buffer
  uint64_t charge = 0;  // bytes counted against the cache (the buffer may be up to 1/8 larger)
  enum class State { kLoading, kReady, kFailed } state = State::kLoading;
  int error_code = 0;
  std::string error_message;
  // Everything below is guarded by the cache's mutex.
  int pins = 0;
  bool admitted = false;  // counted in `capacity`, listed in the eviction order
  bool orphan = false;    // no longer reachable by key (invalidated, evicted, refused)
  bool prefetched = false;
  // Its reader needs no more of it though it took only part (the LP loader copies the runs it
  // wants): decided on at its last unpin, like a unit served whole, not kept staged for
  // kServedIdleNs.
  bool consumed = false;
  bool held = false;  // left staging, refused, kept by its pins alone (CacheStats::held)
  // Its owner said it is the only copy of its bytes in memory (CacheOptions::on_kept returned
  // true): not evicted to admit another unit, only when the capacity shrinks or it is dropped.
  bool sole_copy = false;
  // A holder verified its bytes (a compressed unit's frame: its checksum) since they were
  // loaded: later holders need not again. Not guarded by the mutex.
  std::atomic<bool> checked{false};
  uint64_t served = 0;
  int64_t touched_ns = 0, ready_ns = 0, admitted_ns = 0;
  ChunkCache::OrderKey order;
  // Bytes each process took in its current visit (reads closer than `same_pass_ns`).
  struct Taker {
    uint32_t pid;
    uint64_t bytes;
    int64_t last_ns;
  };
  std::vector<Taker> takers;
  int64_t same_pass_ns = 0;  // the cache's

  char* data() const { return shared.get() != nullptr ? shared.get() : const_cast<char*>(buffer.data()); }
  ~Entry() override {
    if (pool == nullptr) return;
    if (shared.get() != nullptr) {
      pool->GiveShared(std::move(shared));
    } else {
      pool->Give(std::move(buffer));
    }
  }
  const UnitKey& key() const override { return key_; }
  bool PartWay(int64_t now) const override {
    for (const Taker& t : takers)
      if (t.bytes < length && now - t.last_ns <= kPartWayIdleNs) return true;
    return false;
  }
  bool TakenInVisit(uint32_t pid, int64_t now) const override {
    for (const Taker& t : takers)
      if (t.pid == pid && now - t.last_ns <= same_pass_ns) return true;
    return false;
  }
};

struct ChunkCache::Record {
  ReaderSet readers;
  std::shared_ptr<Entry> entry;  // null when the unit is not in memory
  bool loaded = false;           // loaded at least once while this record lived
};

struct ChunkCache::Task {
  std::shared_ptr<Entry> entry;
  std::shared_ptr<UnitSource> source;
};

// ---- UnitRef ----

}  // namespace graphfs::cache
