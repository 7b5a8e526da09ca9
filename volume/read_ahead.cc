#include "volume/read_ahead.h"

#include <algorithm>

#include "common/clock.h"

namespace graphfs::volume {

namespace {

// A reader that looked something up within this long shares the read-ahead staging.
constexpr int64_t kLiveReaderNs = 1'000'000'000;
// Readers quiet this long are forgotten (at most this often).
constexpr int64_t kForgetNs = 10'000'000'000;

}  // namespace

ReadStreams::Position ReadStreams::Continues(uint64_t offset, uint64_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  ++tick_;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = slots_[i];
    if (s.next == UINT64_MAX) continue;
    const uint64_t lo = s.next > kSlack ? s.next - kSlack : 0;
    if (offset >= lo && offset <= s.next + kSlack) {
      s.next = std::max(s.next, offset + length);
      s.last_use = tick_;
      s.run += length;
      return {s.run, i, s.ahead};
    }
  }
  int victim = 0;
  for (int i = 0; i < kSlots; ++i)
    if (slots_[i].last_use < slots_[victim].last_use) victim = i;
  slots_[victim] = {offset + length, tick_, length, offset + length};
  // A read from the start of the file starts a stream right away.
  return {offset == 0 ? length : 0, victim, offset + length};
}

void ReadStreams::NoteAhead(int slot, uint64_t offset) {
  if (slot < 0 || slot >= kSlots) return;
  std::lock_guard<std::mutex> lock(mu_);
  slots_[slot].ahead = std::max(slots_[slot].ahead, offset);
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
  const uint64_t most = options_.units != 0 ? options_.units * unit : disks * DiskDepth(unit);
  // A whole stripe row at once, so every disk reads; more as the stream proves itself.
  return std::min(most, std::max<uint64_t>(uint64_t{disks} * unit, 2 * stream_bytes));
}

uint64_t ReadAhead::InFlightDepth() const {
  return static_cast<uint64_t>(options_.disk_bytes_per_second *
                               (options_.disk_seconds_per_request + kTurnaroundSeconds));
}

uint64_t ReadAhead::DiskDepth(uint64_t extent) const {
  return std::max<uint64_t>(2 * extent, static_cast<uint64_t>(options_.disk_bytes_per_second * kReactionSeconds));
}

uint64_t ReadAhead::LoaderWindow(uint64_t unit, uint32_t disks) const {
  return std::min<uint64_t>(2ull * disks * unit, std::max<uint64_t>(Share(), 1));
}

}  // namespace graphfs::volume
