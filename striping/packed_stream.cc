#include "striping/packed_stream.h"

#include "compress/unit_frame.h"
#include "striping/part_io.h"

namespace graphfs {

Status PackedStreamWriter::Append(compress::Codec& codec, std::span<const char> raw) {
  if (raw.size() > UINT32_MAX) return Error(EFBIG, "a compressed unit is at most 4 GiB");
  GRAPHFS_RETURN_IF_ERROR(compress::EncodeUnit(codec, raw, &frame_));
  if (frame_.size() > UINT32_MAX) return Error(EFBIG, "a compressed frame is at most 4 GiB");
  const uint64_t at = dir_.frames_end();
  GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks_, map_, parts_, at, frame_.size(), frame_.data()));
  return dir_.Add(static_cast<uint32_t>(raw.size()), at, static_cast<uint32_t>(frame_.size()));
}

Result<PackedInfo> PackedStreamWriter::Finish(const std::string& codec) {
  const std::string encoded = dir_.Encode();
  const uint64_t at = dir_.frames_end();
  GRAPHFS_RETURN_IF_ERROR(WriteToParts(disks_, map_, parts_, at, encoded.size(), encoded.data()));
  return PackedInfo{codec, at + encoded.size(), at};
}

Result<PackedDirectory> ReadPackedDirectory(const DiskSet& disks, const StripeMap& map,
                                            const std::vector<UniqueFd>& parts, const PackedInfo& packed) {
  std::string bytes(packed.directory_length(), '\0');
  GRAPHFS_RETURN_IF_ERROR(ReadFromParts(disks, map, parts, packed.directory_offset, bytes.size(), bytes.data()));
  return PackedDirectory::Decode(bytes);
}

Status ForEachPackedUnit(const DiskSet& disks, const StripeMap& map, const std::vector<UniqueFd>& parts,
                         const PackedDirectory& dir,
                         const std::function<Status(const PackedUnit&, std::span<const char>)>& fn) {
  std::string frame, raw;
  for (size_t k = 0; k < dir.units().size(); ++k) {
    const PackedUnit& u = dir.units()[k];
    frame.resize(u.frame_length);
    GRAPHFS_RETURN_IF_ERROR(ReadFromParts(disks, map, parts, u.frame_offset, u.frame_length, frame.data()));
    raw.resize(u.raw_length);
    Status decoded = compress::DecodeUnit(frame, raw);
    if (!decoded.ok()) {
      return decoded.error().Wrap("unit " + std::to_string(k) + " (bytes " + std::to_string(u.raw_offset) + "+" +
                                  std::to_string(u.raw_length) + ", frame at " + std::to_string(u.frame_offset) +
                                  " of the packed stream)");
    }
    GRAPHFS_RETURN_IF_ERROR(fn(u, raw));
  }
  return Status::Ok();
}

}  // namespace graphfs
