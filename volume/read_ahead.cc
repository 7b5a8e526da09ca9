#include "volume/read_ahead.h"

#include <algorithm>
#include <chrono>

namespace graphfs::volume {

namespace {

// A reader that looked something up within this long shares the read-ahead staging.
constexpr int64_t kLiveReaderNs = 1'000'000'000;
// Readers quiet this long are forgotten (at most this often).
constexpr int64_t kForgetNs = 10'000'000'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

uint64_t ReadStreams::Continues(uint64_t offset, uint64_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  ++tick_;
  Slot* best = nullptr;
  for (Slot& s : slots_) {
    if (s.next == UINT64_MAX) continue;
    const uint64_t lo = s.next > kSlack ? s.next - kSlack : 0;
    if (offset >= lo && offset <= s.next + kSlack) {
      best = &s;
      break;
    }
  }
  if (best != nullptr) {
    best->next = std::max(best->next, offset + length);
    best->last_use = tick_;
    best->run += length;
    return best->run;
  }
  Slot* victim = &slots_[0];
  for (Slot& s : slots_)
    if (s.last_use < victim->last_use) victim = &s;
  *victim = {offset + length, tick_, length};
  // A read from the start of the file starts a stream right away.
  return offset == 0 ? length : 0;
}

void ReadAhead::NoteReader(uint64_t file, uint32_t pid) {
  const int64_t now = NowNs();
  std::lock_guard<std::mutex> lock(mu_);
  last_read_ns_[{file, pid}] = now;
  if (now - last_prune_ns_ > kForgetNs) {
    last_prune_ns_ = now;
    std::erase_if(last_read_ns_, [now](const auto& r) { return now - r.second > kForgetNs; });
  }
}

uint64_t ReadAhead::Share() const {
  const int64_t now = NowNs();
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t live = 0;
  for (const auto& [reader, last] : last_read_ns_) live += now - last <= kLiveReaderNs ? 1 : 0;
  return options_.staging_limit / std::max<uint64_t>(1, live);
}

uint64_t ReadAhead::StreamWindow(uint64_t stream_bytes, uint64_t unit, uint32_t disks) const {
  if (options_.off || stream_bytes == 0) return 0;
  const uint64_t units = options_.units != 0 ? options_.units : 2ull * disks;
  return std::min({stream_bytes, units * unit, Share()});
}

uint64_t ReadAhead::LoaderWindow(uint64_t unit, uint32_t disks) const {
  return std::min<uint64_t>(2ull * disks * unit, std::max<uint64_t>(Share(), 1));
}

}  // namespace graphfs::volume
