#include "striping/unit_sums.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/little_endian.h"

namespace graphfs {

namespace {

constexpr char kMagic[8] = {'G', 'F', 'S', 'U', 'M', 'S', '1', '\n'};
constexpr size_t kIdAt = 50;             // u16 length, then the bytes
constexpr size_t kChecksumAt = kSumsHeaderSize - 8;

std::string Hex(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// XXH3-64 of `pieces`, one after another, followed by zeros up to `length` bytes: a short last
// block as the code sees it, or a block a read's buffers cut in pieces.
uint64_t PaddedHash(std::span<const std::span<const char>> pieces, uint64_t length) {
  if (pieces.size() == 1 && pieces[0].size() == length) return XXH3_64bits(pieces[0].data(), length);
  static const char kZeros[64 * 1024] = {};
  // One state per thread (its size is not in libxxhash's public header: the library allocates
  // it): a read's blocks that cross a buffer boundary are hashed on the I/O worker that
  // completes it, once per boundary, and a fresh state is a malloc each.
  thread_local std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                                    XXH3_freeState);
  XXH3_64bits_reset(state.get());
  uint64_t hashed = 0;
  for (std::span<const char> piece : pieces) {
    XXH3_64bits_update(state.get(), piece.data(), piece.size());
    hashed += piece.size();
  }
  for (uint64_t left = length - std::min(hashed, length); left > 0;) {
    const uint64_t n = std::min<uint64_t>(left, sizeof kZeros);
    XXH3_64bits_update(state.get(), kZeros, n);
    left -= n;
  }
  return XXH3_64bits_digest(state.get());
}

uint64_t PaddedHash(std::span<const char> bytes, uint64_t length) {
  return PaddedHash(std::span<const std::span<const char>>(&bytes, 1), length);
}

// The hash of B zero bytes, which every stored sum is XORed with; the last B asked is kept.
uint64_t ZeroHash(uint64_t sum_block) {
  thread_local uint64_t block = 0, hash = 0;
  if (block != sum_block) {
    hash = PaddedHash(std::span<const char>(), sum_block);
    block = sum_block;
  }
  return hash;
}

Error Damaged(const std::string& why) { return Error(EIO, "damaged sums header: " + why); }

}  // namespace

Status CheckSumsHeader(const SumsHeader& h) {
  auto map = StripeMap::Create(h.layout);
  if (!map.ok()) return map.error().Wrap("sums header");
  if (h.disk >= h.layout.disks)
    return Error(EINVAL, "sums header: disk " + std::to_string(h.disk) + " of " + std::to_string(h.layout.disks));
  const uint64_t b = h.sum_block;
  if (b == 0 || (b & (b - 1)) != 0 || h.layout.unit % b != 0)
    return Error(EINVAL, "sums header: block " + std::to_string(b) + " is not a power of two that divides the unit (" +
                             std::to_string(h.layout.unit) + ")");
  if (h.file_id.empty() || h.file_id.size() > SumsHeader::kMaxFileId)
    return Error(EINVAL, "sums header: file id of " + std::to_string(h.file_id.size()) + " bytes");
  return Status::Ok();
}

std::string EncodeSumsHeader(const SumsHeader& h) {
  std::string out(kSumsHeaderSize, '\0');
  char* p = out.data();
  std::memcpy(p, kMagic, sizeof kMagic);
  Put64(p + 8, h.layout.unit);
  Put64(p + 16, h.sum_block);
  Put64(p + 24, h.part_length);
  Put32(p + 32, h.disk);
  Put32(p + 36, h.layout.disks);
  Put32(p + 40, h.layout.first_disk);
  Put32(p + 44, h.layout.parity);
  p[48] = static_cast<char>(h.file_id.size());
  p[49] = static_cast<char>(h.file_id.size() >> 8);
  std::memcpy(p + kIdAt, h.file_id.data(), std::min(h.file_id.size(), SumsHeader::kMaxFileId));
  Put64(p + kChecksumAt, XXH3_64bits(p, kChecksumAt));
  return out;
}

Result<SumsHeader> DecodeSumsHeader(std::span<const char> bytes) {
  if (bytes.size() != kSumsHeaderSize)
    return Damaged(std::to_string(bytes.size()) + " bytes, not " + std::to_string(kSumsHeaderSize));
  const char* p = bytes.data();
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return Damaged("no GFSUMS1 magic");
  const uint64_t stored = Get64(p + kChecksumAt), computed = XXH3_64bits(p, kChecksumAt);
  if (stored != computed) return Damaged("checksum " + Hex(stored) + ", computed " + Hex(computed));
  SumsHeader h;
  h.layout.unit = Get64(p + 8);
  h.sum_block = Get64(p + 16);
  h.part_length = Get64(p + 24);
  h.disk = Get32(p + 32);
  h.layout.disks = Get32(p + 36);
  h.layout.first_disk = Get32(p + 40);
  h.layout.parity = Get32(p + 44);
  const size_t id_length = static_cast<unsigned char>(p[48]) | (size_t{static_cast<unsigned char>(p[49])} << 8);
  if (id_length > SumsHeader::kMaxFileId) return Damaged("file id of " + std::to_string(id_length) + " bytes");
  h.file_id.assign(p + kIdAt, id_length);
  // What Encode wrote is zeros up to the checksum; anything else is not our header.
  if (std::any_of(p + kIdAt + id_length, p + kChecksumAt, [](char c) { return c != 0; }))
    return Damaged("bytes after the file id");
  Status valid = CheckSumsHeader(h);
  if (!valid.ok()) return Damaged(valid.error().message());
  return h;
}

uint64_t BlockSum(std::span<const char> block, uint64_t sum_block) {
  return PaddedHash(block, sum_block) ^ ZeroHash(sum_block);
}

uint64_t BlockSumOfPieces(std::span<const std::span<const char>> pieces, uint64_t sum_block) {
  return PaddedHash(pieces, sum_block) ^ ZeroHash(sum_block);
}

std::vector<uint64_t> BlockSums(std::span<const char> bytes, uint64_t sum_block) {
  std::vector<uint64_t> sums;
  sums.reserve((bytes.size() + sum_block - 1) / sum_block);
  for (uint64_t at = 0; at < bytes.size(); at += sum_block)
    sums.push_back(BlockSum(bytes.subspan(at, std::min<uint64_t>(sum_block, bytes.size() - at)), sum_block));
  return sums;
}

Status VerifyBlockSums(std::span<const char> bytes, uint64_t sum_block, std::span<const uint64_t> sums,
                       uint64_t first_block, const std::string& what) {
  if (sum_block == 0) return Error(EINVAL, what + ": checksum block size must be positive");
  const uint64_t blocks = (bytes.size() + sum_block - 1) / sum_block;
  if (sums.size() != blocks)
    return Error(EINVAL, what + ": " + std::to_string(sums.size()) + " sums for " + std::to_string(blocks) +
                             " blocks of " + std::to_string(sum_block) + " bytes");
  for (uint64_t i = 0; i < blocks; ++i) {
    const uint64_t at = i * sum_block;
    const uint64_t got = BlockSum(bytes.subspan(at, std::min<uint64_t>(sum_block, bytes.size() - at)), sum_block);
    if (got != sums[i])
      return Error(EIO, "checksum mismatch in " + what + ", block " + std::to_string(first_block + i) + ": stored " +
                            Hex(sums[i]) + ", read " + Hex(got));
  }
  return Status::Ok();
}

Result<UnitSums> UnitSums::Create(DiskBackend& disk, const SumsHeader& header) {
  GRAPHFS_RETURN_IF_ERROR(CheckSumsHeader(header));
  auto file = disk.Open(FileName(header.file_id), {.writable = true, .create = true});
  if (!file.ok()) return file.error();
  GRAPHFS_RETURN_IF_ERROR((*file)->Truncate(0));
  const std::string bytes = EncodeSumsHeader(header);
  GRAPHFS_RETURN_IF_ERROR((*file)->Write(0, bytes));
  GRAPHFS_RETURN_IF_ERROR((*file)->Sync());
  return UnitSums(std::move(*file), header);
}

SumsHeader SumsHeaderOf(const StripeManifest& m, uint32_t disk) {
  SumsHeader h;
  h.file_id = m.file_id;
  h.disk = disk;
  h.layout = m.layout;
  h.sum_block = m.sum_block;
  return h;
}

Result<UnitSums> UnitSums::Open(DiskBackend& disk, const SumsHeader& expected, bool writable) {
  auto file = disk.Open(FileName(expected.file_id), {.writable = writable});
  if (!file.ok()) return file.error();
  // A header read beside its rewrite through another descriptor (a part's length set by a
  // rebuild or a writer) can see half of each, which its checksum refuses: a torn read passes
  // on a second look, a damaged header fails every time.
  Result<SumsHeader> header = Error(EIO, "not read");
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string bytes(kSumsHeaderSize, '\0');
    auto n = (*file)->Read(0, bytes);
    if (!n.ok()) return n.error();
    bytes.resize(*n);
    header = DecodeSumsHeader(bytes);
    if (header.ok()) break;
  }
  if (!header.ok()) return header.error().Wrap((*file)->where());
  const SumsHeader& h = *header;
  auto differs = [&](const char* field, uint64_t want, uint64_t got) -> Result<UnitSums> {
    return Error(EIO, (*file)->where() + ": sums of " + field + " " + std::to_string(got) + ", expected " +
                          std::to_string(want));
  };
  if (h.file_id != expected.file_id)
    return Error(EIO, (*file)->where() + ": sums of file " + h.file_id + ", expected " + expected.file_id);
  if (h.disk != expected.disk) return differs("disk", expected.disk, h.disk);
  if (h.layout.unit != expected.layout.unit) return differs("unit", expected.layout.unit, h.layout.unit);
  if (h.layout.disks != expected.layout.disks) return differs("disks", expected.layout.disks, h.layout.disks);
  if (h.layout.first_disk != expected.layout.first_disk)
    return differs("first disk", expected.layout.first_disk, h.layout.first_disk);
  if (h.layout.parity != expected.layout.parity) return differs("parity", expected.layout.parity, h.layout.parity);
  if (h.sum_block != expected.sum_block) return differs("block", expected.sum_block, h.sum_block);
  return UnitSums(std::move(*file), std::move(*header));
}

Status UnitSums::Write(uint64_t row, uint64_t first_block, std::span<const uint64_t> sums) {
  const uint64_t per_unit = header_.layout.unit / header_.sum_block;
  if (first_block + sums.size() > per_unit)
    return Error(EINVAL, file_->where() + ": sums of blocks " + std::to_string(first_block) + ".." +
                             std::to_string(first_block + sums.size()) + " of a unit of " + std::to_string(per_unit));
  std::string bytes(sums.size() * 8, '\0');
  for (size_t i = 0; i < sums.size(); ++i) Put64(&bytes[i * 8], sums[i]);
  return file_->Write(Offset(row, first_block, header_.layout.unit, header_.sum_block), bytes);
}

Result<std::vector<uint64_t>> UnitSums::Read(uint64_t row, uint64_t first_block, uint64_t count) {
  const uint64_t per_unit = header_.layout.unit / header_.sum_block;
  if (first_block + count > per_unit)
    return Error(EINVAL, file_->where() + ": sums of blocks " + std::to_string(first_block) + ".." +
                             std::to_string(first_block + count) + " of a unit of " + std::to_string(per_unit));
  std::string bytes(count * 8, '\0');
  auto n = file_->Read(Offset(row, first_block, header_.layout.unit, header_.sum_block), bytes);
  if (!n.ok()) return n.error();
  // Past the end of the file: never written, the sums of zero blocks (the string holds zeros).
  std::vector<uint64_t> sums(count);
  for (uint64_t i = 0; i < count; ++i) sums[i] = Get64(&bytes[i * 8]);
  return sums;
}

Result<std::vector<uint64_t>> UnitSums::ReadEntries(uint64_t first, uint64_t count) {
  std::string bytes(count * 8, '\0');
  auto n = file_->Read(kSumsHeaderSize + first * 8, bytes);
  if (!n.ok()) return n.error();
  std::vector<uint64_t> sums(count);
  for (uint64_t i = 0; i < count; ++i) sums[i] = Get64(&bytes[i * 8]);
  return sums;
}

Status UnitSums::SetPartLength(uint64_t part_length) {
  SumsHeader h = header_;
  h.part_length = part_length;
  GRAPHFS_RETURN_IF_ERROR(file_->Write(0, EncodeSumsHeader(h)));
  header_ = std::move(h);
  return Status::Ok();
}

Status UnitSums::CheckPartLength(uint64_t part_size) const {
  if (part_size >= header_.part_length) return Status::Ok();
  return Error(EIO, file_->where() + ": the part is " + std::to_string(part_size) + " bytes, its sums cover " +
                        std::to_string(header_.part_length) + " (cut behind graphfs's back?)");
}

}  // namespace graphfs
