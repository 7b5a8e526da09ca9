// Extent maps and GraphFile (grid/graph_file.h): building a map, its text, and reading a graph
// file through one — across pieces, at every offset — against the bytes it stands for; damaged
// maps and pieces are refused with the reason.
#include "grid/graph_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "grid/posix_io.h"

namespace graphfs::grid {
namespace {

class GraphFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/graphfs-graphfile-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
    std::filesystem::create_directories(dir + "/" + kPiecesDir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void Write(const std::string& name, const std::string& bytes) {
    ASSERT_TRUE(WriteWholeFile(dir + "/" + name, bytes.data(), bytes.size()).ok());
  }
  std::string dir;
};

TEST(ExtentMap, AppendMergesContinuationsAndAppendRangeTakesThePiecesBytes) {
  ExtentMap a;
  a.Append("block-0-0", 0, 10);
  a.Append("block-0-0", 10, 5);  // continues: merged
  a.Append(".graphfs/pieces/delta@1", 0, 3);
  a.Append("block-0-0", 40, 0);  // empty: nothing
  ASSERT_EQ(a.extents().size(), 2u);
  EXPECT_EQ(a.size(), 18u);
  ExtentMap b;
  ASSERT_TRUE(b.AppendRange(a, 12, 5).ok());  // 3 bytes of the first extent, 2 of the second
  ASSERT_EQ(b.extents().size(), 2u);
  EXPECT_EQ(b.pieces()[b.extents()[0].piece], "block-0-0");
  EXPECT_EQ(b.extents()[0].offset, 12u);
  EXPECT_EQ(b.extents()[0].length, 3u);
  EXPECT_EQ(b.extents()[1].length, 2u);
  EXPECT_FALSE(b.AppendRange(a, 10, 9).ok()) << "past the end";
  auto again = ExtentMap::Decode(a.Encode(), "a");
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->Encode(), a.Encode());
}

TEST(ExtentMap, DamagedTextIsRefusedWithTheReason) {
  const std::string good = "graphfs extent map 1\nsize 5\npieces 1\nblock-0-1\nextents 1\n0 0 5\n";
  ASSERT_TRUE(ExtentMap::Decode(good, "m").ok());
  const std::pair<std::string, std::string> bad[] = {
      {"graphfs extent map 2\n", "header"},
      {"graphfs extent map 1\nsize 6\npieces 1\nblock-0-1\nextents 1\n0 0 5\n", "add up"},
      {"graphfs extent map 1\nsize 5\npieces 1\n../../etc/passwd\nextents 1\n0 0 5\n", "piece name"},
      {"graphfs extent map 1\nsize 5\npieces 1\n/abs\nextents 1\n0 0 5\n", "piece name"},
      {"graphfs extent map 1\nsize 5\npieces 1\nblock-0-1\nextents 1\n1 0 5\n", "names piece"},
      {"graphfs extent map 1\nsize 0\npieces 1\nblock-0-1\nextents 1\n0 0 0\n", "empty"},
      {"graphfs extent map 1\nsize 5\npieces 1\nblock-0-1\nextents 2\n0 0 5\n", "fewer extents"},
      {"graphfs extent map 1\nsize 1\npieces 1\nblock-0-1\nextents 2\n0 0 18446744073709551615\n0 0 2\n", "overflows"},
      {good + "x", "after the last"},
  };
  for (const auto& [text, why] : bad) {
    auto m = ExtentMap::Decode(text, "m");
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_EQ(m.error().code(), EINVAL);
    EXPECT_NE(m.error().message().find(why), std::string::npos) << m.error().message();
  }
}

TEST_F(GraphFileTest, AMapReadsAsTheBytesItStandsForAtEveryOffset) {
  std::string want;
  for (int i = 0; i < 3000; ++i) want += static_cast<char>('a' + i % 26);
  // column = block-0-0 [0, 1000) + delta [0, 500) + old column [1500, 3000)
  Write("block-0-0", want.substr(0, 1000));
  Write(std::string(kPiecesDir) + "/delta@1", want.substr(1000, 500) + "unused");
  Write(std::string(kPiecesDir) + "/column@0", std::string(1500, 'x') + want.substr(1500));
  ExtentMap map;
  map.Append("block-0-0", 0, 1000);
  map.Append(std::string(kPiecesDir) + "/delta@1", 0, 500);
  map.Append(std::string(kPiecesDir) + "/column@0", 1500, 1500);
  ASSERT_TRUE(WriteExtentMap(dir + "/column", map).ok());
  EXPECT_FALSE(WriteExtentMap(dir + "/column", map).ok()) << "a map is written once";
  auto size = GraphFileSize(dir + "/column");
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, want.size());
  auto f = GraphFile::Open(dir + "/column");
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(f->mapped());
  for (uint64_t off = 0; off < want.size(); off += 97) {
    for (uint64_t len : {1u, 499u, 1001u}) {
      std::string got(len, '\0');
      auto n = f->Read(got.data(), len, off);
      ASSERT_TRUE(n.ok());
      got.resize(*n);
      EXPECT_EQ(got, want.substr(off, len)) << off << " +" << len;
    }
  }
  EXPECT_EQ(f->Pieces(990, 20).size(), 2u);
  std::string tail(10, '\0');
  auto short_read = f->ReadExact(tail.data(), 10, want.size() - 5);
  ASSERT_FALSE(short_read.ok()) << "past the end";
  EXPECT_EQ(short_read.error().code(), EIO);
  // An ordinary file is itself.
  auto plain = GraphFile::Open(dir + "/block-0-0");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->mapped());
  EXPECT_EQ(plain->size(), 1000u);
}

TEST_F(GraphFileTest, MissingShortOrMappedPiecesAreRefused) {
  Write("block-0-0", std::string(100, 'b'));
  ExtentMap too_long;
  too_long.Append("block-0-0", 50, 60);
  ASSERT_TRUE(WriteExtentMap(dir + "/row", too_long).ok());
  auto f = GraphFile::Open(dir + "/row");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message().find("which has 100"), std::string::npos) << f.error().message();
  ExtentMap missing;
  missing.Append(std::string(kPiecesDir) + "/gone@3", 0, 1);
  ASSERT_TRUE(WriteExtentMap(dir + "/column", missing).ok());
  EXPECT_FALSE(GraphFile::Open(dir + "/column").ok());
  ExtentMap nested;
  nested.Append("block-0-1", 0, 1);
  ExtentMap inner;
  inner.Append("block-0-0", 0, 1);
  ASSERT_TRUE(WriteExtentMap(dir + "/block-0-1", inner).ok());
  ASSERT_TRUE(WriteExtentMap(dir + "/block-1-1", nested).ok());
  auto n = GraphFile::Open(dir + "/block-1-1");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message().find("a map itself"), std::string::npos) << n.error().message();
  // A mark of another format version is refused, not guessed.
  ASSERT_EQ(::setxattr((dir + "/block-0-1").c_str(), kExtentMapXattr, "9", 1, 0), 0);
  EXPECT_FALSE(IsExtentMap(dir + "/block-0-1").ok());
}

}  // namespace
}  // namespace graphfs::grid
