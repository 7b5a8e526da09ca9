#include "striping/packed_stream.h"

#include <algorithm>
#include <cstring>

#include "compress/unit_frame.h"
#include "striping/part_io.h"

namespace graphfs {

PackedStreamWriter::PackedStreamWriter(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts,
                                       PackedDirectory written)
    : PackedStreamWriter(
          [&disks, map, &parts](uint64_t at, std::span<const char> bytes) {
            return WriteToParts(disks, map, parts, at, bytes.size(), bytes.data());
          },
          std::move(written)) {}

Status PackedStreamWriter::Append(compress::Codec& codec, std::span<const char> raw, uint32_t block_bytes) {
  if (raw.size() > UINT32_MAX) return Error(EFBIG, "a compressed unit is at most 4 GiB");
  GRAPHFS_RETURN_IF_ERROR(compress::EncodeUnit(codec, raw, &frame_, block_bytes));
  if (frame_.size() > UINT32_MAX) return Error(EFBIG, "a compressed frame is at most 4 GiB");
  const uint64_t at = dir_.frames_end();
  GRAPHFS_RETURN_IF_ERROR(sink_(at, frame_));
  return dir_.Add(static_cast<uint32_t>(raw.size()), at, static_cast<uint32_t>(frame_.size()));
}

Result<PackedInfo> PackedStreamWriter::Finish(const std::string& codec) {
  const std::string encoded = dir_.Encode();
  const uint64_t at = dir_.frames_end();
  GRAPHFS_RETURN_IF_ERROR(sink_(at, encoded));
  return PackedInfo{codec, at + encoded.size(), at};
}

namespace {

StreamRead FromParts(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts) {
  return [&](uint64_t offset, uint64_t length, char* to) { return ReadFromParts(disks, map, parts, offset, length, to); };
}

}  // namespace

Result<PackedDirectory> ReadPackedDirectory(const DiskSet& disks, const StripeMap& map,
                                            const std::vector<UniqueFd>& parts, const PackedInfo& packed) {
  return ReadPackedDirectory(FromParts(disks, map, parts), packed);
}

Result<PackedDirectory> ReadPackedDirectory(const StreamRead& read, const PackedInfo& packed) {
  std::string bytes(packed.directory_length(), '\0');
  GRAPHFS_RETURN_IF_ERROR(read(packed.directory_offset, bytes.size(), bytes.data()));
  return PackedDirectory::Decode(bytes);
}

namespace {

// Unit k's frame decoded into `raw` (its raw length), the error naming the unit.
Status DecodePackedUnit(size_t k, const PackedUnit& u, const std::string& frame, std::string& raw) {
  raw.resize(u.raw_length);
  Status decoded = compress::DecodeUnit(frame, raw);
  if (!decoded.ok()) {
    return decoded.error().Wrap("unit " + std::to_string(k) + " (bytes " + std::to_string(u.raw_offset) + "+" +
                                std::to_string(u.raw_length) + ", frame at " + std::to_string(u.frame_offset) +
                                " of the packed stream)");
  }
  return Status::Ok();
}

}  // namespace

Status ForEachPackedUnit(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts,
                         const PackedDirectory& dir,
                         const std::function<Status(const PackedUnit&, std::span<const char>)>& fn) {
  return ForEachPackedUnit(FromParts(disks, map, parts), dir, fn);
}

Status ForEachPackedUnit(const StreamRead& read, const PackedDirectory& dir,
                         const std::function<Status(const PackedUnit&, std::span<const char>)>& fn) {
  std::string frame, raw;
  for (size_t k = 0; k < dir.units().size(); ++k) {
    const PackedUnit& u = dir.units()[k];
    frame.resize(u.frame_length);
    GRAPHFS_RETURN_IF_ERROR(read(u.frame_offset, u.frame_length, frame.data()));
    GRAPHFS_RETURN_IF_ERROR(DecodePackedUnit(k, u, frame, raw));
    GRAPHFS_RETURN_IF_ERROR(fn(u, raw));
  }
  return Status::Ok();
}

Result<std::unique_ptr<PackedFileReader>> PackedFileReader::Open(std::shared_ptr<StripedFile> stream) {
  auto dir = ReadPackedDirectory(*stream);
  if (!dir.ok()) return dir.error();
  return std::unique_ptr<PackedFileReader>(new PackedFileReader(std::move(stream), std::move(*dir)));
}

Result<uint64_t> PackedFileReader::Read(uint64_t offset, uint64_t length, char* buf) const {
  auto [first, end] = dir_.Overlapping(offset, length);
  uint64_t done = 0;
  std::string frame, raw;
  for (size_t k = first; k < end; ++k) {
    const PackedUnit& u = dir_.units()[k];
    frame.resize(u.frame_length);
    auto n = stream_->Read(u.frame_offset, u.frame_length, frame.data());
    if (!n.ok()) return n.error();
    if (*n != u.frame_length)
      return Error(EIO, "unit " + std::to_string(k) + ": the packed stream ends inside its frame");
    GRAPHFS_RETURN_IF_ERROR(DecodePackedUnit(k, u, frame, raw));
    const uint64_t from = std::max(offset, u.raw_offset);
    const uint64_t to = std::min(offset + length, u.raw_offset + u.raw_length);
    std::memcpy(buf + (from - offset), raw.data() + (from - u.raw_offset), to - from);
    done += to - from;
  }
  return done;
}

}  // namespace graphfs
