// Verified blocks of a degraded file's rows, kept for — or handed to — the one other read that
// needs them (docs/parity.md, "Reads", degraded): when a disk of a file with parity is lost, a
// row whose data unit lay on it is rebuilt from the same range of its other units — D - 1 data
// units the readers read anyway, and a parity unit. The volume reads a stream disk by disk, so
// the lost unit's rebuild and the reads of its row's data units are separate reads; without
// sharing, each of those data units is read twice (2D - 1 unit reads a row instead of D: 0.45 of
// the healthy rate at 4 disks instead of (N - 1)/N).
//
// A read claims the blocks it is about to read (Claim, all of a read's wants under one lock):
//  - blocks another read left here (held) are taken: copied out and dropped;
//  - blocks another read has in flight are awaited: that read copies them to the waiter once it
//    has verified them (Deliver) and tells it (Waiter::Arrived), so they are read once even when
//    the two reads run at the same time;
//  - the rest the claimer reads itself, and they become in flight for it: it must Deliver them
//    (or give them up, which tells the waiters to read them themselves).
// A read only ever waits for reads that claimed before it, so the waits cannot form a cycle.
// What a read delivers with no one waiting is kept for the read that comes later (Put); what no
// one takes is dropped oldest first beyond the capacity of the pool the share draws on
// (row_share_pool.h: one limit for every degraded file of a mount, charged to its memory budget),
// so a reader that never comes costs memory only up to it. Only verified bytes are put, and a write or truncate of the file clears
// the held blocks first (a file with a lost disk refuses them anyway: parity_write.h).
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "striping/row_share_pool.h"

namespace graphfs {

class RowShare {
 public:
  // Blocks of `block` bytes (the file's sum block), held within `pool`'s capacity (shared with
  // the pool's other shares).
  RowShare(uint64_t block, std::shared_ptr<RowSharePool> pool);
  // A pool of its own, of `budget` bytes.
  RowShare(uint64_t block, uint64_t budget) : RowShare(block, std::make_shared<RowSharePool>(budget)) {}
  ~RowShare();
  RowShare(const RowShare&) = delete;
  RowShare& operator=(const RowShare&) = delete;

  // Keeps `bytes`, the unit of `slot` in `row` from offset `begin` (block-aligned) on: every
  // whole block of it, and a last block that ends at the unit's end (`unit_end`). Blocks held
  // already stay as they are.
  void Put(uint64_t row, uint32_t slot, uint64_t begin, std::span<const char> bytes, uint64_t unit_end);
  // Copies [begin, begin + length) of that unit into `out` and drops those blocks, when every
  // block of the range is held (begin block-aligned); false, and nothing taken, otherwise.
  bool Take(uint64_t row, uint32_t slot, uint64_t begin, uint64_t length, char* out);

  // A read told of the blocks it awaits, once per block, on the thread of the read that had
  // them in flight: `delivered` when the block's bytes are in the waiter's memory, false when
  // that read could not get them (the waiter must read them itself). Not called under the
  // share's lock.
  class Waiter {
   public:
    virtual void Arrived(size_t want, bool delivered) = 0;

   protected:
    ~Waiter() = default;
  };
  // [begin, begin + length) (block-aligned begin; whole blocks or up to `unit_end`) of the unit of
  // `slot` in `row`, to go to `out`.
  struct Want {
    uint64_t row = 0;
    uint32_t slot = 0;
    uint64_t begin = 0, length = 0, unit_end = 0;
    char* out = nullptr;
  };
  enum class Got {
    kTaken,    // every block was held: copied to `out`
    kAwaited,  // some in flight for other reads (the held rest copied): the waiter hears of each
    kRead,     // the claimer reads the blocks nobody had (Claimed::read), now in flight for it;
               // the rest taken or awaited, as above
  };
  // A run of blocks nobody has, which the claimer reads (kRead): [begin, begin + length) of the
  // unit. The blocks of the want outside its runs are taken or awaited — also those between two
  // runs (the reads of one row's units are cut in different places, so a want often finds blocks
  // others have between blocks nobody has).
  struct ReadRange {
    uint64_t begin = 0, length = 0;
  };
  struct Claimed {
    std::vector<Got> got;                      // one per want
    std::vector<std::vector<ReadRange>> read;  // per want: its runs, in order; empty unless kRead
    uint64_t awaited = 0;                      // blocks the waiter will hear of
  };
  // Claims `wants` for `reader` in one step. Blocks in flight for `reader` itself count as
  // missing (a read never waits for itself). The reads of one row's units are cut differently
  // (the lost disk's extents are not the others'), so a want is mostly shared in part.
  Claimed Claim(const void* reader, std::span<const Want> wants, Waiter* waiter);
  // `reader`'s in-flight blocks of [begin, begin + length) of the unit: their bytes (from
  // `bytes`, which starts at `begin`; nullptr when the read could not get them) go to the reads
  // waiting for them; with no one waiting, whole verified blocks are kept (Put) when `keep`.
  void Deliver(const void* reader, uint64_t row, uint32_t slot, uint64_t begin, uint64_t length, const char* bytes,
               bool keep);

  // Drops every block held (the file is about to change). Blocks in flight stay: their reads
  // run, and a write waits for them (read_gate.h).
  void Clear();

  struct Stats {
    uint64_t put_bytes = 0, taken_bytes = 0, dropped_bytes = 0, held_bytes = 0;
    uint64_t awaited_bytes = 0;  // handed from one read in flight to another
  };
  Stats stats() const;
  const RowSharePool& pool() const { return *pool_; }

 private:
  friend class RowSharePool;
  // Drops the oldest held blocks, at least `bytes` of them if it holds that much; what it dropped.
  uint64_t DropOldest(uint64_t bytes);
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
  struct Await {
    Waiter* waiter;
    size_t want;
    char* out;
    uint64_t length;  // of the block, wanted
  };
  struct Flight {
    const void* reader;
    uint64_t length;  // of the block, as the reader reads it
    std::vector<Await> waiting;
  };
  // The length of `block` of a unit ending at `unit_end`, or 0 when [begin, end) does not hold it
  // whole.
  uint64_t BlockLength(uint64_t block, uint64_t end, uint64_t unit_end) const;
  void PutLocked(const Key& key, const char* bytes, uint64_t length);
  // A held block leaves (taken or dropped): its bytes leave the pool too.
  void ReleaseLocked(uint64_t length);
  // Within the pool's capacity again: the other shares' oldest blocks first (a file no longer
  // read gives way to the one being read), then this one's. Called without mu_.
  void FitPool();
  uint64_t DropOldestLocked(uint64_t bytes);

  const uint64_t block_;
  const std::shared_ptr<RowSharePool> pool_;
  mutable std::mutex mu_;
  std::unordered_map<Key, std::string, Hash> blocks_;
  std::unordered_map<Key, Flight, Hash> flights_;
  std::deque<Key> order_;  // as put; entries taken since are skipped when dropping
  Stats stats_;
};

}  // namespace graphfs
