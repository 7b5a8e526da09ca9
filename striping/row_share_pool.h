// One byte limit for the blocks that every degraded file of a process keeps for its other reads
// (row_share.h). Each file with a lost disk has a RowShare; before, each could hold up to 256 MiB,
// outside the mount's memory budget — a mount with a disk lost and a few such files open could
// overrun its `memory=` by a multiple of that. Now the shares of a mount draw on one pool whose
// capacity the volume sets (down-calls only: striping learns a number, never the budget) and
// charges to the budget (volume/internal/volume_core.cc). A share over the limit drops its own
// oldest blocks first, then the other shares' (a file that stopped being read gives way to one
// being read); a dropped block costs one more read of it, never a wrong byte.
// Thread-safe. Lock order: the pool's registry, then a share's lock (a share never takes the
// registry while it holds its own lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace graphfs {

class RowShare;

class RowSharePool {
 public:
  explicit RowSharePool(uint64_t capacity) : capacity_(capacity) {}
  RowSharePool(const RowSharePool&) = delete;
  RowSharePool& operator=(const RowSharePool&) = delete;

  // Sets the limit; a smaller one drops held blocks at once until the shares fit.
  void SetCapacity(uint64_t bytes);
  uint64_t capacity() const { return capacity_.load(std::memory_order_relaxed); }

  struct Stats {
    uint64_t capacity = 0;
    uint64_t held_bytes = 0;       // now, over every share
    uint64_t peak_held_bytes = 0;  // the most held at once since the pool was made
    uint64_t shares = 0;           // degraded files open
  };
  Stats stats() const;

 private:
  friend class RowShare;
  void Join(RowShare* share);
  void Leave(RowShare* share);
  // Held bytes of some share rose or fell by `bytes`.
  void Hold(uint64_t bytes);
  void Release(uint64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }
  // Bytes held beyond the capacity now (0 when within).
  uint64_t Over() const {
    const uint64_t held = held_.load(std::memory_order_relaxed), cap = capacity();
    return held > cap ? held - cap : 0;
  }
  // Drops the oldest blocks of the shares other than `self` (nullptr: of all) until the pool is
  // within its capacity. `self`'s lock must not be held.
  void Trim(const RowShare* self);

  std::atomic<uint64_t> capacity_;
  std::atomic<uint64_t> held_{0};
  std::atomic<uint64_t> peak_{0};
  mutable std::mutex mu_;  // the registry
  std::vector<RowShare*> shares_;
};

}  // namespace graphfs
