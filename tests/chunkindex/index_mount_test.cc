// The index built through a real graphfs mount, over a graph whose column and
// row are striped over two disk directories.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chunkindex/active_chunk_finder.h"
#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "chunkindex_test_util.h"
#include "table_check.h"
#include "tests/testutil/mount_harness.h"

namespace graphfs::chunkindex {
namespace {

TEST(IndexThroughMount, BuildsChecksAndDetectsStalenessOnAStripedGraph) {
  testing::TempDir tmp;
  const std::string src = tmp.File("src"), graph = src + "/graph", mnt = tmp.File("mnt");
  const std::string d0 = tmp.File("d0"), d1 = tmp.File("d1");
  for (const std::string& d : {src, mnt, d0, d1}) std::filesystem::create_directories(d);
  testing::GraphSpec g;
  g.vertices = 30000;
  g.partitions = 4;
  g.edges = testing::RandomEdges(30000, 60000, 4);  // 480 KB per file
  ASSERT_EQ(testing::MakeGraph(g, graph), "");
  auto stripe = testing::RunShell(testing::Bin("graphfs-stripe") + " -q --compress none --unit 64K --min-size 256K --disks " + d0 + "," +
                             d1 + " " + graph);
  ASSERT_EQ(stripe.exit_code, 0) << stripe.output;
  ASSERT_LT(std::filesystem::file_size(graph + "/column"), 64u << 10) << "column should now be a stub";

  graphfs::testing::GraphfsMount mount;
  ASSERT_TRUE(mount.Mount(src, mnt)) << mount.error();
  const std::string mgraph = mnt + "/graph";
  ASSERT_EQ(std::filesystem::file_size(mgraph + "/column"), g.edges.size() * 8);

  BuildOptions o;
  o.graph_dir = mgraph;
  o.chunk_size = 8192;
  auto r = BuildIndex(o);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(std::filesystem::is_directory(graph + "/.graphfs/index")) << "index written through to the source";
  auto t = ChunkTable::Open(mgraph);
  ASSERT_TRUE(t.ok()) << t.error().message();
  testing::ExpectMatchesFiles(mgraph, *t);
  auto finder = ActiveChunkFinder::Load(*t);
  ASSERT_TRUE(finder.ok()) << finder.error().message();

  auto check = testing::RunShell(testing::Bin("graphfs-index") + " --check " + mgraph);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  auto again = testing::RunShell(testing::Bin("graphfs-index") + " --chunk-size 8192 " + mgraph);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("up to date"), std::string::npos) << again.output;

  // The daemon now caches column and row in the index's chunks (picked up at the next open).
  ASSERT_FALSE(graphfs::testing::ReadFile(mgraph + "/column").empty());
  auto stats = nlohmann::json::parse(graphfs::testing::ReadFile(mnt + "/.graphfs/stats"));
  ASSERT_EQ(stats["indexes"].size(), 1u) << stats.dump(2);
  EXPECT_TRUE(stats["indexes"][0]["in_use"].get<bool>()) << stats.dump(2);
  EXPECT_EQ(stats["indexes"][0]["column_chunks"].get<uint64_t>(), t->chunks(ChunkFile::kColumn).size());
  EXPECT_EQ(stats["indexes"][0]["error"], "");

  // A write through the mount makes it stale.
  {
    std::fstream f(mgraph + "/column", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(16);
    f.write("\x01\x00\x00\x00", 4);
  }
  auto stale = ChunkTable::Open(mgraph);
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.error().message().find("re-run `graphfs-index"), std::string::npos) << stale.error().message();
  // ... and the daemon stops using it, saying why.
  ASSERT_FALSE(graphfs::testing::ReadFile(mgraph + "/row").empty());
  stats = nlohmann::json::parse(graphfs::testing::ReadFile(mnt + "/.graphfs/stats"));
  ASSERT_EQ(stats["indexes"].size(), 1u) << stats.dump(2);
  EXPECT_FALSE(stats["indexes"][0]["in_use"].get<bool>()) << stats.dump(2);
  EXPECT_NE(stats["indexes"][0]["error"].get<std::string>().find("graphfs-index"), std::string::npos) << stats.dump(2);
  // (No explicit unmount here: `t` and `finder` hold index files open through the mount;
  // they close first, declared after `mount`, whose destructor then unmounts.)
}

}  // namespace
}  // namespace graphfs::chunkindex
