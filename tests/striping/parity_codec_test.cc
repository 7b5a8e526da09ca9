// The Reed–Solomon codec of stripe rows (striping/parity_codec.h): every pattern of up to K lost
// units of rows of 3 to 8 units is rebuilt byte for byte, the parity is RAID-5's XOR (and
// RAID-6's P) where it should be, and bad arguments are refused with errors that say what is wrong.
#include "striping/parity_codec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace graphfs {
namespace {

using Row = std::vector<std::string>;

Row RandomData(uint32_t units, size_t length, uint32_t seed) {
  std::mt19937_64 rng(seed);
  Row row(units, std::string(length, '\0'));
  for (std::string& u : row)
    for (char& c : u) c = static_cast<char>(rng());
  return row;
}

// The row's data units (the first N-K) encoded into its last K units.
void EncodeRow(const ParityCodec& codec, Row& row) {
  std::vector<std::span<const char>> data;
  std::vector<std::span<char>> parity;
  for (uint32_t i = 0; i < codec.data_units(); ++i) data.emplace_back(row[i]);
  for (uint32_t i = codec.data_units(); i < codec.units(); ++i) parity.emplace_back(row[i]);
  Status s = codec.Encode(data, parity);
  ASSERT_TRUE(s.ok()) << s.error().message();
}

std::vector<std::span<char>> Spans(Row& row) { return {row.begin(), row.end()}; }

// Every set of at most `k` distinct unit indexes below `n`, the empty one included.
std::vector<std::vector<uint32_t>> LossPatterns(uint32_t n, uint32_t k) {
  std::vector<std::vector<uint32_t>> out = {{}};
  for (uint32_t a = 0; a < n; ++a) {
    out.push_back({a});
    if (k >= 2)
      for (uint32_t b = a + 1; b < n; ++b) out.push_back({a, b});
  }
  return out;
}

TEST(ParityCodec, RebuildsEveryPatternOfUpToKLostUnits) {
  int rows_checked = 0;
  for (uint32_t n = 3; n <= 8; ++n) {
    for (uint32_t k = 1; k <= 2; ++k) {
      auto codec = ParityCodec::Create(n, k);
      ASSERT_TRUE(codec.ok()) << codec.error().message();
      for (size_t length : {size_t{1}, size_t{4096 + 13}, size_t{64} << 10}) {
        Row original = RandomData(n, length, n * 100 + k * 10 + static_cast<uint32_t>(length % 7));
        EncodeRow(*codec, original);
        for (const auto& lost : LossPatterns(n, k)) {
          Row row = original;
          for (uint32_t l : lost) row[l].assign(length, '\xA5');  // what a failed read left
          Status s = codec->Reconstruct(Spans(row), lost);
          ASSERT_TRUE(s.ok()) << s.error().message();
          for (uint32_t i = 0; i < n; ++i)
            ASSERT_EQ(row[i], original[i]) << "N=" << n << " K=" << k << " length " << length << " unit " << i
                                           << " after losing " << ::testing::PrintToString(lost);
          ++rows_checked;
        }
      }
    }
  }
  // 3..8 units, K = 1 and 2, three lengths: every pattern was tried.
  EXPECT_EQ(rows_checked, 3 * (/*K=1*/ (4 + 5 + 6 + 7 + 8 + 9) + /*K=2*/ (7 + 11 + 16 + 22 + 29 + 37)));
}

TEST(ParityCodec, FirstParityUnitIsTheXorOfTheDataAndTheSecondDiffers) {
  for (uint32_t k = 1; k <= 2; ++k) {
    auto codec = ParityCodec::Create(6, k);
    ASSERT_TRUE(codec.ok());
    Row row = RandomData(6, 1000, 7 + k);
    EncodeRow(*codec, row);
    const uint32_t d = codec->data_units();
    for (size_t b = 0; b < 1000; ++b) {
      char x = 0;
      for (uint32_t i = 0; i < d; ++i) x = static_cast<char>(x ^ row[i][b]);
      ASSERT_EQ(row[d][b], x) << "K=" << k << " byte " << b;
    }
    if (k == 2) {
      EXPECT_NE(row[d], row[d + 1]);  // Q is not a second copy of P
    }
  }
}

TEST(ParityCodec, RefusesRowsItCannotProtect) {
  struct Case {
    uint32_t n, k;
    const char* says;
  };
  for (const Case& c : {Case{2, 2, "would hold no data"}, Case{3, 3, "1 to 2 are supported"},
                        Case{1, 1, "would hold no data"}, Case{4, 0, "1 to 2 are supported"},
                        Case{8, 3, "1 to 2 are supported"}, Case{256, 1, "at most 255"}}) {
    auto codec = ParityCodec::Create(c.n, c.k);
    ASSERT_FALSE(codec.ok()) << "N=" << c.n << " K=" << c.k;
    EXPECT_EQ(codec.error().code(), EINVAL);
    EXPECT_NE(codec.error().message().find(c.says), std::string::npos) << codec.error().message();
  }
  EXPECT_TRUE(ParityCodec::Create(2, 1).ok());  // a mirror: one data unit, its XOR is a copy
  EXPECT_TRUE(ParityCodec::Create(255, 2).ok());
}

TEST(ParityCodec, EncodeRefusesUnitsOfDifferentSizesAndWrongCounts) {
  auto codec = ParityCodec::Create(5, 2);
  ASSERT_TRUE(codec.ok());
  Row row = RandomData(5, 512, 1);
  row[2].resize(511);
  std::vector<std::span<const char>> data = {row[0], row[1], row[2]};
  std::vector<std::span<char>> parity = {std::span<char>(row[3]), std::span<char>(row[4])};
  Status s = codec->Encode(data, parity);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), EINVAL);
  EXPECT_NE(s.error().message().find("data unit 2 is 511 bytes, the row's units are 512"), std::string::npos)
      << s.error().message();

  row[2].resize(512);
  row[4].resize(600);
  data = {row[0], row[1], row[2]};
  parity = {std::span<char>(row[3]), std::span<char>(row[4])};
  s = codec->Encode(data, parity);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("parity unit 1 is 600 bytes"), std::string::npos) << s.error().message();

  row[4].resize(512);
  parity = {std::span<char>(row[3])};
  s = codec->Encode(data, parity);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("takes 3 data and 2 parity units, got 3 and 1"), std::string::npos)
      << s.error().message();
}

TEST(ParityCodec, ReconstructRefusesWhatItCannotRebuild) {
  auto codec = ParityCodec::Create(4, 1);
  ASSERT_TRUE(codec.ok());
  Row row = RandomData(4, 64, 3);
  EncodeRow(*codec, row);
  const Row original = row;
  auto expect_refused = [&](std::vector<std::span<char>> spans, std::vector<uint32_t> lost, const std::string& says) {
    Status s = codec->Reconstruct(spans, lost);
    ASSERT_FALSE(s.ok()) << says;
    EXPECT_EQ(s.error().code(), EINVAL);
    EXPECT_NE(s.error().message().find(says), std::string::npos) << s.error().message();
  };
  expect_refused(Spans(row), {0, 1}, "2 lost units in a row, more than its 1 parity units");
  expect_refused(Spans(row), {4}, "lost unit 4 of a row of 4");
  auto two = ParityCodec::Create(4, 2);
  ASSERT_TRUE(two.ok());
  Status dup = two->Reconstruct(Spans(row), std::vector<uint32_t>{1, 1});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message().find("unit 1 listed twice"), std::string::npos) << dup.error().message();
  std::vector<std::span<char>> three(row.begin(), row.begin() + 3);
  expect_refused(three, {0}, "a row has 4 units, got 3");
  Row uneven = row;
  uneven[3].resize(63);
  expect_refused(Spans(uneven), {0}, "unit 3 is 63 bytes, the row's units are 64");
  EXPECT_EQ(row, original);  // refused calls wrote nothing

  // Nothing lost: nothing to do, nothing changed.
  Status s = codec->Reconstruct(Spans(row), {});
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(row, original);
}

TEST(ParityCodec, EmptyUnitsEncodeAndRebuildToNothing) {
  auto codec = ParityCodec::Create(3, 2);
  ASSERT_TRUE(codec.ok());
  Row row(3);
  EncodeRow(*codec, row);
  Status s = codec->Reconstruct(Spans(row), std::vector<uint32_t>{0, 2});
  EXPECT_TRUE(s.ok());
}

}  // namespace
}  // namespace graphfs
