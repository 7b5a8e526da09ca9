// Units' checksums (striping/unit_checksum.h): XXH3-64 as the format says, a flipped bit
// anywhere is found, and block checksums name the block that does not match.
#include "striping/unit_checksum.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/testutil/file_bytes.h"

namespace graphfs {
namespace {

using testing::RandomBytes;

TEST(UnitChecksum, IsXxh3SixtyFourWithSeedZero) {
  // Values of the reference implementation: checksums stored on disks must not change meaning.
  EXPECT_EQ(UnitChecksum({}), 0x2d06800538d394c2ull);
  EXPECT_EQ(UnitChecksum(std::string_view("graphfs")), 0xfa625873b36cb158ull);
}

TEST(UnitChecksum, EveryFlippedBitIsFound) {
  const std::string unit = RandomBytes(4096 + 7, 11);
  const uint64_t sum = UnitChecksum(unit);
  ASSERT_TRUE(VerifyUnit(unit, sum, "unit").ok());
  for (size_t byte = 0; byte < unit.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = unit;
      damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
      ASSERT_NE(UnitChecksum(damaged), sum) << "byte " << byte << " bit " << bit;
    }
  }
}

TEST(UnitChecksum, VerifyNamesTheUnitAndBothSums) {
  std::string unit = RandomBytes(100, 5);
  const uint64_t sum = UnitChecksum(unit);
  unit[42] = static_cast<char>(unit[42] ^ 0x10);
  Status s = VerifyUnit(unit, sum, "unit 7 of disk 2");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EIO);
  char stored[19];
  std::snprintf(stored, sizeof stored, "0x%016llx", static_cast<unsigned long long>(sum));
  EXPECT_NE(s.error().message().find(std::string("checksum mismatch in unit 7 of disk 2: stored ") + stored),
            std::string::npos)
      << s.error().message();
}

TEST(UnitChecksum, BlockChecksumsCoverEveryByteAndFindTheBadBlock) {
  const std::string bytes = RandomBytes(3 * 4096 + 100, 9);
  auto sums = BlockChecksums(bytes, 4096);
  ASSERT_TRUE(sums.ok());
  ASSERT_EQ(sums->size(), 4u);  // three whole blocks and a short one
  EXPECT_EQ((*sums)[3], UnitChecksum(std::string_view(bytes).substr(3 * 4096)));
  EXPECT_TRUE(VerifyBlocks(bytes, 4096, *sums, "part").ok());

  std::string damaged = bytes;
  damaged[2 * 4096 + 1] ^= 1;
  Status s = VerifyBlocks(damaged, 4096, *sums, "part 3");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EIO);
  EXPECT_NE(s.error().message().find("part 3, block 2 (byte 8192)"), std::string::npos) << s.error().message();

  damaged = bytes;
  damaged.back() ^= 1;  // the short last block is checked too
  EXPECT_FALSE(VerifyBlocks(damaged, 4096, *sums, "part").ok());

  auto none = BlockChecksums({}, 4096);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(UnitChecksum, BlockArgumentsThatDoNotFitAreRefused) {
  const std::string bytes = RandomBytes(5000, 2);
  EXPECT_EQ(BlockChecksums(bytes, 0).error().code(), EINVAL);
  auto sums = BlockChecksums(bytes, 4096);
  ASSERT_TRUE(sums.ok());
  Status s = VerifyBlocks(bytes, 1024, *sums, "part");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EINVAL);
  EXPECT_NE(s.error().message().find("2 checksums for 5 blocks of 1024 bytes"), std::string::npos)
      << s.error().message();
  EXPECT_EQ(VerifyBlocks(bytes, 0, *sums, "part").error().code(), EINVAL);
}

}  // namespace
}  // namespace graphfs
