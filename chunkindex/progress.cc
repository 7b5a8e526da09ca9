#include "chunkindex/progress.h"

#include <chrono>
#include <cstdio>

#include "common/size_parse.h"

namespace graphfs::chunkindex {

namespace {
double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), start_(Now()) {
  if (!enabled_) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(250));
      if (!stop_) Draw(false);
    }
  });
}

ProgressBar::~ProgressBar() { Stop(); }

void ProgressBar::Stop() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Draw(true);
  std::fputc('\n', stderr);
}

void ProgressBar::Draw(bool /*final*/) {
  const uint64_t done = this->done();
  const double frac = total_ == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total_));
  const int width = 30;
  std::string bar(static_cast<size_t>(width), '.');
  for (int k = 0; k < static_cast<int>(frac * width); ++k) bar[static_cast<size_t>(k)] = '#';
  const double secs = Now() - start_;
  const uint64_t rate = secs > 0 ? static_cast<uint64_t>(static_cast<double>(done) / secs) : 0;
  std::fprintf(stderr, "\r%s [%s] %3d%%  %s / %s  %s/s   ", label_.c_str(), bar.c_str(),
               static_cast<int>(frac * 100), FormatSize(done).c_str(), FormatSize(total_).c_str(),
               FormatSize(rate).c_str());
  std::fflush(stderr);
}

}  // namespace graphfs::chunkindex
