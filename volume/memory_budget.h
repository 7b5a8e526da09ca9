// The mount's one memory budget (mount option `memory=`): what the daemon may spend on graph
// bytes and on what serves them — cache units (admitted and staged), compressed files' frames,
// every graph's LP window with its idle shared memory, and the graphs' chunk indexes — as one
// figure. Staging is a ceiling set at mount; a graph's index and the memory its LPs own (not the
// cached units they borrow) are *reserved* while it has a schedule (jobs), and the cache gets
// the rest: it grows back when the graph's last job goes.
//
//   cache = max(total / 8, total - staging - sum of the reservations)
//
// The cache is two tiers (volume/frame_tier.h): compressed files' frames, as the disks hold
// them, come first — they keep 2-4x more of the graph per byte, so what memory can hold is
// read from the disks once —, and decoded units get what the frames leave, at least an eighth
// of the cache (what the readers in flight decode into):
//
//   frames  <= cache - cache / 8
//   decoded  = max(cache / 8, cache - frames in memory)
//
// (Units that logical partitions keep after the decoded tier let them go, and its idle recycled
// buffers, are inside the decoded tier's capacity: cache/chunk_cache.h.)
//
// A frame is not kept beside its decoded unit when the decoded units have room for its whole
// file (the decoded copy costs no decoding at the next pass; the frame would only take room
// from it): a file that fits decoded is held decoded, one that does not as frames first.
//
// Without `memory=` there is no total: `cache_size` is the cache, split the same way, and
// reservations cost nothing.
#pragma once

#include <cstdint>
#include <mutex>

namespace graphfs::cache {
class ChunkCache;
}

namespace graphfs::volume {

class MemoryBudget {
 public:
  // `total` 0: no budget; `cache_bytes` is then the cache (both tiers).
  MemoryBudget(uint64_t total, uint64_t staging, uint64_t cache_bytes = 0)
      : total_(total), staging_(staging), cache_bytes_(cache_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Memory set aside for one user (a graph's LP window and index) until it is destroyed.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(Reservation&& other) noexcept { *this = std::move(other); }
    Reservation& operator=(Reservation&& other) noexcept;
    ~Reservation() { Release(); }
    uint64_t bytes() const { return bytes_; }
    // Sets aside `bytes` instead (a graph's LPs own more or less memory now).
    void Resize(uint64_t bytes);
    void Release();

   private:
    friend class MemoryBudget;
    MemoryBudget* budget_ = nullptr;
    uint64_t bytes_ = 0;
  };

  bool enabled() const { return total_ > 0; }
  uint64_t total() const { return total_; }
  // The caches the budget sizes (set when they exist, cleared before they go): the decoded units'
  // and, when compressed files are read through one, the frames'.
  void Attach(cache::ChunkCache* units, cache::ChunkCache* frames = nullptr);
  Reservation Reserve(uint64_t bytes);
  // Frames came into memory or left it: the decoded units get what they leave.
  void Rebalance();
  // Whether the decoded units have room for the whole of a file of `file_bytes` (decoded), its
  // units in the cache as `file` and the other files' units as they are: its units decoded now
  // will stay decoded, and their frames need not be kept beside them. (Per unit instead of per
  // file, a file larger than the room would push its own decoded units out, and with them the
  // only copy of the frames dropped for them.)
  bool DecodedFileFits(uint64_t file, uint64_t file_bytes) const;

  struct State {
    uint64_t total = 0, staging = 0, reserved = 0, reservations = 0;
    uint64_t cache_capacity = 0;   // both tiers
    uint64_t frames_capacity = 0;  // at most this of it for frames
    uint64_t frames_used = 0;      //   held now
    uint64_t units_capacity = 0;   // what the decoded units get
  };
  State state() const;
  // The cache's capacity (both tiers) for `reserved` bytes of reservations.
  uint64_t CacheCapacity(uint64_t reserved) const;
  // The split of a cache of `cache` bytes with `frames_used` bytes of frames in memory.
  static uint64_t FramesCapacity(uint64_t cache) { return cache - DecodedFloor(cache); }
  static uint64_t UnitsCapacity(uint64_t cache, uint64_t frames_used);

 private:
  static uint64_t DecodedFloor(uint64_t cache) { return cache / 8; }
  uint64_t CachePart() const;  // mu_ held
  void Apply();                // mu_ held

  const uint64_t total_;
  const uint64_t staging_;
  uint64_t cache_bytes_;
  mutable std::mutex mu_;
  cache::ChunkCache* units_ = nullptr;
  cache::ChunkCache* frames_ = nullptr;
  uint64_t reserved_ = 0;
  uint64_t reservations_ = 0;
};

}  // namespace graphfs::volume
