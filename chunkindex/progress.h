// A progress bar on stderr, redrawn by its own thread a few times a second:
//   indexing [##########..........]  52%  1.2 GiB / 2.3 GiB  640 MiB/s
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace graphfs::chunkindex {

class ProgressBar {
 public:
  // Draws nothing when `enabled` is false (the counter still works).
  ProgressBar(std::string label, uint64_t total, bool enabled);
  ~ProgressBar();  // draws the final state and a newline
  void Add(uint64_t n) { done_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t done() const { return done_.load(std::memory_order_relaxed); }
  void Stop();

 private:
  void Draw(bool final);
  std::string label_;
  uint64_t total_;
  bool enabled_;
  std::atomic<uint64_t> done_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
  double start_;
};

}  // namespace graphfs::chunkindex
