// The directory of compressed striped files (striping/packed_directory.h) and the manifest's
// `packed` field: round trips, lookups of byte ranges, and refusal of every damage a disk can do.
#include "striping/packed_directory.h"

#include <gtest/gtest.h>

#include <random>

#include "striping/manifest.h"

namespace graphfs {
namespace {

PackedDirectory ThreeUnits() {
  PackedDirectory dir;
  EXPECT_TRUE(dir.Add(1000, 0, 300).ok());
  EXPECT_TRUE(dir.Add(2000, 4096, 5000).ok());  // a frame may be larger than its unit's 4 KiB slot
  EXPECT_TRUE(dir.Add(500, 12288, 500).ok());
  return dir;
}

TEST(PackedDirectory, RoundTripsAndFindsTheUnitsOfARange) {
  const PackedDirectory dir = ThreeUnits();
  EXPECT_EQ(dir.raw_size(), 3500u);
  EXPECT_EQ(dir.frames_end(), 16384u);
  auto back = PackedDirectory::Decode(dir.Encode());
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->units().size(), 3u);
  EXPECT_EQ(back->units()[1].raw_offset, 1000u);
  EXPECT_EQ(back->units()[1].frame_offset, 4096u);
  EXPECT_EQ(back->units()[1].frame_length, 5000u);
  EXPECT_EQ(back->raw_size(), 3500u);

  using Span = std::pair<size_t, size_t>;
  EXPECT_EQ(dir.Overlapping(0, 1), Span(0, 1));
  EXPECT_EQ(dir.Overlapping(999, 2), Span(0, 2));
  EXPECT_EQ(dir.Overlapping(1000, 2000), Span(1, 2));
  EXPECT_EQ(dir.Overlapping(2999, 1), Span(1, 2));
  EXPECT_EQ(dir.Overlapping(0, 3500), Span(0, 3));
  EXPECT_EQ(dir.Overlapping(3000, 1 << 20), Span(2, 3));  // clipped at the end of the file
  EXPECT_EQ(dir.Overlapping(3499, UINT64_MAX), Span(2, 3));
  EXPECT_EQ(dir.Overlapping(3500, 10).first, dir.Overlapping(3500, 10).second);  // past the end: none
  EXPECT_EQ(dir.Overlapping(10, 0).first, dir.Overlapping(10, 0).second);

  // Every byte of random ranges lies in exactly the units returned.
  std::mt19937_64 rng(7);
  for (int k = 0; k < 2000; ++k) {
    const uint64_t off = rng() % 3600, len = rng() % 4000;
    auto [first, end] = dir.Overlapping(off, len);
    for (size_t u = 0; u < dir.units().size(); ++u) {
      const PackedUnit& unit = dir.units()[u];
      const bool overlaps = len > 0 && off < unit.raw_offset + unit.raw_length && unit.raw_offset < off + len;
      EXPECT_EQ(overlaps, u >= first && u < end) << off << "+" << len << " unit " << u;
    }
  }
}

TEST(PackedDirectory, RefusesUnitsOutOfOrderUnalignedOrEmpty) {
  PackedDirectory dir;
  EXPECT_FALSE(dir.Add(0, 0, 10).ok());
  EXPECT_FALSE(dir.Add(10, 0, 0).ok());
  EXPECT_FALSE(dir.Add(10, 100, 10).ok());
  ASSERT_TRUE(dir.Add(10, 0, 5000).ok());
  EXPECT_FALSE(dir.Add(10, 4096, 10).ok());  // overlaps the first frame (0..5000)
  EXPECT_TRUE(dir.Add(10, 8192, 10).ok());
  EXPECT_FALSE(dir.Add(10, UINT64_MAX - 4095, 10).ok());
}

TEST(PackedDirectory, DetectsEveryFlippedByteAndTruncation) {
  const std::string good = ThreeUnits().Encode();
  for (size_t at = 0; at < good.size(); ++at) {
    for (uint8_t bit : {0x01, 0x80}) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ bit);
      auto d = PackedDirectory::Decode(bad);
      ASSERT_FALSE(d.ok()) << "byte " << at;
      EXPECT_EQ(d.error().code(), EIO);
      EXPECT_NE(d.error().message().find("damaged compressed-file directory"), std::string::npos);
    }
  }
  for (size_t len = 0; len < good.size(); ++len) EXPECT_FALSE(PackedDirectory::Decode(good.substr(0, len)).ok()) << len;
  EXPECT_FALSE(PackedDirectory::Decode(good + "x").ok());
  EXPECT_TRUE(PackedDirectory::Decode(PackedDirectory().Encode()).ok());  // an empty file has no units
}

TEST(Manifest, CarriesThePackedStreamOfACompressedFile) {
  StripeManifest m;
  m.file_id = "abc";
  m.set_id = "set";
  m.size = 1000000;
  m.layout = {1u << 20, 4, 1};
  EXPECT_EQ(m.stored_size(), 1000000u);
  m.packed = PackedInfo{"zstd:1", 409600 + 56, 409600};
  auto d = StripeManifest::Decode(m.Encode());
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_TRUE(d->packed.has_value());
  EXPECT_EQ(d->packed->codec, "zstd:1");
  EXPECT_EQ(d->packed->stream_size, 409656u);
  EXPECT_EQ(d->packed->directory_offset, 409600u);
  EXPECT_EQ(d->packed->directory_length(), 56u);
  EXPECT_EQ(d->size, 1000000u);
  EXPECT_EQ(d->stored_size(), 409656u);
  // A directory that is unaligned, past the stream, too short or absurdly long is damage.
  for (auto [stream, dir] : {std::pair<uint64_t, uint64_t>{409656, 409601}, {409600, 409656}, {409610, 409600},
                             {(uint64_t{3} << 30), 4096}}) {
    m.packed = PackedInfo{"zstd:1", stream, dir};
    EXPECT_FALSE(StripeManifest::Decode(m.Encode()).ok()) << stream << " " << dir;
  }
  const std::string head = R"({"v":1,"id":"f","set":"s","size":100,"unit":4096,"disks":2,"first":1,"packed":)";
  EXPECT_FALSE(StripeManifest::Decode(head + R"({"codec":1,"stream":4136,"dir":4096}})").ok());
  EXPECT_FALSE(StripeManifest::Decode(head + R"({"codec":"lz4","stream":-1,"dir":4096}})").ok());
  EXPECT_FALSE(StripeManifest::Decode(head + R"("lz4"})").ok());
  EXPECT_TRUE(StripeManifest::Decode(head + R"({"codec":"lz4","stream":4136,"dir":4096}})").ok());
}

}  // namespace
}  // namespace graphfs
