#include "chunkindex/lp_memory.h"

#include <algorithm>

namespace graphfs::chunkindex {

LpMemory::Block LpMemory::Allocate(uint64_t bytes) {
  SharedBytes b = SharedBytes::Allocate(arena_, bytes, SharedArena::Use::kBudgeted);  // the LP window's
  Block block{b.get(), b.offset()};
  if (b.offset() == SharedBytes::kNotShared) shared_ = false;
  bytes_ += bytes;
  blocks_.push_back(std::move(b));
  return block;
}

void LpMemory::Place(uint64_t lp_offset, uint64_t length, const char* at) {
  if (length == 0) return;
  uint64_t memory_offset = SharedBytes::kNotShared;
  // The block holding `at`: mostly the last one allocated (a loader places what it just read).
  for (size_t i = blocks_.size(); i-- > 0;) {
    const SharedBytes& b = blocks_[i];
    if (at >= b.get() && at < b.get() + std::max<uint64_t>(b.size(), 1)) {
      if (b.offset() != SharedBytes::kNotShared) memory_offset = b.offset() + static_cast<uint64_t>(at - b.get());
      break;
    }
  }
  segments_.push_back(Segment{lp_offset, length, at, memory_offset});  // Seal sorts and merges
}

char* LpMemory::Packed(uint64_t size) {
  const Block b = Allocate(size);
  Place(0, size, b.data);
  return b.data;
}

bool LpMemory::Borrow(uint64_t lp_offset, uint64_t length, const char* at, const SharedArena* memory,
                      uint64_t memory_offset, const std::shared_ptr<const void>& owner, uint64_t owner_bytes) {
  if (memory == nullptr || memory != arena_.get() || memory_offset == SharedBytes::kNotShared || owner == nullptr)
    return false;
  if (length == 0) return true;
  if (owners_.empty() || owners_.back() != owner) {
    owners_.push_back(owner);
    pinned_ += owner_bytes;
  }
  segments_.push_back(Segment{lp_offset, length, at, memory_offset});
  borrowed_ += length;
  return true;
}

bool LpMemory::Seal(uint64_t size) {
  std::sort(segments_.begin(), segments_.end(), [](const Segment& a, const Segment& b) { return a.lp_offset < b.lp_offset; });
  std::vector<Segment> merged;
  merged.reserve(segments_.size());
  for (const Segment& s : segments_) {
    if (s.length == 0) continue;
    if (!merged.empty()) {
      Segment& m = merged.back();
      if (m.lp_offset + m.length == s.lp_offset && m.data + m.length == s.data &&
          (m.memory_offset == SharedBytes::kNotShared) == (s.memory_offset == SharedBytes::kNotShared)) {
        m.length += s.length;
        continue;
      }
    }
    merged.push_back(s);
  }
  segments_ = std::move(merged);
  uint64_t at = 0;
  for (const Segment& s : segments_) {
    if (s.lp_offset != at) return false;
    at += s.length;
  }
  return at == size;
}

size_t LpMemory::Find(uint64_t lp_offset) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), lp_offset,
                             [](uint64_t off, const Segment& s) { return off < s.lp_offset; });
  if (it == segments_.begin()) return segments_.size();
  const size_t k = static_cast<size_t>(it - segments_.begin()) - 1;
  return lp_offset < segments_[k].lp_offset + segments_[k].length ? k : segments_.size();
}

std::string LpMemory::Copy(uint64_t lp_offset, uint64_t length) const {
  std::string out;
  out.reserve(length);
  ForEach(lp_offset, length, [&](const char* data, uint64_t, uint64_t n) { out.append(data, n); });
  return out;
}

const char* LpMemory::At(uint64_t lp_offset) const {
  const size_t k = Find(lp_offset);
  if (k == segments_.size()) return nullptr;
  return segments_[k].data + (lp_offset - segments_[k].lp_offset);
}

}  // namespace graphfs::chunkindex
