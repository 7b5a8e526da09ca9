#include "fusefs/memory_peak.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <string>
#include <utility>

#include "common/thread_name.h"

namespace graphfs {

ProcessMemory ReadProcessMemory() {
  ProcessMemory m;
  const std::pair<const char*, uint64_t*> keys[] = {
      {"VmRSS:", &m.rss}, {"VmHWM:", &m.peak_rss}, {"RssAnon:", &m.anon}, {"RssFile:", &m.file}, {"RssShmem:", &m.shmem}};
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    for (const auto& [key, out] : keys) {
      const size_t n = std::strlen(key);
      if (line.compare(0, n, key) == 0) *out = std::strtoull(line.c_str() + n, nullptr, 10) * 1024;  // kB
    }
  }
  return m;
}

void MemoryPeak::Start(std::function<nlohmann::json()> split, std::chrono::milliseconds period,
                       std::function<void(uint64_t)> other) {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread(&MemoryPeak::Loop, this, std::move(split), period, std::move(other));
}

void MemoryPeak::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

nlohmann::json MemoryPeak::AtPeak() const {
  std::lock_guard<std::mutex> lock(mu_);
  return at_peak_;
}

void MemoryPeak::Loop(std::function<nlohmann::json()> split, std::chrono::milliseconds period,
                      std::function<void(uint64_t)> other) {
  NameThisThread("gfs-memory");
  const auto start = std::chrono::steady_clock::now();
  auto last_heap = start, last_other = start;
  std::deque<uint64_t> others;  // by_use.other of the last kOtherWindow samples
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, period, [&] { return stop_; })) return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_heap >= kHeapEvery) {
      last_heap = now;
      if (::mallinfo2().fordblks > kTrimAboveBytes) ::malloc_trim(0);
    }
    if (now - last_other >= kOtherEvery) {
      last_other = now;
      if (other) {
        const nlohmann::json now_split = split();
        const nlohmann::json& o = now_split["by_use"]["other"];
        others.push_back(o.is_number() ? o.get<uint64_t>() : 0);
        if (others.size() > kOtherWindow) others.pop_front();
        other(*std::max_element(others.begin(), others.end()));
      }
    }
    const uint64_t hwm = ReadProcessMemory().peak_rss;
    uint64_t last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = peak_rss_;
    }
    if (hwm <= last) continue;
    // Taken after the rise: within one period of the peak, and the larger of what was
    // seen then (RSS may have fallen back meanwhile; the split is of the RSS at sampling).
    nlohmann::json sample = split();
    const double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    sample["peak_rss"] = hwm;
    sample["seconds_after_start"] = after;
    std::lock_guard<std::mutex> lock(mu_);
    peak_rss_ = hwm;
    at_peak_ = std::move(sample);
  }
}

}  // namespace graphfs
