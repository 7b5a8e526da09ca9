// The daemon's one clock for intervals: monotonic nanoseconds (steady_clock), so that the
// cache's visits, read-ahead's live readers, the disks' busy time and the extents' deadlines
// are all measured against the same time line.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace graphfs {

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time the calling thread has used (user + system), for the daemon's CPU per delivered byte.
inline int64_t ThreadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace graphfs
