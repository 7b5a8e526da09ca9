// The sums file of a part (striping/unit_sums.h): its header round-trips and any damage to it is
// EIO; a stored sum is that of the zero-padded block XOR the zero block's, so holes mean zero
// blocks; sums sit at their fixed offsets and a flipped byte is named by its block.
#include "striping/unit_sums.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "striping/local_disk_backend.h"
#include "tests/testutil/file_bytes.h"
#include "tests/testutil/temp_dir.h"

namespace graphfs {
namespace {

using testing::TempDir;
using testing::RandomBytes;
using testing::ReadFile;

SumsHeader Header() {
  SumsHeader h;
  h.file_id = "0123456789abcdef";
  h.disk = 2;
  h.layout = {1u << 16, 4, 1, 1};
  h.sum_block = 4096;
  h.part_length = 3u << 16;
  return h;
}

uint64_t Le64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

TEST(UnitSums, HeaderRoundTripsAndIsChecked) {
  const SumsHeader h = Header();
  const std::string bytes = EncodeSumsHeader(h);
  ASSERT_EQ(bytes.size(), kSumsHeaderSize);
  EXPECT_EQ(bytes.substr(0, 8), "GFSUMS1\n");
  auto d = DecodeSumsHeader(bytes);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->file_id, h.file_id);
  EXPECT_EQ(d->disk, 2u);
  EXPECT_EQ(d->layout.unit, h.layout.unit);
  EXPECT_EQ(d->layout.disks, 4u);
  EXPECT_EQ(d->layout.first_disk, 1u);
  EXPECT_EQ(d->layout.parity, 1u);
  EXPECT_EQ(d->sum_block, 4096u);
  EXPECT_EQ(d->part_length, h.part_length);
  // Every byte of the header is covered: a flip anywhere is damage.
  for (size_t at : {0ul, 9ul, 17ul, 25ul, 33ul, 45ul, 51ul, 2000ul, 4090ul}) {
    std::string bad = bytes;
    bad[at] ^= 0x10;
    auto r = DecodeSumsHeader(bad);
    ASSERT_FALSE(r.ok()) << "flip at " << at;
    EXPECT_EQ(r.error().code(), EIO);
    EXPECT_NE(r.error().message().find("damaged sums header"), std::string::npos) << r.error().message();
  }
  EXPECT_FALSE(DecodeSumsHeader(std::string_view(bytes).substr(0, 100)).ok());
}

// A header whose checksum matches but whose fields do not make sense is refused too.
TEST(UnitSums, HeaderWithAValidChecksumButBadFieldsIsRefused) {
  auto resealed = [](std::string bytes) {
    const uint64_t sum = XXH3_64bits(bytes.data(), kSumsHeaderSize - 8);
    for (int i = 0; i < 8; ++i) bytes[kSumsHeaderSize - 8 + i] = static_cast<char>(sum >> (8 * i));
    return bytes;
  };
  const std::string good = EncodeSumsHeader(Header());
  ASSERT_TRUE(DecodeSumsHeader(resealed(good)).ok());
  std::string parity_all = good;
  parity_all[44] = 4;  // parity 4 of 4 disks
  auto r = DecodeSumsHeader(resealed(parity_all));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EIO);
  std::string block = good;
  block[16] = 0;
  block[17] = 0x30;  // B = 12288, not a power of two
  EXPECT_FALSE(DecodeSumsHeader(resealed(block)).ok());
  std::string trailing = good;
  trailing[1000] = 'x';
  EXPECT_NE(DecodeSumsHeader(resealed(trailing)).error().message().find("after the file id"), std::string::npos);
  std::string disk = good;
  disk[32] = 4;  // disk 4 of 4
  EXPECT_FALSE(DecodeSumsHeader(resealed(disk)).ok());
}

TEST(UnitSums, ZeroBlocksSumToZeroAndShortBlocksArePadded) {
  const uint64_t b = 4096;
  EXPECT_EQ(BlockSum(std::string(b, '\0'), b), 0u);
  EXPECT_EQ(BlockSum(std::string(100, '\0'), b), 0u);
  EXPECT_EQ(BlockSum({}, b), 0u);
  const std::string data = RandomBytes(1000, 1);
  std::string padded = data + std::string(b - data.size(), '\0');
  EXPECT_EQ(BlockSum(data, b), BlockSum(padded, b));
  EXPECT_NE(BlockSum(data, b), 0u);
  EXPECT_EQ(BlockSum(padded, b), XXH3_64bits(padded.data(), b) ^ XXH3_64bits(std::string(b, '\0').data(), b));
  padded[4095] = 1;
  EXPECT_NE(BlockSum(data, b), BlockSum(padded, b));
  // Longer than the zero chunk the padding is fed from.
  const uint64_t big = 256 * 1024;
  EXPECT_EQ(BlockSum(data, big), BlockSum(data + std::string(big - data.size(), '\0'), big));

  const std::string unit = RandomBytes(3 * b + 5, 2);
  const std::vector<uint64_t> sums = BlockSums(unit, b);
  ASSERT_EQ(sums.size(), 4u);
  EXPECT_EQ(sums[3], BlockSum(std::string_view(unit).substr(3 * b), b));
}

// A block read in pieces (straight into the caller's buffers, whose boundaries fall anywhere)
// sums as the block does whole: full blocks, the short last block of a unit, any cut.
TEST(UnitSums, BlockInPiecesSumsAsTheWholeBlock) {
  const uint64_t b = 64 * 1024;
  for (uint64_t length : {b, b - 4096, uint64_t{100}}) {
    const std::string block = RandomBytes(length, length);
    const std::string_view v(block);
    for (uint64_t cut : {uint64_t{1}, std::min<uint64_t>(4096, length - 1), length / 2, length - 1}) {
      const std::vector<std::span<const char>> two = {v.substr(0, cut), v.substr(cut)};
      EXPECT_EQ(BlockSumOfPieces(two, b), BlockSum(block, b)) << length << " cut at " << cut;
    }
    const std::vector<std::span<const char>> three = {v.substr(0, 10), v.substr(10, 0), v.substr(10)};
    EXPECT_EQ(BlockSumOfPieces(three, b), BlockSum(block, b));
    const std::vector<std::span<const char>> one = {v};
    EXPECT_EQ(BlockSumOfPieces(one, b), BlockSum(block, b));
  }
  // A flipped byte in any piece changes the sum.
  std::string block = RandomBytes(b, 9);
  const uint64_t want = BlockSum(block, b);
  block[b - 1] ^= 1;
  const std::string_view v(block);
  const std::vector<std::span<const char>> two = {v.substr(0, 5000), v.substr(5000)};
  EXPECT_NE(BlockSumOfPieces(two, b), want);
  // An all-zero block in pieces sums to 0, as a hole does.
  const std::string zeros(b, '\0');
  const std::vector<std::span<const char>> zero_pieces = {std::string_view(zeros).substr(0, 7), std::string_view(zeros).substr(7)};
  EXPECT_EQ(BlockSumOfPieces(zero_pieces, b), 0u);
}

TEST(UnitSums, VerifyNamesTheFlippedBlock) {
  const uint64_t b = 4096;
  std::string unit = RandomBytes(5 * b, 3);
  const std::vector<uint64_t> sums = BlockSums(unit, b);
  EXPECT_TRUE(VerifyBlockSums(unit, b, sums, 0, "unit").ok());
  unit[3 * b + 7] ^= 1;
  Status s = VerifyBlockSums(unit, b, sums, 10, "disk 2, row 7");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EIO);
  EXPECT_NE(s.error().message().find("disk 2, row 7, block 13"), std::string::npos) << s.error().message();
  EXPECT_EQ(VerifyBlockSums(unit, b, std::span(sums).first(4), 0, "unit").error().code(), EINVAL);
}

TEST(UnitSums, FileKeepsSumsAtTheirOffsets) {
  TempDir tmp;
  auto disk = LocalDiskBackend::Open(tmp.Sub("d2"));
  ASSERT_TRUE(disk.ok());
  const SumsHeader h = Header();
  auto sums = UnitSums::Create(**disk, h);
  ASSERT_TRUE(sums.ok()) << sums.error().message();
  const uint64_t per_unit = h.layout.unit / h.sum_block;  // 16
  const std::vector<uint64_t> row0 = BlockSums(RandomBytes(h.layout.unit, 4), h.sum_block);
  const std::vector<uint64_t> row2_tail = {0x1111, 0x2222, 0x3333};
  ASSERT_TRUE(sums->Write(0, 0, row0).ok());
  ASSERT_TRUE(sums->Write(2, per_unit - 3, row2_tail).ok());
  EXPECT_EQ(sums->Write(2, per_unit - 2, row2_tail).error().code(), EINVAL);  // past the unit
  ASSERT_TRUE(sums->Sync().ok());

  const std::string raw = ReadFile((*disk)->PathOf("0123456789abcdef.sums"));
  ASSERT_EQ(raw.size(), UnitSums::Offset(3, 0, h.layout.unit, h.sum_block));
  EXPECT_EQ(Le64(raw, 4096 + 5 * 8), row0[5]);
  EXPECT_EQ(Le64(raw, 4096 + (2 * per_unit + per_unit - 2) * 8), 0x2222u);

  auto opened = UnitSums::Open(**disk, h, false);
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  auto back = opened->Read(0, 0, per_unit);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, row0);
  // Row 1 was never written (a hole), row 5 is past the end: both read as zero blocks' sums.
  EXPECT_EQ(*opened->Read(1, 0, 2), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(*opened->Read(5, 0, 1), (std::vector<uint64_t>{0}));
  EXPECT_EQ(*opened->Read(2, per_unit - 3, 3), row2_tail);
}

TEST(UnitSums, OpenChecksTheHeaderAgainstWhatIsExpected) {
  TempDir tmp;
  auto disk = LocalDiskBackend::Open(tmp.Sub("d2"));
  ASSERT_TRUE(disk.ok());
  SumsHeader h = Header();
  EXPECT_EQ(UnitSums::Open(**disk, h, false).error().code(), ENOENT);
  ASSERT_TRUE(UnitSums::Create(**disk, h).ok());

  SumsHeader other_disk = h;
  other_disk.disk = 3;
  auto r = UnitSums::Open(**disk, other_disk, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), EIO);
  EXPECT_NE(r.error().message().find("disk 2, expected 3"), std::string::npos) << r.error().message();
  SumsHeader other_parity = h;
  other_parity.layout.parity = 2;
  EXPECT_NE(UnitSums::Open(**disk, other_parity, false).error().message().find("parity 1, expected 2"),
            std::string::npos);
  SumsHeader other_block = h;
  other_block.sum_block = 8192;
  EXPECT_EQ(UnitSums::Open(**disk, other_block, false).error().code(), EIO);

  // The part length is the file's word, and a new one survives reopening.
  SumsHeader any_length = h;
  any_length.part_length = 1;
  auto w = UnitSums::Open(**disk, any_length, true);
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->header().part_length, h.part_length);
  EXPECT_TRUE(w->CheckPartLength(h.part_length).ok());
  Status cut = w->CheckPartLength(h.part_length - 1);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code(), EIO);
  ASSERT_TRUE(w->SetPartLength(12345).ok());
  ASSERT_TRUE(w->Sync().ok());
  EXPECT_EQ(UnitSums::Open(**disk, h, false)->header().part_length, 12345u);

  // A damaged header on disk: EIO naming the file.
  {
    std::fstream f((*disk)->PathOf("0123456789abcdef.sums"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.put('\x7f');
  }
  auto damaged = UnitSums::Open(**disk, h, false);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().code(), EIO);
  EXPECT_NE(damaged.error().message().find("0123456789abcdef.sums"), std::string::npos) << damaged.error().message();
  EXPECT_NE(damaged.error().message().find("damaged sums header"), std::string::npos);
}

TEST(UnitSums, CreateRefusesBadHeaders) {
  TempDir tmp;
  auto disk = LocalDiskBackend::Open(tmp.Sub("d0"));
  ASSERT_TRUE(disk.ok());
  SumsHeader h = Header();
  h.layout.parity = 4;
  EXPECT_EQ(UnitSums::Create(**disk, h).error().code(), EINVAL);
  h = Header();
  h.sum_block = 3000;
  EXPECT_EQ(UnitSums::Create(**disk, h).error().code(), EINVAL);
  h = Header();
  h.disk = 4;
  EXPECT_EQ(UnitSums::Create(**disk, h).error().code(), EINVAL);
}

}  // namespace
}  // namespace graphfs
