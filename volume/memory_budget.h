// The mount's one memory budget (mount option `memory=`): what the daemon may spend on graph
// bytes and on what serves them — cache units (admitted and staged), every graph's LP window
// with its idle shared memory, and the graphs' chunk indexes — as one figure. Staging and the
// LP windows are ceilings set at mount; a graph's window and index are *reserved* while it has
// a schedule (jobs), and the cache gets the rest: it grows back when the graph's last job goes.
//
//   cache capacity = max(total / 8, total - staging - sum of the reservations)
//
// The floor keeps a cache however many graphs are in use: then the total is exceeded, by
// at most the reservations beyond it (stats say so). Without `memory=` there is no budget:
// `cache_size` alone sets the cache and reservations cost nothing.
#pragma once

#include <cstdint>
#include <mutex>

namespace graphfs::cache {
class ChunkCache;
}

namespace graphfs::volume {

class MemoryBudget {
 public:
  // `total` 0: no budget. `cache` may be null until the volume starts (Attach).
  MemoryBudget(uint64_t total, uint64_t staging) : total_(total), staging_(staging) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Memory set aside for one user (a graph's LP window and index) until it is destroyed.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept { *this = std::move(other); }
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation() { Release(); }
    uint64_t bytes() const { return bytes_; }
    void Release();

   private:
    friend class MemoryBudget;
    MemoryBudget* budget_ = nullptr;
    uint64_t bytes_ = 0;
  };

  bool enabled() const { return total_ > 0; }
  // The cache the budget sizes (set when it exists, cleared before it goes).
  void Attach(cache::ChunkCache* cache);
  Reservation Reserve(uint64_t bytes);

  struct State {
    uint64_t total = 0, staging = 0, reserved = 0, reservations = 0, cache_capacity = 0;
  };
  State state() const;
  // The cache's capacity for `reserved` bytes of reservations.
  uint64_t CacheCapacity(uint64_t reserved) const;

 private:
  void Apply();  // mu_ held

  const uint64_t total_;
  const uint64_t staging_;
  mutable std::mutex mu_;
  cache::ChunkCache* cache_ = nullptr;
  uint64_t reserved_ = 0;
  uint64_t reservations_ = 0;
};

}  // namespace graphfs::volume
