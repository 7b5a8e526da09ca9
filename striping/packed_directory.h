// The directory of a compressed striped file (graphfs-stripe --compress).
//
// The file's bytes are cut into units (its graph's index chunks, or fixed blocks), each
// compressed on its own into a frame that carries its checksum (compress/unit_frame.h). The
// frames lie one after another in the file's striped *packed stream*, each starting at a
// multiple of 4 KiB, so a frame is read with aligned (O_DIRECT) requests and a unit never
// needs its neighbours. This directory, written after the last frame, says where each unit's
// frame is; the manifest says where the directory is (StripeManifest::packed). Decoding checks
// everything a damaged disk could change: magic, counts, lengths, order, alignment, checksum.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace graphfs {

struct PackedUnit {
  uint64_t raw_offset = 0;    // where the unit starts in the file
  uint32_t raw_length = 0;
  uint32_t frame_length = 0;  // its frame's bytes in the packed stream
  uint64_t frame_offset = 0;  // a multiple of kFrameAlign
};

class PackedDirectory {
 public:
  static constexpr uint64_t kFrameAlign = 4096;

  // Appends the file's next unit: units cover the file from offset 0 without gaps, and frames
  // follow each other in the packed stream, aligned and not overlapping.
  Status Add(uint32_t raw_length, uint64_t frame_offset, uint32_t frame_length);

  const std::vector<PackedUnit>& units() const { return units_; }
  uint64_t raw_size() const { return raw_size_; }
  // The end of the last frame, rounded up to kFrameAlign: where the next frame (or the
  // directory) goes.
  uint64_t frames_end() const;

  // Indexes [first, end) of the units overlapping [offset, offset + length) (clipped to the file).
  std::pair<size_t, size_t> Overlapping(uint64_t offset, uint64_t length) const;

  std::string Encode() const;
  static Result<PackedDirectory> Decode(std::string_view bytes);

 private:
  std::vector<PackedUnit> units_;
  uint64_t raw_size_ = 0;
};

class StripedFile;

// The directory of a compressed file, read through its StripedFile (the packed stream) and
// checked against its manifest: EINVAL for a file that is not compressed, EIO for a short
// stream or units that do not hold the manifest's size. For the mount (volume/internal/packed_file.h)
// and the tools (PackedFileReader) alike.
Result<PackedDirectory> ReadPackedDirectory(StripedFile& stream);

}  // namespace graphfs
