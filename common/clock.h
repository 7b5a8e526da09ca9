// The daemon's one clock for intervals: monotonic nanoseconds (steady_clock), so that the
// cache's visits, read-ahead's live readers, the disks' busy time and the extents' deadlines
// are all measured against the same time line.
#pragma once

#include <chrono>
#include <cstdint>

namespace graphfs {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace graphfs
