// What a whole-set task (rebuild.h, scrub.h) shares with whoever runs it in the background —
// the mount's daemon, through MOUNTPOINT/.graphfs/disks (docs/parity.md): its progress, read as
// it runs, and a request to stop. The offline tools leave it out.
#pragma once

#include <atomic>
#include <cstdint>

namespace graphfs {

struct SetTaskProgress {
  std::atomic<uint64_t> done{0};   // bytes read from the disks so far
  std::atomic<uint64_t> total{0};  // bytes the task reads in all (known once it has started)
  // Set by the runner (an unmount): the task stops at the next row with ECANCELED. A rebuild
  // stopped so resumes from its record when run again.
  std::atomic<bool> cancel{false};
};

}  // namespace graphfs
