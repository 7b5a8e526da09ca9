// Record encodings: round trips, and damaged values decode to errors.
#include <gtest/gtest.h>

#include <random>

#include "chunkindex/coding.h"
#include "chunkindex/index_format.h"

namespace graphfs::chunkindex {
namespace {

TEST(IndexFormat, KeysSortNumerically) {
  EXPECT_LT(ChunkKey(255), ChunkKey(256));
  EXPECT_LT(ChunkKey(1), ChunkKey(1ull << 40));
  EXPECT_LT(FileChunkKey(ChunkFile::kColumn, 7), FileChunkKey(ChunkFile::kRow, 0));
  EXPECT_EQ(ChunkKey(3).size(), 9u);
}

TEST(IndexFormat, SourcesRoundTrip) {
  std::vector<SourceCount> in = {{0, 1}, {1, 300}, {127, 2}, {128, 1}, {4000000000u, 70000}};
  std::string v;
  EncodeSources(in, &v);
  std::vector<SourceCount> out;
  ASSERT_TRUE(DecodeSources(v, &out).ok());
  EXPECT_EQ(in, out);
}

TEST(IndexFormat, MetaRoundTrip) {
  IndexMeta m;
  m.vertices = 10;
  m.edges = 99;
  m.partitions = 2;
  m.edge_size = 12;
  m.chunk_size = 120;
  m.column_chunks = m.row_chunks = 5;
  m.chunk_size_explanation = "because";
  m.files.push_back({"column", 1188, 1234567890123, 42});
  auto d = DecodeMeta(EncodeMeta(m));
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->files, m.files);
  EXPECT_EQ(d->chunk_size_explanation, "because");
  EXPECT_EQ(d->edges, 99u);
}

TEST(IndexFormat, ForeignMetaIsRefusedByName) {
  auto d = DecodeMeta("hello world");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("not a graphfs chunk index"), std::string::npos);
}

// Found by tests/fuzz/index_format_fuzz.cc: a gap near 2^64 wrapped the running id around
// to a smaller one, so a damaged record decoded to sources out of order -- with the right
// first and last id the chunk table accepted it, and ActiveChunkFinder::Load indexed its
// per-chunk bitmap with an id past max_source (a heap overflow).
TEST(IndexFormat, SourceGapsThatWrapAroundAreDamage) {
  std::string v;
  PutVarint(&v, 3);                         // three sources
  PutVarint(&v, 5);                         // 5
  PutVarint(&v, 995);                       // 1000
  PutVarint(&v, UINT64_MAX - 994 + 1 + 1);  // 1000 + 2^64 - 993 wraps to 7
  for (int k = 0; k < 3; ++k) PutVarint(&v, 1);
  std::vector<SourceCount> out;
  EXPECT_FALSE(DecodeSources(v, &out).ok());
  // The largest gap that does fit is fine.
  std::string edge;
  PutVarint(&edge, 2);
  PutVarint(&edge, 1);
  PutVarint(&edge, UINT32_MAX - 1);
  PutVarint(&edge, 1);
  PutVarint(&edge, 1);
  ASSERT_TRUE(DecodeSources(edge, &out).ok());
  EXPECT_EQ(out.back().vertex, UINT32_MAX);
}

// Truncations and random bytes never crash and (almost always) fail.
TEST(IndexFormat, DamagedValuesAreErrorsNotCrashes) {
  std::vector<SourceCount> in;
  for (uint32_t v = 0; v < 500; v += 3) in.push_back({v, v % 7 + 1});
  std::string good;
  EncodeSources(in, &good);
  std::vector<SourceCount> out;
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(DecodeSources(good.substr(0, cut), &out).ok()) << "truncated at " << cut;
  }
  std::mt19937 rng(7);
  for (int k = 0; k < 2000; ++k) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    (void)DecodeSources(junk, &out);
    (void)DecodeMeta(junk);
    (void)DecodeChunk(junk);
    (void)DecodeFileChunk(junk);
    std::vector<uint32_t> deg;
    (void)DecodeDegrees(junk, &deg);
  }
  EXPECT_FALSE(DecodeChunk("").ok());
  Decoder d(std::string_view("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11));
  d.Varint();
  EXPECT_FALSE(d.ok()) << "overlong varint";
}

}  // namespace
}  // namespace graphfs::chunkindex
