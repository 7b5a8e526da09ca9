// Striped files in the shared cache: the unit source over a StripedFile, the read path
// (cache units pinned and handed to the kernel without a copy, read-ahead for sequential
// readers, small random reads around the cache), and invalidation after changes.
#pragma once

#define FUSE_USE_VERSION FUSE_MAKE_VERSION(3, 12)
#include <fuse_lowlevel.h>

#include <memory>
#include <mutex>
#include <string>

#include "cache/chunk_cache.h"
#include "cache/unit_layout.h"
#include "striping/striped_file.h"

namespace graphfs {

struct GraphFs;
struct FileHandle;
struct Inode;

// One per open striped file (kept by its inode): what the cache loads units from.
class StripedSource final : public cache::UnitSource {
 public:
  StripedSource(std::shared_ptr<StripedFile> file, uint64_t key, std::shared_ptr<const cache::UnitLayout> layout,
                std::string layout_note)
      : file_(std::move(file)), key_(key), layout_(std::move(layout)), layout_note_(std::move(layout_note)) {}

  Result<uint64_t> Load(uint64_t offset, uint64_t length, char* buf) override { return file_->Read(offset, length, buf); }
  void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const override;

  uint64_t key() const { return key_; }
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

 private:
  std::shared_ptr<StripedFile> file_;
  const uint64_t key_;
  mutable std::mutex mu_;
  std::shared_ptr<const cache::UnitLayout> layout_;
  std::string layout_note_;
  bool written_ = false;
};

// Builds the source of a freshly opened striped file (see RefreshLayout).
std::shared_ptr<StripedSource> MakeStripedSource(GraphFs& fs, std::shared_ptr<StripedFile> file,
                                                 const std::string& backing_path);
// Units are the chunks of the graph's index when it has a fresh one, else stripe-unit
// blocks. Called at every open, so an index built (or rebuilt, or gone stale) while the
// file's inode was known takes effect at the next open; the file's cached units go when
// their meaning changes.
void RefreshLayout(GraphFs& fs, StripedSource& source, const StripedFile& file, const std::string& backing_path);

void ReadStriped(fuse_req_t req, FileHandle& h, size_t size, off_t offset);

// Copies the ranges [offset, offset + length) of a striped file into `out` + their
// out_offset, through the cache: each unit is loaded once (concurrent readers wait for that
// load) and pinned while copied. Units up to `window` bytes ahead of the copy are prefetched,
// so every disk works at once. `pid` is the reader the cache counts. Reads past the end are
// an error.
struct CopyRange {
  uint64_t offset = 0, length = 0, out_offset = 0;
};
Status CopyThroughCache(GraphFs& fs, const std::shared_ptr<StripedSource>& src, uint64_t file_size,
                        const std::vector<CopyRange>& ranges, char* out, uint32_t pid, uint64_t window);

// Call before and after every change to a striped file's bytes or size.
void NoteStripedChange(GraphFs& fs, Inode& inode);

}  // namespace graphfs
