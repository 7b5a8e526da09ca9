// Compressed files' frames in memory: the first tier of the cache (volume/memory_budget.h).
// A compressed unit comes from the disks as its frame — its stored, checksummed bytes — and the
// frame stays here, priority-evicted like any cache unit (cache/eviction_policy.h), so that the
// next pass over the unit decodes it from memory instead of reading it again. At 2-4x more of
// the graph per byte than decoded units, a graph's frames fit where its decoded units would not:
// a budget that holds its stored bytes reads each of them from the disks once. Decoded units
// (the volume's ChunkCache, and the logical partitions made of them) are decoded from here and
// get what the frames leave.
//
// Internal to the volume: PackedFile reads its frames through it; Volume owns it. Shared by the
// files that read through it, so a file outliving the mount still reads (from the disks then).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

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

  // The mount goes: the budget is no longer told (files still open read on, by themselves).
  void Detach();
  cache::ChunkCache& cache() { return frames_; }
  const cache::ChunkCache& cache() const { return frames_; }

 private:
  cache::ChunkCache frames_;
  std::mutex mu_;
  MemoryBudget* budget_;  // null once detached
};

}  // namespace graphfs::volume
