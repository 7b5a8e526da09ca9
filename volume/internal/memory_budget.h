// The mount's one memory budget (mount option `memory=`): what the daemon may spend on graph
// bytes and on what serves them — cache units (admitted and staged), compressed files' frames,
// every graph's LP window with its idle shared memory, and the graphs' chunk indexes — as one
// figure. Staging is charged what it holds (below); a graph's index and the memory its LPs own
// (not the cached units they borrow) are *reserved* while it has a schedule (jobs), and the
// cache gets the rest: it grows back when the graph's last job goes. With a disk lost, what
// degraded files keep of their rows' blocks for each other's reads is reserved too
// (degraded_share.h).
//
//   cache = max(total / 8, total - staging - sum of the reservations - unaccounted)
//
// `staging` is what the decoded units' staging area holds (loads in flight, units waiting for
// their readers), its peak over the last kStagingWindow samples plus kStagingHeadroom, not its
// ceiling (readahead_mem=, at most an eighth of the total): in an integrated mix nobody reads
// through the page-cache path and staging held 2-5 of its 48 MiB at scale 22, f = 1/4, memory the
// frames then lacked (docs/memory-as-cache.md, thirteenth part). When staging grows past its
// charge the cache tells the budget before the new unit's bytes are read (CacheOptions::on_staged),
// and the frames give way at once, so the RSS target holds; it follows the samples down. At
// mount, before any sample, staging is charged its ceiling.
//
// `unaccounted` is the daemon's resident memory no part of the budget answers for (the
// allocator's arenas, threads' buffers, libraries: what the front end measures as RSS less
// everything above) beyond kUnaccountedAllowance: the cache makes room for it, so that RSS stays
// within the budget plus that allowance (and short peaks above it).
//
// The cache is two tiers (volume/internal/frame_tier.h): compressed files' frames, as the disks hold
// them, come first — they keep 2-4x more of the graph per byte, so what memory can hold is
// read from the disks once —, and decoded units get what the frames leave, at least an eighth
// of the cache (what the readers in flight decode into):
//
//   floor    = max(cache / 8, held - held_slack)
//   frames  <= cache - floor - standing
//   decoded  = max(floor, cache - frames in memory)
//
// (Units that logical partitions keep after the decoded tier let them go — held —, and its
// idle recycled buffers, are inside the decoded tier's capacity: cache/chunk_cache.h. Held
// units cannot be evicted, so when they are more than an eighth of the cache the frames make
// room for them: the daemon's RSS overshot the budget by them otherwise. But only beyond
// `held_slack`, what the RSS target (1.05 x total + 64 MiB) leaves above the budget and the
// unaccounted allowance: held units come and go with LPs, and frames given up for them are read
// from the disks again — at the demo's f = 1/4, 0.9 GB and 7 s for no RSS: docs/memory-as-cache.md.)
//
// `standing`: decoded units that stand for their frames (volume/internal/frame_tier.h, DecodedKept: the
// frames were all in with room to spare, so a kept decoded unit's frame was dropped and its
// bytes moved from the frames' share to the decoded tier's). Frames coming in later then evict
// other frames, not the only copies of those units.
//
// A frame is not kept beside its decoded unit when the decoded units have room for its whole
// file (the decoded copy costs no decoding at the next pass; the frame would only take room
// from it): a file that fits decoded is held decoded, one that does not as frames first.
//
// Without `memory=` there is no total: `cache_size` is the cache, split the same way, and
// reservations cost nothing; but a graph with jobs lends the cache the part of its LP window that
// would sit idle (Lend): even at cache_size=0 the frames its LPs read stay for the next ones.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>

namespace graphfs::cache {
class ChunkCache;
}

namespace graphfs::volume {

class MemoryBudget {
 public:
  // `total` 0: no budget; `cache_bytes` is then the cache (both tiers). `staging`: the staging
  // area's ceiling (what it is charged until FollowStaging's first sample).
  MemoryBudget(uint64_t total, uint64_t staging, uint64_t cache_bytes = 0)
      : total_(total), staging_ceiling_(staging), staging_(staging), cache_bytes_(cache_bytes) {}
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
    bool loan_ = false;  // made by Lend: adds to the cache instead
  };

  bool enabled() const { return total_ > 0; }
  uint64_t total() const { return total_; }
  // The caches the budget sizes (set when they exist, cleared before they go): the decoded units'
  // and, when compressed files are read through one, the frames'.
  void Attach(cache::ChunkCache* units, cache::ChunkCache* frames = nullptr);
  Reservation Reserve(uint64_t bytes);
  // Without a total: `bytes` of a graph's LP window lent to the cache (both tiers, split as
  // above) until the loan goes. The window keeps that much less of its freed memory idle
  // (volume/graph_schedule.cc), so the daemon's memory stays what it was: at cache_size=0 a grid
  // BFS's LPs read each frame from the disks once instead of once per iteration
  // (docs/memory-as-cache.md). With a total it lends nothing (the window's idle memory is charged
  // to the budget already, and the cache has the rest): an empty loan.
  Reservation Lend(uint64_t bytes);
  // Frames came into memory or left it: the decoded units get what they leave.
  void Rebalance();
  // Decoded units of `bytes` stand for their frames now (frames/decoded split above); rebalances.
  void SetStanding(uint64_t bytes);
  // The most decoded units may stand for their frames: the cache less a 32nd of it for the
  // units readers decode in flight (or the held units beyond the slack, if more). A file whose
  // decoded bytes fit it is held decoded in place of its frames (volume/internal/frame_tier.h,
  // DecodedKept); the frames' share then goes to 0 (FramesCapacity) and the decoded tier gets
  // the cache. Not the eighth the decoded tier keeps beside frames: a file held in place is read
  // from it, not decoded into it — at the peer's `memory=1G` the cache is 840-890 MiB while the
  // jobs run, its eighth would leave 752 MiB, and the column is 768 (docs/memory-as-cache.md,
  // fifteenth part).
  static constexpr uint64_t kInPlaceFloorDivisor = 32;
  uint64_t StandingRoom() const;
  // The daemon's resident memory outside everything the budget counts, as measured now: what is
  // beyond kUnaccountedAllowance of it is set aside (the cache shrinks or grows back).
  static constexpr uint64_t kUnaccountedAllowance = 32ull << 20;
  // The daemon's RSS target beyond the budget: 5% of it plus this.
  static constexpr uint64_t kRssAllowance = 64ull << 20;
  void SetUnaccounted(uint64_t resident_bytes);
  // Staging's charge (the split above): StagingGrew when the decoded units' staging area rose past
  // it (at once: the frames give way before the new unit's bytes are read), FollowStaging on the
  // front end's samples (the charge follows the window's peak down; also up, should a rise have
  // come without StagingGrew).
  static constexpr uint64_t kStagingHeadroom = 8ull << 20;
  static constexpr uint64_t kStagingStep = 4ull << 20;
  static constexpr size_t kStagingWindow = 20;  // samples: 5 s at the front end's 250 ms
  void StagingGrew(uint64_t staged_bytes);
  void FollowStaging();
  // Whether the decoded units have room for the whole of a file of `file_bytes` (decoded), its
  // units in the cache as `file` and the other files' units as they are: its units decoded now
  // will stay decoded, and their frames need not be kept beside them. (Per unit instead of per
  // file, a file larger than the room would push its own decoded units out, and with them the
  // only copy of the frames dropped for them.)
  bool DecodedFileFits(uint64_t file, uint64_t file_bytes) const;

  struct State {
    uint64_t total = 0, staging = 0, reserved = 0, reservations = 0;
    uint64_t staging_ceiling = 0;  // staging: what it is charged now (see above)
    uint64_t unaccounted = 0;      // set aside for resident memory outside the rest (beyond the allowance)
    uint64_t cache_capacity = 0;   // both tiers
    uint64_t frames_capacity = 0;  // at most this of it for frames
    uint64_t frames_used = 0;      //   held now
    uint64_t standing = 0;         // decoded units standing for their frames (moved from the frames' share)
    uint64_t units_capacity = 0;   // what the decoded units get
    uint64_t lent = 0;             // without a total: lent to the cache by graphs' LP windows (in cache_capacity)
  };
  State state() const;
  // The cache's capacity (both tiers) for `reserved` bytes of reservations (and what is set
  // aside for unaccounted memory: mu_ held, or before SetUnaccounted is first called).
  uint64_t CacheCapacity(uint64_t reserved) const;
  // The split of a cache of `cache` bytes with `frames_used` bytes of frames in memory and
  // `held` bytes of decoded units LPs pin after the decoded tier let them go (beyond the slack:
  // HeldCharge).
  static uint64_t FramesCapacity(uint64_t cache, uint64_t held = 0, uint64_t standing = 0) {
    const uint64_t share = cache - DecodedFloor(cache, held);
    return share - std::min(share, standing);
  }
  static uint64_t UnitsCapacity(uint64_t cache, uint64_t frames_used, uint64_t held = 0);

 private:
  // What the decoded tier gets whatever the frames hold: an eighth of the cache, or the units
  // LPs pin outside it if more (they are resident until the LPs go, and only the frames can
  // make room for them).
  static uint64_t DecodedFloor(uint64_t cache, uint64_t held) { return std::min(cache, std::max(cache / 8, held)); }
  // The held units the frames make room for: those beyond what the RSS target leaves above the
  // budget once the unaccounted allowance is taken (floor above).
  uint64_t HeldCharge(uint64_t held) const {
    const uint64_t slack = total_ / 20 + (kRssAllowance - kUnaccountedAllowance);
    return held > slack ? held - slack : 0;
  }
  uint64_t CachePart() const;  // mu_ held
  void Apply();                // mu_ held
  // Staging's charge for `peak` bytes staged: the peak and the headroom, in steps; the headroom
  // never beyond the ceiling (what staging may stage ahead), the peak whatever it is.
  uint64_t StagingCharge(uint64_t peak) const;
  void SetStagingCharge(uint64_t charge);  // mu_ held

  const uint64_t total_;
  const uint64_t staging_ceiling_;
  uint64_t staging_;  // charged now
  std::array<uint64_t, kStagingWindow> staging_samples_{};
  size_t staging_next_ = 0, staging_sampled_ = 0;
  uint64_t cache_bytes_;
  mutable std::mutex mu_;
  cache::ChunkCache* units_ = nullptr;
  cache::ChunkCache* frames_ = nullptr;
  uint64_t reserved_ = 0;
  uint64_t reservations_ = 0;
  uint64_t unaccounted_ = 0;
  uint64_t standing_ = 0;
  uint64_t lent_ = 0;
};

}  // namespace graphfs::volume
