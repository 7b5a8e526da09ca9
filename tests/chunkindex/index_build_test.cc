// Building the index: chunk contents against a brute force over the files,
// degrees, thread-count independence, re-run no-op, staleness, the CLI.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "chunkindex_test_util.h"
#include "table_check.h"
#include "engines/core/rmat.h"

namespace graphfs::chunkindex {
namespace {

using testing::Bin;
using testing::Edge;
using testing::GraphSpec;
using testing::MakeGraph;
using testing::RandomEdges;
using testing::Reference;
using testing::RunShell;
using testing::TempDir;
using testing::ExpectMatchesFiles;

Result<BuildReport> Build(const std::string& dir, std::optional<uint64_t> chunk = std::nullopt, int threads = 0,
                          bool force = false) {
  BuildOptions o;
  o.graph_dir = dir;
  o.chunk_size = chunk;
  o.threads = threads;
  o.force = force;
  o.read_bytes = 4096 * 3;  // small reads: chunks span several buffers
  return BuildIndex(o);
}

struct Case {
  const char* name;
  GraphSpec spec;
  std::optional<uint64_t> chunk;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  GraphSpec g;
  g.vertices = 2000;
  g.partitions = 4;
  g.edges = RandomEdges(1800, 20000, 1);
  cases.push_back({"unsorted", g, 1024});
  g.sorted = true;
  cases.push_back({"sorted", g, 1000});  // rounded to 1000 (a multiple of 8)
  g.sorted = false;
  g.weighted = true;
  cases.push_back({"weighted_1000_rounds_to_996", g, 1000});
  g.weighted = false;
  g.partitions = 1;
  cases.push_back({"one_partition", g, 8 * 333});
  g.partitions = 7;  // ranges of unequal size
  cases.push_back({"seven_partitions_auto_chunk", g, std::nullopt});
  GraphSpec sparse;  // only blocks (0,2) and (3,3) hold edges
  sparse.vertices = 100;
  sparse.partitions = 4;
  for (int k = 0; k < 300; ++k) sparse.edges.push_back({k % 25, 50 + (k * 7) % 25});
  sparse.edges.push_back({99, 99});
  cases.push_back({"empty_blocks", sparse, 64});
  GraphSpec tiny;  // every block smaller than a chunk
  tiny.vertices = 50;
  tiny.partitions = 5;
  tiny.edges = RandomEdges(50, 100, 3);
  cases.push_back({"tiny_blocks", tiny, 1 << 20});
  GraphSpec none;  // no edges at all
  none.vertices = 10;
  none.partitions = 3;
  cases.push_back({"no_edges", none, 4096});
  return cases;
}

class BuildCase : public ::testing::TestWithParam<Case> {};

TEST_P(BuildCase, ChunksMatchBruteForce) {
  TempDir tmp;
  const std::string dir = tmp.File("g");
  ASSERT_EQ(MakeGraph(GetParam().spec, dir), "");
  auto report = Build(dir, GetParam().chunk);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->rebuilt);
  auto t = ChunkTable::Open(dir);
  ASSERT_TRUE(t.ok()) << t.error().message();
  if (GetParam().chunk) {
    const uint64_t es = GetParam().spec.weighted ? 12 : 8;
    EXPECT_EQ(t->chunk_size(), std::max(*GetParam().chunk / es * es, es));
  } else {
    MachineCache m = ProbeMachine();
    ChunkSizeInputs in;
    in.llc_bytes = m.llc_bytes;
    in.cores = m.cores;
    in.graph_bytes = GetParam().spec.edges.size() * 8;
    in.vertices = GetParam().spec.vertices;
    EXPECT_EQ(t->chunk_size(), ChooseChunkSize(in).bytes);
    EXPECT_EQ(t->meta().chunk_size_overridden, false);
  }
  ExpectMatchesFiles(dir, *t);
}

INSTANTIATE_TEST_SUITE_P(Graphs, BuildCase, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Build, RmatGraphAndThreadCountsGiveTheSameIndex) {
  TempDir tmp;
  engine::RmatOptions r;
  r.scale = 12;
  r.edge_factor = 8;
  r.output = tmp.File("rmat.bin");
  r.threads = 1;
  ASSERT_TRUE(engine::GenerateRmat(r).ok());
  std::vector<std::vector<std::vector<SourceCount>>> results;
  for (int threads : {1, 2, 3}) {
    const std::string dir = tmp.File("g" + std::to_string(threads));
    engine::PreprocessOptions o;
    o.input = r.output;
    o.output_dir = dir;
    o.vertices = 4096;
    o.partitions = 3;
    o.threads = 1;
    o.block_buffer_bytes = 4 << 20;
    ASSERT_TRUE(engine::Preprocess(o).ok());
    auto report = Build(dir, 8 * 500, threads);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_EQ(report->threads, threads);
    auto t = ChunkTable::Open(dir);
    ASSERT_TRUE(t.ok()) << t.error().message();
    if (threads == 2) ExpectMatchesFiles(dir, *t);
    std::vector<std::vector<SourceCount>> all;
    for (uint64_t c = 0; c < t->content_count(); ++c) all.push_back(*t->ContentSources(c));
    results.push_back(all);
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

class IndexedGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = tmp.File("g");
    GraphSpec g;
    g.vertices = 3000;
    g.partitions = 3;
    g.edges = RandomEdges(3000, 300000, 5);  // 2.4 MB per file: sampled windows, not the whole file
    ASSERT_EQ(MakeGraph(g, dir), "");
    auto r = Build(dir, 64 << 10);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_TRUE(ChunkTable::Open(dir).ok());
  }
  void ExpectStale(const std::string& what) {
    auto t = ChunkTable::Open(dir);
    ASSERT_FALSE(t.ok()) << "stale index was accepted after: " << what;
    EXPECT_NE(t.error().message().find("stale"), std::string::npos) << t.error().message();
    EXPECT_NE(t.error().message().find("re-run `graphfs-index"), std::string::npos) << t.error().message();
    auto check = RunShell(Bin("graphfs-index") + " --check " + dir);
    EXPECT_EQ(check.exit_code, 1) << check.output;
    EXPECT_NE(check.output.find("re-run `graphfs-index"), std::string::npos) << check.output;
  }
  struct timespec Mtime(const std::string& name) {
    struct stat st;
    EXPECT_EQ(::stat((dir + "/" + name).c_str(), &st), 0);
    return st.st_mtim;
  }
  void SetMtime(const std::string& name, struct timespec t) {
    struct timespec times[2] = {t, t};
    ASSERT_EQ(::utimensat(AT_FDCWD, (dir + "/" + name).c_str(), times, 0), 0);
  }
  void Overwrite(const std::string& name, uint64_t offset, const std::string& bytes) {
    int fd = ::open((dir + "/" + name).c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }
  TempDir tmp;
  std::string dir;
};

TEST_F(IndexedGraph, TouchMakesItStale) {
  struct timespec t = Mtime("column");
  t.tv_sec += 10;
  SetMtime("column", t);
  ExpectStale("touch column");
}

TEST_F(IndexedGraph, TruncateMakesItStale) {
  ASSERT_EQ(::truncate((dir + "/row").c_str(), 4096), 0);
  ExpectStale("truncate row");
}

TEST_F(IndexedGraph, ModifiedSampledBlockWithRestoredMtimeIsCaughtByTheChecksum) {
  struct timespec t = Mtime("row");
  Overwrite("row", 100, std::string(16, '\x7f'));  // inside the first sampled window
  SetMtime("row", t);
  ExpectStale("row modified, mtime restored");
  auto o = ChunkTable::Open(dir);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.error().message().find("checksum"), std::string::npos) << o.error().message();
}

TEST_F(IndexedGraph, ChangedMetaOrOffsetsMakeItStale) {
  struct timespec t = Mtime("column_offset");
  Overwrite("column_offset", 8, std::string(8, '\0'));
  SetMtime("column_offset", t);
  ExpectStale("column_offset modified");
}

TEST_F(IndexedGraph, RerunOnAnUnchangedGraphIsANoop) {
  const std::string index = IndexPath(dir);
  std::vector<std::string> before;
  for (auto& e : std::filesystem::directory_iterator(index)) before.push_back(e.path().filename());
  std::sort(before.begin(), before.end());
  auto r = Build(dir, 64 << 10);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(r->rebuilt);
  EXPECT_NE(r->reason.find("up to date"), std::string::npos) << r->reason;
  EXPECT_LT(r->seconds, 1.0);
  std::vector<std::string> after;
  for (auto& e : std::filesystem::directory_iterator(index)) after.push_back(e.path().filename());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(before, after) << "the database was rewritten";
  // A different chunk size, or --force, rebuilds.
  r = Build(dir, 128 << 10);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->rebuilt);
  EXPECT_NE(r->reason.find("chunk size changed"), std::string::npos) << r->reason;
  r = Build(dir, 128 << 10, 0, /*force=*/true);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->rebuilt);
  // After a touch, a re-run rebuilds and the index is accepted again.
  struct timespec t = Mtime("column");
  t.tv_sec += 5;
  SetMtime("column", t);
  ASSERT_FALSE(ChunkTable::Open(dir).ok());
  r = Build(dir, 128 << 10);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->rebuilt);
  EXPECT_TRUE(ChunkTable::Open(dir).ok());
  // No build directories left behind.
  for (auto& e : std::filesystem::directory_iterator(dir + "/.graphfs")) {
    EXPECT_EQ(e.path().filename(), "index");
  }
}

TEST_F(IndexedGraph, CorruptEdgeIsAClearBuildError) {
  // A source outside its block's range (vertex 2999 in block (0, *)).
  Overwrite("row", 0, std::string("\xb7\x0b\0\0", 4));
  Overwrite("column", 0, std::string("\xb7\x0b\0\0", 4));  // block (0,0) starts both files
  auto r = Build(dir, 64 << 10, 0, true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("outside its block"), std::string::npos) << r.error().message();
  // The old index stays in place (stale now, and said so).
  auto t = ChunkTable::Open(dir);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find("stale"), std::string::npos);
}

TEST(Cli, BuildRerunCheckAndUsage) {
  TempDir tmp;
  const std::string dir = tmp.File("g");
  GraphSpec g;
  g.weighted = true;
  g.edges = RandomEdges(1000, 5000, 9);
  ASSERT_EQ(MakeGraph(g, dir), "");
  auto r = RunShell(Bin("graphfs-index") + " --chunk-size 1000 " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chunk size 996 B"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rounded down"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("build time"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("index size"), std::string::npos) << r.output;
  r = RunShell(Bin("graphfs-index") + " --chunk-size 1000 " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("up to date"), std::string::npos) << r.output;
  r = RunShell(Bin("graphfs-index") + " --check " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("intact"), std::string::npos) << r.output;
  r = RunShell(Bin("graphfs-index") + " " + dir);  // auto chunk size: explained with the LLC numbers
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("|LLC|"), std::string::npos) << r.output;
  EXPECT_EQ(RunShell(Bin("graphfs-index") + " --chunk-size banana " + dir).exit_code, 2);
  EXPECT_EQ(RunShell(Bin("graphfs-index")).exit_code, 2);
  r = RunShell(Bin("graphfs-index") + " " + tmp.File("nope"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nope"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace graphfs::chunkindex
