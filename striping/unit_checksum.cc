#include "striping/unit_checksum.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

namespace graphfs {

namespace {

std::string Hex(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t BlockCount(uint64_t bytes, uint64_t block) { return (bytes + block - 1) / block; }

}  // namespace

uint64_t UnitChecksum(std::span<const char> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

Status VerifyUnit(std::span<const char> bytes, uint64_t expected, const std::string& what) {
  const uint64_t got = UnitChecksum(bytes);
  if (got == expected) return Status::Ok();
  return Error(EIO, "checksum mismatch in " + what + ": stored " + Hex(expected) + ", read " + Hex(got));
}

Result<std::vector<uint64_t>> BlockChecksums(std::span<const char> bytes, uint64_t block) {
  if (block == 0) return Error(EINVAL, "checksum block size must be positive");
  std::vector<uint64_t> sums;
  sums.reserve(BlockCount(bytes.size(), block));
  for (uint64_t at = 0; at < bytes.size(); at += block)
    sums.push_back(UnitChecksum(bytes.subspan(at, std::min<uint64_t>(block, bytes.size() - at))));
  return sums;
}

Status VerifyBlocks(std::span<const char> bytes, uint64_t block, std::span<const uint64_t> expected,
                    const std::string& what) {
  if (block == 0) return Error(EINVAL, "checksum block size must be positive");
  const uint64_t blocks = BlockCount(bytes.size(), block);
  if (expected.size() != blocks)
    return Error(EINVAL, what + ": " + std::to_string(expected.size()) + " checksums for " + std::to_string(blocks) +
                             " blocks of " + std::to_string(block) + " bytes");
  for (uint64_t i = 0; i < blocks; ++i) {
    const uint64_t at = i * block;
    Status s = VerifyUnit(bytes.subspan(at, std::min<uint64_t>(block, bytes.size() - at)), expected[i],
                          what + ", block " + std::to_string(i) + " (byte " + std::to_string(at) + ")");
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace graphfs
