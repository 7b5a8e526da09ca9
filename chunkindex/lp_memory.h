// Where a logical partition's bytes lie in memory. An LP is addressed by `lp_offset` (its
// extents packed one after another), but its bytes need not be packed: a loader that reads the
// disks straight into memory of its own (a batch of aligned reads, with the gaps between runs)
// places each extent where the read put it, and so never copies it. The memory belongs to the
// LP (blocks of the graph's shared memory where there is room, else the heap) and is freed
// with it — or is borrowed: bytes that already lie in the graph's shared memory (a cached unit)
// are placed where they are, and the LP keeps their owner alive (the unit's pin) instead of
// copying them.
//
// Filled by one loader thread before the LP is published; read-only (and thread-safe) after.
#pragma once

#include <cstdint>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/shared_arena.h"

namespace graphfs::chunkindex {

class LpMemory {
 public:
  // The LP's bytes [lp_offset, lp_offset + length) at `data` (memory_offset: where `data` lies in
  // the shared memory, SharedBytes::kNotShared on the heap).
  struct Segment {
    uint64_t lp_offset = 0;
    uint64_t length = 0;
    const char* data = nullptr;
    uint64_t memory_offset = SharedBytes::kNotShared;
  };

  LpMemory() = default;
  explicit LpMemory(std::shared_ptr<SharedArena> arena) : arena_(std::move(arena)) {}

  // A block of `bytes` owned by the LP, in the shared memory where there is room.
  struct Block {
    char* data = nullptr;
    uint64_t memory_offset = SharedBytes::kNotShared;  // of data[0]
  };
  Block Allocate(uint64_t bytes);
  // The LP's bytes [lp_offset, lp_offset + length) lie at `at` (inside a block of this LP).
  void Place(uint64_t lp_offset, uint64_t length, const char* at);
  // One block for the whole LP, packed: the LP's byte k at data[k]. For loaders that copy.
  char* Packed(uint64_t size);
  // The LP's bytes [lp_offset, lp_offset + length) lie at `at`, memory that `owner` keeps valid
  // (the LP holds `owner` until it is freed), at `memory_offset` in this LP's shared memory.
  // `owner_bytes`: the memory the owner keeps (a whole cached unit), counted once per owner.
  // False, and nothing placed, when the bytes are not in that memory: the caller copies them.
  bool Borrow(uint64_t lp_offset, uint64_t length, const char* at, const SharedArena* memory,
              uint64_t memory_offset, const std::shared_ptr<const void>& owner, uint64_t owner_bytes);

  // Calls f(data, memory_offset, length) for the consecutive pieces of [lp_offset,
  // lp_offset + length), which must be placed. memory_offset is kNotShared for heap bytes.
  template <typename F>
  void ForEach(uint64_t lp_offset, uint64_t length, F&& f) const {
    size_t k = Find(lp_offset);
    while (length > 0 && k < segments_.size()) {
      const Segment& s = segments_[k];
      const uint64_t skip = lp_offset - s.lp_offset;
      const uint64_t n = std::min(length, s.length - skip);
      f(s.data + skip, s.memory_offset == SharedBytes::kNotShared ? s.memory_offset : s.memory_offset + skip, n);
      lp_offset += n;
      length -= n;
      ++k;
    }
  }
  // Where the LP's byte `lp_offset` lies (placed; for tests and single bytes).
  const char* At(uint64_t lp_offset) const;
  // The LP's bytes [lp_offset, lp_offset + length), copied out (placed).
  std::string Copy(uint64_t lp_offset, uint64_t length) const;

  // Sorts and merges the segments; true if they cover [0, size) exactly once. After the load.
  bool Seal(uint64_t size);

  uint64_t bytes() const { return bytes_; }          // memory held (blocks' sizes)
  uint64_t borrowed_bytes() const { return borrowed_; }  // bytes placed in memory it borrowed
  uint64_t pinned_bytes() const { return pinned_; }      // the memory of the owners it keeps
  bool shared() const { return shared_; }            // every block in the shared memory
  const std::shared_ptr<SharedArena>& arena() const { return arena_; }
  size_t segments() const { return segments_.size(); }

 private:
  size_t Find(uint64_t lp_offset) const;  // the segment holding lp_offset (segments_.size(): none)

  std::shared_ptr<SharedArena> arena_;
  std::vector<SharedBytes> blocks_;
  std::vector<std::shared_ptr<const void>> owners_;  // of borrowed bytes (distinct, in order of borrowing)
  uint64_t borrowed_ = 0;
  uint64_t pinned_ = 0;
  std::vector<Segment> segments_;  // ascending lp_offset once sealed
  uint64_t bytes_ = 0;
  bool shared_ = true;
};

}  // namespace graphfs::chunkindex
