// The progress line of the tools that read a whole disk set (graphfs-scrub, graphfs-rebuild):
// bytes done of the total, the rate, the time left and the file at hand, on stderr, redrawn at
// most twice a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/size_parse.h"

namespace graphfs {

class ScanProgress {
 public:
  ScanProgress(bool on, std::string tool, uint64_t total) : on_(on), tool_(std::move(tool)), total_(total) {}

  // `done` of the total (bytes the tool reads), resumed runs from `first`.
  void Update(uint64_t done, const std::string& file, bool final = false) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!final && now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = secs > 0 ? static_cast<double>(done - first_) / secs : 0;
    std::string eta = "--:--";
    if (rate > 0 && done <= total_) {
      const uint64_t left = static_cast<uint64_t>(static_cast<double>(total_ - done) / rate);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%lu:%02lu:%02lu", left / 3600, left / 60 % 60, left % 60);
      eta = buf;
    }
    std::fprintf(stderr, "\r%s: %s / %s (%.0f%%) %.0f MB/s, %s left  %s%s", tool_.c_str(), FormatSize(done).c_str(),
                 FormatSize(total_).c_str(),
                 total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0, rate / 1e6,
                 eta.c_str(), file.c_str(), final ? "\n" : "\033[K");
    std::fflush(stderr);
  }
  void Start(uint64_t first) { first_ = first; }

 private:
  bool on_;
  std::string tool_;
  uint64_t total_;
  uint64_t first_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace graphfs
