#include "striping/row_share.h"

#include <algorithm>
#include <cstring>

namespace graphfs {

void RowShare::Put(uint64_t row, uint32_t slot, uint64_t begin, std::span<const char> bytes, uint64_t unit_end) {
  std::lock_guard<std::mutex> lock(mu_);
  for (uint64_t at = 0; at < bytes.size(); at += block_) {
    const uint64_t length = std::min<uint64_t>(block_, bytes.size() - at);
    // A piece of a block is kept only when the block ends there: the unit's end.
    if (length < block_ && begin + at + length != unit_end) break;
    const Key key{row, slot, (begin + at) / block_};
    auto [it, added] = blocks_.try_emplace(key);
    if (!added) continue;
    it->second.assign(bytes.data() + at, length);
    order_.push_back(key);
    stats_.put_bytes += length;
    stats_.held_bytes += length;
  }
  while (stats_.held_bytes > budget_ && !order_.empty()) {
    auto it = blocks_.find(order_.front());
    order_.pop_front();
    if (it == blocks_.end()) continue;  // taken already
    stats_.held_bytes -= it->second.size();
    stats_.dropped_bytes += it->second.size();
    blocks_.erase(it);
  }
  // Taken keys leave their entries in `order_`; keep it from growing without bound.
  if (order_.size() > 2 * blocks_.size() + 1024) {
    std::deque<Key> live;
    for (const Key& k : order_)
      if (blocks_.count(k) != 0) live.push_back(k);
    order_ = std::move(live);
  }
}

bool RowShare::Take(uint64_t row, uint32_t slot, uint64_t begin, uint64_t length, char* out) {
  if (length == 0 || begin % block_ != 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t first = begin / block_, last = (begin + length - 1) / block_;
  for (uint64_t b = first; b <= last; ++b) {
    auto it = blocks_.find(Key{row, slot, b});
    const uint64_t need = std::min(block_, begin + length - b * block_);
    if (it == blocks_.end() || it->second.size() < need) return false;
  }
  for (uint64_t b = first; b <= last; ++b) {
    auto it = blocks_.find(Key{row, slot, b});
    const uint64_t need = std::min(block_, begin + length - b * block_);
    std::memcpy(out + (b - first) * block_, it->second.data(), need);
    stats_.taken_bytes += it->second.size();
    stats_.held_bytes -= it->second.size();
    blocks_.erase(it);
  }
  return true;
}

void RowShare::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.dropped_bytes += stats_.held_bytes;
  stats_.held_bytes = 0;
  blocks_.clear();
  order_.clear();
}

RowShare::Stats RowShare::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace graphfs
