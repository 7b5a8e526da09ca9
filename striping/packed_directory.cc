#include "striping/packed_directory.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace graphfs {

namespace {

// Encoded: magic, version, unit count, raw size, then per unit its raw length, frame length
// and frame offset, then the XXH3-64 of everything before it. Little-endian, as the hosts
// graphfs runs on (the disks do not move between architectures).
constexpr char kMagic[8] = {'G', 'F', 'S', 'P', 'D', 'I', 'R', '1'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + 4 + 8 + 8;  // magic, version, reserved, count, raw size
constexpr size_t kEntryBytes = 4 + 4 + 8;
constexpr size_t kChecksumBytes = 8;

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
T Get(std::string_view bytes, size_t at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

Error Damaged(const std::string& why) { return Error(EIO, "damaged compressed-file directory: " + why); }

}  // namespace

Status PackedDirectory::Add(uint32_t raw_length, uint64_t frame_offset, uint32_t frame_length) {
  if (raw_length == 0 || frame_length == 0) return Error(EINVAL, "a compressed unit cannot be empty");
  if (frame_offset % kFrameAlign != 0) {
    return Error(EINVAL, "frame offset " + std::to_string(frame_offset) + " is not a multiple of 4096");
  }
  if (frame_offset < frames_end()) {
    return Error(EINVAL, "frame at " + std::to_string(frame_offset) + " overlaps the previous one (ends at " +
                             std::to_string(frames_end()) + ")");
  }
  if (frame_offset > UINT64_MAX - frame_length - kFrameAlign || raw_size_ > UINT64_MAX - raw_length) {
    return Error(EINVAL, "compressed file too large");
  }
  units_.push_back({raw_size_, raw_length, frame_length, frame_offset});
  raw_size_ += raw_length;
  return Status::Ok();
}

uint64_t PackedDirectory::frames_end() const {
  if (units_.empty()) return 0;
  const PackedUnit& last = units_.back();
  const uint64_t end = last.frame_offset + last.frame_length;
  return (end + kFrameAlign - 1) / kFrameAlign * kFrameAlign;
}

std::pair<size_t, size_t> PackedDirectory::Overlapping(uint64_t offset, uint64_t length) const {
  if (length == 0 || offset >= raw_size_) return {0, 0};
  const uint64_t end = std::min(raw_size_, offset + std::min(length, UINT64_MAX - offset));
  // The first unit whose end lies past `offset`, then every unit starting before `end`.
  auto first = std::upper_bound(units_.begin(), units_.end(), offset,
                                [](uint64_t at, const PackedUnit& u) { return at < u.raw_offset + u.raw_length; });
  auto last = std::lower_bound(first, units_.end(), end,
                               [](const PackedUnit& u, uint64_t at) { return u.raw_offset < at; });
  return {static_cast<size_t>(first - units_.begin()), static_cast<size_t>(last - units_.begin())};
}

std::string PackedDirectory::Encode() const {
  std::string out;
  out.reserve(kHeaderBytes + units_.size() * kEntryBytes + kChecksumBytes);
  out.append(kMagic, sizeof kMagic);
  Put<uint32_t>(out, kVersion);
  Put<uint32_t>(out, 0);
  Put<uint64_t>(out, units_.size());
  Put<uint64_t>(out, raw_size_);
  for (const PackedUnit& u : units_) {
    Put<uint32_t>(out, u.raw_length);
    Put<uint32_t>(out, u.frame_length);
    Put<uint64_t>(out, u.frame_offset);
  }
  Put<uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

Result<PackedDirectory> PackedDirectory::Decode(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes + kChecksumBytes) return Damaged(std::to_string(bytes.size()) + " bytes is too short");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return Damaged("bad magic");
  // The checksum first: nothing below trusts a field it did not cover.
  const size_t body = bytes.size() - kChecksumBytes;
  if (Get<uint64_t>(bytes, body) != XXH3_64bits(bytes.data(), body)) return Damaged("checksum mismatch");
  const uint32_t version = Get<uint32_t>(bytes, sizeof kMagic);
  if (version != kVersion) return Damaged("unsupported version " + std::to_string(version));
  const uint64_t count = Get<uint64_t>(bytes, sizeof kMagic + 8);
  const uint64_t raw_size = Get<uint64_t>(bytes, sizeof kMagic + 16);
  if (count != (body - kHeaderBytes) / kEntryBytes || (body - kHeaderBytes) % kEntryBytes != 0) {
    return Damaged(std::to_string(count) + " units do not fill " + std::to_string(bytes.size()) + " bytes");
  }
  PackedDirectory dir;
  dir.units_.reserve(count);
  for (uint64_t k = 0; k < count; ++k) {
    const size_t at = kHeaderBytes + k * kEntryBytes;
    Status added = dir.Add(Get<uint32_t>(bytes, at), Get<uint64_t>(bytes, at + 8), Get<uint32_t>(bytes, at + 4));
    if (!added.ok()) return Damaged("unit " + std::to_string(k) + ": " + added.error().message());
  }
  if (dir.raw_size_ != raw_size) {
    return Damaged("units add up to " + std::to_string(dir.raw_size_) + " bytes, the header says " +
                   std::to_string(raw_size));
  }
  return dir;
}

}  // namespace graphfs
