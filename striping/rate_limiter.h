// Keeps a tool's reads at an average rate (graphfs-scrub --rate, graphfs-rebuild --rate), so that
// the jobs reading the same disks keep their bandwidth: after `bytes` more, the caller sleeps until
// the total is due at that rate since the start. A burst after a slow stretch is allowed up to
// one second's worth (the debt does not grow without bound).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace graphfs {

class RateLimiter {
 public:
  // bytes_per_second 0: no limit.
  // `cancel`, when given and set, cuts a sleep short (checked every 100 ms): a task the daemon runs
  // at a low rate stops promptly at an unmount.
  explicit RateLimiter(uint64_t bytes_per_second, const std::atomic<bool>* cancel = nullptr)
      : rate_(bytes_per_second), cancel_(cancel) {}

  void Take(uint64_t bytes) {
    if (rate_ == 0) return;
    using namespace std::chrono;
    const auto now = steady_clock::now();
    // Time the reads were behind by more than a second is forgiven, not caught up in a burst.
    if (now - due_ > seconds(1)) due_ = now - seconds(1);
    due_ += duration_cast<steady_clock::duration>(duration<double>(static_cast<double>(bytes) / static_cast<double>(rate_)));
    if (cancel_ == nullptr) {
      if (due_ > now) std::this_thread::sleep_until(due_);
      return;
    }
    while (steady_clock::now() < due_ && !cancel_->load(std::memory_order_relaxed))
      std::this_thread::sleep_until(std::min(due_, steady_clock::now() + milliseconds(100)));
  }

 private:
  uint64_t rate_;
  const std::atomic<bool>* cancel_ = nullptr;
  std::chrono::steady_clock::time_point due_ = std::chrono::steady_clock::now();
};

}  // namespace graphfs
