// The daemon's memory split by use at its peak (`stats.memory.at_peak`): a thread reads
// VmHWM every `period` and, each time it has risen, takes the split the stats give at that
// moment (cache admitted and staged, LPs, indexes, buffers, other). The split at the end of a
// run says little about what the peak held: LPs are released, staging drains.
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
  // on the sampler's thread.
  void Start(std::function<nlohmann::json()> split, std::chrono::milliseconds period);
  void Stop();
  // {"peak_rss", "seconds_after_start", "by_use", ...}: the last split taken at a new VmHWM
  // (empty before the first sample).
  nlohmann::json AtPeak() const;

 private:
  void Loop(std::function<nlohmann::json()> split, std::chrono::milliseconds period);

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
