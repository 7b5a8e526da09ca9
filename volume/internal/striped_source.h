// A striped file as the cache sees it: where its units' bytes come from (the file's
// disks) and how it is cut into units — the chunks of its graph's chunk index when the
// index is fresh, else stripe-aligned blocks. One per open striped file (and one for the
// `column` of each graph with a logical-partition schedule).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/chunk_cache.h"
#include "cache/unit_layout.h"
#include "striping/striped_file.h"
#include "volume/internal/packed_file.h"

namespace graphfs::volume {

class StripedSource final : public cache::UnitSource {
 public:
  StripedSource(std::shared_ptr<StripedFile> file, uint64_t key, std::shared_ptr<const cache::UnitLayout> layout,
                std::string layout_note)
      : file_(std::move(file)), key_(key), layout_(std::move(layout)), layout_note_(std::move(layout_note)) {}
  // A compressed file: its units are the compressed units, decoded at every load.
  StripedSource(std::shared_ptr<PackedFile> packed, std::shared_ptr<StripedFile> stream, uint64_t key)
      : file_(std::move(stream)), packed_(std::move(packed)), key_(key), layout_(packed_->layout()),
        layout_note_("compressed units (" + file_->manifest().packed->codec + ")") {}

  // The file's bytes (decoded, for a compressed file): what the cache loads, and what a read
  // around the cache gets.
  Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) override {
    return packed_ ? packed_->Read(offset, length, buf) : file_->Read(offset, length, buf);
  }
  void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const override;
  // The file's own size (a compressed file's, not its stream's).
  uint64_t size() const { return packed_ ? packed_->size() : file_->size(); }
  bool compressed() const { return packed_ != nullptr; }
  PackedFile* packed() const { return packed_.get(); }  // null unless compressed
  bool AlignedLoads() const override { return !compressed(); }

  uint64_t Generation() const override { return generation_.load(); }
  // Before and after every write or truncate, before the cache forgets the file's units.
  void BumpGeneration() { generation_.fetch_add(1); }

  uint64_t key() const { return key_; }
  const StripedFile& file() const { return *file_; }
  std::shared_ptr<const cache::UnitLayout> layout() const {
    std::lock_guard<std::mutex> lock(mu_);
    return layout_;
  }
  // After a write or truncate the chunk index no longer describes the file: blocks from now on.
  void DropChunkLayout();
  // Switches to `layout`; false if it is the current one, or the file was written since opened.
  bool SetLayout(std::shared_ptr<const cache::UnitLayout> layout, std::string note);
  std::string layout_note() const {
    std::lock_guard<std::mutex> lock(mu_);
    return layout_note_;
  }
  // Where its units are loaded from now on (null: the cache's own buffers): the shared memory of
  // the graph's LPs while the graph has jobs (volume/internal/graph_schedule.h), so that an LP can be
  // made of cached units rather than copies of them.
  void SetArena(std::shared_ptr<SharedArena> arena) {
    std::lock_guard<std::mutex> lock(mu_);
    arena_ = std::move(arena);
  }
  std::shared_ptr<SharedArena> arena() const {
    std::lock_guard<std::mutex> lock(mu_);
    return arena_;
  }

 private:
  std::shared_ptr<StripedFile> file_;
  std::shared_ptr<PackedFile> packed_;  // set for a compressed file
  const uint64_t key_;
  mutable std::mutex mu_;
  std::shared_ptr<const cache::UnitLayout> layout_;
  std::string layout_note_;
  std::shared_ptr<SharedArena> arena_;
  bool written_ = false;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace graphfs::volume
