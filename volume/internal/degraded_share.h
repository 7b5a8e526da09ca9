// The memory a mount's degraded files keep for each other's reads (striping/row_share.h), inside
// the mount's one budget. With a disk lost, a row's lost unit is rebuilt from the same range of
// its other units, which the stream reads anyway but in other requests; the verified blocks of
// such rows are kept (a RowShare per file) until the other read of the row takes them, so each
// surviving block is read about once. Before, each degraded file could keep up to 256 MiB of them
// beside the budget; now every degraded file of the mount draws on one pool (RowSharePool) whose
// capacity is charged to the budget — a reservation made when the first degraded file opens and
// given back when the mount is degraded no more (a rebuilt disk switched in online and taken by
// every open file: VolumeCore::SwitchDisk calls Release), made again if a degraded file opens
// after that — so the daemon's RSS stays within `memory=` with a disk lost, and the cache has the
// memory back once none is. Without `memory=` the pool has kDefaultBytes for the whole mount.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "striping/row_share_pool.h"
#include "volume/internal/memory_budget.h"

namespace graphfs {
class StripedFile;
}

namespace graphfs::volume {

class DegradedShare {
 public:
  // Without a budget, the pool's capacity for every degraded file of the mount together.
  static constexpr uint64_t kDefaultBytes = 256ull << 20;
  // With one, what the pool gets: `staging` bytes (the read path's read-ahead staging limit),
  // within [kMinBytes, kDefaultBytes]. The blocks kept wait for the other read of their row,
  // which the stream issues within its read-ahead, so staging bounds what is worth keeping
  // (docs/parity.md, "Degraded reads inside the budget").
  static constexpr uint64_t kMinBytes = 16ull << 20;
  static uint64_t BudgetedBytes(uint64_t staging);

  // `budget` outlives this; `staging` as above (ignored without a budget).
  DegradedShare(MemoryBudget& budget, uint64_t staging);

  // What StripedFileOptions::row_share gets for every file the mount opens.
  const std::shared_ptr<RowSharePool>& pool() const { return pool_; }
  // A file was opened: the first degraded one sets the pool's capacity aside in the budget.
  void Opened(const StripedFile& file);
  // The mount may be degraded no more: unless `degraded()` (asked under this share's lock, so
  // that a degraded file opening meanwhile either is counted there or takes the reservation
  // again in its Opened) the pool lets its blocks go — they were kept for rows no read rebuilds
  // any more — and the reservation goes back to the budget. Nothing to give back: nothing done.
  void Release(const std::function<bool()>& degraded);

  struct State {
    RowSharePool::Stats pool;
    uint64_t reserved = 0;  // set aside in the budget for it
  };
  State state() const;

 private:
  MemoryBudget& budget_;
  const uint64_t bytes_;  // the capacity once a degraded file opened
  std::shared_ptr<RowSharePool> pool_;
  mutable std::mutex mu_;
  MemoryBudget::Reservation reservation_;
  bool reserved_ = false;
};

}  // namespace graphfs::volume
