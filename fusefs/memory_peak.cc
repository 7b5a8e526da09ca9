#include "fusefs/memory_peak.h"

#include <cstdlib>
#include <fstream>
#include <string>

namespace graphfs {

uint64_t ProcessPeakRss() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;  // kB
  }
  return 0;
}

void MemoryPeak::Start(std::function<nlohmann::json()> split, std::chrono::milliseconds period) {
  Stop();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread(&MemoryPeak::Loop, this, std::move(split), period);
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

void MemoryPeak::Loop(std::function<nlohmann::json()> split, std::chrono::milliseconds period) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_cv_.wait_for(lock, period, [&] { return stop_; })) return;
    }
    const uint64_t hwm = ProcessPeakRss();
    uint64_t last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = peak_rss_;
    }
    if (hwm <= last) continue;
    // Taken after the rise: within one period of the peak, and the larger of what was
    // seen then (RSS may have fallen back meanwhile; the split is of the RSS at sampling).
    nlohmann::json by_use = split();
    const double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard<std::mutex> lock(mu_);
    peak_rss_ = hwm;
    at_peak_ = {{"peak_rss", hwm}, {"seconds_after_start", after}, {"by_use", std::move(by_use)}};
  }
}

}  // namespace graphfs
