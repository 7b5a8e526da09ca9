// Compressed files' frames in memory: the first tier of the cache (volume/internal/memory_budget.h).
// A compressed unit comes from the disks as its frame — its stored, checksummed bytes — and the
// frame stays here, evicted by the cache's policy without streams — the daemon reads every frame,
// for whichever job, so the static rank decides (cache/chunk_cache.h, predict_streams) —, so that the
// next pass over the unit decodes it from memory instead of reading it again. At 2-4x more of
// the graph per byte than decoded units, a graph's frames fit where its decoded units would not:
// a budget that holds its stored bytes reads each of them from the disks once. Decoded units
// (the volume's ChunkCache, and the logical partitions made of them) are decoded from here and
// get what the frames leave.
//
// Internal to the volume: PackedFile reads its frames through it; Volume owns it. Shared by the
// files that read through it, so a file outliving the mount still reads (from the disks then).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cache/chunk_cache.h"
#include "common/result.h"
#include "striping/striped_file.h"

namespace graphfs::volume {

class MemoryBudget;

// A packed stream as the frame tier loads it: its bytes as the disks hold them.
class FrameSource final : public cache::UnitSource {
 public:
  explicit FrameSource(std::shared_ptr<StripedFile> stream) : stream_(std::move(stream)) {}
  Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) override {
    return stream_->Read(offset, length, buf);
  }
  void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const override {
    stream_->map().AddDiskShare(offset, length, per_disk);
  }

 private:
  std::shared_ptr<StripedFile> stream_;
};

class FrameTier {
 public:
  // `budget` sizes the tier (and the decoded units beside it) as frames come and go.
  FrameTier(const cache::CacheOptions& options, MemoryBudget* budget);
  FrameTier(const FrameTier&) = delete;
  FrameTier& operator=(const FrameTier&) = delete;

  // Calls `use(frame bytes, from_disk, checked)` with the frame `request` names, pinned for the
  // call: from memory, or read from the disks by this call (concurrent callers wait for one
  // read). `checked`: an earlier use verified these bytes (they have been in memory since), so
  // this one need not; a use that succeeds marks them so, and a frame a use failed on is dropped,
  // never kept.
  // The frame is then offered for admission — or dropped, when the decoded units have room for
  // the whole file it belongs to (`decoded`: the file's key among them and its decoded size; a
  // decode that is not kept there passes {}) —, and the decoded units get what the frames leave.
  struct DecodedFile {
    uint64_t key = 0;
    uint64_t bytes = 0;  // 0: the decoded bytes are not kept (the frame is)
  };
  Status With(const cache::UnitRequest& request, DecodedFile decoded,
              const std::function<Status(const char* frame, bool from_disk, bool checked)>& use);

  // Calls `use(frame bytes, checked)` with the frame `request` names if it is in memory now
  // (pinned for the call; never read from the disks for this) and returns true; false without
  // a call otherwise. A use that fails drops the frame, as With's; one that succeeds does not
  // mark it checked (it may have verified only some of its blocks: PackedFile::DecodePieces).
  Result<bool> WithHeld(const cache::UnitRequest& request, const std::function<Status(const char* frame, bool checked)>& use);
  // The decoded units of `decoded_file` (`decoded_bytes` in all) are decoded from the frames of
  // `frames_file` (unit k from frame k), for DecodedKept.
  void Link(uint64_t decoded_file, uint64_t frames_file, uint64_t decoded_bytes);
  // The decoded units' cache keeps `unit` (`bytes` of memory), admitted `admitted_for_ns` ago
  // (its CacheOptions::on_kept: its lock is held, so this takes only the frame tier's locks).
  // The decoded unit then stands for its frame, which is dropped, when
  //   - every frame of its file has been read from the disks once (the file's first pass is
  //     over: dropped in it, a decoded unit would be pushed out by frames still coming in, and
  //     take the only copy with it),
  //   - the decoded unit has been kept for as long as that first pass took: it is part of what
  //     the decoded tier keeps across passes, not of what it takes in and lets go within one
  //     (LPs' units: each one lost would be read from the disks again), and
  //   - the frames have room to spare for it: the frames' share of the cache gives the decoded
  //     unit's bytes to the decoded tier (MemoryBudget::SetStanding), so frames coming in
  //     later evict other frames, not the units that stand for theirs.
  // Where the frames fit and the decoded units do not, the decoded tier so holds
  // (cache - frames) / (1 - ratio) bytes instead of (cache - frames), and a pass decodes that
  // much less (docs/memory-as-cache.md, "A decoded unit stands for its frame").
  //
  // A file held decoded in place of its frames: when the whole file, decoded, fits the room
  // the cache gives standing units (MemoryBudget::StandingRoom, less what other files' standing
  // units take, with a 64th to spare), every decoded unit of it the cache keeps stands for its
  // frame at once, from the first pass — none of the three conditions above: the budget moves
  // its bytes to the decoded tier as it comes, so frames coming in cannot push it out, and the
  // cache no longer evicts it for a newcomer (returns true: its only copy, CacheOptions::on_kept).
  // Files claim the room in the order their units are kept: one that comes later and does not
  // fit beside those held is kept as frames first, as above. A pass over such a file then decodes nothing: at the peer's
  // `memory=1G`, the column's 768 MiB decoded fit a cache of ~1,000 MiB once its 476 MiB of
  // frames went, where frames first left the decoded units 337 MiB and every pass decoded the
  // column again (docs/memory-as-cache.md, fifteenth part).
  // Returns whether the unit is now the only copy of its bytes in memory (held in place).
  bool DecodedKept(const cache::UnitKey& unit, uint64_t bytes, int64_t admitted_for_ns);
  // A kept decoded unit left its cache (CacheOptions::on_left): the frames get its room back.
  void DecodedLeft(const cache::UnitKey& unit);
  uint64_t dropped_for_decoded() const { return dropped_for_decoded_.load(std::memory_order_relaxed); }
  uint64_t standing_bytes() const { return standing_bytes_.load(std::memory_order_relaxed); }
  // Of them, units of files held decoded in place of their frames.
  uint64_t in_place_bytes() const { return in_place_bytes_.load(std::memory_order_relaxed); }

  // Tells the budget of the units that came to stand for their frames or left since it was last
  // told (DecodedKept and DecodedLeft run under the decoded units' lock and cannot): at each use
  // of a frame, and on the front end's memory samples (Volume::SetUnaccountedMemory), since a
  // file held decoded in place of its frames is no longer decoded, and so uses no frame.
  void Settle();

  // The mount goes: the budget is no longer told (files still open read on, by themselves).
  void Detach();
  cache::ChunkCache& cache() { return frames_; }
  const cache::ChunkCache& cache() const { return frames_; }

 private:
  cache::ChunkCache frames_;
  std::mutex mu_;
  MemoryBudget* budget_;  // null once detached

  // Each frames file's units read from the disks at least once: its first pass is over when
  // all are.
  struct FirstPass {
    std::vector<bool> read;
    uint64_t left = 0;
    int64_t start_ns = 0, took_ns = 0;  // its first read; how long until its last unit's first
  };
  void NoteRead(const cache::UnitRequest& request);  // links_mu_ held
  void Rebalance();  // the standing units to the budget, and the room it gives them back

  std::mutex links_mu_;  // taken after the decoded units' lock (DecodedKept), before the frames'
  struct Linked {
    uint64_t frames_file = 0;
    uint64_t decoded_bytes = 0;  // the decoded file's size
    uint64_t standing = 0;       // bytes of its units standing for their frames
  };
  std::unordered_map<uint64_t, Linked> frames_of_;  // by decoded file
  std::unordered_map<uint64_t, FirstPass> first_pass_;  // by frames file
  struct Standing {
    uint64_t bytes = 0;
    bool in_place = false;  // its file is held decoded in place of its frames
  };
  std::unordered_map<cache::UnitKey, Standing, cache::UnitKeyHash> standing_;  // by decoded unit
  std::atomic<uint64_t> standing_bytes_{0};  // their sum
  std::atomic<uint64_t> in_place_bytes_{0};  // of which in place
  // What the frames' share would give up for standing units (MemoryBudget::StandingRoom), as of
  // the last split: DecodedKept runs under the decoded units' lock and cannot ask the budget.
  std::atomic<uint64_t> standing_room_{0};
  std::atomic<uint64_t> standing_applied_{0};  // what the budget last gave the decoded tier for them
  std::atomic<uint64_t> dropped_for_decoded_{0};
  std::atomic<bool> rebalance_due_{false};  // standing units came or went since the budget last split
};

}  // namespace graphfs::volume
