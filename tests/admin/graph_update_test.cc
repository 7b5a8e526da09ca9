// graphfs-update's core (engines/core/graph_update.h, grid/edge_batch.h): the updated graph is,
// file by file, what preprocess writes for the updated edge list — the old graph's edges (in
// `row` order) minus the deleted ones, then the added ones.
#include "admin/graph_update.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <csignal>
#include <random>
#include <set>
#include <thread>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/admin/graph_versions.h"
#include "tests/engines/engine_test_util.h"
#include "tests/testutil/striped_files.h"
#include "chunkindex/chunk_index.h"
#include "chunkindex/index_builder.h"
#include "chunkindex/index_db.h"
#include "grid/edge_batch.h"
#include "grid/graph_file.h"
#include "grid/grid_layout.h"
#include "striping/rebuild.h"
#include "striping/restripe.h"
#include "striping/stripe_parity.h"
#include "admin/graph_disks.h"
#include "striping/graph_files.h"
#include "volume/version_reclaim.h"

namespace graphfs::admin {
using namespace graphfs::volume;  // versions, keep, reclaim
namespace {

namespace etest = graphfs::engine::testing;

using etest::EdgeBytes;
using etest::ReadFile;
using etest::TempDir;
using etest::TestEdge;
using etest::TestGraph;
using etest::WriteFile;

void Preprocessed(const std::string& edges, const std::string& dir, uint32_t vertices, uint32_t p, bool weighted,
                  bool sorted) {
  ASSERT_TRUE(etest::PreprocessGraph(edges, dir, vertices, p, weighted, sorted));
}

struct Case {
  bool weighted, sorted;
};

class GraphUpdate : public ::testing::TestWithParam<Case> {};

TEST_P(GraphUpdate, EqualsPreprocessOfTheUpdatedEdgeList) {
  const Case c = GetParam();
  constexpr uint32_t kVertices = 1000, kP = 4;
  TempDir tmp;
  // Ids from a small range: duplicate edges and shared sources, the cases the rules are about.
  const TestGraph g = etest::RandomGraph(kVertices, 300, 20000, c.weighted, 7);
  WriteFile(tmp.File("edges"), EdgeBytes(g));
  Preprocessed(tmp.File("edges"), tmp.File("old"), kVertices, kP, c.weighted, c.sorted);

  // The batch: 600 deletions at distinct positions of the list (duplicates delete two copies),
  // 700 new edges and 50 copies of existing ones (additions in blocks with deletions too).
  std::mt19937 rng(11);
  std::vector<size_t> positions(g.edges.size());
  for (size_t k = 0; k < positions.size(); ++k) positions[k] = k;
  std::shuffle(positions.begin(), positions.end(), rng);
  TestGraph dels{kVertices, c.weighted, {}}, adds = etest::RandomGraph(kVertices, kVertices, 700, c.weighted, 13);
  for (size_t k = 0; k < 600; ++k) dels.edges.push_back(g.edges[positions[k]]);
  for (size_t k = 600; k < 650; ++k) adds.edges.push_back(g.edges[positions[k]]);
  WriteFile(tmp.File("del"), EdgeBytes(dels));
  WriteFile(tmp.File("add"), EdgeBytes(adds));

  // The reference: `row` (each block in its order) minus the first copy of each deleted edge,
  // then the additions, preprocessed alike.
  const std::string row = ReadFile(tmp.File("old/row"));
  const size_t r = c.weighted ? 12 : 8;
  std::vector<std::string> records;
  for (size_t at = 0; at < row.size(); at += r) records.push_back(row.substr(at, r));
  const std::string del_bytes = EdgeBytes(dels);
  for (size_t at = 0; at < del_bytes.size(); at += r) {
    auto it = std::find(records.begin(), records.end(), del_bytes.substr(at, r));
    ASSERT_NE(it, records.end());
    records.erase(it);
  }
  std::string updated;
  for (const std::string& rec : records) updated += rec;
  updated += EdgeBytes(adds);
  WriteFile(tmp.File("updated-edges"), updated);
  Preprocessed(tmp.File("updated-edges"), tmp.File("want"), kVertices, kP, c.weighted, c.sorted);

  UpdateOptions o;
  o.graph_dir = tmp.File("old");
  o.add_file = tmp.File("add");
  o.delete_file = tmp.File("del");
  o.output_dir = tmp.File("new");
  auto st = UpdateGraph(o);
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_EQ(st->sorted, c.sorted);
  EXPECT_EQ(st->added, 750u);
  EXPECT_EQ(st->deleted, 600u);
  EXPECT_EQ(st->missing, 0u);
  EXPECT_EQ(st->edges, 20000u - 600 + 750);
  EXPECT_EQ(st->blocks, kP * kP);
  for (const std::string& name : GraphFiles(kP))
    EXPECT_TRUE(ReadFile(tmp.File("new/" + name)) == ReadFile(tmp.File("want/" + name))) << name << " differs";
  EXPECT_TRUE(grid::GridLayout::Open(tmp.File("new")).ok());
  // In place, the new version's files read as the same bytes: `column` and `row` are extent maps,
  // and so are the touched blocks of a sorted graph (only their changed runs were written).
  o.output_dir.clear();
  auto in_place = UpdateGraph(o);
  ASSERT_TRUE(in_place.ok()) << in_place.error().message();
  for (const std::string& name : GraphFiles(kP))
    EXPECT_TRUE(GraphBytes(tmp.File("old/" + name)) == ReadFile(tmp.File("want/" + name))) << name << " differs in place";
  // Input order never splices; a sorted block is spliced where its changed run is at most half
  // of it, else written whole (this random batch does both).
  if (c.sorted) {
    EXPECT_LT(in_place->delta_bytes, in_place->touched_bytes / 2);
  } else {
    EXPECT_EQ(in_place->delta_bytes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphUpdate,
                         ::testing::Values(Case{false, true}, Case{true, true}, Case{false, false}, Case{true, false}),
                         [](const auto& info) {
                           return std::string(info.param.weighted ? "weighted" : "unweighted") +
                                  (info.param.sorted ? "_sorted" : "_input_order");
                         });

class GraphUpdateRefuses : public ::testing::Test {
 protected:
  void SetUp() override {
    TestGraph g{100, false, {{1, 2}, {3, 4}, {3, 4}, {50, 60}, {99, 0}}};
    WriteFile(tmp.File("edges"), EdgeBytes(g));
    Preprocessed(tmp.File("edges"), tmp.File("g"), 100, 2, false, true);
  }
  Result<UpdateStats> Run(const std::string& add, const std::string& del, bool allow_missing = false) {
    WriteFile(tmp.File("add"), add);
    WriteFile(tmp.File("del"), del);
    UpdateOptions o;
    o.graph_dir = tmp.File("g");
    o.add_file = tmp.File("add");
    o.delete_file = tmp.File("del");
    o.output_dir = tmp.File("out");
    o.allow_missing = allow_missing;
    return UpdateGraph(o);
  }
  static std::string Edges(std::vector<TestEdge> e) { return EdgeBytes(TestGraph{100, false, std::move(e)}); }
  TempDir tmp;
};

TEST_F(GraphUpdateRefuses, AnIdOutsideTheGraph) {
  auto st = Run(Edges({{5, 100}}), "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("outside 0..99"), std::string::npos) << st.error().message();
  EXPECT_NE(st.error().message().find("edge 0"), std::string::npos) << st.error().message();
  EXPECT_FALSE(std::filesystem::exists(tmp.File("out")));
  auto negative = Run("", Edges({{-1, 3}}));
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message().find("-1"), std::string::npos) << negative.error().message();
}

TEST_F(GraphUpdateRefuses, APartialRecord) {
  auto st = Run(Edges({{5, 6}}) + "abc", "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("whole number of 8-byte"), std::string::npos) << st.error().message();
  EXPECT_FALSE(std::filesystem::exists(tmp.File("out")));
}

TEST_F(GraphUpdateRefuses, ADeletionOfAnEdgeNotThereUnlessAllowed) {
  // (3, 4) is there twice: deleting it three times leaves one deletion unmatched.
  auto st = Run(Edges({{7, 8}}), Edges({{3, 4}, {3, 4}, {3, 4}}));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("match no edge"), std::string::npos) << st.error().message();
  EXPECT_FALSE(std::filesystem::exists(tmp.File("out"))) << "a refused batch leaves no output behind";
  auto allowed = Run(Edges({{7, 8}}), Edges({{3, 4}, {3, 4}, {3, 4}}), true);
  ASSERT_TRUE(allowed.ok()) << allowed.error().message();
  EXPECT_EQ(allowed->deleted, 2u);
  EXPECT_EQ(allowed->missing, 1u);
  EXPECT_EQ(allowed->edges, 4u);
  // An edge added by the batch is not there for its deletions: deletions apply to the old graph.
  std::filesystem::remove_all(tmp.File("out"));
  EXPECT_FALSE(Run(Edges({{9, 9}}), Edges({{9, 9}})).ok());
}

TEST_F(GraphUpdateRefuses, AStripedGraphWhoseDisksAreGone) {
  // A registry naming disks that are not there: refused, naming them, before anything is written.
  std::filesystem::create_directories(tmp.File("g/.graphfs"));
  WriteFile(tmp.File("g/.graphfs/disks.json"), EncodeRegistry({"0123456789abcdef0123456789abcdef", {tmp.File("gone")}}));
  auto st = Run(Edges({{5, 6}}), "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find(tmp.File("gone")), std::string::npos) << st.error().message();
  EXPECT_FALSE(std::filesystem::exists(tmp.File("out")));
}

TEST_F(GraphUpdateRefuses, AnOutputThatExists) {
  std::filesystem::create_directories(tmp.File("out"));
  auto st = Run(Edges({{5, 6}}), "");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("exists"), std::string::npos) << st.error().message();
}

TEST(GraphUpdateTool, ExitCodesAndSummary) {
  TempDir tmp;
  WriteFile(tmp.File("edges"), EdgeBytes(TestGraph{10, false, {{1, 2}, {3, 4}}}));
  Preprocessed(tmp.File("edges"), tmp.File("g"), 10, 2, false, true);
  WriteFile(tmp.File("add"), EdgeBytes(TestGraph{10, false, {{5, 6}}}));
  const std::string tool = etest::Bin("graphfs-update");
  EXPECT_EQ(etest::RunCommand(tool + " " + tmp.File("g") + " -o " + tmp.File("x") + " 2>/dev/null").exit_code, 2)
      << "no batch is a usage error";
  auto ok = etest::RunCommand(tool + " " + tmp.File("g") + " --add " + tmp.File("add") + " -o " + tmp.File("new"));
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_NE(ok.output.find("+1 -0 edges"), std::string::npos) << ok.output;
  EXPECT_EQ(ReadFile(tmp.File("new/meta")), "0 10 3 2");
  auto bad = etest::RunCommand(tool + " " + tmp.File("g") + " --add " + tmp.File("edges") + "x -o " +
                                 tmp.File("new2") + " 2>&1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("graphfs-update: error:"), std::string::npos) << bad.output;
  // In place, then the version tools: --versions lists both, --reclaim needs a count, and
  // graphfs-stripe refuses a version (its maps read other files by name).
  auto in_place = etest::RunCommand(tool + " " + tmp.File("g") + " --add " + tmp.File("add"));
  ASSERT_EQ(in_place.exit_code, 0) << in_place.output;
  auto versions = etest::RunCommand(tool + " " + tmp.File("g") + " --versions");
  EXPECT_EQ(versions.exit_code, 0);
  EXPECT_NE(versions.output.find(tmp.File("g@0")), std::string::npos) << versions.output;
  EXPECT_EQ(etest::RunCommand(tool + " " + tmp.File("g") + " --reclaim 2>/dev/null").exit_code, 2);
  auto reclaim = etest::RunCommand(tool + " " + tmp.File("g") + " --reclaim --keep 0");
  EXPECT_EQ(reclaim.exit_code, 0);
  EXPECT_NE(reclaim.output.find("reclaimed " + tmp.File("g@0")), std::string::npos) << reclaim.output;
  auto stripe = etest::RunCommand(etest::Bin("graphfs-stripe") + " --compress none --disks " + tmp.File("d0") + "," + tmp.File("d1") +
                                  " " + tmp.File("g") + " 2>&1");
  EXPECT_EQ(stripe.exit_code, 1);
  EXPECT_NE(stripe.output.find("extent map"), std::string::npos) << stripe.output;
  EXPECT_TRUE(grid::GridLayout::Open(tmp.File("g")).ok()) << "the refused stripe changed the graph";
}

// gen-update's batches: the deletions are edges of the graph (graphfs-update accepts them without
// --allow-missing), clustered ones lie in one block row, and the sizes are as asked.
TEST(GraphUpdateTool, GenUpdateMakesBatchesOfTheGraphsEdges) {
  TempDir tmp;
  WriteFile(tmp.File("edges"), EdgeBytes(etest::RandomGraph(4000, 4000, 40000, true, 5)));
  Preprocessed(tmp.File("edges"), tmp.File("g"), 4000, 4, true, true);
  for (const std::string kind : {"random", "clustered"}) {
    SCOPED_TRACE(kind);
    auto gen = etest::RunCommand(etest::Bin("gen-update") + " --graph " + tmp.File("g") + " --fraction 0.05 --kind " +
                                   kind + " --add " + tmp.File("add") + " --delete " + tmp.File("del"));
    ASSERT_EQ(gen.exit_code, 0) << gen.output;
    EXPECT_EQ(ReadFile(tmp.File("add")).size(), 1000u * 12);
    const std::string del = ReadFile(tmp.File("del"));
    EXPECT_LE(del.size(), 1000u * 12);
    EXPECT_GE(del.size(), 900u * 12);  // random picks may repeat, and count once
    grid::GridMeta meta;
    meta.edge_type = grid::EdgeType::kWeighted;
    meta.vertices = 4000;
    meta.partitions = 4;
    auto batch = grid::EdgeBatch::FromBytes(meta, "", del);
    ASSERT_TRUE(batch.ok());
    if (kind == "clustered") {
      std::set<uint64_t> rows;
      for (uint64_t b : batch->TouchedBlocks()) rows.insert(b / 4);
      EXPECT_LE(rows.size(), 2u) << "a run of `row` spans one block row (or two at a boundary)";
    }
    UpdateOptions o;
    o.graph_dir = tmp.File("g");
    o.add_file = tmp.File("add");
    o.delete_file = tmp.File("del");
    o.output_dir = tmp.File("out-" + kind);
    auto st = UpdateGraph(o);
    ASSERT_TRUE(st.ok()) << st.error().message();
    EXPECT_EQ(st->missing, 0u);
  }
  EXPECT_EQ(etest::RunCommand(etest::Bin("gen-update") + " --graph " + tmp.File("g") +
                                " --fraction 2 --add a --delete d 2>/dev/null")
                .exit_code,
            2);
}

}  // namespace
}  // namespace graphfs::admin

// ---- versions in place ----

namespace graphfs::admin {
using namespace graphfs::volume;  // versions, keep, reclaim
namespace {

bool IsMap(const std::string& path) {
  auto is = grid::IsExtentMap(path);
  return is.ok() && *is;
}

ino_t Inode(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// tmp/wantN: the original graph (tmp/orig) with the batch tmp/add added N times, written whole
// (-o), which preprocess of that edge list gives (the 4-mode test shows -o is preprocess's layout).
void WriteOrigPlusBatches(const TempDir& tmp, size_t times) {
  std::string batches;
  for (size_t k = 0; k < times; ++k) batches += ReadFile(tmp.File("add"));
  WriteFile(tmp.File("batches"), batches);
  UpdateOptions w;
  w.graph_dir = tmp.File("orig");
  w.add_file = tmp.File("batches");
  w.output_dir = tmp.File("want" + std::to_string(times));
  ASSERT_TRUE(UpdateGraph(w).ok());
}

// graphfs-update with `args`, in a child process (for kill -9 at random points).
pid_t SpawnUpdate(const std::vector<std::string>& args) {
  const std::string tool = etest::Bin("graphfs-update");
  std::vector<char*> argv = {const_cast<char*>(tool.c_str())};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execv(tool.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Runs graphfs-update with `args` to its end (it must succeed): how long a whole run takes here,
// so that the kills land within one.
void TimeOneUpdate(const std::vector<std::string>& args, std::chrono::microseconds* took) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = SpawnUpdate(args);
  ASSERT_GE(pid, 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  *took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
}

class VersionedUpdate : public ::testing::Test {
 protected:
  static constexpr uint32_t kP = 4;
  void SetUp() override {
    const TestGraph g = etest::RandomGraph(kVertices, kVertices, kEdges, false, 3);
    WriteFile(tmp.File("edges"), EdgeBytes(g));
    Preprocessed(tmp.File("edges"), tmp.File("orig"), kVertices, kP, false, true);
    std::filesystem::copy(tmp.File("orig"), tmp.File("g"));
    // A batch in block (0, 0) only (ids below V/P): the other 15 blocks stay as they are.
    TestGraph adds{kVertices, false, {}};
    for (int32_t k = 0; k < 100; ++k) adds.edges.push_back({k % 50, (k * 7) % 50});
    WriteFile(tmp.File("add"), EdgeBytes(adds));
    UpdateOptions o = Options();
    o.output_dir = tmp.File("want");
    ASSERT_TRUE(UpdateGraph(o).ok());
  }
  UpdateOptions Options() {
    UpdateOptions o;
    o.graph_dir = tmp.File("g");
    o.add_file = tmp.File("add");
    return o;
  }
  // `want2`: the original graph with the batch added twice.
  void WriteWantTwice() { WriteOrigPlusBatches(tmp, 2); }
  uint32_t kVertices = 20000;
  size_t kEdges = 200000;
  TempDir tmp;
};

TEST_F(VersionedUpdate, TheNewVersionTakesTheNameAndTheOldOneIsKept) {
  WriteFile(tmp.File("g/bfs.level"), "results of a job");
  auto st = UpdateGraph(Options());
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_EQ(st->version, 1u);
  EXPECT_EQ(st->old_version, tmp.File("g@0"));
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want"), kP));
  EXPECT_TRUE(SameGraph(tmp.File("g@0"), tmp.File("orig"), kP));
  EXPECT_EQ(ReadFile(tmp.File("g/.graphfs/version")), "1\n");
  // A job's results belong to the version it ran on.
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g/bfs.level")));
  EXPECT_EQ(ReadFile(tmp.File("g@0/bfs.level")), "results of a job");
  EXPECT_EQ(st->left_behind, std::vector<std::string>{"bfs.level"});
  // Untouched blocks are shared between the versions, the touched one is new.
  EXPECT_EQ(Inode(tmp.File("g/block-2-3")), Inode(tmp.File("g@0/block-2-3")));
  EXPECT_NE(Inode(tmp.File("g/block-0-0")), Inode(tmp.File("g@0/block-0-0")));
  EXPECT_LT(st->touched_bytes, GraphBytes(tmp.File("g/column")).size() / 8);
  EXPECT_FALSE(std::filesystem::exists(tmp.File(".g.update")));
  // `column` and `row` are extent maps over the old version's files and the new block: only
  // the touched block's bytes (and small maps, offsets, meta) were written.
  EXPECT_TRUE(IsMap(tmp.File("g/column")));
  EXPECT_TRUE(IsMap(tmp.File("g/row")));
  EXPECT_FALSE(IsMap(tmp.File("g@0/column")));
  EXPECT_EQ(Inode(tmp.File("g/.graphfs/pieces/column@0")), Inode(tmp.File("g@0/column")));
  EXPECT_LE(st->bytes_written, 2 * st->touched_bytes);
  EXPECT_GT(st->map_extents, 0u);
  // A second batch: version 2, made from version 1's maps; both older versions stay.
  auto again = UpdateGraph(Options());
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->version, 2u);
  EXPECT_LE(again->bytes_written, 2 * again->touched_bytes);
  EXPECT_TRUE(SameGraph(tmp.File("g@1"), tmp.File("want"), kP));
  EXPECT_TRUE(SameGraph(tmp.File("g@0"), tmp.File("orig"), kP));
  EXPECT_EQ(ReadFile(tmp.File("g/.graphfs/version")), "2\n");
  // Version 2 is the original edges plus the batch twice: preprocess of that edge list.
  ASSERT_NO_FATAL_FAILURE(WriteWantTwice());
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want2"), kP));
  // Removing the oldest version (rm -r, how versions are reclaimed) leaves the others whole:
  // their maps hold the pieces they need by hard links.
  std::filesystem::remove_all(tmp.File("g@0"));
  EXPECT_TRUE(SameGraph(tmp.File("g@1"), tmp.File("want"), kP));
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want2"), kP));
  EXPECT_TRUE(grid::GridLayout::Open(tmp.File("g")).ok());
}

// An indexed graph's new version is indexed too, with the same chunk size, before it is swapped
// in; the old version keeps its own index, still valid for its files.
// Every record of two indexes: chunks of both files, sources of every content, degrees.
void ExpectSameIndex(const chunkindex::ChunkTable& a, const chunkindex::ChunkTable& b) {
  for (auto f : {chunkindex::ChunkFile::kColumn, chunkindex::ChunkFile::kRow}) {
    ASSERT_EQ(a.chunks(f).size(), b.chunks(f).size());
    for (size_t k = 0; k < a.chunks(f).size(); ++k) {
      const chunkindex::Chunk &x = a.chunks(f)[k], &y = b.chunks(f)[k];
      EXPECT_TRUE(x.offset == y.offset && x.length == y.length && x.content == y.content &&
                  x.block_i == y.block_i && x.block_j == y.block_j && x.num_sources == y.num_sources &&
                  x.min_source == y.min_source && x.max_source == y.max_source &&
                  x.source_degree_sum == y.source_degree_sum && x.sources_sorted == y.sources_sorted)
          << "chunk " << k << " of " << chunkindex::ChunkFileName(f);
    }
  }
  for (uint64_t c = 0; c < a.content_count(); ++c) {
    auto x = a.ContentSources(c), y = b.ContentSources(c);
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_EQ(*x, *y) << "content " << c;
  }
  auto da = a.Degrees(), db = b.Degrees();
  ASSERT_TRUE(da.ok() && db.ok());
  EXPECT_EQ(*da, *db);
}

TEST_F(VersionedUpdate, AnIndexedGraphsNewVersionIsIndexed) {
  chunkindex::BuildOptions b;
  b.graph_dir = tmp.File("g");
  // Block (0, 0), which the batch grows, is exactly one chunk before and two after: every later
  // content id moves by one, which copied records must follow.
  const uint64_t chunk = std::filesystem::file_size(tmp.File("g/block-0-0"));
  b.chunk_size = chunk;
  ASSERT_TRUE(chunkindex::BuildIndex(b).ok());
  auto st = UpdateGraph(Options());
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_TRUE(st->indexed);
  auto fresh = chunkindex::ChunkTable::Open(tmp.File("g"));
  ASSERT_TRUE(fresh.ok()) << fresh.error().message();
  auto want = grid::GridLayout::Open(tmp.File("g"));
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(fresh->chunk_size(), chunk);
  uint64_t covered = 0;
  for (const chunkindex::Chunk& c : fresh->chunks(chunkindex::ChunkFile::kColumn)) covered += c.length;
  EXPECT_EQ(covered, want->FileBytes());
  EXPECT_TRUE(chunkindex::ChunkTable::Open(tmp.File("g@0")).ok()) << "the old version's index went stale";
  // Only source range 0 (block (0, 0) changed) was scanned; ranges 1-3 were copied from the old
  // index, and the result is the index a full build makes of the same files (`want`).
  EXPECT_EQ(st->index_ranges_reused, kP - 1);
  // Block (0, 0) gained a chunk, yet the other blocks' records keep their keys: the new index
  // shares the old one's files.
  EXPECT_TRUE(st->index_shared);
  b.graph_dir = tmp.File("want");
  ASSERT_TRUE(chunkindex::BuildIndex(b).ok());
  auto full = chunkindex::ChunkTable::Open(tmp.File("want"));
  ASSERT_TRUE(full.ok()) << full.error().message();
  ExpectSameIndex(*fresh, *full);
  EXPECT_TRUE(fresh->DeepCheck().ok());
  // A graph without an index gets none.
  std::filesystem::remove_all(tmp.File("g/.graphfs/index"));
  auto plain = UpdateGraph(Options());
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_FALSE(plain->indexed);
}

// `table` is the index a full build makes (chunk size `chunk`) of the original graph with the
// batch of `o` applied, written whole into tmp/`out`: record by record.
void ExpectLikeAFullBuild(const chunkindex::ChunkTable& table, UpdateOptions o, uint64_t chunk, const std::string& out,
                          const TempDir& tmp) {
  o.graph_dir = tmp.File("orig");
  o.output_dir = tmp.File(out);
  ASSERT_TRUE(UpdateGraph(o).ok());
  chunkindex::BuildOptions b;
  b.graph_dir = o.output_dir;
  b.chunk_size = chunk;
  ASSERT_TRUE(chunkindex::BuildIndex(b).ok());
  auto full = chunkindex::ChunkTable::Open(o.output_dir);
  ASSERT_TRUE(full.ok()) << full.error().message();
  ExpectSameIndex(table, *full);
}

// The number of records with key tag `tag` in GRAPH's index.
uint64_t IndexRecords(const std::string& graph, char tag) {
  auto db = chunkindex::IndexDb::OpenReadOnly(chunkindex::IndexPath(graph));
  if (!db.ok()) return 0;
  uint64_t n = 0;
  Status s = (*db)->Scan(tag, [&](std::string_view, std::string_view) {
    ++n;
    return Status::Ok();
  });
  return s.ok() ? n : 0;
}

// Whether some file of GRAPH's index has another link (is shared with an older version's).
bool IndexSharesFiles(const std::string& graph) {
  for (const auto& e : std::filesystem::directory_iterator(chunkindex::IndexPath(graph)))
    if (e.is_regular_file() && e.hard_link_count() > 1) return true;
  return false;
}

// The new version's index starts as the old one — its table files hard-linked — and only the
// touched range's records, the chunk lists and the meta are written; it is the index a full build
// makes, and it outlives the old version.
TEST_F(VersionedUpdate, ANewVersionsIndexSharesTheOldOnesFiles) {
  chunkindex::BuildOptions b;
  b.graph_dir = tmp.File("g");
  b.chunk_size = 64 << 10;
  ASSERT_TRUE(chunkindex::BuildIndex(b).ok());
  // One edge of block (0, 0) out, one in: its size, and so every chunk count, stays.
  const std::string first = ReadFile(tmp.File("orig/block-0-0")).substr(0, 8);
  WriteFile(tmp.File("del1"), first);
  WriteFile(tmp.File("add1"), EdgeBytes(TestGraph{kVertices, false, {{1, 2}}}));
  UpdateOptions o = Options();
  o.add_file = tmp.File("add1");
  o.delete_file = tmp.File("del1");
  auto st = UpdateGraph(o);
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_TRUE(st->indexed);
  EXPECT_TRUE(st->index_shared);
  EXPECT_TRUE(IndexSharesFiles(tmp.File("g")));
  const uint64_t index_bytes = chunkindex::DirectoryBytes(chunkindex::IndexPath(tmp.File("g")));
  EXPECT_LT(st->bytes_written, index_bytes) << "the shared index was counted (or written) whole";
  // The same as a full build of the same graph, and the old version's index is untouched.
  auto shared = chunkindex::ChunkTable::Open(tmp.File("g"));
  ASSERT_TRUE(shared.ok()) << shared.error().message();
  ASSERT_NO_FATAL_FAILURE(ExpectLikeAFullBuild(*shared, o, *b.chunk_size, "want1", tmp));
  EXPECT_TRUE(shared->DeepCheck().ok());
  auto old = chunkindex::ChunkTable::Open(tmp.File("g@0"));
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_TRUE(old->DeepCheck().ok());
  // Reclaiming the old version leaves the new index whole.
  ASSERT_TRUE(ReclaimVersions(tmp.File("g"), 0).ok());
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@0")));
  auto alone = chunkindex::ChunkTable::Open(tmp.File("g"));
  ASSERT_TRUE(alone.ok()) << alone.error().message();
  EXPECT_TRUE(alone->DeepCheck().ok());
}

// The last source range loses a chunk (its block (3, 3) shrinks from two chunks to one): the
// shared index drops the records past the new last content and chunk, and is a full build's.
TEST_F(VersionedUpdate, ASharedIndexDropsTheRecordsOfChunksThatWent) {
  const std::string block = ReadFile(tmp.File("orig/block-3-3"));
  chunkindex::BuildOptions b;
  b.graph_dir = tmp.File("g");
  b.chunk_size = (block.size() / 2 / 8 + 1) * 8;  // two chunks in block (3, 3)
  ASSERT_TRUE(chunkindex::BuildIndex(b).ok());
  const uint64_t contents_before = IndexRecords(tmp.File("g"), chunkindex::kChunkTag);
  WriteFile(tmp.File("del3"), block.substr(0, (block.size() / 8) * 6 / 10 * 8));  // 60% of its edges
  UpdateOptions o = Options();
  o.add_file.clear();
  o.delete_file = tmp.File("del3");
  auto st = UpdateGraph(o);
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_TRUE(st->index_shared);
  auto table = chunkindex::ChunkTable::Open(tmp.File("g"));
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_EQ(table->content_count() + 1, contents_before);
  EXPECT_EQ(IndexRecords(tmp.File("g"), chunkindex::kChunkTag), table->content_count());
  EXPECT_EQ(IndexRecords(tmp.File("g"), chunkindex::kSourcesTag), table->content_count());
  EXPECT_EQ(IndexRecords(tmp.File("g"), chunkindex::kFileChunkTag),
            table->chunks(chunkindex::ChunkFile::kColumn).size() + table->chunks(chunkindex::ChunkFile::kRow).size());
  ASSERT_NO_FATAL_FAILURE(ExpectLikeAFullBuild(*table, o, *b.chunk_size, "want3", tmp));
}

// --keep N: the N newest kept versions stay; older ones are reclaimed unless a process uses them
// (then they are marked and go at a later run, once it left). Job results in a reclaimed version
// stay; the versions left read as before, and the count is remembered.
TEST_F(VersionedUpdate, KeepReclaimsTheVersionsNothingUses) {
  UpdateOptions o = Options();
  ASSERT_TRUE(UpdateGraph(o).ok());  // g@0 (orig); no count yet: kept
  WriteFile(tmp.File("g/bfs.level"), "results of a job on version 1");
  ASSERT_TRUE(UpdateGraph(o).ok());  // g@1 (want)
  EXPECT_TRUE(std::filesystem::exists(tmp.File("g@0/meta")));
  // A process reading version 1 (a descriptor inside g@1) holds it.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t reader = ::fork();
  if (reader == 0) {
    const int fd = ::open(tmp.File("g@1/block-2-3").c_str(), O_RDONLY);
    char c = fd >= 0 ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  o.keep = 0;
  auto st = UpdateGraph(o);  // version 3; g@2 just made, g@1 in use, g@0 free
  ::kill(reader, SIGKILL);
  ::waitpid(reader, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  ASSERT_TRUE(st.ok()) << st.error().message();
  ASSERT_TRUE(st->reclaim.has_value()) << st->reclaim_error;
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@0"))) << "nothing else was in g@0";
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@2")));
  EXPECT_TRUE(SameGraph(tmp.File("g@1"), tmp.File("want"), kP)) << "a version in use was reclaimed";
  EXPECT_TRUE(std::filesystem::exists(tmp.File("g@1/.graphfs/reclaim")));
  ASSERT_EQ(st->reclaim->in_use.size(), 1u);
  EXPECT_NE(st->reclaim->in_use[0].find(std::to_string(reader)), std::string::npos) << st->reclaim->in_use[0];
  EXPECT_GT(st->reclaim->bytes_freed, 0u);
  // The reader is gone: the next run reclaims g@1; the count (0) was remembered.
  auto again = ReclaimVersions(tmp.File("g"), 0);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->reclaimed, std::vector<std::string>{tmp.File("g@1")});
  EXPECT_EQ(again->results_left, std::vector<std::string>{tmp.File("g@1")});
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@1/meta")));
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@1/.graphfs")));
  EXPECT_EQ(ReadFile(tmp.File("g@1/bfs.level")), "results of a job on version 1") << "job results are not reclaimed";
  auto keep = KeepOf(tmp.File("g"));
  ASSERT_TRUE(keep.ok() && *keep);
  EXPECT_EQ(**keep, 0u);
  // The current version is whole: its maps held what they need.
  EXPECT_TRUE(grid::GridLayout::Open(tmp.File("g")).ok());
  EXPECT_EQ(GraphBytes(tmp.File("g/column")).size(), grid::GridLayout::Open(tmp.File("g"))->FileBytes());
  auto versions = ListVersions(tmp.File("g"));
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 1u);
  EXPECT_TRUE(versions->front().current);
  EXPECT_EQ(versions->front().exclusive_bytes, versions->front().bytes) << "nothing is shared any more";
}

// A version written compactly (forced here; past --compact-above on its own) is one copy of the
// graph: one piece, every graph file a map into it. It reads as the graph, the versions before
// it stay whole, and later updates splice over it as over any version.
TEST_F(VersionedUpdate, ACompactVersionIsOneCopyAndUpdatesGoOnFromIt) {
  ASSERT_TRUE(UpdateGraph(Options()).ok());  // version 1: maps over g@0 and a delta
  UpdateOptions o = Options();
  o.compact = true;
  auto st = UpdateGraph(o);  // version 2, compact
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_TRUE(st->compacted);
  auto g = grid::GridLayout::Open(tmp.File("g"));
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(st->referenced_bytes, g->FileBytes()) << "one copy of the graph";
  std::vector<std::string> pieces;
  for (const auto& e : std::filesystem::directory_iterator(tmp.File("g/.graphfs/pieces")))
    pieces.push_back(e.path().filename().string());
  EXPECT_EQ(pieces, std::vector<std::string>{"compact@2"});
  EXPECT_TRUE(SameGraph(tmp.File("g@1"), tmp.File("want"), kP));
  EXPECT_TRUE(SameGraph(tmp.File("g@0"), tmp.File("orig"), kP));
  ASSERT_NO_FATAL_FAILURE(WriteWantTwice());
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want2"), kP));
  // A small batch next: spliced over the compact piece, not compacted again.
  auto next = UpdateGraph(Options());
  ASSERT_TRUE(next.ok()) << next.error().message();
  EXPECT_FALSE(next->compacted);
  EXPECT_GT(next->delta_bytes, 0u);
  EXPECT_TRUE(SameGraph(tmp.File("g@2"), tmp.File("want2"), kP));
  // Every older version gone: the newest still reads whole (its maps hold their pieces).
  for (const char* v : {"g@0", "g@1", "g@2"}) std::filesystem::remove_all(tmp.File(v));
  EXPECT_TRUE(grid::GridLayout::Open(tmp.File("g")).ok());
  EXPECT_EQ(GraphBytes(tmp.File("g/column")).size(), g->FileBytes() + 100 * 8);
  // The threshold on its own: anything above 0.01 of a fresh graph's bytes compacts.
  UpdateOptions low = Options();
  low.compact_above = 0.01;
  auto auto_compact = UpdateGraph(low);
  ASSERT_TRUE(auto_compact.ok()) << auto_compact.error().message();
  EXPECT_TRUE(auto_compact->compacted);
}

// A block written whole by one update (its batch spans most of its sources) and spliced by the
// next: the second version's maps must read the first one's block from its pieces, not by the
// block's name, which is now the new (spliced) file. (The rmat-local benchmark hit this.)
TEST_F(VersionedUpdate, ABlockWrittenWholeThenSplicedReadsTheRightBytes) {
  WriteFile(tmp.File("wide"), EdgeBytes(TestGraph{kVertices, false, {{0, 1}, {4999, 2}}}));    // all of (0, 0)'s sources
  WriteFile(tmp.File("narrow"), EdgeBytes(TestGraph{kVertices, false, {{10, 11}, {12, 3}}}));  // a few of them
  for (const char* batch : {"wide", "narrow", "wide", "narrow"}) {
    UpdateOptions o = Options();
    o.add_file = tmp.File(batch);
    auto st = UpdateGraph(o);
    ASSERT_TRUE(st.ok()) << batch << ": " << st.error().message();
    EXPECT_EQ(st->delta_bytes > 0, std::string(batch) == "narrow") << batch;
  }
  WriteFile(tmp.File("all"), ReadFile(tmp.File("wide")) + ReadFile(tmp.File("narrow")) + ReadFile(tmp.File("wide")) +
                                 ReadFile(tmp.File("narrow")));
  UpdateOptions w;
  w.graph_dir = tmp.File("orig");
  w.add_file = tmp.File("all");
  w.output_dir = tmp.File("want4");
  ASSERT_TRUE(UpdateGraph(w).ok());
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want4"), kP));
  for (const char* v : {"g@0", "g@1", "g@2", "g@3"}) std::filesystem::remove_all(tmp.File(v));
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want4"), kP)) << "after the older versions went";
}

// A kill in the middle of a reclaim leaves `.g@N.reclaiming`, which the next run finishes; a
// version keeps its results.
TEST_F(VersionedUpdate, AnInterruptedReclaimIsFinished) {
  ASSERT_TRUE(UpdateGraph(Options()).ok());
  WriteFile(tmp.File("g@0/notes"), "kept");
  ASSERT_EQ(::rename(tmp.File("g@0").c_str(), tmp.File(".g@0.reclaiming").c_str()), 0);
  std::filesystem::remove(tmp.File(".g@0.reclaiming/meta"));  // the kill came after the first removal
  auto r = ReclaimVersions(tmp.File("g"), 5);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(std::filesystem::exists(tmp.File(".g@0.reclaiming")));
  EXPECT_EQ(ReadFile(tmp.File("g@0/notes")), "kept");
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@0/column")));
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want"), kP));
}

TEST_F(VersionedUpdate, ARefusedBatchChangesNothing) {
  WriteFile(tmp.File("bad"), EdgeBytes(TestGraph{kVertices, false, {{1, static_cast<int32_t>(kVertices)}}}));
  UpdateOptions o = Options();
  o.add_file = tmp.File("bad");
  ASSERT_FALSE(UpdateGraph(o).ok());
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("orig"), kP));
  EXPECT_FALSE(std::filesystem::exists(tmp.File("g@0")));
  EXPECT_FALSE(std::filesystem::exists(tmp.File(".g.update")));
  // A deletion of an edge not there fails after the staging directory exists: it goes too.
  WriteFile(tmp.File("del"), EdgeBytes(TestGraph{kVertices, false, {{1, 2}, {1, 2}, {1, 2}, {1, 2}}}));
  o.add_file.clear();
  o.delete_file = tmp.File("del");
  ASSERT_FALSE(UpdateGraph(o).ok());
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("orig"), kP));
  EXPECT_FALSE(std::filesystem::exists(tmp.File(".g.update")));
}

// The two states a kill can leave, made by hand: swapped but the old version not yet named, and
// a staging directory never swapped in.
TEST_F(VersionedUpdate, RecoveryFinishesASwappedUpdateAndDropsAnUnswappedOne) {
  ASSERT_TRUE(UpdateGraph(Options()).ok());
  std::filesystem::rename(tmp.File("g@0"), tmp.File(".g.update"));  // killed before the rename
  auto done = RecoverUpdate(tmp.File("g"));
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_NE(done->find("is now"), std::string::npos) << *done;
  EXPECT_TRUE(SameGraph(tmp.File("g@0"), tmp.File("orig"), kP));
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want"), kP));

  // Killed while building version 2: a staging directory with no meta, GRAPH still version 1.
  std::filesystem::create_directories(tmp.File(".g.update/.graphfs"));
  WriteFile(tmp.File(".g.update/.graphfs/version"), "2\n");
  WriteFile(tmp.File(".g.update/block-0-0"), "partial");
  auto dropped = RecoverUpdate(tmp.File("g"));
  ASSERT_TRUE(dropped.ok()) << dropped.error().message();
  EXPECT_NE(dropped->find("removed"), std::string::npos) << *dropped;
  EXPECT_FALSE(std::filesystem::exists(tmp.File(".g.update")));
  EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want"), kP));
  auto nothing = RecoverUpdate(tmp.File("g"));
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(*nothing, "");
}

// kill -9 of graphfs-update at random points: GRAPH is always the old or the new version,
// complete; the next run finishes (or redoes) the update; in the end GRAPH is the new version
// and GRAPH@0 the old one.
TEST_F(VersionedUpdate, KilledAtRandomPointsLeavesTheOldOrTheNewVersion) {
  std::mt19937 rng(17);
  const std::vector<std::string> argv = {tmp.File("g"), "--add", tmp.File("add")};
  auto start = [&] { return SpawnUpdate(argv); };
  // How long a whole run takes here: the kills land within it.
  std::chrono::microseconds whole{};
  ASSERT_NO_FATAL_FAILURE(TimeOneUpdate(argv, &whole));
  std::filesystem::remove_all(tmp.File("g@0"));
  std::filesystem::remove_all(tmp.File("g"));
  int saw_old = 0, saw_new = 0;
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::filesystem::remove_all(tmp.File("g"));
    std::filesystem::remove_all(tmp.File("g@0"));
    std::filesystem::remove_all(tmp.File(".g.update"));
    std::filesystem::copy(tmp.File("orig"), tmp.File("g"));
    const pid_t pid = start();
    ASSERT_GE(pid, 0);
    // The first round kills at once (the old version stays), the last one after the run (the new
    // one is there): both outcomes are seen whatever the machine's speed; the rest land at random.
    const int64_t delay = round == 0 ? 0 : round == 11 ? 3 * whole.count() + 100000 : rng() % (whole.count() + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const bool is_old = SameGraph(tmp.File("g"), tmp.File("orig"), kP);
    const bool is_new = SameGraph(tmp.File("g"), tmp.File("want"), kP);
    EXPECT_TRUE(is_old || is_new) << "GRAPH is neither version after the kill";
    (is_old ? saw_old : saw_new)++;
    // What the next run does first: a swapped update is finished (the old version named), an
    // unswapped one thrown away.
    auto recovered = RecoverUpdate(tmp.File("g"));
    ASSERT_TRUE(recovered.ok()) << recovered.error().message();
    if (is_new) {
      EXPECT_TRUE(SameGraph(tmp.File("g@0"), tmp.File("orig"), kP));
    } else {
      EXPECT_FALSE(std::filesystem::exists(tmp.File("g@0")));
      auto st = UpdateGraph(Options());
      ASSERT_TRUE(st.ok()) << st.error().message();
      EXPECT_TRUE(SameGraph(tmp.File("g"), tmp.File("want"), kP));
      EXPECT_TRUE(SameGraph(tmp.File("g@0"), tmp.File("orig"), kP));
    }
    EXPECT_FALSE(std::filesystem::exists(tmp.File(".g.update")));
  }
  EXPECT_GT(saw_old, 0);
  EXPECT_GT(saw_new, 0);
}

}  // namespace
}  // namespace graphfs::admin

// ---- versions of striped graphs ----

namespace graphfs::admin {
using namespace graphfs::volume;  // versions, keep, reclaim
namespace {

struct StripedCase {
  const char* name;
  uint64_t min_size;     // graphfs-stripe --min-size: 4 KiB stripes the blocks too
  const char* compress;  // "" or a codec: the old version's files are compressed
  uint32_t parity = 0;   // graphfs-stripe --parity: the set's K, which the new files get too
};
void PrintTo(const StripedCase& c, std::ostream* os) { *os << c.name; }

// A striped graph (graphfs-stripe over three directory "disks") updated in place: versions read
// as preprocess's graphs, share the stripe units they did not change (only new bytes go to the
// disks), and every part on the disks is named by exactly one stub — after updates, reclaims and
// kills alike.
class StripedVersionedUpdate : public ::testing::TestWithParam<StripedCase> {
 protected:
  static constexpr uint32_t kP = 4, kVertices = 20000;
  static constexpr size_t kEdges = 200000;
  static constexpr uint64_t kUnit = 64 << 10;

  void SetUp() override {
    const TestGraph g = etest::RandomGraph(kVertices, kVertices, kEdges, false, 3);
    WriteFile(tmp.File("edges"), EdgeBytes(g));
    Preprocessed(tmp.File("edges"), tmp.File("orig"), kVertices, kP, false, true);
    std::filesystem::create_directories(tmp.File("src"));
    std::filesystem::copy(tmp.File("orig"), tmp.File("src/g"));
    chunkindex::BuildOptions b;
    b.graph_dir = tmp.File("src/g");
    b.chunk_size = kUnit;
    ASSERT_TRUE(chunkindex::BuildIndex(b).ok());
    for (int d = 0; d < 3; ++d) {
      disks.push_back(tmp.File("disk" + std::to_string(d)));
      std::filesystem::create_directories(disks.back());
    }
    StripeRequest r = testing::TestStripeRequest(tmp.File("src/g"), disks, kUnit);
    r.min_size = GetParam().min_size;
    r.compress = GetParam().compress;
    r.record_size = 8;
    r.compress_unit = kUnit;
    r.parity = GetParam().parity;
    auto striped = StripeFiles(r);
    ASSERT_TRUE(striped.ok()) << striped.error().message();
    ASSERT_TRUE(IsStub(tmp.File("src/g/column")));
    ASSERT_EQ(IsStub(tmp.File("src/g/block-0-0")), GetParam().min_size == 4096);
    // The batch of VersionedUpdate: block (0, 0) only.
    TestGraph adds{kVertices, false, {}};
    for (int32_t k = 0; k < 100; ++k) adds.edges.push_back({k % 50, (k * 7) % 50});
    WriteFile(tmp.File("add"), EdgeBytes(adds));
    UpdateOptions o = Options();
    o.graph_dir = tmp.File("orig");
    o.output_dir = tmp.File("want");
    ASSERT_TRUE(UpdateGraph(o).ok());
    // The test reads the striped versions through their parts, as the tool does.
    auto opened = GraphDisks::Open(tmp.File("src/g"));
    ASSERT_TRUE(opened.ok() && *opened) << (opened.ok() ? "no registry" : opened.error().message());
    graph_disks = std::move(*opened);
  }
  const grid::StubFiles* stubs() const { return &graph_disks->stubs(); }

  UpdateOptions Options() {
    UpdateOptions o;
    o.graph_dir = tmp.File("src/g");
    o.add_file = tmp.File("add");
    return o;
  }
  static bool IsStub(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && StubManifest(path, st).has_value();
  }
  std::set<std::string> PartIds(uint64_t* bytes = nullptr) const { return admin::PartIds(disks, bytes); }
  std::set<std::string> StubIds() const { return admin::StubIds(tmp.File("src")); }
  std::string Id(const std::string& path) const {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return "";
    auto m = StubManifest(path, st);
    return m ? m->file_id : "";
  }

  TempDir tmp;
  std::vector<std::string> disks;
  std::unique_ptr<GraphDisks> graph_disks;
};

TEST_P(StripedVersionedUpdate, VersionsShareTheDisksBytesAndReadAsPreprocess) {
  uint64_t disk_bytes_before = 0;
  const std::set<std::string> before = PartIds(&disk_bytes_before);
  EXPECT_EQ(before, StubIds());
  const std::string old_column = Id(tmp.File("src/g/column")), old_block = Id(tmp.File("src/g/block-0-0"));
  auto st = UpdateGraph(Options());
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_TRUE(SameGraph(tmp.File("src/g"), tmp.File("want"), kP, stubs()));
  EXPECT_TRUE(SameGraph(tmp.File("src/g@0"), tmp.File("orig"), kP, stubs()));
  // The old `column` stays one striped file, read by the new maps through a link.
  EXPECT_TRUE(IsMap(tmp.File("src/g/column")));
  EXPECT_EQ(Inode(tmp.File("src/g/.graphfs/pieces/column@0")), Inode(tmp.File("src/g@0/column")));
  // The rebuilt run went to the disks: the delta piece is a striped file of the same set.
  EXPECT_TRUE(IsStub(tmp.File("src/g/.graphfs/pieces/delta@1")));
  EXPECT_GT(st->delta_bytes, 0u);
  // Only new bytes were written to the disks: the new parts are the new version's own files.
  uint64_t disk_bytes_after = 0;
  const std::set<std::string> after = PartIds(&disk_bytes_after);
  EXPECT_EQ(after, StubIds()) << "parts no stub names, or stubs without parts";
  EXPECT_TRUE(std::includes(after.begin(), after.end(), before.begin(), before.end()));
  EXPECT_GT(after.size(), before.size());
  EXPECT_LE(disk_bytes_after - disk_bytes_before, 2 * st->touched_bytes);
  EXPECT_EQ(Id(tmp.File("src/g/.graphfs/pieces/column@0")), old_column);
  // A version names its disk set like the graph, and is indexed reusing the untouched rows.
  EXPECT_TRUE(std::filesystem::exists(tmp.File("src/g/.graphfs/disks.json")));
  EXPECT_TRUE(st->indexed);
  EXPECT_EQ(st->index_ranges_reused, kP - 1);
  auto table = chunkindex::ChunkTable::Open(tmp.File("src/g"), stubs());
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_TRUE(table->DeepCheck().ok());
  // The space a version keeps counts the stubs' parts, not the stubs.
  auto versions = ListVersions(tmp.File("src/g"));
  ASSERT_TRUE(versions.ok()) << versions.error().message();
  ASSERT_EQ(versions->size(), 2u);
  for (const VersionSpace& v : *versions) EXPECT_GT(v.bytes, 2 * st->touched_bytes) << v.path;

  // graphfs-unstripe of the new version leaves the files it shares with g@0 (their parts are
  // g@0's bytes too) and the disk set its maps' pieces need.
  UnstripeRequest u;
  u.path = tmp.File("src/g");
  u.progress = false;
  auto unstriped = UnstripeFiles(u);
  ASSERT_TRUE(unstriped.ok()) << unstriped.error().message();
  const bool shared_skipped = std::any_of(unstriped->skipped.begin(), unstriped->skipped.end(), [](const std::string& why) {
    return why.find("shared with another graph version") != std::string::npos;
  });
  EXPECT_EQ(shared_skipped, GetParam().min_size == 4096) << "only striped blocks are shared stubs";
  EXPECT_TRUE(std::filesystem::exists(tmp.File("src/g/.graphfs/disks.json")));
  EXPECT_TRUE(SameGraph(tmp.File("src/g"), tmp.File("want"), kP, stubs()));
  EXPECT_TRUE(SameGraph(tmp.File("src/g@0"), tmp.File("orig"), kP, stubs()));
  EXPECT_EQ(PartIds(), StubIds());

  // A second update with --keep 0 reclaims both older versions: their parts go with their last
  // stubs — the old block (0, 0) when it was striped — and what version 2 reads stays.
  UpdateOptions o = Options();
  o.keep = 0;
  auto again = UpdateGraph(o);
  ASSERT_TRUE(again.ok()) << again.error().message();
  ASSERT_TRUE(again->reclaim.has_value()) << again->reclaim_error;
  EXPECT_FALSE(std::filesystem::exists(tmp.File("src/g@0")));
  EXPECT_FALSE(std::filesystem::exists(tmp.File("src/g@1")));
  ASSERT_NO_FATAL_FAILURE(WriteOrigPlusBatches(tmp, 2));
  EXPECT_TRUE(SameGraph(tmp.File("src/g"), tmp.File("want2"), kP, stubs()));
  const std::set<std::string> last = PartIds();
  EXPECT_EQ(last, StubIds()) << "a reclaim left parts behind, or took some still read";
  EXPECT_TRUE(last.count(old_column)) << "version 2 still reads the first column";
  if (!old_block.empty()) {
    EXPECT_FALSE(last.count(old_block)) << "the replaced block's parts were not reclaimed";
  }
  // A whole copy (-o) of a striped version is a plain graph.
  UpdateOptions copy = Options();
  copy.add_file.clear();
  copy.output_dir = tmp.File("copy");
  ASSERT_TRUE(UpdateGraph(copy).ok());
  EXPECT_FALSE(IsStub(tmp.File("copy/column")));
  EXPECT_EQ(ReadFile(tmp.File("copy/column")), ReadFile(tmp.File("want2/column")));
}

// kill -9 of graphfs-update at random points of a striped graph's update: GRAPH is the old or the
// new version, and after the next run's recovery no part is left that no stub names.
TEST_P(StripedVersionedUpdate, KilledUpdatesLeaveNoPartsNobodyNames) {
  std::mt19937 rng(23);
  const std::vector<std::string> argv = {tmp.File("src/g"), "--add", tmp.File("add"), "--keep", "0"};
  auto start = [&] { return SpawnUpdate(argv); };
  std::chrono::microseconds whole{};
  ASSERT_NO_FATAL_FAILURE(TimeOneUpdate(argv, &whole));
  // Each round adds the batch once more: version k is the original plus k batches.
  std::vector<std::string> want = {tmp.File("orig"), tmp.File("want")};
  int saw_old = 0, saw_new = 0;
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const size_t version = static_cast<size_t>(VersionOf(tmp.File("src/g")));
    while (want.size() < version + 2) {
      ASSERT_NO_FATAL_FAILURE(WriteOrigPlusBatches(tmp, want.size()));
      want.push_back(tmp.File("want" + std::to_string(want.size())));
    }
    const pid_t pid = start();
    ASSERT_GE(pid, 0);
    const int64_t delay = round == 0 ? 0 : rng() % (whole.count() + 1);
    std::this_thread::sleep_for(std::chrono::microseconds(delay));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const bool is_old = SameGraph(tmp.File("src/g"), want[version], kP, stubs());
    const bool is_new = SameGraph(tmp.File("src/g"), want[version + 1], kP, stubs());
    EXPECT_TRUE(is_old || is_new) << "GRAPH is neither version after the kill";
    (is_old ? saw_old : saw_new)++;
    auto recovered = RecoverUpdate(tmp.File("src/g"));
    ASSERT_TRUE(recovered.ok()) << recovered.error().message();
    auto reclaimed = ReclaimVersions(tmp.File("src/g"), 0);
    ASSERT_TRUE(reclaimed.ok()) << reclaimed.error().message();
    EXPECT_EQ(PartIds(), StubIds()) << "parts no stub names, or stubs without parts";
  }
  EXPECT_GT(saw_old, 0);
  EXPECT_TRUE(SameGraph(tmp.File("src/g"), want[static_cast<size_t>(VersionOf(tmp.File("src/g")))], kP, stubs()));
}

// A graph with parity: every file the update writes to the disks gets the set's K, so with a
// disk's directory gone both versions still read as preprocess's graphs. (Only the cases with
// parity: without it a disk gone loses files.)
class StripedVersionedUpdateWithParity : public StripedVersionedUpdate {};

TEST_P(StripedVersionedUpdateWithParity, ADiskGoneEveryVersionReadsThroughParity) {
  auto st = UpdateGraph(Options());
  ASSERT_TRUE(st.ok()) << st.error().message();
  const std::string delta = tmp.File("src/g/.graphfs/pieces/delta@1");
  ASSERT_TRUE(IsStub(delta));
  auto m = ReadManifest(delta);
  ASSERT_TRUE(m.ok() && *m);
  EXPECT_EQ((*m)->layout.parity, GetParam().parity) << "the update's new file has no parity";
  EXPECT_NE((*m)->sum_block, 0u);
  // The version's registry keeps the set's K (a mount with a disk gone starts).
  auto set = RegisteredDiskSet(tmp.File("src/g"));
  ASSERT_TRUE(set.ok() && *set) << (set.ok() ? "no registry" : set.error().message());
  EXPECT_EQ((*set)->registry().parity, GetParam().parity);
  // And it is what graphfs-stripe writes: parity and sums verify, row by row.
  ASSERT_TRUE(graph_disks);
  Status verified = VerifyStripeParity(graph_disks->disks(), **m);
  EXPECT_TRUE(verified.ok()) << verified.error().message();

  std::filesystem::rename(disks[1], disks[1] + ".gone");
  auto degraded = GraphDisks::Open(tmp.File("src/g"));
  ASSERT_TRUE(degraded.ok() && *degraded) << (degraded.ok() ? "no registry" : degraded.error().message());
  EXPECT_TRUE((*degraded)->disks().degraded());
  EXPECT_TRUE(SameGraph(tmp.File("src/g"), tmp.File("want"), kP, &(*degraded)->stubs()));
  EXPECT_TRUE(SameGraph(tmp.File("src/g@0"), tmp.File("orig"), kP, &(*degraded)->stubs()));
}

// graphfs-rebuild of a graph with versions: the versions' own files (the update's delta piece)
// are among the files it finds (every graph directory under the path given, hidden ones
// included, each file id once), so they are rebuilt and read back from the new disk like the
// rest: the lost disk's parts and sums come back byte for byte, and both versions read as
// preprocess's graphs from the new disk.
TEST_P(StripedVersionedUpdateWithParity, ALostDiskIsRebuiltWithEveryVersionsFiles) {
  auto st = UpdateGraph(Options());
  ASSERT_TRUE(st.ok()) << st.error().message();
  const std::string delta_id = Id(tmp.File("src/g/.graphfs/pieces/delta@1"));
  ASSERT_FALSE(delta_id.empty());
  // The lost disk's parts and sums (a row journal is the mount's, not the tools').
  auto parts_and_sums = [](const std::string& dir) {
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/parts", ec)) {
      const std::string name = e.path().filename().string();
      if (name.find(".journal") == std::string::npos) out[name] = ReadFile(e.path().string());
    }
    return out;
  };
  const auto before = parts_and_sums(disks[1]);
  ASSERT_TRUE(before.count(delta_id) == 1 && before.count(delta_id + ".sums") == 1) << "the delta piece has a unit there";
  graph_disks.reset();
  std::filesystem::remove_all(disks[1]);
  const std::string to = tmp.File("new-disk");
  std::filesystem::create_directories(to);
  RebuildRequest req;
  req.paths = {tmp.File("src")};  // both versions' graph directories
  req.disk = 1;
  req.to = to;
  req.progress = false;
  auto rebuilt = Rebuild(req);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message();
  EXPECT_EQ(rebuilt->registries.size(), 2u) << "g and g@0";
  EXPECT_TRUE(parts_and_sums(to) == before) << "the rebuilt parts and sums differ from the lost disk's";
  auto opened = GraphDisks::Open(tmp.File("src/g"));
  ASSERT_TRUE(opened.ok() && *opened) << (opened.ok() ? "no registry" : opened.error().message());
  EXPECT_FALSE((*opened)->disks().degraded());
  EXPECT_TRUE(SameGraph(tmp.File("src/g"), tmp.File("want"), kP, &(*opened)->stubs()));
  EXPECT_TRUE(SameGraph(tmp.File("src/g@0"), tmp.File("orig"), kP, &(*opened)->stubs()));
}

INSTANTIATE_TEST_SUITE_P(Stripes, StripedVersionedUpdate,
                         ::testing::Values(StripedCase{"every_file", 4096, ""}, StripedCase{"column_and_row", 1 << 20, ""},
                                           StripedCase{"compressed", 4096, "lz4"},
                                           StripedCase{"parity", 4096, "", 1},
                                           StripedCase{"compressed_parity", 4096, "lz4", 1}),
                         [](const auto& info) { return std::string(info.param.name); });
INSTANTIATE_TEST_SUITE_P(Stripes, StripedVersionedUpdateWithParity,
                         ::testing::Values(StripedCase{"parity", 4096, "", 1},
                                           StripedCase{"compressed_parity", 4096, "lz4", 1}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace graphfs::admin
