// The daemon's memory split by use at its peak (`stats.memory.at_peak`): a thread reads
// VmHWM every `period` and, each time it has risen, takes the split the stats give at that
// moment (cache admitted and staged, LPs, indexes, buffers, other). The split at the end of a
// run says little about what the peak held: LPs are released, staging drains.
//
// The same thread, about once a second, gives the allocator's free bytes back to the kernel
// (malloc_trim) when it keeps more than a few MiB of them — the daemon's threads free blocks in
// their own arenas, which glibc trims only from their top, and those kept pages were a tenth of
// the daemon's RSS under a memory budget (stats.memory.heap.free_kept_bytes ~27 MiB of ~450 at
// scale 22; docs/memory-as-cache.md). Four times a second it reports the resident memory no
// part of the split accounts for (`other`, the largest of the last kOtherWindow samples — ten
// seconds —, so that the cache does not shrink and grow back with every sample) to whoever
// charges it (the memory budget): `other` rises from ~15 to ~50 MiB within half a second of the
// first jobs (FUSE threads' buffers, the decoders' scratch), and reported once a second the
// budget shrank the cache only after the daemon's RSS had peaked over its target
// (docs/memory-as-cache.md, eighth part).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace graphfs {

class MemoryPeak {
 public:
  ~MemoryPeak() { Stop(); }
  // `split` returns {"by_use": memory.by_use, ...: other figures to keep with it} now; it runs
  // on the sampler's thread, as does `other` (given by_use.other as above; may be empty).
  void Start(std::function<nlohmann::json()> split, std::chrono::milliseconds period,
             std::function<void(uint64_t)> other = {});
  void Stop();
  // {"peak_rss", "seconds_after_start", "by_use", ...}: the last split taken at a new VmHWM
  // (empty before the first sample).
  nlohmann::json AtPeak() const;

 private:
  void Loop(std::function<nlohmann::json()> split, std::chrono::milliseconds period,
            std::function<void(uint64_t)> other);
  // Every kHeapEvery: malloc_trim when the heap keeps more than kTrimAboveBytes free. Every
  // kOtherEvery: `other` is told the largest by_use.other of the last kOtherWindow samples.
  static constexpr uint64_t kTrimAboveBytes = 8ull << 20;
  static constexpr std::chrono::milliseconds kHeapEvery{1000};
  static constexpr std::chrono::milliseconds kOtherEvery{250};
  static constexpr size_t kOtherWindow = 40;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
  uint64_t peak_rss_ = 0;
  nlohmann::json at_peak_ = nlohmann::json::object();
};

// This process's resident memory in bytes, from /proc/self/status (0 where it says nothing).
struct ProcessMemory {
  uint64_t rss = 0;       // VmRSS
  uint64_t peak_rss = 0;  // VmHWM
  uint64_t anon = 0;      // RssAnon
  uint64_t file = 0;      // RssFile
  uint64_t shmem = 0;     // RssShmem
};
ProcessMemory ReadProcessMemory();

}  // namespace graphfs
