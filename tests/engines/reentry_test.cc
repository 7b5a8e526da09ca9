// Issue 17's engine side on small graphs of the three families (R-MAT with permuted ids, R-MAT
// reordered by BFS, the road-like grid): loaded-data reentry and diagonal-first order give the
// in-memory references' results for every setting, in both modes; reentry provably cuts passes
// on a grid; union-find WCC gives the weak components in one pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine_test_util.h"
#include "engines/apps/apps.h"
#include "engines/core/lattice.h"
#include "engines/core/preprocess.h"
#include "engines/core/reorder.h"
#include "engines/core/rmat.h"
#include "fake_partitions.h"
#include "reference_apps.h"

namespace graphfs::engine {
namespace {

using testing::ReadArray;
using testing::ConvergedPageRank;
using testing::ReferenceBfs;
using testing::ReferenceDijkstra;
using testing::ReferenceLabels;
using testing::ReferencePageRankDelta;
using testing::ReferenceWeakComponents;
using testing::TempDir;
using testing::TestGraph;

// A weighted edge file as a TestGraph (int32 source, int32 target, float32 weight).
TestGraph ReadEdges(const std::string& path, uint32_t vertices) {
  const std::string bytes = testing::ReadFile(path);
  TestGraph g{vertices, true, {}};
  for (size_t at = 0; at + 12 <= bytes.size(); at += 12) {
    testing::TestEdge e;
    std::memcpy(&e.source, bytes.data() + at, 4);
    std::memcpy(&e.target, bytes.data() + at + 4, 4);
    std::memcpy(&e.weight, bytes.data() + at + 8, 4);
    g.edges.push_back(e);
  }
  return g;
}

// Preprocesses the weighted edge file `input` into the grid directory `output` (P partitions);
// returns `output`, or "" after a test failure.
std::string PreprocessWeighted(const std::string& input, const std::string& output, uint32_t vertices,
                               uint32_t partitions) {
  return testing::PreprocessGraph(input, output, vertices, partitions, true) ? output : "";
}

struct Family {
  std::string name;
  std::string edges;  // weighted edge file
  TestGraph graph;
};

// The three families, small: R-MAT scale 9 (permuted ids), the same reordered by BFS, and a
// 30 x 20 grid with a tenth of its edges dropped.
class Families : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    families_ = new std::vector<Family>();
    RmatOptions rmat;
    rmat.scale = 9;
    rmat.edge_factor = 8;
    rmat.weighted = true;
    rmat.seed = 5;
    rmat.threads = 2;
    rmat.output = tmp_->File("rmat.bin");
    auto r = GenerateRmat(rmat);
    ASSERT_TRUE(r.ok()) << r.error().message();
    families_->push_back({"rmat", rmat.output, ReadEdges(rmat.output, 512)});

    ReorderOptions reorder;
    reorder.input = rmat.output;
    reorder.output = tmp_->File("rmat-bfs.bin");
    reorder.vertices = 512;
    reorder.weighted = true;
    reorder.order = VertexOrder::kBfs;
    auto o = Reorder(reorder);
    ASSERT_TRUE(o.ok()) << o.error().message();
    families_->push_back({"rmat-reordered", reorder.output, ReadEdges(reorder.output, 512)});

    LatticeOptions grid;
    grid.width = 30;
    grid.height = 20;
    grid.drop = 0.1;
    grid.weighted = true;
    grid.seed = 3;
    grid.output = tmp_->File("grid.bin");
    auto l = GenerateLattice(grid);
    ASSERT_TRUE(l.ok()) << l.error().message();
    families_->push_back({"grid", grid.output, ReadEdges(grid.output, 600)});
  }
  static void TearDownTestSuite() {
    delete families_;
    delete tmp_;
  }

  // The family's graph preprocessed with P partitions, in a directory of its own.
  static std::string Prepare(const Family& f, uint32_t partitions, TempDir& dir) {
    return PreprocessWeighted(f.edges, dir.File("grid"), f.graph.vertices, partitions);
  }

  static TempDir* tmp_;
  static std::vector<Family>* families_;
};
TempDir* Families::tmp_ = nullptr;
std::vector<Family>* Families::families_ = nullptr;

AppConfig Config(const std::string& dir, double mem_gb, int reentry, bool diagonal_first) {
  AppConfig config;
  config.graph_dir = dir;
  config.mem_gb = mem_gb;
  config.threads = 2;
  config.reentry = reentry;
  config.diagonal_first = diagonal_first;
  return config;
}

// The same in integrated mode, from fake logical partitions (random chunk order) in `lps`:
// LPs of 100 weighted edges, several an iteration.
AppConfig Integrated(AppConfig config, const TempDir& lps) {
  config.graphfs = true;
  config.partition_bytes = 1200;
  const std::string dir = lps.path();
  config.partition_source = [dir](const grid::GridLayout& layout,
                                  uint64_t bytes) -> Result<std::unique_ptr<PartitionSource>> {
    testing::FakePartitionOptions fake;
    fake.chunk_edges = 20;
    fake.partition_bytes = bytes;
    return std::unique_ptr<PartitionSource>(std::make_unique<testing::FakePartitions>(layout, dir, fake));
  };
  return config;
}

void ExpectAllExact(const std::string& dir, const TestGraph& g, const AppConfig& config) {
  for (uint32_t start : {0u, g.vertices / 2}) {
    auto bfs = RunBfs(config, start);
    ASSERT_TRUE(bfs.ok()) << bfs.error().message();
    EXPECT_EQ(ReadArray<int32_t>(dir + "/bfs.level"), ReferenceBfs(g, start)) << "bfs from " << start;
    auto sssp = RunSssp(config, start);
    ASSERT_TRUE(sssp.ok()) << sssp.error().message();
    EXPECT_EQ(ReadArray<float>(dir + "/sssp.distance"), ReferenceDijkstra(g, start)) << "sssp from " << start;
  }
  auto wcc = RunWcc(config);
  ASSERT_TRUE(wcc.ok()) << wcc.error().message();
  EXPECT_EQ(ReadArray<int32_t>(dir + "/wcc.label"), ReferenceLabels(g));
}

// pagerank-delta's tolerance (pagerank_delta.cc): a run stops with every residual <= epsilon,
// and is then within 0.85 / 0.15 * V * epsilon (L1) of the fixpoint, with or without reentry.
double L1(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double sum = 0;
  for (size_t v = 0; v < a.size() && v < b.size(); ++v) sum += std::fabs(a[v] - b[v]);
  return sum;
}

void ExpectPageRankDeltaWithinTolerance(const std::string& dir, const TestGraph& g, const AppConfig& config) {
  const double epsilon = 1e-4;
  auto result = RunPageRankDelta(config, epsilon);
  ASSERT_TRUE(result.ok()) << result.error().message();
  const auto got = ReadArray<double>(dir + "/pagerank-delta.rank");
  const double bound = 0.85 / 0.15 * g.vertices * epsilon;
  EXPECT_LE(L1(got, ConvergedPageRank(g)), bound) << result->line;
  EXPECT_LE(L1(got, ReferencePageRankDelta(g, epsilon)), 2 * bound) << result->line;
  if (config.reentry == 0) {
    EXPECT_EQ(result->reentries, 0u);
  }
}

TEST_F(Families, ReentryAndDiagonalFirstKeepResultsExact) {
  for (const Family& f : *families_) {
    for (uint32_t p : {1u, 4u}) {
      TempDir dir;
      const std::string grid = Prepare(f, p, dir);
      for (double mem : {8.0, 1e-9}) {  // one source window, or one per partition with O_DIRECT
        for (int reentry : {0, 1, 5, 1000}) {
          for (bool diagonal : {false, true}) {
            SCOPED_TRACE(f.name + " P=" + std::to_string(p) + " mem=" + std::to_string(mem) +
                         " reentry=" + std::to_string(reentry) + (diagonal ? " diagonal-first" : ""));
            ExpectAllExact(grid, f.graph, Config(grid, mem, reentry, diagonal));
            ExpectPageRankDeltaWithinTolerance(grid, f.graph, Config(grid, mem, reentry, diagonal));
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST_F(Families, ReentryKeepsResultsExactInIntegratedMode) {
  for (const Family& f : *families_) {
    TempDir dir, lps;
    const std::string grid = Prepare(f, 4, dir);
    for (int reentry : {1, 1000}) {
      SCOPED_TRACE(f.name + " reentry=" + std::to_string(reentry));
      ExpectAllExact(grid, f.graph, Integrated(Config(grid, 8, reentry, false), lps));
      ExpectPageRankDeltaWithinTolerance(grid, f.graph, Integrated(Config(grid, 8, reentry, false), lps));
      if (HasFatalFailure()) return;
    }
  }
}

// On a 60 x 60 grid in one block (P = 1) that one buffer holds, every reentry carries a BFS at
// least one level further (more: a reached vertex's edges later in the buffer are applied in
// the same sweep), so with 10 an iteration covers at least 11 of the 119 levels.
TEST(Reentry, CutsPassesOnAGrid) {
  TempDir tmp;
  LatticeOptions lattice;
  lattice.width = 60;
  lattice.height = 60;
  lattice.weighted = true;
  lattice.output = tmp.File("grid.bin");
  ASSERT_TRUE(GenerateLattice(lattice).ok());
  const TestGraph g = ReadEdges(lattice.output, 3600);
  const std::string dir = PreprocessWeighted(lattice.output, tmp.File("g"), 3600, 1);
  ASSERT_FALSE(dir.empty());

  auto plain = RunBfs(Config(dir, 8, 0, false), 0);
  auto again = RunBfs(Config(dir, 8, 10, false), 0);
  ASSERT_TRUE(plain.ok() && again.ok());
  EXPECT_EQ(plain->passes, 119u) << plain->line;  // levels 0..118, and one that finds nothing
  EXPECT_LE(again->passes * 5, plain->passes) << again->line;
  EXPECT_GT(again->reentries, 0u);
  EXPECT_EQ(ReadArray<int32_t>(dir + "/bfs.level"), ReferenceBfs(g, 0));
  EXPECT_NE(again->line.find(std::to_string(again->passes) + " passes"), std::string::npos) << again->line;

  auto sssp0 = RunSssp(Config(dir, 8, 0, false), 0);
  auto sssp10 = RunSssp(Config(dir, 8, 10, false), 0);
  ASSERT_TRUE(sssp0.ok() && sssp10.ok());
  EXPECT_LE(sssp10->passes * 5, sssp0->passes) << sssp0->line << " / " << sssp10->line;
  EXPECT_EQ(ReadArray<float>(dir + "/sssp.distance"), ReferenceDijkstra(g, 0));

  auto wcc0 = RunWcc(Config(dir, 8, 0, false));
  auto wcc10 = RunWcc(Config(dir, 8, 10, false));
  ASSERT_TRUE(wcc0.ok() && wcc10.ok());
  // wcc needs 2 passes even without reentry here: labels are read where they are written
  // (immediate propagation), and the grid's edges come in id order, so label 0 sweeps the
  // whole grid in the first pass. Reentry must not add any.
  EXPECT_LE(wcc10->passes, wcc0->passes) << wcc0->line << " / " << wcc10->line;
  EXPECT_EQ(wcc0->passes, 2u) << wcc0->line;
  EXPECT_EQ(ReadArray<int32_t>(dir + "/wcc.label"), ReferenceLabels(g));

  // pagerank-delta: every edge is diagonal and in the one buffer, so every vertex re-enters.
  auto delta0 = RunPageRankDelta(Config(dir, 8, 0, false), 1e-6);
  auto delta10 = RunPageRankDelta(Config(dir, 8, 10, false), 1e-6);
  ASSERT_TRUE(delta0.ok() && delta10.ok());
  EXPECT_LE(delta10->passes * 3, delta0->passes) << delta0->line << " / " << delta10->line;
  EXPECT_LE(L1(ReadArray<double>(dir + "/pagerank-delta.rank"), ConvergedPageRank(g)),
            0.85 / 0.15 * 3600 * 1e-6);
}

TEST(Reentry, AppsThatAreNotRelaxationsSayWhy) {
  TempDir tmp;
  const TestGraph g = testing::RandomGraph(20, 20, 60, true, 4);
  testing::WriteFile(tmp.File("e"), testing::EdgeBytes(g));
  const std::string dir = PreprocessWeighted(tmp.File("e"), tmp.File("g"), 20, 2);
  ASSERT_FALSE(dir.empty());
  const AppConfig config = Config(dir, 8, 3, false);
  for (auto result : {RunPageRank(config, 3), RunSpmv(config), RunWccUnionFind(config)}) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code(), EINVAL);
    EXPECT_NE(result.error().message().find("--reentry does not apply to"), std::string::npos) << result.error().message();
  }
}

TEST_F(Families, UnionFindGivesTheWeakComponentsInOnePass) {
  for (const Family& f : *families_) {
    for (uint32_t p : {1u, 4u}) {
      SCOPED_TRACE(f.name + " P=" + std::to_string(p));
      TempDir dir;
      const std::string grid = Prepare(f, p, dir);
      auto uf = RunWccUnionFind(Config(grid, p == 4 ? 1e-9 : 8, 0, false));
      ASSERT_TRUE(uf.ok()) << uf.error().message();
      EXPECT_EQ(uf->passes, 1u);
      const auto want = ReferenceWeakComponents(f.graph);
      EXPECT_EQ(ReadArray<int32_t>(grid + "/wcc-uf.label"), want);
      size_t components = 0;
      for (uint32_t v = 0; v < want.size(); ++v) components += want[v] == static_cast<int32_t>(v);
      EXPECT_EQ(uf->line.rfind("wcc-uf: " + std::to_string(components) + " components", 0), 0u) << uf->line;
      if (f.name == "grid") {  // symmetric: wcc's min-label propagation gives the same labels
        auto wcc = RunWcc(Config(grid, 8, 0, false));
        ASSERT_TRUE(wcc.ok());
        EXPECT_EQ(ReadArray<int32_t>(grid + "/wcc.label"), want);
        EXPECT_GT(wcc->passes, uf->passes);
      }
      // Integrated mode: one iteration of whole LPs.
      TempDir lps;
      auto integrated = RunWccUnionFind(Integrated(Config(grid, 8, 0, false), lps));
      ASSERT_TRUE(integrated.ok()) << integrated.error().message();
      EXPECT_TRUE(integrated->integrated);
      EXPECT_EQ(ReadArray<int32_t>(grid + "/wcc-uf.label"), want);
    }
  }
}

}  // namespace
}  // namespace graphfs::engine
