// The progress line of the tools that copy or read files of a disk set (graphfs-stripe,
// graphfs-unstripe, graphfs-scrub, graphfs-rebuild): bytes done of the total, the rate, the time
// left and the file at hand, on stderr, redrawn in place at most twice a second. Not a public header.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "common/size_parse.h"

namespace graphfs {

class ProgressLine {
 public:
  // `label` starts the line (a tool's or a file's name); `total` bytes are to be done. Off: prints
  // nothing. `out`: where the line goes (tests).
  ProgressLine(bool on, std::string label, uint64_t total, std::FILE* out = stderr)
      : on_(on), label_(std::move(label)), total_(total), out_(out) {}

  // A resumed run starts at `first` bytes done: the rate counts what this run did.
  void Start(uint64_t first) { first_ = first; }

  // `done` bytes of the total; `file`, when given, ends the line. Redrawn at most every
  // kRedraw unless `final`, which always draws and ends the line.
  void Update(uint64_t done, const std::string& file = "", bool final = false) {
    if (!on_) return;
    const auto now = Clock::now();
    if (!final && now - last_ < kRedraw) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double rate = secs > 0 && done >= first_ ? static_cast<double>(done - first_) / secs : 0;
    std::string eta = "--:--";
    if (rate > 0 && done <= total_) {
      const uint64_t left = static_cast<uint64_t>(static_cast<double>(total_ - done) / rate);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%lu:%02lu:%02lu", left / 3600, left / 60 % 60, left % 60);
      eta = buf;
    }
    std::fprintf(out_, "\r%s: %s / %s (%.0f%%) %.0f MB/s, %s left%s%s%s", label_.c_str(), FormatSize(done).c_str(),
                 FormatSize(total_).c_str(),
                 total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0, rate / 1e6,
                 eta.c_str(), file.empty() ? "" : "  ", file.c_str(), final ? "\n" : "\033[K");
    std::fflush(out_);
  }
  // The last line: `done` (all of it, normally) drawn whatever the time.
  void Finish(uint64_t done) { Update(done, "", true); }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kRedraw{500};

  bool on_;
  std::string label_;
  uint64_t total_;
  std::FILE* out_;
  uint64_t first_ = 0;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

}  // namespace graphfs
