// A damaged or foreign index database is a clear error, never a crash.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "chunkindex/active_chunk_finder.h"
#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "chunkindex/index_db.h"
#include "chunkindex_test_util.h"

namespace graphfs::chunkindex {
namespace {

using testing::GraphSpec;
using testing::MakeGraph;
using testing::RandomEdges;
using testing::TempDir;

class DamagedIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = tmp.File("g");
    GraphSpec g;
    g.vertices = 20000;
    g.partitions = 4;
    g.edges = RandomEdges(20000, 200000, 11);
    ASSERT_EQ(MakeGraph(g, dir), "");
    BuildOptions o;
    o.graph_dir = dir;
    o.chunk_size = 4096;
    auto r = BuildIndex(o);
    ASSERT_TRUE(r.ok()) << r.error().message();
    index = IndexPath(dir);
    ASSERT_TRUE(CheckIndex(dir).ok());
  }
  std::string LargestSst() {
    std::string best;
    uint64_t size = 0;
    for (auto& e : std::filesystem::directory_iterator(index)) {
      if (e.path().extension() == ".sst" && e.file_size() > size) {
        size = e.file_size();
        best = e.path();
      }
    }
    EXPECT_GT(size, 64u << 10) << "want an SST with several data blocks";
    return best;
  }
  // Everything a user of the index does; the first error is returned.
  Status UseIndex() {
    auto t = ChunkTable::Open(dir);
    if (!t.ok()) return t.error();
    GRAPHFS_RETURN_IF_ERROR(t->DeepCheck());
    auto f = ActiveChunkFinder::Load(*t);
    if (!f.ok()) return f.error();
    return Status::Ok();
  }
  void ExpectClearError(const std::string& what) {
    Status s = UseIndex();
    ASSERT_FALSE(s.ok()) << "damage not detected: " << what;
    EXPECT_NE(s.error().message().find("chunk index"), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().message().find("graphfs-index"), std::string::npos) << s.error().message();
    Status c = CheckIndex(dir);
    EXPECT_FALSE(c.ok());
    // And a rebuild repairs it (a damaged index is not "up to date" forever).
    BuildOptions o;
    o.graph_dir = dir;
    o.chunk_size = 4096;
    o.force = true;
    auto r = BuildIndex(o);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_TRUE(UseIndex().ok());
  }
  TempDir tmp;
  std::string dir, index;
};

TEST_F(DamagedIndex, TruncatedSst) {
  std::string sst = LargestSst();
  ASSERT_EQ(::truncate(sst.c_str(), static_cast<off_t>(std::filesystem::file_size(sst) / 2)), 0);
  ExpectClearError("truncated SST");
}

TEST_F(DamagedIndex, FlippedBytesInsideSst) {
  std::string sst = LargestSst();
  const uint64_t size = std::filesystem::file_size(sst);
  for (uint64_t at : {size / 4, size / 2}) {
    int fd = ::open(sst.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char buf[64];
    ASSERT_EQ(::pread(fd, buf, sizeof(buf), static_cast<off_t>(at)), 64);
    for (char& c : buf) c = static_cast<char>(~c);
    ASSERT_EQ(::pwrite(fd, buf, sizeof(buf), static_cast<off_t>(at)), 64);
    ::close(fd);
  }
  ExpectClearError("flipped bytes");
}

TEST_F(DamagedIndex, SstZeroedFromTheMiddle) {
  std::string sst = LargestSst();
  const uint64_t size = std::filesystem::file_size(sst);
  int fd = ::open(sst.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::string zeros(size - size / 3, '\0');
  ASSERT_EQ(::pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(size / 3)), static_cast<ssize_t>(zeros.size()));
  ::close(fd);
  ExpectClearError("zeroed tail");
}

TEST_F(DamagedIndex, MissingCurrentFile) {
  ASSERT_EQ(::unlink((index + "/CURRENT").c_str()), 0);
  ExpectClearError("no CURRENT");
}

TEST_F(DamagedIndex, GarbageManifest) {
  for (auto& e : std::filesystem::directory_iterator(index)) {
    if (e.path().filename().string().rfind("MANIFEST", 0) == 0) testing::WriteFile(e.path(), "garbage, not a manifest");
  }
  ExpectClearError("garbage manifest");
}

TEST_F(DamagedIndex, DirectoryOfJunkFiles) {
  std::filesystem::remove_all(index);
  std::filesystem::create_directories(index);
  testing::WriteFile(index + "/CURRENT", "MANIFEST-000001\n");
  testing::WriteFile(index + "/MANIFEST-000001", std::string(1000, 'x'));
  ExpectClearError("junk");
}

TEST_F(DamagedIndex, EmptyDirectoryOrAFile) {
  std::filesystem::remove_all(index);
  std::filesystem::create_directories(index);
  ExpectClearError("empty directory");
  std::filesystem::remove_all(index);
  testing::WriteFile(index, "a file where the index should be");
  Status s = UseIndex();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("graphfs-index"), std::string::npos) << s.error().message();
  std::filesystem::remove(index);
}

TEST_F(DamagedIndex, ForeignRocksDb) {
  std::filesystem::remove_all(index);
  {
    auto db = IndexDb::Create(index);
    ASSERT_TRUE(db.ok()) << db.error().message();
    IndexBatch b;
    b.Put("user:1", "alice");
    b.Put("M", "not our meta");
    ASSERT_TRUE((*db)->Write(&b).ok());
    ASSERT_TRUE((*db)->Finish().ok());
  }
  Status s = UseIndex();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("not a graphfs chunk index"), std::string::npos) << s.error().message();
  std::filesystem::remove_all(index);
  {
    auto db = IndexDb::Create(index);
    ASSERT_TRUE(db.ok());
    IndexBatch b;
    b.Put("user:1", "alice");
    ASSERT_TRUE((*db)->Write(&b).ok());
    ASSERT_TRUE((*db)->Finish().ok());
  }
  s = UseIndex();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("not a graphfs chunk index"), std::string::npos) << s.error().message();
  // graphfs-index replaces it.
  BuildOptions o;
  o.graph_dir = dir;
  auto r = BuildIndex(o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->rebuilt);
  EXPECT_TRUE(UseIndex().ok());
}

}  // namespace
}  // namespace graphfs::chunkindex
