// A compressed striped file (graphfs-stripe --compress) as the volume reads it: its packed
// stream (a StripedFile of checksummed frames, striping/packed_directory.h) and the directory
// of its units. Every read decodes whole units; a frame whose checksum does not match is EIO
// for that read, a log line naming the file, the unit and its disks, and a counter in stats —
// never wrong bytes. Read-only: VolumeFile makes the file plain before its first write.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "cache/chunk_cache.h"
#include "cache/unit_layout.h"
#include "common/result.h"
#include "striping/packed_directory.h"
#include "striping/striped_file.h"

namespace graphfs::volume {

class FrameTier;

// The volume's counters of compressed reads (stats: "compressed").
struct PackedCounters {
  std::atomic<uint64_t> units_decoded{0};
  std::atomic<uint64_t> frame_bytes{0};    // read from the disks
  std::atomic<uint64_t> frame_bytes_from_memory{0};  // decoded from frames the frame tier held
  std::atomic<uint64_t> bytes_decoded{0};  // what they decoded to
  std::atomic<uint64_t> decode_ns{0};      // in DecodeUnit (checksum and codec)
  std::atomic<uint64_t> checksum_errors{0};
};

class PackedFile {
 public:
  // Reads the directory of `stream`'s packed stream (its manifest must have `packed`).
  static Result<std::shared_ptr<PackedFile>> Open(std::shared_ptr<StripedFile> stream, PackedCounters* counters);

  uint64_t size() const { return dir_.raw_size(); }  // the file's own size
  const PackedDirectory& directory() const { return dir_; }
  // One cache unit per compressed unit.
  std::shared_ptr<const cache::ChunkLayout> layout() const { return layout_; }
  // Up to `length` decoded bytes at `offset` into `buf`; fewer at the end of the file.
  Result<uint64_t> Read(uint64_t offset, uint64_t length, char* buf);
  // Adds to per_disk[d] the frame bytes on disk d of the units holding [offset, offset + length).
  void DiskShare(uint64_t offset, uint64_t length, std::vector<uint64_t>& per_disk) const;
  // Reads its frames through `frames` (the mount's frame tier, volume/internal/frame_tier.h) as file
  // `key` there, instead of from the disks at every decode; its decoded units are file
  // `decoded_key` in the cache. Before the first read.
  void UseFrames(std::shared_ptr<FrameTier> frames, uint64_t key, uint64_t decoded_key);

 private:
  PackedFile(std::shared_ptr<StripedFile> stream, PackedDirectory dir, std::shared_ptr<const cache::ChunkLayout> layout,
             PackedCounters* counters)
      : stream_(std::move(stream)), dir_(std::move(dir)), layout_(std::move(layout)), counters_(counters) {}
  // Unit k decoded into `out` (its raw length): its frame from the frame tier, else the disks.
  // `whole`: `out` is the unit's whole buffer, which the cache keeps (a piece copied out of a
  // scratch decode is not: its frame is kept whatever the decoded units' room).
  Status DecodeUnit(size_t k, char* out, bool whole);
  // Unit k decoded from its frame's bytes, checksum first (unless `checked`: verified before).
  Status DecodeFrame(size_t k, const char* frame, bool from_disk, bool checked, char* out);

  std::shared_ptr<StripedFile> stream_;
  std::shared_ptr<FrameTier> frames_;
  std::shared_ptr<cache::UnitSource> frame_source_;
  uint64_t frames_key_ = 0;
  uint64_t decoded_key_ = 0;
  PackedDirectory dir_;
  std::shared_ptr<const cache::ChunkLayout> layout_;
  PackedCounters* counters_;
};

}  // namespace graphfs::volume
