// Verified blocks of a degraded file's rows, kept for the one other read that needs them
// (docs/parity.md, "Reads", degraded): when a disk of a file with parity is lost, a row whose
// data unit lay on it is rebuilt from the same range of its other units — D - 1 data units the
// readers read anyway, and a parity unit. The volume reads a stream disk by disk, so the lost
// unit's rebuild and the reads of its row's data units are separate reads; without sharing, each
// of those data units is read twice (2D - 1 unit reads a row instead of D: 0.45 of the healthy
// rate at 4 disks instead of (N - 1)/N). A read of a data unit of such a row leaves its blocks
// here for the rebuild, and a rebuild leaves the data blocks it had to read for the reader that
// comes later; whoever comes second takes them (and they are dropped). What no one takes is
// dropped oldest first beyond a byte budget, so a reader that never comes costs memory only up
// to it. Only verified bytes are put, and a write or truncate of the file clears it first (a file
// with a lost disk refuses them anyway: parity_write.h). Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

namespace graphfs {

class RowShare {
 public:
  // Blocks of `block` bytes (the file's sum block), at most `budget` bytes held.
  RowShare(uint64_t block, uint64_t budget) : block_(block), budget_(budget) {}

  // Keeps `bytes`, the unit of `slot` in `row` from offset `begin` (block-aligned) on: every
  // whole block of it, and a last block that ends at the unit's end (`unit_end`). Blocks held
  // already stay as they are.
  void Put(uint64_t row, uint32_t slot, uint64_t begin, std::span<const char> bytes, uint64_t unit_end);
  // Copies [begin, begin + length) of that unit into `out` and drops those blocks, when every
  // block of the range is held (begin block-aligned); false, and nothing taken, otherwise.
  bool Take(uint64_t row, uint32_t slot, uint64_t begin, uint64_t length, char* out);

  // Drops every block held (the file is about to change).
  void Clear();

  struct Stats {
    uint64_t put_bytes = 0, taken_bytes = 0, dropped_bytes = 0, held_bytes = 0;
  };
  Stats stats() const;

 private:
  struct Key {
    uint64_t row;
    uint32_t slot;
    uint64_t block;
    bool operator==(const Key&) const = default;
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.row * 1000003 + k.block) ^ (std::hash<uint32_t>()(k.slot) << 1);
    }
  };
  const uint64_t block_;
  const uint64_t budget_;
  mutable std::mutex mu_;
  std::unordered_map<Key, std::string, Hash> blocks_;
  std::deque<Key> order_;  // as put; entries taken since are skipped when dropping
  Stats stats_;
};

}  // namespace graphfs
