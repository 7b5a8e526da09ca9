// The packed stream of a compressed file (packed_directory.h) written and read through its
// parts, for the offline tools (graphfs-stripe --compress, graphfs-unstripe; graphfs-update and
// gen-update read compressed stubs with PackedFileReader). Every frame is checked
// (compress/unit_frame.h) when it is read back: damage is EIO naming the unit. The mount reads
// compressed files through its cache instead (volume/internal/packed_file.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "compress/codec.h"
#include "striping/disk_set.h"
#include "striping/manifest.h"
#include "striping/packed_directory.h"
#include "striping/stripe_map.h"
#include "striping/striped_file.h"

namespace graphfs {

class PackedStreamWriter {
 public:
  // Where the stream's bytes go: `bytes` at stream offset `at`, each write after the last (the
  // frames are 4 KiB-aligned: a gap between them is never written).
  using Sink = std::function<Status(uint64_t at, std::span<const char> bytes)>;

  // Continues the stream whose frames `written` lists (empty: a new stream) in the parts.
  PackedStreamWriter(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts,
                     PackedDirectory written);
  // The same, its bytes handed to `sink` (a file with parity: held until its rows are whole,
  // restripe_detail::StreamRows).
  PackedStreamWriter(Sink sink, PackedDirectory written) : sink_(std::move(sink)), dir_(std::move(written)) {}

  // Compresses `raw`, the file's next unit, into a frame at the end of the stream: a version 2
  // frame of blocks of `block_bytes` raw bytes (a whole number of the codec's records), or
  // with 0 a version 1 frame (compress/unit_frame.h).
  Status Append(compress::Codec& codec, std::span<const char> raw, uint32_t block_bytes);
  const PackedDirectory& directory() const { return dir_; }
  // Writes the directory after the last frame; returns the manifest's description of the
  // stream (`codec` is recorded as what was asked for).
  Result<PackedInfo> Finish(const std::string& codec);

 private:
  Sink sink_;
  PackedDirectory dir_;
  std::string frame_;  // reused between units
};

// Reads `length` bytes of a packed stream at `offset` into `to`: from its parts as they are, or
// through its parity (a file with sums, restripe_detail::ParityStreamReader).
using StreamRead = std::function<Status(uint64_t offset, uint64_t length, char* to)>;

// The directory of a compressed file, read from its parts.
Result<PackedDirectory> ReadPackedDirectory(const DiskSet& disks, const StripeMap& map,
                                            const std::vector<UniqueFd>& parts, const PackedInfo& packed);
Result<PackedDirectory> ReadPackedDirectory(const StreamRead& read, const PackedInfo& packed);

// Calls fn(unit, its bytes) for every unit in file order: each frame read from the parts and
// decoded after its checksum matched.
Status ForEachPackedUnit(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts,
                         const PackedDirectory& dir,
                         const std::function<Status(const PackedUnit&, std::span<const char>)>& fn);
Status ForEachPackedUnit(const StreamRead& read, const PackedDirectory& dir,
                         const std::function<Status(const PackedUnit&, std::span<const char>)>& fn);

// A compressed file's own bytes at any offset, read through its StripedFile (which reads the
// packed stream): every unit a read touches is read and decoded whole, its checksum verified
// first. No cache: the tools read a file once, mostly in order.
class PackedFileReader {
 public:
  // Reads the directory of `stream`'s packed stream (its manifest must have `packed`).
  static Result<std::unique_ptr<PackedFileReader>> Open(std::shared_ptr<StripedFile> stream);

  uint64_t size() const { return dir_.raw_size(); }  // the file's own size
  // Up to `length` decoded bytes at `offset` into `buf`; fewer at the end of the file.
  Result<uint64_t> Read(uint64_t offset, uint64_t length, char* buf) const;

 private:
  PackedFileReader(std::shared_ptr<StripedFile> stream, PackedDirectory dir)
      : stream_(std::move(stream)), dir_(std::move(dir)) {}
  std::shared_ptr<StripedFile> stream_;
  PackedDirectory dir_;
};

}  // namespace graphfs
