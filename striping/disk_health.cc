#include "striping/disk_health.h"

namespace graphfs {

DiskState CurrentDiskState(const DiskSet& disks, const IoEngine& io, uint32_t disk) {
  if (const DiskState s = disks.state(disk); s == DiskState::kMissing || s == DiskState::kStale) return s;
  if (io.failing(disk)) return DiskState::kAvoided;
  const DiskCounters& c = io.counters(disk);
  if (c.errors.load(std::memory_order_relaxed) > 0 || c.checksum_errors.load(std::memory_order_relaxed) > 0)
    return DiskState::kFailing;
  return DiskState::kHealthy;
}

}  // namespace graphfs
